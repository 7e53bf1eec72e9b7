"""Hamming trust regions: membership, sampling, the size rule and the constrained search."""

import pytest
import torch
from botorch.acquisition import AcquisitionFunction

from bodi.acquisition import optimize_acquisition
from bodi.acquisition.trust_region import (
    TrustRegion,
    TrustRegionSettings,
    discrete_moves,
    region_from_state,
    trust_region_state,
)
from bodi.neighbours import NeighbourMoves
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

SPACE = SearchSpace(
    [Binary(f"b{i}") for i in range(12)]
    + [Categorical("c", ["x", "y", "z"]), Continuous("u", 0, 1), Integer("k", 0, 10)]
)


class Ones(AcquisitionFunction):
    """Counts the ones among the binary columns (its maximum is far from a zero centre)."""

    def __init__(self):
        super().__init__(model=None)
        self.X_pending = None

    def forward(self, X):
        return X[..., :12].sum(-1).sum(-1)


def _center():
    return torch.zeros(SPACE.dim, dtype=torch.float64).index_fill_(0, torch.tensor([13]), 0.5)


def test_samples_lie_in_the_region_and_use_the_whole_radius():
    region = TrustRegion(SPACE, _center(), radius=3, length=0.2)
    X = region.sample(500, generator=torch.Generator().manual_seed(0))
    assert region.contains(X).all()
    assert SPACE.contains(X).all()
    assert set(region.hamming(X).tolist()) == {1, 2, 3}
    assert (X[:, 13] - 0.5).abs().max() <= 0.1 + 1e-12
    outside = _center().clone()
    outside[:4] = 1.0
    assert not region.contains(outside)


def test_samples_of_a_binary_region_change_uniform_subsets_of_columns():
    space = SearchSpace([Binary(f"b{i}") for i in range(30)])
    center = (torch.arange(30) % 2).to(torch.float64)
    region = TrustRegion(space, center, radius=4, length=0.5)
    X = region.sample(3000, generator=torch.Generator().manual_seed(1))
    changed = center != X
    assert torch.equal(region.hamming(X), changed.sum(-1))
    counts = torch.bincount(changed.sum(-1), minlength=5)
    assert counts[0] == 0 and (counts[1:] > 650).all()  # 1..4 changes, ~750 each
    per_column = changed.sum(0).double()  # each column as often (7500 / 30 = 250 expected)
    assert per_column.min() > 190 and per_column.max() < 310


def test_search_never_leaves_the_region():
    region = TrustRegion(SPACE, _center(), radius=4, length=0.2)
    torch.manual_seed(0)
    x = optimize_acquisition(Ones(), SPACE, region=region, num_restarts=4, raw_samples=128)
    assert region.contains(x).all()
    assert x[0, :12].sum() == 4  # the best the region allows


def test_size_rule_expands_shrinks_and_restarts():
    settings = TrustRegionSettings(init_radius=4, max_radius=8, success_tolerance=2,
                                   failure_tolerance=2)
    # two initial points, then two improvements -> expand 4 -> 6
    state = trust_region_state([0.0, 1.0, 2.0, 3.0], 2, settings, n_discrete=10)
    assert (state.radius, state.successes, state.failures) == (6, 0, 0)
    # then failures shrink 6 -> 4 -> 2 -> 1 -> 0 (restart)
    values = [0.0, 1.0, 2.0, 3.0] + [0.0] * 8
    state = trust_region_state(values, 2, settings, n_discrete=10)
    assert state.start is None and state.restarts == 1 and state.radius == 4
    # the next value starts the new region
    state = trust_region_state([*values, -5.0], 2, settings, n_discrete=10)
    assert state.start == len(values) and state.best == -5.0


