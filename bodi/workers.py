"""Workers of a shared study: names, liveness and heartbeats.

Every optimizer instance is a *worker* named ``host~table:pid:start-token`` (``table``: which
process table the pid belongs to, :func:`_process_table`; ``start``: when its process started,
so that a reused process id is not taken for it). The pending trials it hands out carry its
name and a heartbeat time that a daemon thread refreshes every :func:`heartbeat_interval`
seconds while the optimizer lives. Another worker takes a pending trial over
(:meth:`bodi.study.Study.ask`) only when its worker is gone:

* on the same host (the same process table), its process no longer runs; while it runs, its
  trials stay its own however long its objective holds the interpreter (a pure-Python loop that
  never releases the GIL, a stopped process), since the process table, not the heartbeat, says
  so;
* in the same process, its optimizer was closed (:meth:`bodi.optimizers.Optimizer.close`,
  which hands its pending trials back at once) or garbage collected;
* on another host, its heartbeat is older than :func:`stale_after` seconds (60, or
  ``$BODI_STALE_AFTER``; a worker beats at least three times within it). If it tells its
  value late, after another worker took the trial over, no second trial is added for the
  configuration (:meth:`bodi.study.Study.tell`).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import socket
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bodi.storage import Storage

HEARTBEAT_INTERVAL = 10.0  # the most seconds between two heartbeats of a worker
#: a pending trial of a worker on another host without a heartbeat for this long is re-issued
STALE_AFTER = 60.0


def stale_after() -> float:
    """Seconds without a heartbeat after which a worker on another host is gone:
    ``$BODI_STALE_AFTER`` (a positive number), else :data:`STALE_AFTER`."""
    text = os.environ.get("BODI_STALE_AFTER")
    if text is None:
        return STALE_AFTER
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"BODI_STALE_AFTER must be a positive number of seconds, got {text!r}")
    return seconds


def heartbeat_interval() -> float:
    """Seconds between two heartbeats: :data:`HEARTBEAT_INTERVAL`, or a third of
    :func:`stale_after` where that is shorter, so that a live worker is never taken for gone."""
    return min(HEARTBEAT_INTERVAL, stale_after() / 3)


def _process_table() -> str:
    """An identity of this process table: the boot and the PID namespace. Two machines, or
    two containers, that share a host name have different ones, so a worker never judges
    another's process by a process id of its own table."""
    parts = []
    for read in (lambda: Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
                 lambda: os.readlink("/proc/self/ns/pid")):
        try:
            parts.append(read())
        except OSError:
            parts.append(socket.gethostname())
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:10]


#: this host in worker names: its name (``$BODI_WORKER_HOST`` overrides it) and
#: :func:`_process_table`, as ``name~table``
_HOST = f"{os.environ.get('BODI_WORKER_HOST') or socket.gethostname()}~{_process_table()}"


def _start_time(pid: int) -> str | None:
    """When process ``pid`` of this host started (clock ticks since boot), if known."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def new_worker_name() -> str:
    """``host~table:pid:start-token``, unique for each optimizer instance."""
    start = _start_time(os.getpid()) or "0"
    return f"{_HOST}:{os.getpid()}:{start}-{uuid.uuid4().hex[:12]}"


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
    pid_text, _, token = rest.partition(":")
    if host == _HOST and pid_text.isdigit():
        pid = int(pid_text)
        if pid == os.getpid():  # this process: open until closed or garbage collected
            return worker not in _OPEN
        if not _process_runs(pid):
            return True
        start = token.partition("-")[0] if "-" in token else None
        if start is not None and start != "0":  # a name that says when its process started
            return _start_time(pid) != start  # alive, unless the pid now names another
    if heartbeat is None:
        return True
    return (time.time() if now is None else now) - heartbeat > stale_after()


class Heartbeat:
    """A daemon thread that marks ``worker``'s pending trials alive until :meth:`stop` (called
    automatically when the owner is garbage collected, see ``weakref.finalize``)."""

    def __init__(self, storage: Storage, study: str, worker: str,
                 interval: float | None = None) -> None:
        interval = heartbeat_interval() if interval is None else interval
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(weakref.ref(storage), study, worker, interval),
            daemon=True, name="bodi-heartbeat",
        )
        self._thread.start()

    def _beat(self, storage_ref: weakref.ref, study: str, worker: str, interval: float) -> None:
        while not self._stop.wait(interval):
            storage = storage_ref()
            if storage is None:
                return
            with contextlib.suppress(Exception):  # closed or busy: again at the next beat
                storage.heartbeat(study, worker)
            del storage

    def stop(self) -> None:
        self._stop.set()
