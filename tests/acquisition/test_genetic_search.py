"""The genetic acquisition optimizer (MCBO's GA) and the trust region's projection."""

import pytest
import torch
from botorch.acquisition import AcquisitionFunction

from bodi.acquisition import optimize_acquisition
from bodi.acquisition.genetic import genetic_search
from bodi.acquisition.trust_region import TrustRegion
from bodi.novelty import SearchSpaceExhaustedError
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

MIXED = SearchSpace(
    [Binary(f"b{i}") for i in range(12)]
    + [Categorical("c", ["x", "y", "z"]), Continuous("u", 0, 1), Integer("k", 0, 10)]
)


class NegativeDistance(AcquisitionFunction):
    """Minus the L1 distance to a target (maximum 0 there); counts the points it scores."""

    def __init__(self, target):
        super().__init__(model=None)
        self.target, self.X_pending, self.scored = target, None, 0

    def forward(self, X):
        self.scored += X.shape[0]
        return -(X - self.target).abs().sum(-1).sum(-1)

    def set_X_pending(self, X_pending=None):
        self.X_pending = X_pending


def _none(space):
    return torch.empty(0, space.dim, dtype=torch.float64)


def test_the_search_improves_on_its_first_generation_within_its_evaluations():
    space = SearchSpace([Binary(f"x{i}") for i in range(40)])
    target = (torch.arange(40) % 3 == 0).to(torch.float64)
    acq = NegativeDistance(target)
    torch.manual_seed(0)
    first = genetic_search(acq, space, avoid=_none(space), evaluations=100)[1]
    acq.scored = 0
    torch.manual_seed(0)
    x, value = genetic_search(acq, space, avoid=_none(space), evaluations=3000)
    assert value > first + 5  # a random 40-bit point is ~20 flips away
    assert value == -(x - target).abs().sum() and acq.scored <= 3000
    torch.manual_seed(0)
    found, _ = genetic_search(acq, space, avoid=_none(space), evaluations=20000)
    assert torch.equal(found, target)
    torch.manual_seed(0)
    other, _ = genetic_search(acq, space, avoid=target.unsqueeze(0), evaluations=20000)
    assert not torch.equal(other, target)  # never an avoided point


def test_every_member_stays_in_the_region_and_on_the_grid():
    center = torch.zeros(MIXED.dim, dtype=torch.float64).index_fill_(0, torch.tensor([13]), 0.5)
    region = TrustRegion(MIXED, center, radius=3, length=0.2)
    seen = []

    class Ones(NegativeDistance):
        def forward(self, X):
            seen.append(X.squeeze(-2))
            return X[..., :12].sum(-1).sum(-1)

    torch.manual_seed(1)
    x = optimize_acquisition(Ones(center), MIXED, region=region, method="ga")
    assert region.contains(torch.cat(seen)).all() and MIXED.contains(torch.cat(seen)).all()
    assert x[0, :12].sum() == 3  # the best the region allows


def test_a_batch_is_distinct_and_new_and_a_spent_space_is_reported():
    space = SearchSpace([Binary("a"), Binary("b"), Categorical("c", ["x", "y", "z"])])
    acq = NegativeDistance(torch.zeros(3, dtype=torch.float64))
    every = torch.cartesian_prod(*[torch.arange(2.0), torch.arange(2.0), torch.arange(3.0)])
    avoid = every[:8].to(torch.float64)
    torch.manual_seed(0)
    X = optimize_acquisition(acq, space, q=3, avoid=avoid, method="ga")
    assert len(torch.unique(X, dim=0)) == 3
    assert not (X.unsqueeze(1) == avoid).all(-1).any()
    with pytest.raises(SearchSpaceExhaustedError):
        optimize_acquisition(acq, space, avoid=every.to(torch.float64), method="ga")


def test_a_search_that_scores_no_new_point_falls_back_on_the_local_search():
    space = SearchSpace([Binary(f"x{i}") for i in range(10)])
    acq = NegativeDistance(torch.zeros(10, dtype=torch.float64))
    every = torch.cartesian_prod(*[torch.arange(2.0)] * 10).to(torch.float64)
    left = every[-1]  # all ones, the point farthest from everything the population holds
    torch.manual_seed(0)
    x, _ = genetic_search(acq, space, avoid=every[:-1], population=4, evaluations=4, elite=1,
                          parents=2)
    assert torch.equal(x, left)


@pytest.mark.parametrize("options", [dict(elite=100), dict(parents=0), dict(evaluations=50)])
def test_invalid_settings_are_refused(options):
    acq = NegativeDistance(torch.zeros(MIXED.dim, dtype=torch.float64))
    with pytest.raises(ValueError, match="genetic search"):
        genetic_search(acq, MIXED, avoid=_none(MIXED), **options)


def test_projection_keeps_rows_inside_and_cuts_others_to_the_radius():
    center = torch.zeros(MIXED.dim, dtype=torch.float64).index_fill_(0, torch.tensor([13]), 0.5)
    region = TrustRegion(MIXED, center, radius=3, length=0.2)
    inside = region.sample(50, generator=torch.Generator().manual_seed(0))
    assert torch.equal(region.project(inside), inside)
    far = MIXED.sample(200, generator=torch.Generator().manual_seed(1))
    projected = region.project(far, generator=torch.Generator().manual_seed(2))
    assert region.contains(projected).all()
    discrete = MIXED.discrete_dims
    moved = far[:, discrete] != projected[:, discrete]
    # only columns that differed from the centre are set back, to the centre's values
    assert (projected[:, discrete][moved] == center[discrete].expand(200, -1)[moved]).all()
    kept = region.hamming(projected)
    assert torch.equal(kept, torch.minimum(region.hamming(far), torch.tensor(3)))
