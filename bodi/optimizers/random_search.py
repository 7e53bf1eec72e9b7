"""Uniform random search, behind the same ask/tell interface."""

from __future__ import annotations

import torch
from torch import Tensor

from bodi.acquisition.local_search import SearchSpaceExhaustedError
from bodi.optimizers.base import Optimizer
from bodi.space import SearchSpace


def sample_new_points(space: SearchSpace, n: int, taken: Tensor) -> Tensor:
    """``n x dim`` uniform samples; in a discrete space, distinct and none of ``taken``."""
    if not space.is_discrete:
        return space.sample(n)
    if space.cardinality - len(torch.unique(taken, dim=0)) < n:
        raise SearchSpaceExhaustedError("every configuration of the space has been proposed")
    out: list[Tensor] = []
    while len(out) < n:
        for x in space.sample(max(64, 2 * n)):
            if len(out) < n and not (taken == x).all(-1).any():
                out.append(x)
                taken = torch.cat([taken, x.unsqueeze(0)])
    return torch.stack(out)


class RandomSearch(Optimizer):
    """Uniform sampling from the search space (never repeating a point of a discrete space)."""

    def _suggest(self, n: int) -> Tensor:
        return sample_new_points(self.space, n, self._stack([t.x for t in self.trials]))
