"""The loop shared by the model-based optimizers (the GP loop, SMAC, TPE).

Each of them proposes the shared initial design first, then, while too few values are known to
model, new configurations next to the best completed one (uniform ones while none has
completed), and otherwise asks its model (:meth:`ModelBasedOptimizer._model_points`).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.initial_design import check_design, initial_design
from bodi.neighbours import nearby_new_point
from bodi.novelty import row_keys
from bodi.optimizers.base import Optimizer
from bodi.optimizers.random_search import sample_new_points
from bodi.space import SearchSpace
from bodi.trials import History


class ModelBasedOptimizer(Optimizer):
    """An optimizer that starts from the shared initial design and then asks a model.

    ``_suggest(n)`` returns the unused points of the ``n_init`` design
    (:func:`bodi.initial_design.initial_design`) first; while fewer than :attr:`min_completed`
    trials are complete, or, where :attr:`walks_plateaus`, all completed trials have the same
    values (a plateau: a model of a constant ranks nothing), the rest of the ``n`` points are
    new configurations one parameter away from the latest of the best completed trials
    (:func:`bodi.neighbours.nearby_new_point`: where most configurations fail, as with a known
    working start among failed design points, its neighbours succeed far more often than
    uniform points; on a plateau each equally good new trial moves the walk on, as simulated
    annealing accepts equal moves), or uniform samples never proposed before while none has
    completed; otherwise they come from :meth:`_model_points`.

    Args:
        space, seed, direction, directions, outcome_constraints, allow_repeats:
            see :class:`Optimizer`.
        n_init: size of the shared initial design (``0``: none).
        design: its kind, ``"uniform"`` (shift-invariant) or ``"sparsity"`` (the paper
            authors'); see :mod:`bodi.initial_design`.

    Subclasses set their own settings before calling ``super().__init__`` and extend
    :meth:`settings` (``n_init`` and ``design`` come first).
    """

    uses_initial_design: ClassVar[bool] = True
    #: how many completed trials the model needs; before that, points are drawn uniformly
    min_completed: ClassVar[int] = 1
    #: whether a plateau (every completed trial of equal values) is searched next to the
    #: latest best instead of with the model
    walks_plateaus: ClassVar[bool] = False
    #: studies stored before the design was a setting used the paper authors' design
    legacy_settings: ClassVar[dict[str, Any]] = {"design": "sparsity"}

    def __init__(
        self,
        space: SearchSpace,
        *,
        seed: int = 0,
        direction: str = "minimize",
        n_init: int = 20,
        design: str = "uniform",
        **kwargs: Any,
    ) -> None:
        _check_design_options({"n_init": n_init, "design": design})
        self.n_init = int(n_init)
        self.design = check_design(design)
        super().__init__(space, seed=seed, direction=direction, **kwargs)
        self._design = initial_design(space, self.n_init, self.seed, self.design)

    @classmethod
    def _check_space_free_options(cls, options: dict[str, Any]) -> None:
        super()._check_space_free_options(options)
        _check_design_options(options)

    def settings(self) -> dict[str, Any]:
        return {"n_init": self.n_init, "design": self.design}

    def _suggest(self, history: History, n: int) -> Tensor:
        design = self.unused_design_points(history, self._design)[:n]
        rest = n - len(design)
        if rest == 0:
            return design
        taken = torch.cat([history.X, design])
        completed = len(history.rows("complete"))
        if completed == 0:  # nothing known yet
            return torch.cat([design, sample_new_points(self.space, rest, taken)])
        if completed < self.min_completed or (self.walks_plateaus and _flat(history)):
            return torch.cat([design, self._next_to_best(history, rest, taken)])
        return torch.cat([design, self._model_points(history, rest, design, taken)])

    def _next_to_best(self, history: History, n: int, taken: Tensor) -> Tensor:
        """``n`` new configurations, each one parameter away from the latest of the best
        completed trials of ``history`` (in random order; other new configurations once its
        neighbours are all taken)."""
        scores = history.Y_completed.sum(-1)
        best = history.X_completed[len(scores) - 1 - int(scores.flip(0).argmax())]
        generator = torch.Generator().manual_seed(int(torch.randint(2**62, (1,))))
        seen = set(row_keys(self.space, taken).tolist())
        points = []
        for _ in range(n):
            point = nearby_new_point(self.space, best, seen, generator)
            seen.add(int(row_keys(self.space, point.unsqueeze(0))[0]))
            points.append(point)
        return torch.stack(points)

    @abstractmethod
    def _model_points(self, history: History, q: int, design: Tensor, taken: Tensor) -> Tensor:
        """``q x dim`` encoded points from the model of ``history``, at least
        :attr:`min_completed` of its trials being complete. ``design``: this batch's design
        points (to be treated as pending); ``taken``: every trial's point and ``design``.
        Global RNGs are seeded by the caller."""


def _flat(history: History) -> bool:
    """Whether every completed trial of ``history`` has the same values."""
    values = history.Y_completed
    return bool((values.max(0).values <= values.min(0).values).all())


def _check_design_options(options: dict[str, Any]) -> None:
    """Check ``n_init`` and ``design`` (see :class:`ModelBasedOptimizer`)."""
    n_init = options["n_init"]
    n_init = check_integer("n_init", n_init, 0)
    check_design(options["design"])
