"""The initial design shared by every method for a given (space, seed)."""

from __future__ import annotations

import torch
from torch import Tensor
from torch.quasirandom import SobolEngine

from bodi.seeding import as_generator, derive_seed
from bodi.space import DTYPE, SearchSpace, row_keys


def initial_design(space: SearchSpace, n: int, seed: int) -> Tensor:
    """``n`` starting points, an ``n x dim`` encoded tensor (BODi's initial design).

    Binary parameters: per point a random number ``k in 1 .. d_b - 1`` of ones at random
    positions (as the paper's authors did, so the design covers all sparsity levels);
    categorical parameters uniform; continuous and integer parameters a scrambled Sobol sequence.
    In a fully discrete space the points are distinct (duplicates are redrawn uniformly).
    """
    if n < 0:
        raise ValueError(f"the initial design size must be >= 0, got {n}")
    g = as_generator(derive_seed(seed, 0x1D))
    X = space.sample(n, generator=g)
    binary = torch.tensor(space.binary_dims, dtype=torch.long)
    n_binary = len(binary)
    if n_binary:
        low, high = (1, n_binary - 1) if n_binary > 2 else (0, n_binary)
        k = torch.randint(low, high + 1, (n,), generator=g)
        ranks = torch.rand(n, n_binary, generator=g).argsort(-1).argsort(-1)
        X[:, binary] = (ranks < k.unsqueeze(-1)).to(DTYPE)
    ordinal = space.ordinal_dims
    if ordinal and n:
        sobol = SobolEngine(len(ordinal), scramble=True, seed=derive_seed(seed, 0x50B) % 2**31)
        X[:, ordinal] = sobol.draw(n).to(DTYPE)
        X = space.round(X)
    if space.is_discrete:
        X = _redraw_duplicates(space, X, g)
    return space.canonicalize(X) if n else X


def _redraw_duplicates(space: SearchSpace, X: Tensor, g: torch.Generator) -> Tensor:
    """Replace repeated rows by uniform draws until all rows are distinct (when possible)."""
    limit = int(min(space.cardinality, len(X)))
    for _ in range(100):
        seen: set[int] = set()
        flags = []
        for key in row_keys(space, X).tolist():  # a row is repeated if an earlier one matches
            flags.append(key in seen)
            seen.add(key)
        repeated = torch.tensor(flags, dtype=torch.bool)
        if not repeated.any() or (~repeated).sum() >= limit:
            break
        X[repeated] = space.sample(int(repeated.sum()), generator=g)
    return X
