"""Workers of a shared study: names, liveness and heartbeats.

Every optimizer instance is a *worker* named ``host:pid:token``. The pending trials it hands
out carry its name and a heartbeat time that a daemon thread refreshes every
:data:`HEARTBEAT_INTERVAL` seconds while the optimizer lives. Another worker takes a pending
trial over (:meth:`bodi.optimizers.Optimizer.ask`) only when its worker is gone: a process on
the same host that no longer runs, an optimizer of the same process that was closed
(:meth:`bodi.optimizers.Optimizer.close`) or garbage collected, or a heartbeat older than
:data:`STALE_AFTER` seconds.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bodi.storage import Storage

HEARTBEAT_INTERVAL = 10.0  # seconds between two heartbeats of a worker
STALE_AFTER = 60.0  # a pending trial without a heartbeat for this long is re-issued
_HOST = socket.gethostname()


def new_worker_name() -> str:
    """``host:pid:token``, unique for each optimizer instance."""
    return f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _process_runs(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


#: the workers of this process that are open: worker name -> its optimizer
_OPEN: weakref.WeakValueDictionary[str, object] = weakref.WeakValueDictionary()


def register_worker(worker: str, owner: object) -> None:
    """Mark ``worker`` as open in this process for as long as ``owner`` lives."""
    _OPEN[worker] = owner


def unregister_worker(worker: str) -> None:
    _OPEN.pop(worker, None)


def worker_is_gone(worker: str | None, heartbeat: float | None, now: float | None = None) -> bool:
    """Whether the pending trials of ``worker`` (last heartbeat ``heartbeat``) are abandoned."""
    if worker is None:  # written before workers were recorded
        return True
    host, _, rest = worker.partition(":")
    pid_text = rest.partition(":")[0]
    if host == _HOST and pid_text.isdigit():
        pid = int(pid_text)
        if pid == os.getpid():  # this process: open until closed or garbage collected
            return worker not in _OPEN
        if not _process_runs(pid):
            return True
    if heartbeat is None:
        return True
    return (time.time() if now is None else now) - heartbeat > STALE_AFTER


class Heartbeat:
    """A daemon thread that marks ``worker``'s pending trials alive until :meth:`stop` (called
    automatically when the owner is garbage collected, see ``weakref.finalize``)."""

    def __init__(self, storage: Storage, study: str, worker: str,
                 interval: float = HEARTBEAT_INTERVAL) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(weakref.ref(storage), study, worker, interval),
            daemon=True, name="bodi-heartbeat",
        )
        self._thread.start()

    def _run(self, storage_ref: weakref.ref, study: str, worker: str, interval: float) -> None:
        while not self._stop.wait(interval):
            storage = storage_ref()
            if storage is None:
                return
            with contextlib.suppress(Exception):  # closed or busy: again at the next beat
                storage.heartbeat(study, worker)
            del storage

    def stop(self) -> None:
        self._stop.set()
