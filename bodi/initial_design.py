"""The initial design shared by every method for a given (space, seed, kind).

Two kinds (:data:`DESIGNS`):

- ``"uniform"`` (the default): binary and categorical parameters uniform. It is shift-invariant:
  moving the optimum (``x -> x XOR mask``, category ``i -> (i + s) mod k``; see
  :mod:`bodi.problems.shifted`) leaves the design's distribution unchanged, so no problem
  starts closer to its optimum because the optimum is a special point.
- ``"sparsity"``: the paper authors' design; per point a random number ``k in 1 .. d_b - 1`` of
  ones at random positions, so it covers all sparsity levels. It puts many points near
  all-zeros and all-ones: on maxsat60, whose optimum is all-zeros, the best of 20 such points
  is 179.5 +- 2.5 against 92.3 +- 2.7 on maxsat60-shifted (10 seeds); the uniform design gives
  91.1 +- 3.2 and 91.2 +- 2.6.

Continuous and integer parameters come from a scrambled Sobol sequence in both kinds. In a
constrained space (:mod:`bodi.constraints`) infeasible points are repaired onto the linear
constraints or redrawn from the feasible set, so the design is feasible.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.quasirandom import SobolEngine

from bodi.novelty import row_keys
from bodi.seeding import as_generator, derive_seed
from bodi.space import DTYPE, SearchSpace

#: the kinds of initial design (see the module's docstring)
DESIGNS = ("uniform", "sparsity")


def check_design(kind: str) -> str:
    """``kind`` if it is one of :data:`DESIGNS`, else a ``ValueError``."""
    if kind not in DESIGNS:
        raise ValueError(f"design must be one of {list(DESIGNS)}, got {kind!r}")
    return kind


def initial_design(space: SearchSpace, n: int, seed: int, kind: str = "uniform") -> Tensor:
    """``n`` starting points, an ``n x dim`` encoded tensor.

    ``kind="uniform"``: discrete parameters uniform; ``kind="sparsity"``: binary parameters with a
    uniform number of ones (the paper authors' design). Continuous and integer parameters come
    from a scrambled Sobol sequence. In a fully discrete space the points are distinct
    (duplicates are redrawn uniformly).
    """
    if n < 0:
        raise ValueError(f"the initial design size must be >= 0, got {n}")
    check_design(kind)
    g = as_generator(derive_seed(seed, 0x1D))
    X = space.sample(n, generator=g)
    binary = torch.tensor(space.binary_dims, dtype=torch.long)
    n_binary = len(binary)
    if n_binary and kind == "sparsity":
        low, high = (1, n_binary - 1) if n_binary > 2 else (0, n_binary)
        k = torch.randint(low, high + 1, (n,), generator=g)
        ranks = torch.rand(n, n_binary, generator=g).argsort(-1).argsort(-1)
        X[:, binary] = (ranks < k.unsqueeze(-1)).to(DTYPE)
    ordinal = space.ordinal_dims
    if ordinal and n:
        sobol = SobolEngine(len(ordinal), scramble=True, seed=derive_seed(seed, 0x50B) % 2**31)
        X[:, ordinal] = sobol.draw(n).to(DTYPE)
        X = space.round(X)
    if space.constraints and n:
        X = _make_feasible(space, X, g)
    if space.is_discrete:
        X = _redraw_duplicates(space, X, g)
    return space.canonicalize(X) if n else X


def _make_feasible(space: SearchSpace, X: Tensor, g: torch.Generator) -> Tensor:
    """Rows of ``X`` repaired onto the linear constraints; rows still infeasible (a predicate)
    are replaced by feasible random draws (:meth:`SearchSpace.sample`)."""
    X = space.repair(X, g)
    bad = ~space.feasible(X)
    if bad.any():
        X[bad] = space.sample(int(bad.sum()), generator=g)
    return X


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
