"""Uniform random search, behind the same interface as every optimizer."""

from __future__ import annotations

import torch
from torch import Tensor

from bodi.novelty import SearchSpaceExhaustedError, row_keys
from bodi.optimizers.base import Optimizer
from bodi.space import SearchSpace
from bodi.trials import History

#: rounds of random draws without a new point before :func:`sample_new_points` gives up
MAX_EMPTY_ROUNDS = 200


def sample_new_points(space: SearchSpace, n: int, taken: Tensor) -> Tensor:
    """``n x dim`` random samples (:meth:`SearchSpace.sample`: uniform, or feasible in a
    constrained space); in a discrete space, distinct and none of ``taken``."""
    if not space.is_discrete:
        return space.sample(n)
    seen = set(row_keys(space, taken).tolist())
    if space.cardinality - len(seen) < n:
        raise SearchSpaceExhaustedError("every configuration of the space has been proposed")
    out: list[Tensor] = []
    empty_rounds = 0  # constraints can leave fewer new points than the cardinality says
    while empty_rounds < MAX_EMPTY_ROUNDS:
        batch, before = space.sample(max(64, 2 * n)), len(out)
        for x, key in zip(batch, row_keys(space, batch).tolist(), strict=True):
            if len(out) < n and key not in seen:
                out.append(x)
                seen.add(key)
        if len(out) == n:
            return torch.stack(out)
        empty_rounds = empty_rounds + 1 if len(out) == before else 0
    raise SearchSpaceExhaustedError(
        f"found only {len(out)} of {n} new configurations: {MAX_EMPTY_ROUNDS} rounds of random "
        "draws found nothing new; the constrained space may be exhausted"
    )


class RandomSearch(Optimizer):
    """Uniform sampling from the search space (never repeating a point of a discrete space;
    feasible points only in a constrained space). Any number of objectives."""

    supports_multi_objective = True
    supports_outcome_constraints = True

    def _suggest(self, history: History, n: int) -> Tensor:
        return sample_new_points(self.space, n, history.X)