def test_geometric_schedule_reaches_the_minimum_radius_after_horizon_failures():
    settings = TrustRegionSettings(init_radius=10, schedule="geometric", horizon=20)
    start = [0.0, 1.0]  # the initial design
    halfway = trust_region_state(start + [0.0] * 10, 2, settings, n_discrete=50)
    assert halfway.radius == pytest.approx(10 ** 0.5) and halfway.restarts == 0
    state = trust_region_state(start + [0.0] * 19, 2, settings, n_discrete=50)
    assert 1 < state.radius < 2 and state.start == 0
    state = trust_region_state(start + [0.0] * 20, 2, settings, n_discrete=50)
    assert state.start is None and state.restarts == 1 and state.radius == 10
    # an improvement grows the radius by the factor a failure shrinks it by
    grown = trust_region_state(start + [0.0] * 10 + [5.0], 2, settings, n_discrete=50)
    shrunk = trust_region_state(start + [0.0] * 11, 2, settings, n_discrete=50)
    assert grown.radius * shrunk.radius == pytest.approx(halfway.radius ** 2)
    assert grown.length > halfway.length > shrunk.length


def test_a_box_with_its_own_tolerance_narrows_and_restarts_alone():
    settings = TrustRegionSettings(init_radius=4, max_radius=8, success_tolerance=2,
                                   failure_tolerance=6, box_failure_tolerance=2,
                                   min_length=0.1)
    start = [0.0, 1.0]
    state = trust_region_state(start + [0.0] * 5, 2, settings, n_discrete=10)
    assert state.radius == 4 and state.length == pytest.approx(0.8 / 1.5**2)
    # at the radius's tolerance the radius shrinks, the box only by its own rule
    state = trust_region_state(start + [0.0] * 6, 2, settings, n_discrete=10)
    assert state.radius == 2 and state.length == pytest.approx(0.8 / 1.5**3)
    # below min_length the box restarts at init_length; the region does not
    state = trust_region_state(start + [0.0] * 10, 2, settings, n_discrete=10)
    assert state.length == pytest.approx(0.8 / 1.5**5)
    state = trust_region_state(start + [0.0] * 12, 2, settings, n_discrete=10)
    assert state.start == 0 and state.radius == 1 and state.length == 0.8
    # an improvement resets the box's count; successes grow box and radius together
    state = trust_region_state([*start, 0.0, 2.0, 0.0, 3.0, 4.0], 2, settings, n_discrete=10)
    assert state.radius == 6 and state.length == pytest.approx(0.8 * 1.5)
    # the radius alone restarts the region
    state = trust_region_state(start + [0.0] * 18, 2, settings, n_discrete=10)
    assert state.start is None and state.restarts == 1 and state.length == 0.8
    # an improvement that changes the discrete values widens the box again; one that keeps
    # them does not
    values = [*start, 0.0, 0.0, 0.0, 0.0, 2.0]
    moved = trust_region_state(values, 2, settings, 10, [False] * 6 + [True])
    kept = trust_region_state(values, 2, settings, 10, [False] * 7)
    assert moved.length == 0.8 and kept.length == pytest.approx(0.8 / 1.5**2)
    # without the option the box follows the radius (CASMOPOLITAN's rule)
    shared = TrustRegionSettings(init_radius=4, max_radius=8, failure_tolerance=6)
    state = trust_region_state(start + [0.0] * 6, 2, shared, n_discrete=10)
    assert state.radius == 2 and state.length == pytest.approx(0.8 / 1.5)


def test_a_stall_tolerance_restarts_a_region_that_has_not_shrunk():
    settings = TrustRegionSettings(init_radius=4, max_radius=8, success_tolerance=2,
                                   failure_tolerance=3, stall_tolerance=5)
    start = [0.0, 1.0]
    # three failures shrink the radius and reset the failure count, not the stall count
    state = trust_region_state(start + [0.0] * 4, 2, settings, n_discrete=10)
    assert state.radius == 2 and state.stalls == 4 and state.start == 0
    state = trust_region_state(start + [0.0] * 5, 2, settings, n_discrete=10)
    assert state.start is None and state.restarts == 1 and state.radius == 4
    # an improvement resets the stall count
    state = trust_region_state([*start, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0], 2, settings,
                               n_discrete=10)
    assert state.start == 0 and state.stalls == 1
    # without the tolerance the same values shrink the region and do not restart it
    plain = TrustRegionSettings(init_radius=4, max_radius=8, failure_tolerance=3)
    assert trust_region_state(start + [0.0] * 5, 2, plain, n_discrete=10).start == 0


def test_discrete_moves_compare_each_point_with_the_best_before_it():
    X = torch.tensor([[0, 0], [1, 0], [1, 0], [0, 1], [1, 0]])
    assert discrete_moves(X, [0.0, 1.0, 2.0, 0.5, 3.0]) == [False, True, False, True, False]


