"""The ask/tell interface shared by BODi and every baseline.

An optimizer keeps the trials of a study. ``ask`` proposes configurations (dicts) and marks them
pending; ``tell`` records their values. Values are stored as the user gave them; internally the
model always maximizes ``sign * value`` (``sign = -1`` when minimizing).

A study may have several objectives (``directions=["minimize", "minimize"]``): each trial then
has a value per objective (``Trial.values``), and the result is the Pareto front
(:attr:`Optimizer.pareto_front`) instead of one best trial.

A study may also have black-box *outcome constraints* (``outcome_constraints=c``): each
evaluation then reports ``c`` constraint values besides its value(s), and a trial is feasible when
every one is ``<= 0`` (e.g. ``latency - 10`` for "latency at most 10 ms"). Only feasible trials
can be best or on the Pareto front.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import numbers
import time
import warnings
import weakref
import zlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

from bodi.diagnostics import logger, numerical_warnings
from bodi.seeding import derive_seed, seeded
from bodi.space import DTYPE, SearchSpace, Value, nearby_new_point, row_keys
from bodi.storage import Storage, StudyRecord, TrialRecord, open_storage
from bodi.workers import (
    Heartbeat,
    new_worker_name,
    register_worker,
    unregister_worker,
    worker_is_gone,
)

DIRECTIONS = ("minimize", "maximize")
MAX_CLAIMS = 20  # tries to claim new trials while other workers claim the same points


@dataclass
class Trial:
    """One configuration proposed or evaluated in a study."""

    number: int
    params: dict[str, Value]
    x: Tensor = field(repr=False)
    state: str = "pending"  # "pending" | "complete" | "failed"
    value: float | None = None
    message: str | None = None
    suggest_seconds: float = 0.0
    worker: str | None = field(default=None, repr=False)
    heartbeat: float | None = field(default=None, repr=False)
    attempts: int = field(default=1, repr=False)
    #: one value per objective of a complete trial of a multi-objective study (``value`` is
    #: then ``None``); ``None`` in a single-objective study, see :attr:`objective_values`
    values: list[float] | None = None
    #: the outcome-constraint values of a complete trial, ``None`` without outcome constraints
    constraints: list[float] | None = None
    #: the user's attributes (JSON values by name): :meth:`Optimizer.set_user_attr`, or
    #: ``bodi.Outcome(value, user_attrs={...})`` from the objective
    user_attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def waiting(self) -> bool:
        """Whether the trial waits to be evaluated (enqueued, or a failed trial put back by
        :meth:`Optimizer.retry_failed`): pending, held by no worker, never handed out."""
        return self.state == "pending" and self.worker is None and self.attempts == 0

    @property
    def feasible(self) -> bool:
        """Whether a complete trial satisfies every outcome constraint (``c <= 0``)."""
        return self.state == "complete" and (
            self.constraints is None or all(c <= 0 for c in self.constraints))

    @property
    def objective_values(self) -> list[float] | None:
        """The values of a complete trial, one per objective (``[value]`` for one objective);
        ``None`` unless complete."""
        if self.state != "complete":
            return None
        return list(self.values) if self.values is not None else [self.value]

    def record(self) -> TrialRecord:
        """This trial as stored."""
        return TrialRecord(self.number, self.state, self.params, self.x.tolist(), self.value,
                           self.message, self.suggest_seconds, self.worker, self.heartbeat,
                           self.attempts, self.values, self.constraints,
                           dict(self.user_attrs) or None)

    @classmethod
    def from_record(cls, record: TrialRecord) -> Trial:
        return cls(record.number, record.params, torch.tensor(record.x, dtype=DTYPE),
                   record.state, record.value, record.message, record.suggest_seconds,
                   record.worker, record.heartbeat, record.attempts, record.values,
                   record.constraints, dict(record.user_attrs or {}))

    def update(self, record: TrialRecord) -> None:
        """Take the stored state of this trial (written by this or another worker)."""
        self.state, self.value, self.message = record.state, record.value, record.message
        self.values, self.constraints = record.values, record.constraints
        self.worker, self.heartbeat, self.attempts = (
            record.worker, record.heartbeat, record.attempts)
        self.user_attrs = dict(record.user_attrs or {})

    def as_dict(self) -> dict[str, Any]:
        out = {
            "number": self.number,
            "state": self.state,
            "params": self.params,
            "value": self.value,
            "message": self.message,
            "suggest_seconds": self.suggest_seconds,
        }
        if self.values is not None:
            out["values"] = list(self.values)
        if self.constraints is not None:
            out["constraints"] = list(self.constraints)
        if self.user_attrs:
            out["user_attrs"] = dict(self.user_attrs)
        return out


@dataclass(frozen=True)
class Outcome:
    """What an objective function returns when it reports more than its value: the value
    (a float, or one per objective), ``constraints``, one number per outcome constraint of
    the study (feasible when ``<= 0``), and ``user_attrs``, anything to keep with the trial
    (JSON values by name, e.g. the training time).

    Example: ``return bodi.Outcome(error, constraints=[latency_ms - 10.0])``.
    """

    value: Any
    constraints: Sequence[float] | None = None
    user_attrs: Mapping[str, Any] | None = None


class Optimizer(ABC):
    """Base class of every ask/tell optimizer in bodi.

    Args:
        space: the search space.
        seed: every random choice of the optimizer derives from it.
        direction: ``"minimize"`` or ``"maximize"``.
        directions: one direction per objective, for a multi-objective study (e.g.
            ``["minimize", "minimize"]``; replaces ``direction``). Only optimizers with
            :attr:`supports_multi_objective` accept more than one.
        outcome_constraints: how many black-box constraint values each evaluation reports
            (``tell(x, value, constraints=[...])``, or an :class:`Outcome` from the objective);
            feasible when all are ``<= 0``. Stored with the study. Only optimizers with
            :attr:`supports_outcome_constraints` accept them.
        storage: where the study lives: ``None`` (memory), a path (SQLite file) or a
            :class:`bodi.storage.Storage`. An existing study of the same name is resumed; its
            space and settings must match.
        study_name: the study's name in the storage (default ``"default"``).
        on_pending: what to do with pending trials whose worker is gone (its process ended,
            or it sent no heartbeat for :data:`bodi.workers.STALE_AFTER` seconds):
            ``"reissue"`` (default; ``ask`` returns them again first) or ``"fail"``. Pending
            trials of live workers (other processes on the same study) are left to them.
        max_attempts: a trial is handed out at most this many times: when its evaluation was
            lost that often (the process evaluating it died, e.g. killed by the configuration
            itself), it is marked failed instead of being re-issued again.
        allow_repeats: propose configurations equal to earlier trials (for noisy objectives);
            by default a suggestion never equals a finished, failed or pending trial.

    Several optimizers (processes or machines) may work on one stored study at once: each
    ``ask`` first reads the others' changes, then claims its new trials in one transaction that
    sees the others' trials (:meth:`bodi.storage.Storage.add_trials`).

    Subclasses set their own settings before calling ``super().__init__`` (the stored settings
    are compared with :meth:`settings`).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        seed: int = 0,
        direction: str = "minimize",
        directions: Sequence[str] | None = None,
        outcome_constraints: int = 0,
        storage: str | Path | Storage | None = None,
        study_name: str | None = None,
        on_pending: str = "reissue",
        max_attempts: int = 2,
        allow_repeats: bool = False,
    ):
        if not isinstance(space, SearchSpace):
            raise ValueError(f"space must be a bodi.SearchSpace, got {type(space).__name__}")
        self.directions = check_directions(direction, directions)
        if len(self.directions) > 1 and not self.supports_multi_objective:
            raise ValueError(
                f"{type(self).__name__} optimizes one objective; for several objectives use an "
                "optimizer that takes them (BODi, RandomSearch, the GP baselines, TPE, NSGA2; "
                "bodi.optimizers.registry.multi_objective_method_names() lists them all)"
            )
        if isinstance(outcome_constraints, bool) or not isinstance(
            outcome_constraints, numbers.Integral
        ) or outcome_constraints < 0:
            raise ValueError(f"outcome_constraints must be a number of constraints (an integer "
                             f">= 0), got {outcome_constraints!r}")
        if outcome_constraints and not self.supports_outcome_constraints:
            raise ValueError(f"{type(self).__name__} does not take outcome constraints; use "
                             "bodi, a GP baseline, tpe, nsga2 or random")
        self.outcome_constraints = int(outcome_constraints)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        if on_pending not in ("reissue", "fail"):
            raise ValueError(f"on_pending must be 'reissue' or 'fail', got {on_pending!r}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, numbers.Integral) or (
            max_attempts < 1
        ):
            raise ValueError(f"max_attempts must be a positive integer, got {max_attempts!r}")
        self.space = space
        self.seed = int(seed)
        #: the direction (several objectives: their directions joined by commas, as stored)
        self.direction = ",".join(self.directions)
        self.on_pending = on_pending
        self.max_attempts = int(max_attempts)
        self.allow_repeats = bool(allow_repeats)
        self.trials: list[Trial] = []
        self._cursor = 0
        self.worker = new_worker_name()
        self.study_name = study_name or "default"
        self.storage = open_storage(storage)
        self.numerical_warnings = 0
        self._salt: tuple[int, ...] = ()  # see ask_within
        self._open_study()
        register_worker(self.worker, self)
        self._heartbeat = (
            Heartbeat(self.storage, self.study_name, self.worker) if self.storage.shared else None
        )
        self._finalizer = weakref.finalize(
            self, _end_worker, self.storage, self.study_name, self.worker, self._heartbeat)
        self._finalizer.atexit = False  # at exit the process table says the trials are free

    def close(self) -> None:
        """End this worker: its pending trials are handed back at once, to be re-issued by
        other optimizers of the study (as if its process had ended). Also happens when it is
        garbage collected."""
        unregister_worker(self.worker)
        self._finalizer()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    #: whether the optimizer accepts several objectives (``directions=``)
    supports_multi_objective: ClassVar[bool] = False
    #: whether the optimizer accepts black-box outcome constraints (``outcome_constraints=``)
    supports_outcome_constraints: ClassVar[bool] = False

    #: settings that studies stored by older versions of bodi lack, with the value they ran with
    legacy_settings: ClassVar[dict[str, Any]] = {}

    def settings(self) -> dict[str, Any]:
        """Keyword settings that define the optimizer's behaviour (stored with the study)."""
        return {}

    @classmethod
    def complete_settings(cls, stored: dict[str, Any]) -> dict[str, Any]:
        """Stored ``settings`` with the :attr:`legacy_settings` an older study did not record."""
        return {**cls.legacy_settings, **stored}

    def _study_record(self) -> StudyRecord:
        settings = self.settings()
        if self.outcome_constraints:  # (absent otherwise, as in studies stored before them)
            settings = {**settings, "outcome_constraints": self.outcome_constraints}
        return StudyRecord(
            self.study_name, type(self).__name__, self.space.to_dict(),
            json.loads(json.dumps(settings)), self.seed, self.direction,
        )

    def _open_study(self) -> None:
        mine = self._study_record()
        stored = self.storage.get_study(self.study_name)
        if stored is None:
            try:
                self.storage.create_study(mine)
                return
            except ValueError:  # another worker created it just now
                stored = self.storage.get_study(self.study_name)
                if stored is None:
                    raise
        stored = dataclasses.replace(stored, settings=self.complete_settings(stored.settings))
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

    def refresh(self) -> None:
        """Read the trials that other workers (or other optimizers) added or changed."""
        records, self._cursor = self.storage.changes(self.study_name, self._cursor)
        for record in records:  # in number order; claims add consecutive numbers atomically
            if record.number < len(self.trials):
                self.trials[record.number].update(record)
            else:
                self.trials.append(Trial.from_record(record))

    def _stale_pending(self) -> list[Trial]:
        """Pending trials whose worker is gone (see :func:`bodi.workers.worker_is_gone`)."""
        return [t for t in self.trials if t.state == "pending" and t.worker != self.worker
                and worker_is_gone(t.worker, t.heartbeat)]

    def _reclaim(self, trial: Trial, max_attempts: int, message: str) -> bool:
        """Take over a stale pending trial; ``True`` if it is now this worker's to evaluate
        (``False``: failed with ``message`` after ``max_attempts``, or taken by another)."""
        record = self.storage.reclaim(self.study_name, trial.record(), self.worker,
                                      max_attempts=max_attempts, message=message)
        if record is None:  # another worker was quicker
            self.refresh()
            return False
        trial.update(record)
        return record.state == "pending"

    def _save(self, trial: Trial) -> None:
        """Commit one trial state change to the storage."""
        self.storage.put_trial(self.study_name, trial.record())

    # ------------------------------------------------------------------ views
    @property
    def n_objectives(self) -> int:
        return len(self.directions)

    @property
    def is_multi_objective(self) -> bool:
        return len(self.directions) > 1

    @property
    def sign(self) -> float:
        """``-1`` when minimizing, ``+1`` when maximizing (the one objective)."""
        if self.is_multi_objective:
            raise ValueError("this study has several objectives; see signs")
        return -1.0 if self.direction == "minimize" else 1.0

    @property
    def signs(self) -> Tensor:
        """``k`` signs, one per objective: ``-1`` where minimizing."""
        return torch.tensor([-1.0 if d == "minimize" else 1.0 for d in self.directions],
                            dtype=DTYPE)

    def _rows(self, state: str) -> list[Trial]:
        return [t for t in self.trials if t.state == state]

    def finished_losses(self) -> dict[int, float | None]:
        """Trial number -> loss (``-sign * value``, minimized) of every finished trial, for the
        optimizers that minimize a loss of their own. A failed trial gets the worst loss of the
        complete trials numbered before it (``None`` if there is none), so the losses of a
        history do not change as it grows."""
        losses: dict[int, float | None] = {}
        worst: float | None = None
        for trial in self.trials:  # in number order
            if trial.state == "complete":
                losses[trial.number] = loss = -self.sign * trial.value
                worst = loss if worst is None else max(worst, loss)
            elif trial.state == "failed":
                losses[trial.number] = worst
        return losses

    @property
    def X_completed(self) -> Tensor:
        """``n x dim`` encoded inputs of completed trials."""
        return self._stack([t.x for t in self._rows("complete")])

    @property
    def Y_completed(self) -> Tensor:
        """``n x k`` values of completed trials (``k`` objectives), oriented so that larger is
        better."""
        values = [t.objective_values for t in self._rows("complete")]
        Y = torch.tensor(values, dtype=DTYPE).reshape(-1, self.n_objectives)
        return Y * self.signs

    @property
    def C_completed(self) -> Tensor:
        """``n x c`` outcome-constraint values of completed trials (feasible: ``<= 0``)."""
        done = self._rows("complete")
        if not self.outcome_constraints:
            return torch.empty(len(done), 0, dtype=DTYPE)
        return torch.tensor([t.constraints for t in done], dtype=DTYPE).reshape(
            -1, self.outcome_constraints)

    @property
    def feasible_completed(self) -> Tensor:
        """``n`` mask: which completed trials satisfy every outcome constraint."""
        return (self.C_completed <= 0).all(-1)

    @property
    def X_pending(self) -> Tensor:
        return self._stack([t.x for t in self._rows("pending")])

    @property
    def X_failed(self) -> Tensor:
        return self._stack([t.x for t in self._rows("failed")])

    def _stack(self, rows: list[Tensor]) -> Tensor:
        if not rows:
            return torch.empty(0, self.space.dim, dtype=DTYPE)
        return torch.stack(rows)

    @property
    def best(self) -> tuple[dict[str, Value], float] | None:
        """``(params, value)`` of the best completed trial, or ``None`` before any."""
        if self.is_multi_objective:
            raise ValueError("a study with several objectives has no single best trial; "
                             "see pareto_front")
        done = [t for t in self._rows("complete") if t.feasible]
        if not done:
            return None
        trial = max(done, key=lambda t: self.sign * t.value)
        return dict(trial.params), trial.value

    @property
    def pareto_front(self) -> list[Trial]:
        """The feasible complete trials no other one dominates (better or equal in every
        objective, better in one), in number order; with one objective, the best trials."""
        from botorch.utils.multi_objective.pareto import is_non_dominated

        done = self._rows("complete")
        feasible = self.feasible_completed
        if not feasible.any():
            return []
        mask = torch.zeros(len(done), dtype=torch.bool)
        mask[feasible] = is_non_dominated(self.Y_completed[feasible], deduplicate=False)
        return [t for t, keep in zip(done, mask.tolist(), strict=True) if keep]

    @property
    def history(self) -> list[Trial]:
        return list(self.trials)

    @property
    def n_finished(self) -> int:
        """Number of complete and failed trials."""
        return sum(t.state != "pending" for t in self.trials)

    # --------------------------------------------------------------- ask/tell
    def ask(self, n: int | None = None) -> dict[str, Value] | list[dict[str, Value]]:
        """Propose one configuration (``n=None``) or a list of ``n`` configurations.

        Pending trials whose worker is gone are re-issued first; the others are new trials,
        never equal to an earlier trial (unless ``allow_repeats``).
        """
        count = 1 if n is None else n
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        configs = self.ask_within(int(count), limit=None)
        return configs[0] if n is None else configs

    def ask_within(self, count: int, *, limit: int | None) -> list[dict[str, Value]]:
        """Up to ``count`` configurations such that the study holds at most ``limit`` trials
        (``None``: no limit); an empty list when the study is full."""
        self.refresh()
        configs: list[dict[str, Value]] = []
        for trial in self._stale_pending():
            if len(configs) == count:
                break
            if self.on_pending == "fail" and not trial.waiting:
                self._reclaim(trial, 0, "pending when the study was loaded")
            elif self._reclaim(trial, self.max_attempts, (
                f"its evaluation was lost {trial.attempts} time(s) (the evaluating process "
                "ended without a result); not re-issued again"
            )):
                configs.append(dict(trial.params))
        for attempt in range(MAX_CLAIMS):
            # after a conflict, each worker draws differently (by its name): workers with one
            # seed would otherwise propose the same point again and again
            self._salt = () if attempt == 0 else (attempt, zlib.crc32(self.worker.encode()))
            new = count - len(configs)
            if limit is not None:
                new = min(new, limit - len(self.trials))
            if new <= 0:
                break
            claimed = self._claim(new, limit)
            if claimed is not None:
                configs += [dict(t.params) for t in claimed]
                break
        else:
            raise RuntimeError(f"could not claim a new trial in {MAX_CLAIMS} tries: other "
                               "workers kept claiming the same configurations")
        return configs

    def _claim(self, new: int, limit: int | None) -> list[Trial] | None:
        """Suggest ``new`` points and store them as this worker's pending trials (``None``:
        another worker claimed one of them first; the trials are then re-read)."""
        start = time.perf_counter()
        seed = derive_seed(self.seed, len(self.trials), 0xA5, *self._salt)
        with seeded(seed), numerical_warnings() as seen:
            X = self._suggest(new)
        self.numerical_warnings += len(seen)
        seconds = (time.perf_counter() - start) / new
        if X.shape != (new, self.space.dim):
            raise RuntimeError(f"{type(self).__name__} suggested shape {tuple(X.shape)}")
        X = self.space.canonicalize(X)  # exactly what tell() will encode
        X = self._replace_unusable(X)
        now = time.time()
        records = [
            Trial(-1, params, x, suggest_seconds=seconds, worker=self.worker,
                  heartbeat=now).record()
            for x, params in zip(X, self.space.decode(X), strict=True)
        ]
        stored = self.storage.add_trials(  # committed before the points are handed out
            self.study_name, records, known=len(self.trials), unique=not self.allow_repeats,
            limit=limit,
        )
        self.refresh()
        if stored is None:
            return None
        return [self.trials[r.number] for r in stored]

    def _replace_unusable(self, X: Tensor) -> Tensor:
        """Swap each row of canonical ``X`` that violates the space's constraints, or (unless
        ``allow_repeats``) equals an earlier trial or an earlier row, for a new feasible
        configuration near it (:func:`bodi.space.nearby_new_point`). This is the guarantee that
        no optimizer, a baseline that knows nothing of constraints included, proposes an
        infeasible point."""
        feasible = self.space.feasible(X).tolist()
        if self.allow_repeats and all(feasible):
            return X
        keys = row_keys(self.space, X).tolist()
        taken = set() if self.allow_repeats else set(
            row_keys(self.space, self._stack([t.x for t in self.trials])).tolist()
        )
        out = []
        for i, key in enumerate(keys):
            if key in taken or not feasible[i]:
                g = torch.Generator().manual_seed(
                    derive_seed(self.seed, len(self.trials), i, *self._salt))
                out.append(nearby_new_point(self.space, X[i], taken, g))
                key = int(row_keys(self.space, out[-1].unsqueeze(0))[0])
            else:
                out.append(X[i])
            if not self.allow_repeats:
                taken.add(key)
        return torch.stack(out)

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
        checked = [self._check_values(v) for v in values]
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

    def trials_dataframe(self) -> Any:
        """The trials as a ``pandas.DataFrame`` (columns as Optuna's ``trials_dataframe``:
        ``number``, ``state``, ``value``, ``params_<name>``, ``user_attrs_<key>``, ...;
        :mod:`bodi.export`)."""
        from bodi.export import trials_dataframe

        return trials_dataframe(self)

    def set_user_attr(self, number: int, key: str, value: Any) -> Trial:
        """Store ``value`` (JSON) as the user attribute ``key`` of trial ``number``."""
        self.refresh()
        if not 0 <= number < len(self.trials):
            raise ValueError(f"no trial #{number} (the study has {len(self.trials)})")
        trial = self.trials[number]
        trial.user_attrs = {**trial.user_attrs, **check_user_attrs({key: value})}
        self._save(trial)
        return trial

    def enqueue(self, params: Mapping[str, Any]) -> Trial:
        """Store ``params`` as a trial to evaluate next: the next ``ask`` (of any worker of the
        study) returns it before proposing anything new. It counts toward a budget like any
        trial. A configuration equal to an earlier trial is refused (unless ``allow_repeats``)."""
        x = self.space.encode([params])[0]
        if not bool(self.space.feasible(x.unsqueeze(0))[0]):
            raise ValueError(f"{dict(params)} violates the search space's constraints")
        self.refresh()
        if not self.allow_repeats and any(torch.equal(t.x, x) for t in self.trials):
            raise ValueError(f"{dict(params)} is already a trial of the study")
        record = Trial(-1, self.space.decode(x.unsqueeze(0))[0], x.clone(), attempts=0).record()
        (stored,) = self.storage.add_trials(self.study_name, [record], known=len(self.trials),
                                            unique=False)
        self.refresh()
        return self.trials[stored.number]

    def retry_failed(self) -> list[int]:
        """Put every failed trial back to be evaluated again (the next ``ask`` returns them
        first, as for :meth:`enqueue`); returns their numbers. Their earlier messages are kept
        as the user attribute ``"failed_before"``."""
        self.refresh()
        failed = [t for t in self.trials if t.state == "failed"]
        for trial in failed:
            trial.user_attrs = {**trial.user_attrs, "failed_before": trial.message}
            trial.state, trial.message, trial.worker, trial.heartbeat, trial.attempts = (
                "pending", None, None, None, 0)
        self.storage.put_trials(self.study_name, [t.record() for t in failed])
        self.refresh()
        return [t.number for t in failed]

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
            values = [_check_value(v) for v in row]
            out.append(None if any(v is None for v in values) else values)
        return out

    def _check_values(self, value: Any) -> float | list[float] | None:
        """One told value checked: a float (one objective), a list of ``k`` floats (``k``
        objectives), or ``None`` for a failed evaluation."""
        if not self.is_multi_objective:
            return _check_value(value)
        if isinstance(value, Tensor):
            value = value.reshape(-1).tolist()
        if value is None:
            return None
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ValueError(f"this study has {self.n_objectives} objectives: a value must be a "
                             f"sequence of {self.n_objectives} numbers, got {value!r}")
        if len(value) != self.n_objectives:
            raise ValueError(f"this study has {self.n_objectives} objectives, got "
                             f"{len(value)} values: {list(value)!r}")
        checked = [_check_value(v) for v in value]
        return None if any(v is None for v in checked) else checked

    def _record(self, x: Tensor, value: float | list[float] | None,
                message: str | None, constraints: list[float] | None = None,
                user_attrs: dict[str, Any] | None = None) -> Trial:
        self.refresh()
        same = [t for t in self.trials if torch.equal(t.x, x)]
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
            trial.state = "failed"
            trial.message = message
        elif isinstance(value, list):
            trial.state, trial.values = "complete", value
        else:
            trial.state, trial.value = "complete", value
        if value is not None:
            trial.constraints = constraints
        if user_attrs:
            trial.user_attrs = {**trial.user_attrs, **user_attrs}
        self._save(trial)  # committed before anything else happens
        return trial

    def _add(self, x: Tensor) -> Trial:
        """Store ``x`` as a new pending trial of this worker, whatever the earlier trials."""
        params = self.space.decode(x)[0]
        record = Trial(-1, params, x.clone(), worker=self.worker, heartbeat=time.time()).record()
        (stored,) = self.storage.add_trials(self.study_name, [record], known=len(self.trials),
                                            unique=False)
        self.refresh()
        return self.trials[stored.number]

    def add_pending(self, params: Mapping[str, Any]) -> Trial:
        """Record a configuration that is being evaluated elsewhere (e.g. by another worker of
        a host framework): it becomes a pending point of the next suggestions and is never
        proposed. ``tell`` it later like an asked one."""
        return self._add(self.space.encode(params)[0])

    def tell_failure(self, params: Mapping[str, Any], message: str) -> Trial:
        """Record that evaluating ``params`` failed (the message is kept with the trial)."""
        return self._record(self.space.encode(params)[0], None, message)

    def unused_design_points(self, design: Tensor) -> Tensor:
        """The rows of the ``k x dim`` initial ``design`` not yet among the trials (compared
        by :func:`bodi.space.row_keys`, ``O((k + n) dim)`` for ``n`` trials)."""
        if not self.trials or len(design) == 0:
            return design
        seen = row_keys(self.space, torch.stack([t.x for t in self.trials]))
        return design[~torch.isin(row_keys(self.space, design), seen)]

    @abstractmethod
    def _suggest(self, n: int) -> Tensor:
        """Return ``n x dim`` encoded new points; global RNGs are seeded by the caller."""


