"""Studies: an optimizer's trials, where they are stored, and the workers that share them.

A :class:`Study` (``bodi.create_study(optimizer, storage)``, as Optuna's ``Study(storage,
sampler)``) owns everything but the algorithm: the storage (memory, a SQLite file,
PostgreSQL), the trials, the claims of its workers (every process or machine with a
:class:`Study` of the same name is a worker), their heartbeats, the told values' checks, and
the best/Pareto views. Its :meth:`Study.ask` hands the optimizer an immutable
:class:`~bodi.trials.History` and stores the points that
:meth:`bodi.optimizers.Optimizer.suggest` returns as this worker's pending trials.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
import weakref
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.diagnostics import logger
from bodi.novelty import row_key, row_keys
from bodi.space import DTYPE, Value
from bodi.storage import Storage, StudyRecord, TrialRecord, open_storage
from bodi.storage.urls import mask
from bodi.stored_studies import check_trial, existing_storage
from bodi.trials import (
    History,
    Trial,
    check_objective_values,
    check_user_attrs,
    check_value,
)
from bodi.workers import (
    Heartbeat,
    new_worker_name,
    register_worker,
    stale_after,
    unregister_worker,
    worker_is_gone,
)

if TYPE_CHECKING:
    from bodi.optimizers.base import Optimizer

MAX_CLAIMS = 20  # tries to claim new trials while other workers claim the same points


def create_study(
    optimizer: Optimizer,
    storage: str | Path | Storage | None = None,
    *,
    study_name: str | None = None,
    on_pending: str = "reissue",
    max_attempts: int = 2,
) -> Study:
    """A new study of ``optimizer`` in ``storage``, or the stored one of that name (whose
    optimizer, space, seed and settings must then be the same): see :class:`Study`."""
    return Study(optimizer, storage, study_name=study_name, on_pending=on_pending,
                 max_attempts=max_attempts)


class Study:
    """An optimization in a storage, as one worker sees and changes it.

    Args:
        optimizer: what proposes the points (a :class:`bodi.optimizers.Optimizer`); its class,
            space, seed, directions and settings define the study.
        storage: where the study lives: ``None`` (memory), a path (SQLite file), a URL
            (``sqlite:///path``, ``postgresql://...``) or a :class:`bodi.storage.Storage`. An
            existing study of the same name is joined; its definition must match.
        study_name: the study's name in the storage (default ``"default"``).
        on_pending: what to do with pending trials whose worker is gone (its process ended,
            or it sent no heartbeat for :func:`bodi.workers.stale_after` seconds):
            ``"reissue"`` (default; ``ask`` returns them again first) or ``"fail"``. Pending
            trials of live workers (other processes on the same study) are left to them.
        max_attempts: a trial is handed out at most this many times: when its evaluation was
            lost that often (the process evaluating it died, e.g. killed by the configuration
            itself), it is marked failed instead of being re-issued again.

    Values are stored as the user gave them. Several processes or machines may work on one
    stored study at once, each with its own :class:`Study` of the same name.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        storage: str | Path | Storage | None = None,
        *,
        study_name: str | None = None,
        on_pending: str = "reissue",
        max_attempts: int = 2,
    ) -> None:
        if not callable(getattr(optimizer, "suggest", None)):
            raise ValueError("a study needs an optimizer (e.g. bodi.BODi(space)), got "
                             f"{type(optimizer).__name__}")
        if on_pending not in ("reissue", "fail"):
            raise ValueError(f"on_pending must be 'reissue' or 'fail', got {on_pending!r}")
        check_integer("max_attempts", max_attempts)
        if study_name is not None and (not isinstance(study_name, str) or not study_name):
            raise ValueError(f"study_name must be a non-empty string, got {study_name!r}")
        self.optimizer = optimizer
        self.space = space = optimizer.space
        self.study_name = study_name or "default"
        self.directions = tuple(optimizer.directions)
        self.outcome_constraints = optimizer.outcome_constraints
        self.on_pending = on_pending
        self.max_attempts = int(max_attempts)
        self.allow_repeats = optimizer.allow_repeats
        settings = optimizer.settings()
        if self.outcome_constraints:  # (absent otherwise, as in studies stored before them)
            settings = {**settings, "outcome_constraints": self.outcome_constraints}
        self.record = StudyRecord(self.study_name, type(optimizer).__name__, space.to_dict(),
                                  json.loads(json.dumps(settings)), optimizer.seed,
                                  ",".join(self.directions))
        self._trials: list[Trial] = []
        self._numbers: dict[int, list[int]] = {}  # a point's row_key -> its trials' numbers
        self._points = torch.empty(16, space.dim, dtype=DTYPE)  # rows 0..n-1: the trials' x
        self._cursor = 0
        self._snapshot: History | None = None
        self.worker = new_worker_name()
        stale_after()  # a bad $BODI_STALE_AFTER is an error before anything is written
        self.storage = open_storage(storage)
        self._open()
        register_worker(self.worker, self)
        self._heartbeat = (
            Heartbeat(self.storage, self.study_name, self.worker)
            if self.storage.shared else None
        )
        self._finalizer = weakref.finalize(
            self, _end_worker, self.storage, self.study_name, self.worker, self._heartbeat)
        self._finalizer.atexit = False  # at exit the process table says the trials are free

    def __enter__(self) -> Study:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End this worker: its pending trials are handed back at once, to be re-issued by
        other workers of the study (as if its process had ended). Also happens when it is
        garbage collected."""
        unregister_worker(self.worker)
        self._finalizer()

    def _open(self) -> None:
        def complete_settings(settings: dict[str, Any]) -> dict[str, Any]:
            return type(self.optimizer).complete_settings(settings, self.space)

        mine = self.record
        stored = self.storage.get_study(self.study_name)
        if stored is None:
            try:
                self.storage.create_study(mine)
                self.storage.bind_study(self.storage.get_study(self.study_name))
                return
            except ValueError:  # another worker created it just now
                stored = self.storage.get_study(self.study_name)
                if stored is None:
                    raise
        self.storage.bind_study(stored)
        stored = dataclasses.replace(stored, settings=complete_settings(stored.settings))
        mine = dataclasses.replace(mine, settings=complete_settings(
            json.loads(json.dumps(mine.settings))))  # completed as the stored ones are
        different = [
            line for field in ("optimizer", "space", "settings", "seed", "direction")
            for line in _differences(field, getattr(stored, field),
                                     json.loads(json.dumps(getattr(mine, field))))
        ]
        if different:
            raise ValueError(
                f"study {self.study_name!r} in {getattr(self.storage, 'path', 'the storage')} "
                f"was created with other settings ({'; '.join(different[:5])}"
                f"{'; ...' if len(different) > 5 else ''}); continue it with the settings it "
                "was created with (bodi.load_study reads them), or choose another study name "
                "(--study-name)"
            )
        self.refresh()
        if self.on_pending == "fail":
            for trial in self._stale_pending():
                if not trial.waiting:  # an enqueued or retried trial is not lost
                    self._reclaim(trial, 0, "pending when the study was loaded")

    # ------------------------------------------------------------------ reading
    def refresh(self) -> None:
        """Read the trials that other workers added or changed."""
        records, self._cursor = self.storage.changes(self.study_name, self._cursor)
        known = len(self._trials)
        for record in records:  # in number order; claims add consecutive numbers atomically
            self._check(record)
            if record.number < len(self._trials):
                self._trials[record.number] = self._trials[record.number].updated(record)
            else:
                trial = Trial.from_record(record)
                self._trials.append(trial)
                if trial.number == len(self._points):  # full: a new buffer, twice as large
                    self._points = torch.cat([self._points, torch.empty_like(self._points)])
                self._points[trial.number] = trial.x
        new = self._points[known:len(self._trials)]
        for number, key in enumerate(row_keys(self.space, new).tolist(), start=known):
            self._numbers.setdefault(key, []).append(number)
        if records:
            self._snapshot = None

    def _check(self, record: TrialRecord) -> None:
        """A stored trial that this study cannot hold is one ``ValueError``
        (:func:`bodi.stored_studies.check_trial`)."""
        check_trial(record, len(self._trials), self.space.dim, len(self.directions),
                    f"{getattr(self.storage, 'path', 'the storage')}", self.study_name)

    @property
    def history(self) -> History:
        """The trials as they are now (an immutable snapshot; kept until they change)."""
        if self._snapshot is None:  # (trials are immutable: changed ones are replaced)
            self._snapshot = History(self.space, self.directions, self.outcome_constraints,
                                     tuple(self._trials), self._points[: len(self._trials)])
        return self._snapshot

    @property
    def trials(self) -> list[Trial]:
        """The trials in number order (as last read: :meth:`refresh` reads the others')."""
        return list(self._trials)

    @property
    def direction(self) -> str:
        """``"minimize"`` or ``"maximize"`` (with several objectives a ``ValueError``; see
        :attr:`directions`)."""
        return self.optimizer.direction

    @property
    def is_multi_objective(self) -> bool:
        return len(self.directions) > 1

    @property
    def best(self) -> tuple[dict[str, Value], float] | None:
        """``(params, value)`` of the best feasible completed trial, or ``None`` before any."""
        return self.history.best

    @property
    def pareto_front(self) -> list[Trial]:
        """The feasible complete trials no other one dominates, in number order."""
        return self.history.pareto_front

    @property
    def n_finished(self) -> int:
        """Number of complete and failed trials."""
        return self.history.n_finished

    def _stale_pending(self) -> list[Trial]:
        """Pending trials whose worker is gone (see :func:`bodi.workers.worker_is_gone`)."""
        return [t for t in self._trials if t.state == "pending" and t.worker != self.worker
                and worker_is_gone(t.worker, t.heartbeat)]

    def _reclaim(self, trial: Trial, max_attempts: int, message: str) -> bool:
        """Take over a stale pending trial; ``True`` if it is now this worker's to evaluate
        (``False``: failed with ``message`` after ``max_attempts``, or taken by another)."""
        record = self.storage.reclaim(self.study_name, trial.record(), self.worker,
                                      max_attempts=max_attempts, message=message)
        if record is None:  # another worker was quicker
            self.refresh()
            return False
        self._trials[trial.number] = trial.updated(record)
        self._snapshot = None
        return record.state == "pending"

    def _save(self, trial: Trial) -> Trial:
        """Commit one trial state change to the storage (and to :attr:`trials`)."""
        self.storage.put_trial(self.study_name, trial.record())
        self._trials[trial.number] = trial
        self._snapshot = None
        return trial

    # ------------------------------------------------------------------ asking
    def ask(self, n: int | None = None) -> dict[str, Value] | list[dict[str, Value]]:
        """Propose one configuration (``n=None``) or a list of ``n`` configurations.

        Pending trials whose worker is gone are re-issued first; the others are new trials,
        never equal to an earlier trial (unless the optimizer's ``allow_repeats``).
        """
        count = 1 if n is None else n
        check_integer("n", count)
        configs = self.ask_within(int(count), limit=None)
        return configs[0] if n is None else configs

    def ask_within(self, count: int, *, limit: int | None) -> list[dict[str, Value]]:
        """Up to ``count`` configurations such that the study holds at most ``limit`` trials
        (``None``: no limit); an empty list when the study is full."""
        return [dict(t.params) for t in self.ask_trials(count, limit=limit)]

    def ask_trials(self, count: int, *, limit: int | None = None) -> list[Trial]:
        """Up to ``count`` trials to evaluate now, this worker's, such that the study holds at
        most ``limit`` trials (``None``: no limit); an empty list when it is full.

        Waiting and lost trials (their worker is gone) come first; then new points from the
        optimizer, claimed in one transaction that sees the other workers' trials. When
        another worker claimed one of them first, the trials are re-read and the optimizer is
        asked again with a salt of this worker's (workers with one seed would otherwise propose
        the same points again and again)."""
        self.refresh()
        trials: list[Trial] = []
        for trial in self._stale_pending():
            if len(trials) == count:
                break
            if self.on_pending == "fail" and not trial.waiting:
                self._reclaim(trial, 0, "pending when the study was loaded")
            elif self._reclaim(trial, self.max_attempts, (
                f"its evaluation was lost {trial.attempts} time(s) (the evaluating process "
                "ended without a result); not re-issued again"
            )):
                trials.append(self._trials[trial.number])
        for attempt in range(MAX_CLAIMS):
            salt = () if attempt == 0 else (attempt, zlib.crc32(self.worker.encode()))
            new = count - len(trials)
            if limit is not None:
                new = min(new, limit - len(self._trials))
            if new <= 0:
                break
            claimed = self._claim(new, limit, salt)
            if claimed is not None:
                trials += claimed
                break
        else:
            raise RuntimeError(f"could not claim a new trial in {MAX_CLAIMS} tries: other "
                               "workers kept claiming the same configurations")
        return trials

    def _claim(self, new: int, limit: int | None, salt: tuple[int, ...]
               ) -> list[Trial] | None:
        """Suggest ``new`` points and store them as this worker's pending trials (``None``:
        another worker claimed one of them first; the trials are then re-read)."""
        start = time.perf_counter()
        X = self.optimizer.suggest(self.history, new, salt=salt)
        seconds = (time.perf_counter() - start) / new
        now = time.time()
        records = [
            Trial(-1, params, x, suggest_seconds=seconds, worker=self.worker,
                  heartbeat=now, started=now).record()
            for x, params in zip(X, self.space.decode(X), strict=True)
        ]
        stored = self.storage.add_trials(  # committed before the points are handed out
            self.study_name, records, known=len(self._trials),
            identity=None if self.allow_repeats else self._identity, limit=limit,
        )
        self.refresh()
        if stored is None:
            return None
        return [self._trials[r.number] for r in stored]

    # ------------------------------------------------------------------ telling
    def tell(
        self,
        params: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        value: Any,
        constraints: Sequence[float] | Sequence[Sequence[float]] | None = None,
        user_attrs: Mapping[str, Any] | None = None,
    ) -> Trial | list[Trial]:
        """Record the value of one configuration, or of a list of them; returns the trial(s).

        A value of ``None``, NaN or +-inf marks the trial as failed: it is excluded from the
        model and never proposed again. A value of any other non-numeric type is an error.
        With several objectives a value is a sequence of one number per objective (a ``None``,
        NaN or inf among them marks the trial as failed). With outcome constraints,
        ``constraints`` gives each configuration's constraint values (one sequence of ``c``
        numbers per configuration); a non-finite one marks the trial as failed. ``user_attrs``
        (JSON values by name) are stored with each told trial.
        """
        attrs = check_user_attrs(user_attrs)
        single = isinstance(params, Mapping)
        if single:
            params_list, values = [params], [value]
        else:
            params_list = list(params)
            if isinstance(value, str | bytes) or not isinstance(value, Sequence | Tensor):
                raise ValueError("tell(list_of_params, values) needs a list of values")
            values = list(value.tolist() if isinstance(value, Tensor) else value)
            if len(values) != len(params_list):
                raise ValueError(
                    f"got {len(params_list)} configurations but {len(values)} values"
                )
        checked = [check_objective_values(v, len(self.directions)) for v in values]
        limits = self._check_constraints(constraints, len(values), single)
        X = self.space.encode(params_list)
        trials = []
        for x, c, v, limit in zip(X, checked, values, limits, strict=True):
            if c is not None and self.outcome_constraints and limit is None:
                trials.append(self._record(x, None, "a constraint value is not finite",
                                           user_attrs=attrs))
            else:
                trials.append(self._record(
                    x, c, None if c is not None else f"objective returned {v!r}", limit,
                    user_attrs=attrs))
        return trials[0] if single else trials

    def tell_failure(self, params: Mapping[str, Any], message: str) -> Trial:
        """Record that evaluating ``params`` failed (the message is kept with the trial)."""
        return self._record(self.space.encode(params)[0], None, message)

    def add_pending(self, params: Mapping[str, Any]) -> Trial:
        """Record a configuration that is being evaluated elsewhere: a pending trial of this
        worker, never proposed again; ``tell`` it later like an asked one."""
        return self._add(self.space.encode(params)[0])

    def set_user_attr(self, number: int, key: str, value: Any) -> Trial:
        """Store ``value`` (JSON) as the user attribute ``key`` of trial ``number``."""
        self.refresh()
        if not 0 <= number < len(self._trials):
            raise ValueError(f"no trial #{number} (the study has {len(self._trials)})")
        trial = self._trials[number]
        return self._save(dataclasses.replace(
            trial, user_attrs={**trial.user_attrs, **check_user_attrs({key: value})}))

    def enqueue(self, params: Mapping[str, Any]) -> Trial:
        """Store ``params`` as a trial that the next ``ask`` of any worker returns first; a
        configuration equal to an earlier trial is refused (unless ``allow_repeats``)."""
        x = self.space.encode([params])[0]
        if not bool(self.space.feasible(x.unsqueeze(0))[0]):
            raise ValueError(f"{dict(params)} violates the search space's constraints")
        self.refresh()
        if not self.allow_repeats and row_key(self.space, x) in self._numbers:
            raise ValueError(f"{dict(params)} is already a trial of the study")
        record = Trial(-1, self.space.decode(x.unsqueeze(0))[0], x.clone(), attempts=0).record()
        (stored,) = self.storage.add_trials(self.study_name, [record], known=len(self._trials))
        self.refresh()
        return self._trials[stored.number]

    def add_trials_from(self, source: str | Path | Storage, study_name: str | None = None
                        ) -> list[int]:
        """Copy the finished trials of another stored study into this one, as trials evaluated
        outside ``ask``: its complete trials with their values, its failed ones as failures.
        Each configuration must fit this space (the same parameters; a wider space, with more
        choices or wider bounds, takes them), and the directions must be the same. A
        configuration this study already holds is skipped, so copying twice adds nothing.
        Returns the numbers of the new trials."""
        store = existing_storage(source, read_only=True)
        names = store.study_names()
        name = study_name or (names[0] if len(names) == 1 else self.study_name)
        record = store.get_study(name)
        where = getattr(store, "path", source)
        if record is None:
            raise ValueError(f"{where} holds no study {name!r} to start from (studies: "
                             f"{', '.join(names) or 'none'})")
        if record.directions != list(self.directions):
            raise ValueError(f"study {name!r} of {where} has the directions "
                             f"{record.directions}, this study {list(self.directions)}")
        wanted = {p.name for p in self.space.parameters}
        added = []
        for trial in store.trials(name):
            if trial.state not in ("complete", "failed"):
                continue
            if set(trial.params) != wanted:
                raise ValueError(f"trial #{trial.number} of study {name!r} in {where} has the "
                                 f"parameters {sorted(trial.params)}; this space has "
                                 f"{sorted(wanted)}")
            try:
                x = self.space.encode([trial.params])[0]
            except ValueError as err:
                raise ValueError(f"trial #{trial.number} of study {name!r} in {where} does "
                                 f"not fit this space: {err}") from None
            self.refresh()
            if row_key(self.space, x) in self._numbers:
                continue
            attrs = {**(trial.user_attrs or {}), "copied_from": f"{where} #{trial.number}"}
            if trial.state == "failed":
                told = self.tell_failure(trial.params, trial.message or "failed")
                told = self._save(dataclasses.replace(told, user_attrs=attrs))
            else:
                value = trial.values if trial.values is not None else trial.value
                told = self.tell(trial.params, value, trial.constraints, attrs)
            added.append(told.number)
        return added

    def retry_failed(self) -> list[int]:
        """Put every failed trial back to be evaluated again (as :meth:`enqueue`); returns
        their numbers. Their messages are kept as the user attribute ``"failed_before"``."""
        self.refresh()
        failed = [dataclasses.replace(
            t, user_attrs={**t.user_attrs, "failed_before": t.message}, state="pending",
            message=None, worker=None, heartbeat=None, attempts=0, started=None, finished=None,
        ) for t in self._trials if t.state == "failed"]
        self.storage.put_trials(self.study_name, [t.record() for t in failed])
        self._snapshot = None
        self.refresh()
        return [t.number for t in failed]

    def trials_dataframe(self) -> Any:
        """The trials as a ``pandas.DataFrame`` (columns as Optuna's ``trials_dataframe``:
        ``number``, ``state``, ``value``, ``params_<name>``, ``user_attrs_<key>``, ...;
        :mod:`bodi.export`)."""
        from bodi.export import trials_dataframe

        return trials_dataframe(self)

    def _check_constraints(self, constraints: Any, n: int, single: bool) -> list[Any]:
        """``n`` checked lists of constraint values (``None``: a non-finite one)."""
        k = self.outcome_constraints
        if not k:
            if constraints is not None:
                raise ValueError("constraint values were given, but this study has no outcome "
                                 "constraints (outcome_constraints=0)")
            return [None] * n
        if constraints is None:
            raise ValueError(f"this study has {k} outcome constraint(s): tell their values, "
                             "tell(x, value, constraints=[...])")
        rows = [constraints] if single else list(constraints)
        if len(rows) != n:
            raise ValueError(f"got {n} configurations but {len(rows)} constraint rows")
        out = []
        for row in rows:
            if isinstance(row, Tensor):
                row = row.reshape(-1).tolist()
            if isinstance(row, str | bytes) or not isinstance(row, Sequence) or len(row) != k:
                raise ValueError(f"this study has {k} outcome constraint(s): each needs a "
                                 f"sequence of {k} numbers, got {row!r}")
            values = [check_value(v) for v in row]
            out.append(None if any(v is None for v in values) else values)
        return out

    def _record(self, x: Tensor, value: float | list[float] | None,
                message: str | None, constraints: list[float] | None = None,
                user_attrs: dict[str, Any] | None = None) -> Trial:
        self.storage.check_bound(self.study_name)  # a deleted study's trials are no late tells
        self.refresh()
        same = [self._trials[i] for i in self._numbers.get(row_key(self.space, x), [])]
        pending = [t for t in same if t.state == "pending"]
        # this worker's own trial first, then one another worker holds
        pending.sort(key=lambda t: t.worker != self.worker)
        if not pending and same and not self.allow_repeats:
            # a late tell: another worker took the trial over and told it first
            logger.warning("trial #%d was told by another worker first; this value (%r) is "
                           "not stored again", same[0].number, value)
            return same[0]
        trial = pending[0] if pending else self._add(x)  # else: evaluated outside ask()
        if value is None:
            changes: dict[str, Any] = {"state": "failed", "message": _storable(message)}
        elif isinstance(value, list):
            changes = {"state": "complete", "values": value, "constraints": constraints}
        else:
            changes = {"state": "complete", "value": value, "constraints": constraints}
        if user_attrs:
            changes["user_attrs"] = {**trial.user_attrs, **user_attrs}
        changes["finished"] = time.time()
        trial = dataclasses.replace(trial, **changes)
        return self._save(trial)  # committed before anything else happens

    def _identity(self, record: TrialRecord) -> int:
        """A stored trial's configuration identity (:func:`bodi.novelty.row_key`)."""
        return row_key(self.space, record.x)

    def _add(self, x: Tensor) -> Trial:
        """Store ``x`` as a new pending trial of this worker, whatever the earlier trials."""
        params = self.space.decode(x)[0]
        now = time.time()
        record = Trial(-1, params, x.clone(), worker=self.worker, heartbeat=now,
                       started=now).record()
        (stored,) = self.storage.add_trials(self.study_name, [record], known=len(self._trials))
        self.refresh()
        return self._trials[stored.number]


def _storable(message: str | None) -> str | None:
    """A failure's message as every storage keeps it: no password of a database URL
    (:func:`bodi.storage.urls.mask`), and NUL bytes (which PostgreSQL's text refuses) written
    as ``\\x00``."""
    return None if message is None else mask(message).replace("\x00", "\\x00")




def _end_worker(storage: Storage, study: str, worker: str, heartbeat: Heartbeat | None) -> None:
    """Stop ``worker``'s heartbeat and hand its pending trials back (their worker cleared, so
    any other worker re-issues them; see :func:`bodi.workers.worker_is_gone`)."""
    if heartbeat is not None:
        heartbeat.stop()
    if getattr(storage, "read_only", False):
        return
    with contextlib.suppress(Exception):  # a closed storage: the trials wait for their lease
        mine = [t for t in storage.trials(study) if t.state == "pending" and t.worker == worker]
        if mine:
            storage.put_trials(study, [dataclasses.replace(t, worker=None) for t in mine])


def _differences(field: str, stored: Any, given: Any) -> list[str]:
    """What differs between a stored study's ``field`` and the one given, one line each:
    ``"seed: stored 0, given 1"``, ``"settings.dictionary_size: stored 128, given 64"``,
    ``"space: parameter 'b3' stored {...}, given {...}"``."""
    if stored == given:
        return []
    if field == "settings" and isinstance(stored, dict) and isinstance(given, dict):
        return [f"{field}.{key}: stored {stored.get(key)!r}, given {given.get(key)!r}"
                for key in sorted(set(stored) | set(given)) if stored.get(key) != given.get(key)]
    if field == "space" and isinstance(stored, dict) and isinstance(given, dict):
        def by_name(space: dict) -> dict:
            return {p.get("name"): p for p in space.get("parameters", [])}

        def line(name: str) -> str:
            if name not in new:
                return f"space: parameter {name!r} only in the stored space"
            if name not in old:
                return f"space: parameter {name!r} only in the given space"
            return f"space: parameter {name!r} stored {old[name]}, given {new[name]}"

        old, new = by_name(stored), by_name(given)
        lines = [line(name) for name in [*old, *[n for n in new if n not in old]]
                 if old.get(name) != new.get(name)]
        return lines or ["space: the parameters' order or constraints"]
    return [f"{field}: stored {stored!r}, given {given!r}"]
