"""Never the same configuration twice: the exact identity of an encoded row (its key), and the
error raised when a finite space has no new configuration left.

Every place that must not propose, claim or store a configuration twice compares these keys:
the acquisition search and its ``AvoidPoints`` wrapper, the optimizers' last-resort
replacement (:func:`bodi.neighbours.nearby_new_point`), the study's trials and the claims its
storage checks, the baselines.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from bodi.device import DTYPE

if TYPE_CHECKING:
    from bodi.space import SearchSpace


@functools.lru_cache(maxsize=64)
def key_weights(dim: int) -> Tensor:
    """The fixed odd 64-bit weight of each of ``dim`` columns in :func:`row_keys`."""
    g = torch.Generator().manual_seed(0x5EED)
    return torch.randint(-(2**62), 2**62, (dim,), generator=g, dtype=torch.long) | 1


def row_keys(space: SearchSpace, X: Tensor) -> Tensor:
    """An exact-integer hash per row of encoded points (``... x dim`` -> ``...`` int64).

    Discrete columns are mapped to their value indices, continuous columns to the bits of their
    ``float64`` value (so only exactly equal values match; use canonical rows, see
    :meth:`SearchSpace.canonicalize`). The columns are combined with fixed random 64-bit weights
    (wrapping integer arithmetic is exact), so equal rows always get equal keys and distinct rows
    collide with probability about ``2^-64``.
    """
    X = X.to(DTYPE)
    scale = torch.where(space._integer_steps > 0, space._integer_steps, 1.0)
    codes = (X * scale).round().long()
    continuous = space.continuous_dims
    if continuous:
        bits = (X[..., continuous] + 0.0).contiguous().view(torch.int64)  # -0.0 -> 0.0
        codes[..., continuous] = bits
    return (codes * key_weights(space.dim)).sum(-1)


def row_key(space: SearchSpace, x: Tensor | Sequence[float]) -> int:
    """The :func:`row_keys` key of one encoded point ``x`` (``dim``; a tensor or a list)."""
    return int(row_keys(space, torch.as_tensor(x, dtype=DTYPE).unsqueeze(0))[0])


def exact_matches(X: Tensor, points: Tensor) -> Tensor:
    """``... x n x r`` booleans: whether row ``i`` of ``X`` (``... x n x dim``) equals point
    ``j`` of ``points`` (``r x dim``) exactly."""
    return torch.cdist(X, points.expand(*X.shape[:-2], *points.shape), p=1) == 0


def first_occurrences(keys: Tensor) -> Tensor:
    """Indices (ascending) of the first row with each distinct key of ``keys`` (``n``, as
    :func:`row_keys` gives them): the rows that keep a tensor's points distinct, in order."""
    _, first = np.unique(keys.numpy(), return_index=True)
    return torch.from_numpy(np.sort(first))


def count_distinct(space: SearchSpace, X: Tensor) -> int:
    """Number of distinct rows of encoded points ``X``."""
    return len(set(row_keys(space, X).tolist()))


class SearchSpaceExhaustedError(RuntimeError):
    """Every configuration of a finite search space has been evaluated or is pending."""


class SeenConfigurations:
    """The configurations proposed or evaluated so far, by key: whether a row is new, and
    adding rows. Every optimizer's "never the same configuration twice" goes through one.

    Args:
        space: the space the rows encode.
        X: ``n x dim`` rows already seen (canonical, see :func:`row_keys`), or ``None``.
    """

    def __init__(self, space: SearchSpace, X: Tensor | None = None):
        self.space = space
        self.keys: set[int] = set() if X is None or not len(X) else set(
            row_keys(space, X).tolist())

    def __len__(self) -> int:
        return len(self.keys)

    def key(self, x: Tensor) -> int:
        """The key of one row ``x`` (``dim``)."""
        return row_key(self.space, x)

    def __contains__(self, x: Tensor) -> bool:
        return self.key(x) in self.keys

    def add(self, x: Tensor) -> bool:
        """Add one row ``x`` (``dim``); whether it was new."""
        key = self.key(x)
        new = key not in self.keys
        self.keys.add(key)
        return new
