"""What the GP loop (:class:`bodi.optimizers.gp_optimizer.GPOptimizer`) fits its model on:
the completed trials nearest a centre, infeasible trials ranked below feasible ones, and huge
outcomes squashed."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from bodi.space import SearchSpace


def nearest_rows(space: SearchSpace, X: Tensor, center: Tensor, k: int) -> Tensor:
    """Indices (ascending) of the ``k`` rows of ``X`` (``n x dim``, encoded) nearest
    ``center`` (``dim``): the Hamming distance over the binary/categorical columns plus the L1
    distance over the others (in ``[0, 1]``); ties go to the earlier row."""
    discrete, ordinal = space.discrete_dims, space.ordinal_dims
    distance = (X[:, discrete] != center[discrete]).sum(-1).to(X.dtype)
    if ordinal:
        distance = distance + (X[:, ordinal] - center[ordinal]).abs().sum(-1)
    order = torch.from_numpy(np.argsort(distance.numpy(), kind="stable"))
    return order[:k].sort().values


def penalize_infeasible(utility: Tensor, C: Tensor) -> Tensor:
    """``n`` utilities (larger is better) with each infeasible row (some ``C > 0``, ``C``:
    ``n x c``) put below every feasible one: ``min(feasible) - 1 - total violation``, so the
    least violating infeasible row ranks first among them."""
    violation = C.clamp_min(0).sum(-1)
    infeasible = violation > 0
    if not infeasible.any():
        return utility
    floor = utility[~infeasible].min() if (~infeasible).any() else utility.new_tensor(0.0)
    return torch.where(infeasible, floor - 1 - violation, utility)


#: outcomes beyond this magnitude are squashed before modelling in the model's precision
#: (see :func:`squash_outcomes`)
SQUASH_ABOVE = {torch.float64: 1e100, torch.float32: 1e15}


def squash_outcomes(Y: Tensor, dtype: torch.dtype = torch.float64) -> Tensor:
    """``Y`` unchanged, unless some ``|y| > SQUASH_ABOVE[dtype]``: then ``sign(y) log1p(|y|)``.

    Standardizing values of 1e160 squares them past the float range (1e20 past float32's), so
    without this a single huge (finite) objective value would break every later fit. The
    transform is monotone, so the incumbent and the ranking of the points are kept.
    """
    if Y.numel() == 0 or Y.abs().max() <= SQUASH_ABOVE[dtype]:
        return Y
    return Y.sign() * Y.abs().log1p()
