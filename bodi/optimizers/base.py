"""The ask/tell interface shared by BODi and every baseline.

An optimizer keeps the trials of a study. ``ask`` proposes configurations (dicts) and marks them
pending; ``tell`` records their values. Values are stored as the user gave them; internally the
model always maximizes ``sign * value`` (``sign = -1`` when minimizing).
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

from bodi.seeding import derive_seed, seeded
from bodi.space import DTYPE, SearchSpace, Value
from bodi.storage import Storage, StudyRecord, TrialRecord, open_storage

DIRECTIONS = ("minimize", "maximize")


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

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "state": self.state,
            "params": self.params,
            "value": self.value,
            "message": self.message,
            "suggest_seconds": self.suggest_seconds,
        }


class Optimizer(ABC):
    """Base class of every ask/tell optimizer in bodi.

    Args:
        space: the search space.
        seed: every random choice of the optimizer derives from it.
        direction: ``"minimize"`` or ``"maximize"``.
        storage: where the study lives: ``None`` (memory), a path (SQLite file) or a
            :class:`bodi.storage.Storage`. An existing study of the same name is resumed; its
            space and settings must match.
        study_name: the study's name in the storage (default ``"default"``).
        on_pending: what to do with trials found pending when a study is loaded:
            ``"reissue"`` (default; ``ask`` returns them again first) or ``"fail"``.

    Subclasses set their own settings before calling ``super().__init__`` (the stored settings
    are compared with :meth:`settings`).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        seed: int = 0,
        direction: str = "minimize",
        storage: str | Path | Storage | None = None,
        study_name: str | None = None,
        on_pending: str = "reissue",
    ):
        if not isinstance(space, SearchSpace):
            raise ValueError(f"space must be a bodi.SearchSpace, got {type(space).__name__}")
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be 'minimize' or 'maximize', got {direction!r}")
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        if on_pending not in ("reissue", "fail"):
            raise ValueError(f"on_pending must be 'reissue' or 'fail', got {on_pending!r}")
        self.space = space
        self.seed = int(seed)
        self.direction = direction
        self.trials: list[Trial] = []
        self._reissue: list[Trial] = []
        self.study_name = study_name or "default"
        self.storage = open_storage(storage)
        self._open_study(on_pending)

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
        return StudyRecord(
            self.study_name, type(self).__name__, self.space.to_dict(),
            json.loads(json.dumps(self.settings())), self.seed, self.direction,
        )

    def _open_study(self, on_pending: str) -> None:
        mine = self._study_record()
        stored = self.storage.get_study(self.study_name)
        if stored is None:
            self.storage.create_study(mine)
            return
        stored = dataclasses.replace(stored, settings=self.complete_settings(stored.settings))
        different = [
            field for field in ("optimizer", "space", "settings", "seed", "direction")
            if getattr(stored, field) != json.loads(json.dumps(getattr(mine, field)))
        ]
        if different:
            raise ValueError(
                f"study {self.study_name!r} in {getattr(self.storage, 'path', 'the storage')} "
                f"was created with a different {', '.join(different)}; use bodi.load_study to "
                "continue it as it is, or choose another study name"
            )
        for record in self.storage.trials(self.study_name):
            x = torch.tensor(record.x, dtype=DTYPE)
            trial = Trial(record.number, record.params, x, record.state, record.value,
                          record.message, record.suggest_seconds)
            self.trials.append(trial)
            if trial.state == "pending":
                if on_pending == "reissue":
                    self._reissue.append(trial)
                else:
                    trial.state, trial.message = "failed", "pending when the study was loaded"
                    self._save(trial)

    def _save(self, trial: Trial) -> None:
        """Commit one trial state change to the storage."""
        self.storage.put_trial(
            self.study_name,
            TrialRecord(trial.number, trial.state, trial.params, trial.x.tolist(), trial.value,
                        trial.message, trial.suggest_seconds),
        )

    # ------------------------------------------------------------------ views
    @property
    def sign(self) -> float:
        return -1.0 if self.direction == "minimize" else 1.0

    def _rows(self, state: str) -> list[Trial]:
        return [t for t in self.trials if t.state == state]

    @property
    def X_completed(self) -> Tensor:
        """``n x dim`` encoded inputs of completed trials."""
        return self._stack([t.x for t in self._rows("complete")])

    @property
    def Y_completed(self) -> Tensor:
        """``n x 1`` values of completed trials, oriented so that larger is better."""
        values = [self.sign * t.value for t in self._rows("complete")]
        return torch.tensor(values, dtype=DTYPE).reshape(-1, 1)

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
        done = self._rows("complete")
        if not done:
            return None
        trial = max(done, key=lambda t: self.sign * t.value)
        return dict(trial.params), trial.value

    @property
    def history(self) -> list[Trial]:
        return list(self.trials)

    # --------------------------------------------------------------- ask/tell
    def ask(self, n: int | None = None) -> dict[str, Value] | list[dict[str, Value]]:
        """Propose one configuration (``n=None``) or a list of ``n`` configurations."""
        count = 1 if n is None else n
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        self._reissue = [t for t in self._reissue if t.state == "pending"]
        reissued, self._reissue = self._reissue[:count], self._reissue[count:]
        configs = [dict(t.params) for t in reissued]
        new = int(count) - len(reissued)
        if new:
            start = time.perf_counter()
            with seeded(derive_seed(self.seed, len(self.trials), 0xA5)):
                X = self._suggest(new)
            seconds = (time.perf_counter() - start) / new
            if X.shape != (new, self.space.dim):
                raise RuntimeError(f"{type(self).__name__} suggested shape {tuple(X.shape)}")
            X = self.space.canonicalize(X)  # exactly what tell() will encode
            for x, params in zip(X, self.space.decode(X), strict=True):
                trial = Trial(len(self.trials), params, x.clone(), suggest_seconds=seconds)
                self.trials.append(trial)
                self._save(trial)  # committed before the point is handed out
                configs.append(dict(params))
        return configs[0] if n is None else configs

    def tell(
        self,
        params: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        value: Any,
    ) -> Trial | list[Trial]:
        """Record the value of one configuration, or of a list of them; returns the trial(s).

        A value of ``None``, NaN or +-inf marks the trial as failed: it is excluded from the
        model and never proposed again. A value of any other non-numeric type is an error.
        """
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
        checked = [_check_value(v) for v in values]
        X = self.space.encode(params_list)
        trials = [
            self._record(x, c, None if c is not None else f"objective returned {v!r}")
            for x, c, v in zip(X, checked, values, strict=True)
        ]
        return trials[0] if single else trials

    def _record(self, x: Tensor, value: float | None, message: str | None) -> Trial:
        trial = next(
            (t for t in self.trials if t.state == "pending" and torch.equal(t.x, x)), None
        )
        if trial is None:  # a configuration evaluated outside ask()
            trial = Trial(len(self.trials), self.space.decode(x)[0], x.clone())
            self.trials.append(trial)
        if value is None:
            trial.state = "failed"
            trial.message = message
        else:
            trial.state, trial.value = "complete", value
        self._save(trial)  # committed before anything else happens
        return trial

    def add_pending(self, params: Mapping[str, Any]) -> Trial:
        """Record a configuration that is being evaluated elsewhere (e.g. by another worker of
        a host framework): it becomes a pending point of the next suggestions and, in a
        discrete space, is never proposed. ``tell`` it later like an asked one."""
        x = self.space.encode(params)[0]
        trial = Trial(len(self.trials), self.space.decode(x)[0], x)
        self.trials.append(trial)
        self._save(trial)
        return trial

    def tell_failure(self, params: Mapping[str, Any], message: str) -> Trial:
        """Record that evaluating ``params`` failed (the message is kept with the trial)."""
        return self._record(self.space.encode(params)[0], None, message)

    def unused_design_points(self, design: Tensor) -> Tensor:
        """The rows of the ``k x dim`` initial ``design`` not yet among the trials."""
        if not self.trials or len(design) == 0:
            return design
        seen = torch.stack([t.x for t in self.trials])
        fresh = ~(design.unsqueeze(-2) == seen).all(-1).any(-1)
        return design[fresh]

    @abstractmethod
    def _suggest(self, n: int) -> Tensor:
        """Return ``n x dim`` encoded new points; global RNGs are seeded by the caller."""


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
    value = float(value)
    if not math.isfinite(value):
        warnings.warn(f"objective value {value} recorded as a failed trial", stacklevel=3)
        return None
    return value