def test_region_is_centred_at_the_best_point_of_the_current_run():
    settings = TrustRegionSettings()
    X = SPACE.sample(5, generator=torch.Generator().manual_seed(1))
    Y = torch.tensor([[0.0], [3.0], [1.0], [2.0], [0.5]], dtype=torch.float64)
    state = trust_region_state(Y.squeeze(-1).tolist(), 3, settings, n_discrete=13)
    region = region_from_state(SPACE, state, X, Y)
    assert torch.equal(region.center, X[1])
    assert region.radius == 13  # init radius 20 capped at the 13 discrete parameters


@pytest.mark.parametrize("kwargs", [{"init_radius": 0}, {"multiplier": 1.0},
                                    {"failure_tolerance": 0}, {"min_length": 2.0},
                                    {"schedule": "linear"}, {"horizon": 0},
                                    {"box_failure_tolerance": 0},
                                    {"box_failure_tolerance": True},
                                    {"box_failure_tolerance": 3, "schedule": "geometric"},
                                    {"stall_tolerance": 0}, {"stall_tolerance": True},
                                    {"stall_tolerance": 3, "schedule": "geometric"}])
def test_invalid_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        TrustRegionSettings(**kwargs)


def test_fields_complete_a_default_region():
    from bodi.acquisition.trust_region import complete_trust_region

    default = TrustRegionSettings(box_failure_tolerance=4)
    assert complete_trust_region({}, default) == default
    assert complete_trust_region({"init_radius": 2, "max_radius": 2}, default) == (
        TrustRegionSettings(init_radius=2, max_radius=2, box_failure_tolerance=4))
    assert complete_trust_region({"box_failure_tolerance": None}, default) == (
        TrustRegionSettings())
    # the box rule is the tolerance schedule's: another schedule drops the default's
    assert complete_trust_region({"schedule": "geometric"}, default) == (
        TrustRegionSettings(schedule="geometric"))
    with pytest.raises(ValueError, match="needs the 'tolerance' schedule"):
        complete_trust_region({"schedule": "geometric", "box_failure_tolerance": 2}, default)
    with pytest.raises(ValueError, match=r"trust_region.*radius_typo"):
        complete_trust_region({"radius_typo": 2}, default)


@pytest.mark.parametrize("radius, length", [(0, 0.1), (2, 0.3), (5, 2.0)])
def test_neighbour_mask_equals_the_mask_of_the_neighbours(radius, length):
    region = TrustRegion(SPACE, _center(), radius=radius, length=length)
    moves = NeighbourMoves(SPACE)
    g = torch.Generator().manual_seed(radius)
    X = torch.cat([region.sample(20, generator=g), SPACE.sample(20, generator=g)])
    expected = region.contains(moves.apply(X).reshape(-1, SPACE.dim)).reshape(len(X), -1)
    assert torch.equal(region.contains_neighbours(X, moves), expected)
    assert expected.any() and not expected.all()


def test_the_region_reaches_uniform_points_where_their_expected_distance_is_within_its_radius():
    from bodi.acquisition.trust_region import reaches_uniform_points

    def bits(d):
        return [Binary(f"b{i}") for i in range(d)]

    wide = TrustRegionSettings()  # max_radius 30
    assert reaches_uniform_points(wide, SearchSpace(bits(60)))  # 30 flips: just within
    assert not reaches_uniform_points(wide, SearchSpace(bits(62)))
    five = [Categorical(f"c{i}", list("abcde")) for i in range(37)]  # 0.8 per parameter
    assert reaches_uniform_points(wide, SearchSpace(five))  # 29.6
    assert not reaches_uniform_points(wide, SearchSpace([*five, *bits(2)]))  # 30.6
    assert reaches_uniform_points(wide, SearchSpace([Continuous("x", 0.0, 1.0)]))
    narrow = TrustRegionSettings(init_radius=4, max_radius=8)
    assert not reaches_uniform_points(narrow, SearchSpace(bits(17)))
    assert reaches_uniform_points(narrow, SearchSpace([*bits(16), Continuous("x", 0.0, 1.0)]))
