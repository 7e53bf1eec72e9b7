"""Coarse-to-fine search: the first suggestions move groups of parameters together.

In the spirit of Bounce's nested embeddings (Papenmeier et al., NeurIPS 2023), the discrete
(binary and categorical) parameters are shuffled into ``b_0 = 5`` *groups*; a group move
shifts every parameter of the group by the same amount around the centre ``c`` (the incumbent):

    x_p = (c_p + z_g) mod K_p      for each parameter p of group g, z_g in {0, ..., K_g - 1}

(a binary group flips all its bits together; ``K_g`` is the smallest cardinality in the group;
the other columns stay at the centre). The acquisition function, whose model is the full
model of all the trials, is maximized over ``z`` by the usual local search in this small
space. After each *stage* every group splits at random into three, so the search moves from
large groups to single parameters: the stages have ``5, 15, 45, ...`` groups (while fewer than
the discrete parameters), and the ``coarse_steps`` suggestions after the initial design are
shared among them in proportion to their number of groups (at least two each); after them
the search works on single parameters. Unlike Bounce, the model is never reduced to the
groups: only where the search looks is.

Everything is a function of the seed and the number of completed trials, so a resumed study
continues identically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction
from torch import Tensor

from bodi.seeding import derive_seed
from bodi.space import DTYPE, Binary, Categorical, SearchSpace

INITIAL_GROUPS = 5
SPLIT_INTO = 3
MIN_STAGE_STEPS = 2


def stage_sizes(n_discrete: int) -> list[int]:
    """The number of groups of each coarse stage: ``5, 15, 45, ...`` below ``n_discrete``."""
    sizes, size = [], INITIAL_GROUPS
    while size < n_discrete:
        sizes.append(size)
        size *= SPLIT_INTO
    return sizes


def stage_lengths(n_discrete: int, coarse_steps: int) -> list[int]:
    """Suggestions per stage: ``coarse_steps`` shared in proportion to the stages' sizes,
    at least :data:`MIN_STAGE_STEPS` each (stages that do not fit are dropped, largest first)."""
    sizes = stage_sizes(n_discrete)
    while sizes and MIN_STAGE_STEPS * len(sizes) > coarse_steps:
        sizes.pop()
    if not sizes:
        return []
    extra = coarse_steps - MIN_STAGE_STEPS * len(sizes)
    shares = [extra * s / sum(sizes) for s in sizes]
    lengths = [MIN_STAGE_STEPS + math.floor(s) for s in shares]
    lengths[-1] += coarse_steps - sum(lengths)
    return lengths


@dataclass(frozen=True)
class Groups:
    """A partition of some discrete columns of ``space`` into groups.

    ``columns`` are the grouped columns (encoded indices), ``group`` (same length) the group of
    each and ``cardinality`` the ``K_g`` of each group.
    """

    space: SearchSpace
    columns: Tensor
    group: Tensor
    cardinality: Tensor

    @property
    def n_groups(self) -> int:
        return len(self.cardinality)

    def group_space(self) -> SearchSpace:
        """The space of group moves ``z``: one binary or categorical parameter per group."""
        return SearchSpace([
            Binary(f"group{g}") if k == 2 else Categorical(f"group{g}", list(range(k)))
            for g, k in enumerate(self.cardinality.tolist())
        ])

    def _column_cardinality(self) -> Tensor:
        cards = self.space.cardinalities
        return torch.tensor([cards[i] for i in self.columns.tolist()], dtype=DTYPE)

    def lift(self, Z: Tensor, center: Tensor) -> Tensor:
        """``... x dim`` points of the moves ``Z`` (``... x n_groups``) around ``center``."""
        X = center.to(Z).expand(*Z.shape[:-1], -1).clone()
        K = self._column_cardinality().to(Z)
        X[..., self.columns] = torch.remainder(center[self.columns].to(Z) + Z[..., self.group], K)
        return X

    def project(self, X: Tensor, center: Tensor) -> tuple[Tensor, Tensor]:
        """The moves ``z`` (``n x n_groups``) of the rows of ``X`` (``n x dim``) and a mask of
        the rows that are group moves of ``center`` at all (the others' ``z`` is meaningless)."""
        K = self._column_cardinality()
        shift = torch.remainder(X[:, self.columns] - center[self.columns], K)  # n x c
        Z = torch.zeros(len(X), self.n_groups, dtype=DTYPE)
        Z[:, self.group] = shift  # some column's shift per group
        in_range = (Z - self.cardinality.to(DTYPE) < 0).all(-1)
        inside = (shift == Z[:, self.group]).all(-1) & in_range
        others = torch.ones(self.space.dim, dtype=torch.bool)
        others[self.columns] = False
        inside &= (X[:, others] == center[others]).all(-1)
        return Z, inside


def coarse_groups(space: SearchSpace, seed: int, step: int, coarse_steps: int) -> Groups | None:
    """The groups of the coarse stage at ``step`` (suggestions since the initial design, from
    0), or ``None`` once the coarse steps are over (or with fewer than 6 discrete columns)."""
    discrete = space.discrete_dims
    lengths = stage_lengths(len(discrete), coarse_steps)
    if step < 0 or step >= sum(lengths):
        return None
    stage = int(np.searchsorted(np.cumsum(lengths), step, side="right"))
    rng = np.random.default_rng(derive_seed(seed, 0xC0A5))
    order = rng.permutation(len(discrete))
    groups = [list(part) for part in np.array_split(order, INITIAL_GROUPS)]
    for _ in range(stage):
        groups = [list(part) for g in groups
                  for part in np.array_split(rng.permutation(g), SPLIT_INTO) if len(part)]
    cards = space.cardinalities
    columns = torch.tensor([discrete[i] for g in groups for i in g], dtype=torch.long)
    group = torch.tensor([j for j, g in enumerate(groups) for _ in g], dtype=torch.long)
    cardinality = torch.tensor([min(cards[discrete[i]] for i in g) for g in groups],
                               dtype=torch.long)
    return Groups(space, columns, group, cardinality)


class GroupMoveAcquisition(torch.nn.Module):
    """``acq_function`` of the points that group moves ``Z`` (``b x q x n_groups``) reach from
    ``center``: what the local search maximizes in the group space.

    The wrapped function is held outside the module tree, so that the search does not take
    the model's kernels for kernels of the group space (their incremental embeddings are of
    the full points).
    """

    def __init__(self, acq_function: AcquisitionFunction, groups: Groups, center: Tensor,
                 pending: Tensor | None = None):
        super().__init__()
        self._wrapped = (acq_function,)
        self.groups = groups
        self.center = center
        self.pending = pending

    def forward(self, Z: Tensor) -> Tensor:
        return self._wrapped[0](self.groups.lift(Z, self.center))

    def set_X_pending(self, Z_pending: Tensor | None = None) -> None:
        """Pending group moves (with the pending points given at construction)."""
        parts = [p for p in (self.pending, None if Z_pending is None
                             else self.groups.lift(Z_pending, self.center)) if p is not None]
        self._wrapped[0].set_X_pending(torch.cat(parts) if parts else None)
