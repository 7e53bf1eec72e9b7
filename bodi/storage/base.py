"""The storage contract and the records it keeps: a study's definition and its trials.

:class:`Storage` is the abstract contract, as Optuna's ``BaseStorage``: the methods a backend
implements, each with the concurrency promise it makes, and the claims, reclaims and writes
that are written once here over them. :class:`InMemoryStorage` (the default),
:class:`~bodi.storage.sqlite.SQLiteStorage` and :class:`~bodi.storage.postgres.PostgresStorage`
implement it.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

FORMAT = "bodi-study"
VERSION = 5  # 2: trials carry their worker, heartbeat, attempts and a change sequence number;
# 3: trials of multi-objective studies carry their objective values (``objective_values``), and
# trials of studies with outcome constraints their constraint values (``constraint_values``);
# 4: trials carry user attributes (``user_attrs``, a JSON object); 5: trials carry when their
# evaluation started and finished (``started``, ``finished``; empty in older files)


@dataclass(frozen=True)
class StudyRecord:
    """What a storage knows about a study (everything needed to rebuild its optimizer)."""

    name: str
    optimizer: str
    space: dict[str, Any]
    settings: dict[str, Any]
    seed: int
    #: ``"minimize"``/``"maximize"``; a multi-objective study's directions joined by commas
    direction: str
    #: when the storage created it (its identity: a study deleted and created again under the
    #: same name is another study); ``None`` before it is stored
    created: float | None = dataclasses.field(default=None, compare=False)

    @property
    def directions(self) -> list[str]:
        """One direction per objective."""
        return self.direction.split(",")


@dataclass(frozen=True)
class TrialRecord:
    """One stored trial.

    ``worker`` names the optimizer instance that holds a pending trial
    (``host:pid:token``), ``heartbeat`` is when that worker last said it is alive, and
    ``attempts`` counts how often the trial was handed out for evaluation.
    """

    number: int
    state: str
    params: dict[str, Any]
    x: list[float]
    value: float | None
    message: str | None
    suggest_seconds: float
    worker: str | None = None
    heartbeat: float | None = None
    attempts: int = 1
    #: the objective values of a complete trial of a multi-objective study (``value`` is then
    #: ``None``); ``None`` in a single-objective study
    values: list[float] | None = None
    #: the outcome-constraint values of a complete trial (feasible when all are ``<= 0``)
    constraints: list[float] | None = None
    #: the user's attributes of the trial (JSON values by name)
    user_attrs: dict[str, Any] | None = None
    #: when the trial was handed out for evaluation, and when its result (or failure) was
    #: stored (seconds since the epoch; ``None``: not yet, or stored by an older bodi)
    started: float | None = None
    finished: float | None = None


class StudyGoneError(RuntimeError):
    """The study was deleted (or deleted and created again) while a worker wrote to it."""


class Storage(ABC):
    """The contract of a study storage.

    Several workers (processes or machines) may share one study: new trials are *claimed*
    with :meth:`add_trials`, which sees every trial added by the others in the same
    transaction, and a worker follows the others' changes with :meth:`changes`. A worker names
    the study it writes to with :meth:`bind_study`; from then on every write transaction
    checks, under its lock, that the study is still the one created then
    (:class:`StudyGoneError` if not).

    A backend implements the abstract methods below; each says the concurrency it promises.
    Every write goes through :meth:`_writing`, one transaction of one study that no other
    writer of that study (in any process sharing the storage) interleaves with; inside it
    :meth:`_write`, :meth:`_trials_from`, :meth:`_count` and :meth:`_trial` read and write
    that study's trials. :meth:`add_trials`, :meth:`reclaim` and :meth:`put_trials` are
    written once here over them.
    """

    #: whether other processes can share the studies (then workers send heartbeats)
    shared = False

    def __init__(self) -> None:
        #: study name -> the ``created`` of the study this storage object writes to
        self._bound: dict[str, float | None] = {}

    def bind_study(self, record: StudyRecord) -> None:
        """Write to ``record``'s study only while it is that study (same ``created``)."""
        self._bound[record.name] = record.created

    def check_bound(self, study: str) -> None:
        """Raise :class:`StudyGoneError` if ``study``, bound by :meth:`bind_study`, was
        deleted or replaced (a read, outside any write)."""
        if study in self._bound:
            stored = self.get_study(study)
            self._check_bound(study, stored and stored.created, stored is not None)

    def _check_bound(self, study: str, created: float | None, exists: bool) -> None:
        """Inside a write transaction of ``study``: raise :class:`StudyGoneError` if the study
        bound by :meth:`bind_study` was deleted (``exists`` false) or replaced (another
        ``created``)."""
        if study not in self._bound or (exists and created == self._bound[study]):
            return
        what = "deleted and created again" if exists else "deleted"
        raise StudyGoneError(
            f"study {study!r} was {what} in {getattr(self, 'path', 'the storage')} while this "
            "worker wrote to it; it writes nothing more (what it stored before is kept, or "
            "went with the deleted study)")

    # ------------------------------------------------------------------ what a backend provides
    @abstractmethod
    def get_study(self, name: str) -> StudyRecord | None:
        """The study ``name`` as stored now (``None``: there is none). A read: it sees every
        committed write."""

    @abstractmethod
    def study_names(self) -> list[str]:
        """The names of the stored studies, sorted."""

    @abstractmethod
    def create_study(self, record: StudyRecord) -> None:
        """Store a new study (its ``created`` set now). Atomic: of workers creating the same
        name at once exactly one succeeds; the others get ``ValueError``."""

    @abstractmethod
    def delete_study(self, name: str) -> None:
        """Remove a study and all its trials in one transaction (``ValueError`` if there is
        none); the workers bound to it then fail with :class:`StudyGoneError`."""

    @abstractmethod
    def changes(self, study: str, cursor: int) -> tuple[list[TrialRecord], int]:
        """The trials written after ``cursor`` (in number order) and the cursor to pass next.
        A read of committed writes only: a trial written concurrently is in this call's result
        or in the next one's, never lost."""

    @abstractmethod
    def heartbeat(self, study: str, worker: str) -> None:
        """Mark the pending trials of ``worker`` as alive now (one transaction)."""

    @abstractmethod
    def _writing(self, study: str) -> AbstractContextManager[None]:
        """One committed write transaction of ``study`` that no other writer of it
        interleaves with (a lock held to its end); it checks the bound study first
        (:meth:`_check_bound`) and rolls back on an error."""

    @abstractmethod
    def _write(self, study: str, trial: TrialRecord) -> None:
        """Insert or replace ``trial`` (inside :meth:`_writing`), after every earlier write in
        the order :meth:`changes` reports."""

    @abstractmethod
    def _trials_from(self, study: str, first: int) -> list[TrialRecord]:
        """The trials numbered ``first`` and later (inside :meth:`_writing`)."""

    @abstractmethod
    def _count(self, study: str) -> int:
        """How many trials ``study`` holds (inside :meth:`_writing`)."""

    @abstractmethod
    def _trial(self, study: str, number: int) -> TrialRecord | None:
        """Trial ``number`` of ``study`` (inside :meth:`_writing`)."""

    @abstractmethod
    def close(self) -> None:
        """Release the storage's resources (connections, file handles)."""

    # ------------------------------------------------------------------ written once here
    def put_trial(self, study: str, trial: TrialRecord) -> None:
        """Insert or replace a trial (one committed state change)."""
        self.put_trials(study, [trial])

    def put_trials(self, study: str, trials: Sequence[TrialRecord]) -> None:
        """Insert or replace several trials in one committed transaction."""
        with self._writing(study):
            for trial in trials:
                self._write(study, trial)

    def trials(self, study: str) -> list[TrialRecord]:
        """Every trial of ``study``, in number order."""
        return self.changes(study, 0)[0]

    def add_trials(
        self, study: str, trials: Sequence[TrialRecord], *, known: int,
        identity: Callable[[TrialRecord], Hashable] | None = None,
        limit: int | None = None,
    ) -> list[TrialRecord] | None:
        """Claim new trials, numbered after every stored one, in one transaction.

        Args:
            trials: the new trials (their ``number`` is ignored).
            known: how many trials the caller has seen; those numbered from ``known`` on were
                added by other workers since.
            identity: a trial's configuration identity (the study's
                :func:`bodi.novelty.row_key` of its ``x``): refuse (return ``None``) when one
                of those has the identity of a new trial; ``None``: repeats are allowed.
            limit: the study holds at most this many trials: only the first new trials that
                fit are added (maybe none).

        Returns:
            The stored trials with their numbers, or ``None`` on a conflict (nothing added).
        """
        with self._writing(study):
            others, count = self._trials_from(study, known), self._count(study)
            if identity is not None:
                taken = {identity(t) for t in others}
                if any(identity(t) in taken for t in trials):
                    return None
            room = len(trials) if limit is None else max(0, min(len(trials), limit - count))
            stored = [dataclasses.replace(t, number=count + i)
                      for i, t in enumerate(trials[:room])]
            for trial in stored:
                self._write(study, trial)
            return stored

    def reclaim(
        self, study: str, seen: TrialRecord, worker: str, *, max_attempts: int,
        message: str,
    ) -> TrialRecord | None:
        """Take over a pending trial whose worker is gone, in one transaction.

        If the stored trial is still as ``seen`` (pending, same worker and attempts), it is
        handed to ``worker`` with one more attempt, or, when it was already handed out
        ``max_attempts`` times, marked failed with ``message``. Returns the new record, or
        ``None`` when another worker changed the trial first.
        """
        with self._writing(study):
            new = _reclaimed(self._trial(study, seen.number), seen, worker, max_attempts,
                             message)
            if new is not None:
                self._write(study, new)
            return new

