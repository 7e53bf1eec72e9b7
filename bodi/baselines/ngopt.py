"""Nevergrad's NGOpt as a baseline, driven through Nevergrad's ask/tell interface.

Needs the ``nevergrad`` package (``pip install bodi[baselines]``); it is imported when a
suggestion needs it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.extras import require
from bodi.integrations.spaces.codecs import from_index_values, index_values
from bodi.integrations.spaces.nevergrad import make_parametrization
from bodi.optimizers.base import Optimizer
from bodi.seeding import derive_seed
from bodi.space import DTYPE, SearchSpace
from bodi.trials import History


class NGOpt(Optimizer):
    """Nevergrad's ``NGOpt`` (its algorithm selector) behind bodi's ask/tell interface.

    NGOpt picks its algorithm from the budget, the dimension, the number of workers and the
    kinds of variables (for binary and categorical spaces a discrete (1+1) evolution strategy,
    e.g. ``DiscreteLenglerOnePlusOne``). It is used the way a Nevergrad user would: the
    parametrization of
    :func:`bodi.integrations.spaces.nevergrad.make_parametrization`, seeded through its
    ``random_state``, ``NGOpt(parametrization, budget, num_workers)``, then ``ask``/``tell``. It
    starts from its own first points, not from the shared initial design.

    Nevergrad's optimizers are stateful, and a bodi optimizer must also continue a stored study.
    The Nevergrad optimizer lives with this object: each suggestion first tells it the trials
    finished since the last one, then asks. A new object (a resumed study, or ``bodi bench``,
    which rebuilds its optimizers at every step) replays the history in trial order with the
    same seed: one ask per trial, and for a finished trial a tell right after, of that
    candidate when the asked point is the trial's point (always so for a run that proposed one
    point at a time), else of the trial's point as a new candidate ("tell not asked"). So a
    rebuilt optimizer suggests what the live one would. A failed trial is told the worst loss
    of the trials before it (not told if there is none); a pending one is asked and not told.

    Args:
        space, seed, direction, directions, outcome_constraints, allow_repeats:
            see :class:`bodi.optimizers.Optimizer`.
        budget: the number of evaluations NGOpt plans for (it chooses its algorithm by it);
            ``bodi bench`` passes its ``--budget``. ``None``: NGOpt's choice for an unknown
            budget.
        num_workers: evaluations run at once (NGOpt chooses by it, too).
    """

    #: ``bodi bench`` passes its budget to optimizers that plan with it
    takes_budget: ClassVar[bool] = True
    #: and keeps this optimizer between the steps of a task (it would otherwise replay)
    keeps_state: ClassVar[bool] = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        budget: int | None = None,
        num_workers: int = 1,
        **kwargs: Any,
    ) -> None:
        budget = check_integer("budget", budget, optional=True)
        num_workers = check_integer("num_workers", num_workers)
        self.budget = budget
        self.num_workers = num_workers
        self._nevergrad: _NevergradState | None = None
        super().__init__(space, **kwargs)

    def settings(self) -> dict[str, Any]:
        return {"budget": self.budget, "num_workers": self.num_workers}

    def _suggest(self, history: History, n: int) -> Tensor:
        if self._nevergrad is None:
            ng = require("nevergrad", "the ngopt baseline", "baselines")
            parametrization = make_parametrization(self.space)
            parametrization.random_state = np.random.RandomState(
                derive_seed(self.seed, 0, 0x9E0) % 2**32
            )
            optimizer = ng.optimizers.NGOpt(
                parametrization=parametrization, budget=self.budget,
                num_workers=self.num_workers,
            )
            self._nevergrad = _NevergradState(optimizer, parametrization)
        state = self._nevergrad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. Nevergrad's LossTooLargeWarning
            self._catch_up(history, state)
            candidates = [state.optimizer.ask() for _ in range(n)]
        # matched, in order, to the trials numbered from here (this suggestion's, unless
        # another worker of a shared study claimed those numbers first: then the trials'
        # own points are told, see _catch_up)
        state.proposed, state.proposed_from = candidates, len(history.trials)
        rows = [from_index_values(self.space, c.value) for c in candidates]
        return torch.tensor(rows, dtype=DTYPE).reshape(n, self.space.dim)

    def _catch_up(self, history: History, state: _NevergradState) -> None:
        """Give every trial of ``history`` its candidate and tell the finished ones (see the
        class doc)."""
        proposed = list(state.proposed)
        state.proposed = []  # candidates of a claim that failed are dropped
        losses = history.finished_losses()
        for trial in history.trials:
            if trial.number in state.told:
                continue
            if trial.number not in state.candidates:
                mine = proposed and trial.number >= state.proposed_from
                state.candidates[trial.number] = (
                    proposed.pop(0) if mine else state.optimizer.ask()
                )
            loss = losses.get(trial.number)
            if loss is None:  # pending, or failed before any value was known
                continue
            candidate = state.candidates.pop(trial.number)
            row = torch.tensor([from_index_values(self.space, candidate.value)], dtype=DTYPE)
            if not torch.equal(self.space.canonicalize(row)[0], trial.x):
                candidate = state.parametrization.spawn_child(
                    new_value=index_values(self.space, trial.x)
                )
            state.optimizer.tell(candidate, float(loss))
            state.told.add(trial.number)


@dataclass
class _NevergradState:
    """The live Nevergrad optimizer and which trials it has been asked for and told."""

    optimizer: Any
    parametrization: Any
    candidates: dict[int, Any] = field(default_factory=dict)  # asked for, not told yet
    told: set[int] = field(default_factory=set)
    proposed: list[Any] = field(default_factory=list)  # asked by the last suggestion
    proposed_from: int = 0  # the number of the trials when they were asked
