"""The acquisition optimizer's wrapper that keeps evaluated points from being proposed."""

import torch
from botorch.acquisition import PosteriorMean
from botorch.models.deterministic import GenericDeterministicModel

from bodi.acquisition.optimize import AvoidPoints
from bodi.space import Binary, Categorical, SearchSpace


def test_avoided_points_score_below_every_other_point_and_the_rest_are_unchanged():
    space = SearchSpace([Binary(f"b{i}") for i in range(6)] + [Categorical("c", ["x", "y", "z"])])
    acq = PosteriorMean(GenericDeterministicModel(lambda X: X.sum(-1, keepdim=True)))
    X = space.sample(50, generator=torch.Generator().manual_seed(0))
    avoid = X[[3, 17, 40]]
    wrapped = AvoidPoints(acq, space, avoid, X_baseline=X[:0])
    plain = acq(X.unsqueeze(-2))
    values = wrapped(X.unsqueeze(-2))
    bad = torch.zeros(50, dtype=torch.bool)
    bad[[3, 17, 40]] = True
    for i in range(50):  # a sample may repeat an avoided point
        bad[i] |= bool((X[i] == avoid).all(-1).any())
    assert torch.equal(values[~bad], plain[~bad])
    assert (values[bad] < values[~bad].min()).all()
    pending = AvoidPoints(acq, space, avoid, X_baseline=X[:0], X_pending=X[[5]])
    both = pending(X[[5, 6]].unsqueeze(-2))  # a pending point is avoided too
    assert both[0] < both[1] or bad[6]
