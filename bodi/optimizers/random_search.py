"""Uniform random search, behind the same ask/tell interface."""

from __future__ import annotations

import torch
from torch import Tensor

from bodi.acquisition.local_search import SearchSpaceExhaustedError
from bodi.optimizers.base import Optimizer
from bodi.space import SearchSpace, row_keys


def sample_new_points(space: SearchSpace, n: int, taken: Tensor) -> Tensor:
    """``n x dim`` uniform samples; in a discrete space, distinct and none of ``taken``."""
    if not space.is_discrete:
        return space.sample(n)
    seen = set(row_keys(space, taken).tolist())
    if space.cardinality - len(seen) < n:
        raise SearchSpaceExhaustedError("every configuration of the space has been proposed")
    out: list[Tensor] = []
    while len(out) < n:
        batch = space.sample(max(64, 2 * n))
        for x, key in zip(batch, row_keys(space, batch).tolist(), strict=True):
            if len(out) < n and key not in seen:
                out.append(x)
                seen.add(key)
    return torch.stack(out)


class RandomSearch(Optimizer):
    """Uniform sampling from the search space (never repeating a point of a discrete space)."""

    def _suggest(self, n: int) -> Tensor:
        return sample_new_points(self.space, n, self._stack([t.x for t in self.trials]))
