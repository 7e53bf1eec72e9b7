"""Outcome warpings: strictly increasing per column, Gaussian in distribution, checked."""

import numpy as np
import pytest
import torch
from scipy import stats

from bodi.models.warping import OUTCOME_WARPINGS, check_outcome_warping, warp_outcomes


def test_rank_warping_is_the_normal_quantile_of_the_mid_ranks_with_ties_shared():
    Y = torch.tensor([[1.0], [2.0], [2.0], [10.0], [3.0]], dtype=torch.float64)
    expected = stats.norm.ppf((np.array([1.0, 2.5, 2.5, 5.0, 4.0]) - 0.5) / 5)
    assert torch.allclose(warp_outcomes(Y, "rank").squeeze(-1),
                          torch.as_tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("warping", ["rank", "power"])
def test_warpings_keep_the_order_of_each_column(warping):
    g = torch.Generator().manual_seed(0)
    Y = torch.cat([torch.randn(40, 1, generator=g).exp() ** 3,  # heavy right tail
                   -torch.rand(40, 1, generator=g)], -1).to(torch.float32)
    warped = warp_outcomes(Y, warping)
    assert warped.dtype == torch.float32 and warped.shape == Y.shape
    for j in range(2):
        assert torch.equal(warped[:, j].argsort(), Y[:, j].argsort())
    if warping == "power":  # the skew is gone
        assert abs(stats.skew(warped[:, 0].numpy())) < 0.5 * stats.skew(Y[:, 0].numpy())


def test_none_and_constant_columns_are_left_as_they_are():
    Y = torch.tensor([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]], dtype=torch.float64)
    assert warp_outcomes(Y, "none") is Y
    for warping in OUTCOME_WARPINGS:
        assert torch.equal(warp_outcomes(Y, warping)[:, 1], Y[:, 1])
        assert torch.equal(warp_outcomes(Y[:1], warping), Y[:1])


def test_unknown_warping_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown outcome_warping 'log'; choose one of"):
        check_outcome_warping("log")
