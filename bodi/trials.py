"""Trials and the history an optimizer suggests from.

A :class:`Trial` is one configuration of a study: proposed (``pending``), evaluated
(``complete``, with its value or one value per objective, and its outcome-constraint values) or
``failed``. A :class:`History` is an immutable snapshot of a study's trials, in number order,
with the views the algorithms read (``X_completed``, ``Y_completed`` oriented so that larger is
better, ...). An optimizer suggests from a history (:meth:`bodi.Optimizer.suggest`); a study
(:class:`bodi.study.Study`) keeps the trials, the storage and the workers' claims.

This module is the one home of the rules for what is told: a value (:func:`check_value`,
:func:`check_objective_values`) and user attributes (:func:`check_user_attrs`); directions
are :mod:`bodi.directions`'s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import numbers
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import torch
from torch import Tensor

from bodi.directions import check_directions, signs
from bodi.novelty import row_keys
from bodi.space import DTYPE, SearchSpace, Value
from bodi.storage import TrialRecord


@dataclass(frozen=True)
class Trial:
    """One configuration proposed or evaluated in a study (immutable: a study replaces a trial
    whose state changes)."""

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
    #: the user's attributes (JSON values by name): :meth:`bodi.Study.set_user_attr`, or
    #: ``bodi.Outcome(value, user_attrs={...})`` from the objective
    user_attrs: dict[str, Any] = field(default_factory=dict)
    #: when the trial was handed out for evaluation and when its result was stored (seconds
    #: since the epoch; ``None``: not yet, or a trial of an older bodi)
    started: float | None = field(default=None, repr=False)
    finished: float | None = field(default=None, repr=False)

    @property
    def waiting(self) -> bool:
        """Whether the trial waits to be evaluated (enqueued, or a failed trial put back by
        :meth:`bodi.Study.retry_failed`): pending, held by no worker, never handed out."""
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
                           dict(self.user_attrs) or None, self.started, self.finished)

    @classmethod
    def from_record(cls, record: TrialRecord) -> Trial:
        return cls(record.number, record.params, torch.tensor(record.x, dtype=DTYPE),
                   record.state, record.value, record.message, record.suggest_seconds,
                   record.worker, record.heartbeat, record.attempts, record.values,
                   record.constraints, dict(record.user_attrs or {}), record.started,
                   record.finished)

    def updated(self, record: TrialRecord) -> Trial:
        """This trial with the stored state of ``record`` (written by this or another
        worker); its point is kept."""
        return dataclasses.replace(
            self, state=record.state, value=record.value, message=record.message,
            values=record.values, constraints=record.constraints, worker=record.worker,
            heartbeat=record.heartbeat, attempts=record.attempts,
            user_attrs=dict(record.user_attrs or {}), started=record.started,
            finished=record.finished)

    def as_dict(self) -> dict[str, Any]:
        """This trial as a JSON-ready dict (:func:`bodi.stored_studies.trial_as_dict`)."""
        from bodi.stored_studies import trial_as_dict

        return trial_as_dict(self)


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


@dataclass(frozen=True, eq=False)
class History:
    """An immutable snapshot of a study's trials (number order) and the views of them.

    Args:
        space: the search space of the trials.
        directions: one ``"minimize"``/``"maximize"`` per objective.
        outcome_constraints: how many constraint values each complete trial has.
        trials: the trials (copies: a study's later changes do not reach them).
    """

    space: SearchSpace
    directions: tuple[str, ...] = ("minimize",)
    outcome_constraints: int = 0
    trials: tuple[Trial, ...] = ()
    #: the trials' points stacked (``n x dim``), when the caller has them (a study keeps them
    #: as they come, so that a snapshot of a large study costs no stacking); else computed
    points: Tensor | None = field(default=None, repr=False)

    @classmethod
    def from_observations(
        cls,
        space: SearchSpace,
        directions: Sequence[str] = ("minimize",),
        *,
        completed: Sequence[tuple[Mapping[str, Any], Any]] = (),
        constraints: Sequence[Sequence[float]] | None = None,
        failed: Sequence[Mapping[str, Any]] = (),
        pending: Sequence[Mapping[str, Any]] = (),
    ) -> History:
        """A history from observations made elsewhere (a host framework, a benchmark's
        results): ``completed`` ``(params, value)`` pairs (a value per objective with several;
        a non-finite value counts as failed), then ``failed`` and ``pending`` configurations,
        numbered in that order. ``constraints`` gives each completed pair's constraint values."""
        directions = check_directions(",".join(directions))
        k = len(constraints[0]) if constraints else 0
        X = space.encode([*(p for p, _ in completed), *failed, *pending]) if (
            completed or failed or pending) else torch.empty(0, space.dim, dtype=DTYPE)
        params = space.decode(X) if len(X) else []
        trials: list[Trial] = []

        def add(state: str, **fields: Any) -> None:
            i = len(trials)
            trials.append(Trial(i, params[i], X[i], state, **fields))

        for i, (_, value) in enumerate(completed):
            checked = check_objective_values(value, len(directions), warn=False)
            limits = None if not k else [check_value(c, warn=False) for c in constraints[i]]
            if checked is None or (limits is not None and None in limits):
                add("failed", message=f"value {value!r}")
            elif isinstance(checked, list):
                add("complete", values=checked, constraints=limits)
            else:
                add("complete", value=checked, constraints=limits)
        for _ in failed:
            add("failed", message="failed")
        for _ in pending:
            add("pending")
        return cls(space, directions, k, tuple(trials))

    def __len__(self) -> int:
        return len(self.trials)

    def __iter__(self) -> Iterator[Trial]:
        return iter(self.trials)

    def __getitem__(self, index: int) -> Trial:
        return self.trials[index]

    def prefix(self, n: int) -> History:
        """The history of the first ``n`` trials (in their states now)."""
        points = None if self.points is None else self.points[:n]
        return History(self.space, self.directions, self.outcome_constraints, self.trials[:n],
                       points)

    @cached_property
    def digest(self) -> str:
        """A hash of the trials' configurations (:func:`bodi.novelty.row_keys`), states, values
        and constraint values: equal for equal histories."""
        rows = row_keys(self.space, self.X).tolist() if len(self.trials) else []
        return hashlib.sha256(json.dumps(
            [rows, [(t.state, t.value, t.values, t.constraints) for t in self.trials]],
            default=str).encode()).hexdigest()

    @property
    def n_objectives(self) -> int:
        return len(self.directions)

    @property
    def is_multi_objective(self) -> bool:
        return len(self.directions) > 1

    @cached_property
    def signs(self) -> Tensor:
        """``k`` signs, one per objective: ``-1`` where minimizing."""
        return signs(self.directions, DTYPE)

    @property
    def sign(self) -> float:
        """``-1`` when minimizing, ``+1`` when maximizing (the one objective)."""
        if self.is_multi_objective:
            raise ValueError("this study has several objectives; see signs")
        return float(self.signs[0])

    def rows(self, state: str) -> list[Trial]:
        """The trials in ``state`` (``"complete"``, ``"failed"``, ``"pending"``)."""
        return [t for t in self.trials if t.state == state]

    def stack(self, trials: Sequence[Trial]) -> Tensor:
        """``len(trials) x dim`` encoded inputs."""
        if not trials:
            return torch.empty(0, self.space.dim, dtype=DTYPE)
        return torch.stack([t.x for t in trials])

    @cached_property
    def X(self) -> Tensor:
        """``n x dim`` encoded inputs of every trial."""
        return self.stack(self.trials) if self.points is None else self.points

    @cached_property
    def X_completed(self) -> Tensor:
        """``n x dim`` encoded inputs of completed trials."""
        return self.stack(self.rows("complete"))

    @cached_property
    def Y_completed(self) -> Tensor:
        """``n x k`` values of completed trials (``k`` objectives), oriented so that larger is
        better."""
        values = [t.objective_values for t in self.rows("complete")]
        return torch.tensor(values, dtype=DTYPE).reshape(-1, self.n_objectives) * self.signs

    @cached_property
    def C_completed(self) -> Tensor:
        """``n x c`` outcome-constraint values of completed trials (feasible: ``<= 0``)."""
        done = self.rows("complete")
        if not self.outcome_constraints:
            return torch.empty(len(done), 0, dtype=DTYPE)
        return torch.tensor([t.constraints for t in done], dtype=DTYPE).reshape(
            -1, self.outcome_constraints)

    @property
    def feasible_completed(self) -> Tensor:
        """``n`` mask: which completed trials satisfy every outcome constraint."""
        return (self.C_completed <= 0).all(-1)

    @cached_property
    def X_pending(self) -> Tensor:
        return self.stack(self.rows("pending"))

    @cached_property
    def X_failed(self) -> Tensor:
        return self.stack(self.rows("failed"))

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
    def best(self) -> tuple[dict[str, Value], float] | None:
        """``(params, value)`` of the best feasible completed trial, or ``None`` before any."""
        if self.is_multi_objective:
            raise ValueError("a study with several objectives has no single best trial; "
                             "see pareto_front")
        done = [t for t in self.rows("complete") if t.feasible]
        if not done:
            return None
        trial = max(done, key=lambda t: self.sign * t.value)
        return dict(trial.params), trial.value

    @property
    def pareto_front(self) -> list[Trial]:
        """The feasible complete trials no other one dominates (better or equal in every
        objective, better in one), in number order; with one objective, the best trials."""
        from botorch.utils.multi_objective.pareto import is_non_dominated

        done = self.rows("complete")
        feasible = self.feasible_completed
        if not feasible.any():
            return []
        mask = torch.zeros(len(done), dtype=torch.bool)
        mask[feasible] = is_non_dominated(self.Y_completed[feasible], deduplicate=False)
        return [t for t, keep in zip(done, mask.tolist(), strict=True) if keep]

    @property
    def n_finished(self) -> int:
        """Number of complete and failed trials."""
        return sum(t.state != "pending" for t in self.trials)


def check_objective_values(value: Any, n_objectives: int, *,
                           warn: bool = True) -> float | list[float] | None:
    """One told value checked: a float (one objective), a list of ``k`` floats (``k``
    objectives), or ``None`` for a failed evaluation (``None``, NaN, inf)."""
    if n_objectives == 1:
        return check_value(value, warn=warn)
    if isinstance(value, Tensor):
        value = value.reshape(-1).tolist()
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValueError(f"this study has {n_objectives} objectives: a value must be a "
                         f"sequence of {n_objectives} numbers, got {value!r}")
    if len(value) != n_objectives:
        raise ValueError(f"this study has {n_objectives} objectives, got "
                         f"{len(value)} values: {list(value)!r}")
    checked = [check_value(v, warn=warn) for v in value]
    return None if any(v is None for v in checked) else checked


def check_value(value: Any, *, warn: bool = True) -> float | None:
    """A real number as a float; ``None`` (a failed evaluation) for ``None``, NaN or inf (with
    a warning unless ``warn=False``); anything else is a ``ValueError``."""
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
        if warn:
            warnings.warn(f"objective value (a {size}) is beyond the float range; recorded as "
                          "a failed trial", stacklevel=6)
        return None
    if not math.isfinite(value):
        if warn:
            warnings.warn(f"objective value {value} recorded as a failed trial", stacklevel=6)
        return None
    return value
