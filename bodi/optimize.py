"""One-call optimization: ``bodi.minimize(f, space, budget)`` (like ``skopt.gp_minimize``)."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bodi.checks import check_integer
from bodi.diagnostics import logger
from bodi.executors import EvaluationPool, EvaluationProcessDiedError, EvaluationTimeoutError
from bodi.optimizers.base import Optimizer
from bodi.optimizers.bo import BODi
from bodi.progress import ProgressBars
from bodi.space import SearchSpace, Value
from bodi.study import Study
from bodi.trials import Outcome, Trial

Objective = Callable[[dict[str, Value]], float | Sequence[float]]
#: how often one evaluation that the cluster lost (not the objective) is run again
MAX_INFRASTRUCTURE_RETRIES = 3


@dataclass
class OptimizeResult:
    """Outcome of :func:`minimize`.

    Attributes:
        best_params: the best configuration found (``None`` with several objectives).
        best_value: its value (``None`` with several objectives).
        trials: every trial in order (``Trial.params``, ``.value``, ``.state``, ...).
        study: the study, ready to continue with ``ask``/``tell``.
        pareto_front: the complete trials no other complete trial dominates, each with
            ``.params`` and ``.values`` (with one objective: the best trials).
    """

    best_params: dict[str, Value] | None
    best_value: float | None
    trials: list[Trial]
    study: Study
    pareto_front: list[Trial]

    def __repr__(self) -> str:
        states = [t.state for t in self.trials]
        counts = ", ".join(f"{states.count(s)} {s}" for s in ("complete", "failed", "pending")
                           if states.count(s))
        if self.study.is_multi_objective:
            best = f"pareto_front={len(self.pareto_front)} trials"
        else:
            params = repr(self.best_params)
            params = params if len(params) <= 120 else params[:117] + "..."
            best = f"best_value={self.best_value!r}, best_params={params}"
        return (f"OptimizeResult({best}, trials={len(self.trials)} ({counts}), "
                f"optimizer={type(self.study.optimizer).__name__})")

    @property
    def values(self) -> list[float | None] | list[list[float] | None]:
        """Each trial's value (with several objectives: its list of values), ``None`` where
        the evaluation failed."""
        if self.study.is_multi_objective:
            return [t.objective_values for t in self.trials]
        return [t.value for t in self.trials]


def minimize(
    func: Objective,
    space: SearchSpace,
    budget: int = 100,
    *,
    seed: int = 0,
    direction: str = "minimize",
    directions: Sequence[str] | None = None,
    batch_size: int = 1,
    n_workers: int = 1,
    executor: Any = None,
    evaluation_timeout: float | None = None,
    time_limit: float | None = None,
    timeout: float | None = None,
    storage: Any = None,
    study_name: str | None = None,
    optimizer: Optimizer | None = None,
    study: Study | None = None,
    max_attempts: int = 2,
    progress: bool = False,
    callback: Callable[[Trial], Any] | None = None,
    max_consecutive_failures: int = 10,
    catch: type[Exception] | Sequence[type[Exception]] = (),
    start_from: Any = None,
    **bodi_options: Any,
) -> OptimizeResult:
    """Optimize ``func`` over ``space`` until the study holds ``budget`` finished evaluations.

    Args:
        func: takes a dict of parameter values, returns a float (with several objectives: a
            sequence of one float per objective; with ``outcome_constraints``, a
            :class:`bodi.Outcome` that adds the constraint values). NaN or inf, an exception
            named in ``catch``, running longer than ``evaluation_timeout`` or a process that
            dies under ``executor="process"`` marks that evaluation as failed (it still counts
            toward the budget, and the point is never proposed again). Any other exception is
            stored as a failed trial and then raised, with the objective's traceback, as soon
            as the evaluations still running have finished and been stored (as Optuna does
            without ``catch``): a bug of the objective costs one evaluation. A value
            that is no number at all (a string, ``None``, a list for one objective) is a bug
            of the objective: the trial is stored as failed and the run stops at once with
            :class:`InvalidObjectiveValueError`.
        space: the search space.
        budget: number of finished (complete or failed) evaluations in the study.
        seed: seed of the optimizer (ignored when ``optimizer`` is given).
        direction: ``"minimize"`` (default) or ``"maximize"``.
        directions: one direction per objective, for several objectives (e.g.
            ``["minimize", "minimize"]`` for error and cost); the result's ``pareto_front``
            holds the trade-offs found. See :class:`BODi` for ``ref_point`` and
            ``known_objectives``.
        batch_size: points proposed per ``ask`` when evaluating sequentially.
        outcome_constraints, ref_point, known_objectives: see :class:`BODi` (they go to it
            with the other ``bodi_options``).
        n_workers: evaluations kept running at once. As soon as one finishes it is stored and
            the next point is suggested with the running ones as pending points.
        executor: where evaluations run when ``n_workers > 1`` or ``timeout`` is set:
            ``None``/``"thread"`` (a thread per evaluation), ``"process"`` (a child process
            per evaluation: a configuration that kills its process is recorded as a failed
            trial, and a timed-out evaluation is terminated), a
            ``concurrent.futures.Executor``, or a Dask ``distributed.Client``.
        evaluation_timeout: seconds after which a running evaluation counts as failed. A
            thread cannot be stopped: it runs on in the background and its result is ignored
            (``executor="process"`` kills its process).
        time_limit: seconds for the whole call (Optuna's ``timeout``): no evaluation starts
            after it; the running ones finish and are stored.
        timeout: the old name of ``evaluation_timeout`` (deprecated).
        storage: persist the study (e.g. ``storage="study.db"``); an existing study of that
            name is resumed and ``budget`` counts its trials too. Several processes may run
            ``minimize`` on one stored study at once: together they evaluate ``budget``
            trials, each once.
        study_name: the study's name in ``storage``.
        optimizer: the optimizer to use instead of a new :class:`BODi`
            (:func:`bodi.optimizers.make_optimizer` makes any of them by name).
        study: an open study to continue (:func:`bodi.create_study`,
            :func:`bodi.load_study`), instead of ``optimizer``, ``storage`` and
            ``study_name``.
        max_attempts: a trial is handed out at most this many times (see :class:`Study`).
        progress: show a progress bar with the best value so far (with several objectives:
            the size of the Pareto front).
        callback: called with each finished trial.
        max_consecutive_failures: stop with an error after this many failures in a row.
        start_from: an earlier study to start from (a study file, a URL or a storage, with
            one study or one of this study's name): its finished trials are copied in first
            (:meth:`bodi.Study.add_trials_from`; the space may be wider) and count toward
            ``budget``; copying again on a resume adds nothing.
        catch: the exception classes that are expected failures of the objective (e.g.
            ``(RuntimeError,)`` for a simulator that crashes on some inputs; ``Exception``
            for all): such an evaluation is a failed trial and the run goes on.
        **bodi_options: keywords for :class:`BODi` (``dictionary_size``, ``n_init``, ...).
    """
    budget = check_integer("budget", budget)
    n_workers = check_integer("n_workers", n_workers)
    if timeout is not None:
        if evaluation_timeout is not None:
            raise ValueError("pass evaluation_timeout only (timeout is its deprecated name)")
        warnings.warn("minimize(timeout=...) is now evaluation_timeout=... (seconds per "
                      "evaluation); time_limit=... limits the whole run", DeprecationWarning,
                      stacklevel=2)
        evaluation_timeout = timeout
    for name, seconds in (("evaluation_timeout", evaluation_timeout), ("time_limit", time_limit)):
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(
                seconds, int | float) or not seconds > 0):
            raise ValueError(f"{name} must be a positive number of seconds, got {seconds!r}")
    timeout = evaluation_timeout
    if not callable(func):
        raise ValueError("func must be callable")
    if study is not None:
        if optimizer is not None or bodi_options or storage is not None or study_name:
            raise ValueError("study= brings its optimizer and storage: pass no optimizer, BODi "
                             "options, storage or study_name with it")
        if study.space.to_dict() != space.to_dict():
            raise ValueError("the study's space is not the space given")
    else:
        if optimizer is None:
            optimizer = BODi(space, seed=seed, direction=direction, directions=directions,
                             **bodi_options)
        elif bodi_options:
            raise ValueError("BODi options cannot be combined with an explicit optimizer")
        study = Study(optimizer, storage, study_name=study_name, max_attempts=max_attempts)
    if start_from is not None:
        study.add_trials_from(start_from)
    optimizer = study.optimizer
    loop = _Loop(study, budget, callback, max_consecutive_failures, _exception_classes(catch))
    if time_limit is not None:
        loop.deadline = time.monotonic() + time_limit
    warnings_before = optimizer.numerical_warnings
    with ProgressBars(progress, what="progress=True (the progress bar)") as bars:
        bar = bars.add("[bold]bodi", total=budget, completed=loop.finished)
        loop.advance = lambda opt: bars.advance(bar, _progress_summary(opt))
        if n_workers == 1 and executor is None and timeout is None:
            loop.run_sequential(func, batch_size)
        else:
            with EvaluationPool(executor, n_workers) as pool:
                loop.run_parallel(func, pool, n_workers, timeout)
    study.refresh()
    gathered = optimizer.numerical_warnings - warnings_before
    if gathered:
        logger.info("%d numerical warning(s) of model fitting and acquisition optimization "
                    "were gathered during this run (details: the 'bodi' logger at DEBUG level)",
                    gathered)
    front = study.pareto_front
    if not front:
        failed = [t for t in study.trials if t.state == "failed"]
        logger.warning("no evaluation completed%s", f"; the first error: {failed[0].message}"
                       if failed else "")
        return OptimizeResult(None, None, study.trials, study, front)
    if study.is_multi_objective:
        return OptimizeResult(None, None, study.trials, study, front)
    best = study.best
    return OptimizeResult(best[0], best[1], study.trials, study, front)


def _exception_classes(catch: Any) -> tuple[type[Exception], ...]:
    """``catch`` as a tuple of exception classes (one clear error for anything else)."""
    classes = (catch,) if isinstance(catch, type) else tuple(catch)
    bad = [c for c in classes if not (isinstance(c, type) and issubclass(c, Exception))]
    if bad:
        raise ValueError(f"catch takes exception classes (e.g. (KeyError, RuntimeError)), got "
                         f"{bad[0]!r}")
    return classes


def _progress_summary(study: Study) -> float | str | None:
    """What the progress bar shows: the best value, or the Pareto front's size."""
    if study.is_multi_objective:
        return f"{len(study.pareto_front)} Pareto-optimal"
    best = study.best
    return None if best is None else best[1]


class _Loop:
    """Bookkeeping shared by the sequential and the parallel evaluation loops.

    The budget is the number of trials in the study: new trials are claimed only while the
    study holds fewer (:meth:`Study.ask_within`), so several processes running this loop
    on one stored study together fill it exactly.
    """

    def __init__(self, study: Study, budget: int, callback, max_failures: int,
                 catch: tuple[type[Exception], ...]):
        self.study, self.budget = study, budget
        self.callback, self.max_failures, self.catch = callback, max_failures, catch
        self.failures_in_a_row = 0
        #: the error that ends the run once the running evaluations are stored
        self.stop_error: Exception | None = None
        self.deadline = float("inf")  # time.monotonic() after which nothing new starts
        self.advance: Callable[[Study], None] = lambda study: None

    @property
    def finished(self) -> int:
        return self.study.n_finished

    def ask(self, count: int) -> list[dict[str, Value]]:
        if time.monotonic() >= self.deadline or self.stop_error is not None:
            return []
        return self.study.ask_within(count, limit=self.budget)

    def record(self, params: dict[str, Value], outcome: Callable[[], Any]) -> Trial:
        """Store one finished evaluation first, then report it."""
        trial = _tell(self.study, params, outcome, self.catch)
        self.failures_in_a_row = self.failures_in_a_row + 1 if trial.state == "failed" else 0
        self.advance(self.study)
        if self.callback is not None:
            self.callback(trial)
        if self.failures_in_a_row >= self.max_failures:
            raise RuntimeError(
                f"{self.failures_in_a_row} evaluations failed in a row; last error: "
                f"{trial.message}"
            )
        return trial

    def run_sequential(self, func: Objective, batch_size: int) -> None:
        while batch := self.ask(batch_size):
            for params in batch:
                self.record(params, lambda p=params: func(dict(p)))

    def run_parallel(self, func: Objective, pool: EvaluationPool, n_workers: int,
                     timeout: float | None) -> None:
        running: dict[Any, tuple[dict[str, Value], float]] = {}
        retries: dict[str, int] = {}
        try:
            while True:
                while len(running) < n_workers and (batch := self.ask(1)):
                    params = batch[0]  # the running points are pending
                    running[pool.submit(func, dict(params))] = (params, time.monotonic())
                if not running:
                    break
                wait = None
                if timeout is not None:
                    first_deadline = min(start for _, start in running.values()) + timeout
                    wait = max(0.0, first_deadline - time.monotonic())
                for future in pool.wait_first(list(running), wait):
                    params, start = running.pop(future)
                    lost = pool.lost(future)
                    if lost is None:
                        self.record_or_stop(params, pool.outcome(future))
                        continue
                    key = json.dumps(params, sort_keys=True, default=str)
                    retries[key] = retries.get(key, 0) + 1
                    if retries[key] > MAX_INFRASTRUCTURE_RETRIES:
                        raise RuntimeError(
                            f"the cluster lost the evaluation of {params} "
                            f"{retries[key]} times ({type(lost).__name__}: {lost}); it stays "
                            "pending and is evaluated when the study resumes") from lost
                    logger.warning("evaluation lost by the cluster (%s: %s); running it again",
                                   type(lost).__name__, lost)
                    running[pool.submit(func, dict(params))] = (params, start)
                if timeout is not None:
                    now = time.monotonic()
                    for future, (params, start) in list(running.items()):
                        if now - start >= timeout:
                            running.pop(future)
                            pool.cancel(future)
                            self.record_or_stop(params, _raiser(EvaluationTimeoutError(
                                f"exceeded the time limit of {timeout:g} s")))
        finally:
            for future in running:
                pool.cancel(future)
        if self.stop_error is not None:
            raise self.stop_error

    def record_or_stop(self, params: dict[str, Value], outcome: Callable[[], Any]) -> None:
        """:meth:`record`; an error that ends the run is kept until the running evaluations
        are stored (the first one is raised, later ones are logged)."""
        try:
            self.record(params, outcome)
        except Exception as err:
            if self.stop_error is None:
                self.stop_error = err
            else:
                logger.warning("also while stopping: %s: %s", type(err).__name__, err)


def _raiser(error: Exception) -> Callable[[], Any]:
    def outcome() -> Any:
        raise error

    return outcome


#: failures of the evaluation's surroundings, never of the objective's code: always a failed
#: trial, whatever ``catch`` names
_ALWAYS_CAUGHT = (EvaluationProcessDiedError, EvaluationTimeoutError)


def _tell(study: Study, params: dict[str, Value], outcome: Callable[[], Any],
          catch: tuple[type[Exception], ...] = ()) -> Trial:
    """Tell ``outcome()`` (a value, or an exception) for ``params``; failures are recorded,
    and an exception that ``catch`` does not name is raised after it is stored."""
    try:
        value = outcome()
    except Exception as err:  # the user's objective failed: stored first
        trial = study.tell_failure(params, f"{type(err).__name__}: {err}")
        if isinstance(err, catch + _ALWAYS_CAUGHT):
            return trial
        err.bodi_trial_number = trial.number  # type: ignore[attr-defined]  # for the CLI
        err.add_note(f"bodi: stored as failed trial #{trial.number}; name the exception in "
                     "catch= (bodi run --catch) if it is an expected failure, or fix the "
                     "objective and resume (with retry_failed / --retry-failed to evaluate "
                     "it again)")
        raise
    constraints = attrs = None
    if isinstance(value, Outcome):
        value, constraints, attrs = value.value, value.constraints, value.user_attrs
    elif study.outcome_constraints:
        return study.tell_failure(params, "the study has outcome constraints: the objective "
                                      "must return bodi.Outcome(value, constraints=[...])")
    problem = "None (a missing return?)" if value is None else None
    if problem is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                return study.tell(params, value, constraints=constraints,
                                      user_attrs=attrs)
            except ValueError as err:
                problem = str(err)
    trial = study.tell_failure(params, f"invalid objective value: {problem}")
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise InvalidObjectiveValueError(
        f"the objective returned {shown} ({type(value).__name__}) for trial #{trial.number}: "
        f"{problem}. Return a number{' per objective' if study.is_multi_objective else ''}"
        "; raise an exception or return float('nan') to mark a failed evaluation")


class InvalidObjectiveValueError(ValueError):
    """The objective returned something that is no objective value at all (a bug of the
    objective, not a failed evaluation): the run stops at once."""