def _reclaimed(
    current: TrialRecord | None, seen: TrialRecord, worker: str, max_attempts: int, message: str
) -> TrialRecord | None:
    if current is None or current.state != "pending" or (current.worker, current.attempts) != (
        seen.worker, seen.attempts
    ):
        return None
    now = time.time()
    if current.attempts >= max_attempts:
        return dataclasses.replace(current, state="failed", message=message, finished=now)
    return dataclasses.replace(
        current, worker=worker, heartbeat=now, attempts=current.attempts + 1, started=now
    )


class InMemoryStorage(Storage):
    """Keeps studies in memory only (the default); thread-safe: one lock serializes every
    transaction of this object, and it is never shared with other processes."""

    def __init__(self) -> None:
        super().__init__()
        self._studies: dict[str, StudyRecord] = {}
        self._trials: dict[str, dict[int, tuple[int, TrialRecord]]] = {}
        self._seq = 0
        self._lock = threading.RLock()

    def get_study(self, name: str) -> StudyRecord | None:
        return self._studies.get(name)

    def study_names(self) -> list[str]:
        return sorted(self._studies)

    def create_study(self, record: StudyRecord) -> None:
        with self._lock:
            if record.name in self._studies:
                raise ValueError(f"study {record.name!r} already exists")
            self._studies[record.name] = dataclasses.replace(record, created=time.time())
            self._trials[record.name] = {}

    def delete_study(self, name: str) -> None:
        with self._lock:
            if self._studies.pop(name, None) is None:
                raise ValueError(f"no study {name!r}")
            self._trials.pop(name, None)

    def changes(self, study: str, cursor: int) -> tuple[list[TrialRecord], int]:
        with self._lock:
            rows = self._trials.get(study, {})
            new = [rows[k][1] for k in sorted(rows) if rows[k][0] > cursor]
            return new, self._seq

    def heartbeat(self, study: str, worker: str) -> None:
        with self._lock:
            now = time.time()
            for _, trial in list(self._trials.get(study, {}).values()):
                if trial.state == "pending" and trial.worker == worker:
                    self._write(study, dataclasses.replace(trial, heartbeat=now))

    @contextmanager
    def _writing(self, study: str) -> Iterator[None]:
        with self._lock:
            stored = self._studies.get(study)
            self._check_bound(study, stored and stored.created, stored is not None)
            yield

    def _write(self, study: str, trial: TrialRecord) -> None:
        self._seq += 1
        self._trials[study][trial.number] = (self._seq, trial)

    def _trials_from(self, study: str, first: int) -> list[TrialRecord]:
        rows = self._trials[study]
        return [rows[k][1] for k in sorted(rows) if k >= first]

    def _count(self, study: str) -> int:
        return len(self._trials[study])

    def _trial(self, study: str, number: int) -> TrialRecord | None:
        return self._trials[study].get(number, (0, None))[1]

    def close(self) -> None:
        """Nothing to release in memory."""