def check_directions(direction: str, directions: Sequence[str] | None) -> tuple[str, ...]:
    """The directions of a study, one per objective, from ``direction`` (a stored
    multi-objective study joins them with commas) or ``directions``."""
    if directions is None:
        if not isinstance(direction, str):
            raise ValueError(f"direction must be 'minimize' or 'maximize', got {direction!r}")
        directions = direction.split(",")
    else:
        if isinstance(directions, str) or not isinstance(directions, Sequence) or not directions:
            raise ValueError("directions must be a non-empty list such as ['minimize', "
                             f"'maximize'], got {directions!r}")
        directions = list(directions)
        if direction not in ("minimize", ",".join(map(str, directions))):
            raise ValueError(f"direction={direction!r} and directions={directions!r} disagree; "
                             "give one of them")
    for d in directions:
        if d not in DIRECTIONS:
            raise ValueError(f"direction must be 'minimize' or 'maximize', got {d!r}")
    return tuple(directions)


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


def check_user_attrs(attrs: Mapping[str, Any] | None) -> dict[str, Any]:
    """``attrs`` as a dict of JSON values by string name; anything else is a ``ValueError``."""
    if attrs is None:
        return {}
    if not isinstance(attrs, Mapping) or not all(isinstance(k, str) for k in attrs):
        raise ValueError(f"user attributes must be a dict with string keys, got {attrs!r}")
    try:
        return json.loads(json.dumps(dict(attrs), allow_nan=False))
    except (TypeError, ValueError) as err:
        raise ValueError(f"user attributes must be JSON values: {err}") from None


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


def _check_value(value: Any) -> float | None:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"a value must be a single number, got a tensor of shape "
                             f"{tuple(value.shape)}")
        value = value.item()
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"a value must be a real number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # e.g. the int 10**400
        size = f"{value.bit_length()}-bit integer" if isinstance(value, int) else "number"
        warnings.warn(f"objective value (a {size}) is beyond the float range; recorded as a "
                      "failed trial", stacklevel=3)
        return None
    if not math.isfinite(value):
        warnings.warn(f"objective value {value} recorded as a failed trial", stacklevel=3)
        return None
    return value
