"""Where the objective runs: a thread or a child process per evaluation, any
``concurrent.futures`` executor, or a Dask cluster, behind one pool (``submit``, ``lost``,
``cancel``, ``wait_first``) that :func:`bodi.minimize` drives."""

from __future__ import annotations

import os
import signal
import socket
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, CancelledError, Executor, Future
from concurrent.futures import wait as futures_wait
from typing import Any
from urllib.parse import urlsplit

from bodi.objective import call_pickled, pickled_by_value
from bodi.space import Value


class ThreadPerEvaluation(Executor):
    """Each evaluation in its own daemon thread. A pool would queue the next evaluation behind
    one that timed out (a thread cannot be stopped); here it starts at once, and the loop keeps
    at most ``n_workers`` evaluations that still count."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as err:  # delivered to the loop through the future
                future.set_exception(err)

        threading.Thread(target=run, daemon=True, name="bodi-evaluation").start()
        return future


class EvaluationProcessDiedError(RuntimeError):
    """The process evaluating a configuration ended without a result (killed, crashed)."""


class ClusterLostError(RuntimeError):
    """The Dask scheduler went away during a run."""


class EvaluationTimeoutError(TimeoutError):
    """An evaluation ran longer than its time limit."""


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent dies (Linux ``PR_SET_PDEATHSIG``), so
    that an evaluation never outlives a killed run, which would evaluate it again on resume."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent's watch thread is all there is
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _evaluate_in_child(connection: Any, fn: Callable[..., Any], args: tuple,
                       parent: int) -> None:
    _die_with_parent(parent)
    try:
        result: tuple[bool, Any] = (True, fn(*args))
    except BaseException as err:  # delivered to the parent, with the child's traceback
        err.add_note("the evaluation's process raised it:\n" + traceback.format_exc().rstrip())
        result = (False, err)
    try:
        connection.send(result)
    except Exception as err:  # an unpicklable result or exception
        connection.send((False, RuntimeError(f"{type(err).__name__}: {err}")))
    connection.close()


class ProcessPerEvaluation(Executor):
    """Each evaluation in its own child process: a configuration that kills or crashes its
    process (``os._exit``, a segfault, the OOM killer) is a failed trial, and a timed-out
    evaluation is terminated. The child is forked, so ``func`` need not be picklable on Linux
    (results and exceptions must be)."""

    def __init__(self) -> None:
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._processes: dict[Future, Any] = {}

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        future.set_running_or_notify_cancel()
        receive, send = self._context.Pipe(duplex=False)
        process = self._context.Process(target=_evaluate_in_child,
                                        args=(send, fn, args, os.getpid()), daemon=True)
        process.start()
        send.close()
        self._processes[future] = process

        def watch() -> None:
            try:
                ok, result = receive.recv()
            except (EOFError, OSError):
                process.join()
                code = process.exitcode
                reason = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
                if not future.done():
                    future.set_exception(EvaluationProcessDiedError(
                        f"the evaluation's process died ({reason}) without a result"))
                return
            finally:
                receive.close()
            process.join()
            if not future.done():
                future.set_result(result) if ok else future.set_exception(result)

        threading.Thread(target=watch, daemon=True, name="bodi-evaluation-watch").start()
        return future

    def cancel(self, future: Future) -> None:
        process = self._processes.pop(future, None)
        if process is not None and process.is_alive():
            process.kill()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for future in list(self._processes):
            if not future.done():
                self.cancel(future)


class EvaluationPool:
    """Threads, process pools and Dask clients behind ``submit`` and ``wait_first``."""

    def __init__(self, executor: Any, n_workers: int):
        self._owned = None
        self._dask = False
        self._shipped: dict[Any, bytes] = {}
        #: the values of finished Dask evaluations, fetched by :meth:`lost`
        self._fetched: dict[Any, Any] = {}
        if executor is None or executor == "thread":
            self.executor = ThreadPerEvaluation()
        elif executor == "process":
            self._owned = self.executor = ProcessPerEvaluation()
        elif isinstance(executor, Executor):
            self.executor = executor
        elif type(executor).__module__.startswith("distributed") and hasattr(executor, "submit"):
            self.executor, self._dask = executor, True
            self._address = getattr(getattr(executor, "scheduler", None), "address", "?")
        else:
            raise ValueError(
                "executor must be None, 'thread', 'process', a concurrent.futures.Executor "
                f"or a dask.distributed.Client, got {executor!r}"
            )

    def __enter__(self) -> EvaluationPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._owned is not None:
            self._owned.shutdown(wait=False, cancel_futures=True)

    def submit(self, func: Callable[[dict[str, Value]], Any], params: dict[str, Value]) -> Any:
        if self._dask:
            if func not in self._shipped:  # the workers cannot import the user's own modules
                self._shipped[func] = pickled_by_value(func)
            return self.executor.submit(call_pickled, self._shipped[func], params, pure=False)
        return self.executor.submit(func, params)

    def lost(self, future: Any) -> BaseException | None:
        """The error of a finished ``future`` when the evaluation itself did not run to its
        end for a reason outside the objective (a Dask worker lost, the task cancelled by the
        cluster); ``None`` otherwise. Such an evaluation is run again, never recorded as a
        failed trial. Raises :class:`ClusterLostError` where the scheduler no longer accepts
        connections."""
        if not self._dask:
            return None
        error = self._lost(future)
        if error is not None and self._scheduler_gone():
            raise self._gone(error)
        return error

    def _scheduler_gone(self) -> bool:
        """Whether the scheduler's TCP address refuses a connection (a scheduler that is
        merely slow still accepts one)."""
        where = urlsplit(str(self._address))
        if where.scheme != "tcp" or where.hostname is None or where.port is None:
            return False
        try:
            socket.create_connection((where.hostname, where.port), timeout=5).close()
        except OSError:
            return True
        return False

    def _gone(self, err: BaseException) -> ClusterLostError:
        return ClusterLostError(
            f"the Dask scheduler at {self._address} is gone ({type(err).__name__}); every "
            "finished evaluation is stored, the running ones are evaluated when the study "
            "resumes (--resume)")

    def _lost(self, future: Any) -> BaseException | None:
        from distributed import KilledWorker
        from distributed.comm.core import CommClosedError

        if future.status == "cancelled":
            return RuntimeError("the Dask cluster cancelled the evaluation")
        if future.status == "finished":  # its value is still to be fetched from the worker
            try:
                self._fetched[future] = future.result(timeout=10)
            except Exception as err:  # the scheduler or the worker went away meanwhile
                return err
            return None
        if future.status != "error":
            return RuntimeError(f"the Dask cluster lost the evaluation ({future.status})")
        try:
            error = future.exception(timeout=10)
        except Exception as err:  # the scheduler is gone: the error cannot be fetched
            return err
        if isinstance(error, KilledWorker | CommClosedError | OSError):
            return error
        if isinstance(error, RuntimeError) and "deserializ" in str(error):
            return error  # the worker could not load the task (e.g. a package missing there)
        return None

    def outcome(self, future: Any) -> Callable[[], Any]:
        """The outcome of a finished ``future`` that :meth:`lost` did not call lost: a
        callable that returns its value or raises the objective's exception."""
        if future in self._fetched:
            value = self._fetched.pop(future)
            return lambda: value
        return future.result

    def cancel(self, future: Any) -> None:
        """Stop waiting for ``future`` (and end its process where there is one)."""
        if isinstance(self.executor, ProcessPerEvaluation):
            self.executor.cancel(future)
        else:
            future.cancel()

    def wait_first(self, futures: list[Any], timeout: float | None) -> list[Any]:
        if self._dask:
            from distributed import wait
            from distributed.client import FuturesCancelledError

            try:
                return list(wait(futures, timeout=timeout, return_when="FIRST_COMPLETED").done)
            except TimeoutError:
                return []
            except (FuturesCancelledError, CancelledError, OSError) as err:
                raise self._gone(err) from None
        done, _ = futures_wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return [f for f in futures if f in done]  # in submission order
