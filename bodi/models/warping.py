"""Monotone warpings of the objective values before the GP sees them.

A GP with a Gaussian likelihood fits best when the values it models look Gaussian. Objective
values of rugged or heavy-tailed problems rarely do: a few good trials far above a mass of
random ones (LABS's merit factor), or many values near a floor (Ackley's regret). A strictly
increasing map of the values keeps every comparison the search makes (the incumbent, the
expected improvement over it in the warped scale) and can make the GP's job easier:

* ``"rank"``, the Gaussian copula: each value is replaced by the standard normal quantile of its
  mid-rank, ``z_i = Phi^{-1}((r_i - 1/2) / n)`` (ties share their mean rank), so the values are
  exactly normal in distribution and only their order remains;
* ``"power"``: the Yeo-Johnson power transform of the standardized values with the exponent of
  largest Gaussian likelihood (HEBO's output warping; ``scipy.stats.yeojohnson``), which keeps
  the spacing of the values but removes their skew.

``"none"`` (the default) leaves the values as they are.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import stats
from torch import Tensor

#: the values of ``outcome_warping``
OUTCOME_WARPINGS = ("none", "rank", "power")


def check_outcome_warping(warping: str) -> None:
    """The one check of an ``outcome_warping`` option."""
    if warping not in OUTCOME_WARPINGS:
        raise ValueError(f"unknown outcome_warping {warping!r}; choose one of "
                         f"{list(OUTCOME_WARPINGS)}")


def warp_outcomes(Y: Tensor, warping: str) -> Tensor:
    """``Y`` (``n x k``, larger is better) with each column warped by ``warping`` (see the
    module); a strictly increasing map per column, so the order of the trials is kept. A
    column with fewer than two distinct values is returned unchanged."""
    check_outcome_warping(warping)
    if warping == "none" or Y.shape[0] < 2:
        return Y
    columns = [_warp_column(column, warping) for column in Y.detach().cpu().double().numpy().T]
    return torch.as_tensor(np.stack(columns, -1)).to(Y)


def _warp_column(y: np.ndarray, warping: str) -> np.ndarray:
    if np.unique(y).size < 2:
        return y
    if warping == "rank":
        return stats.norm.ppf((stats.rankdata(y) - 0.5) / y.size)
    standardized = (y - y.mean()) / y.std()
    with np.errstate(all="ignore"):
        warped, _ = stats.yeojohnson(standardized)
    if not np.all(np.isfinite(warped)) or np.unique(warped).size < np.unique(y).size:
        return standardized  # the fitted exponent overflowed or merged values: keep the order
    return warped
