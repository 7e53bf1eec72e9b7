"""Vectorised local search and the acquisition optimizer."""

import pytest
import torch
from botorch.acquisition import AcquisitionFunction

from bodi.acquisition import optimize_acquisition
from bodi.acquisition.local_search import local_search
from bodi.neighbours import NeighbourMoves
from bodi.novelty import SearchSpaceExhaustedError, row_keys
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

SPACE = SearchSpace(
    [Binary("a"), Categorical("c", ["x", "y", "z", "w"]), Integer("k", 0, 3), Binary("b")]
)


class NegativeDistance(AcquisitionFunction):
    """A known acquisition: minus the (index) L1 distance to a target; maximum 0 at target."""

    def __init__(self, target, scale):
        super().__init__(model=None)
        self.target, self.scale = target, scale
        self.X_pending = None

    def forward(self, X):
        return -((X - self.target) * self.scale).abs().sum(-1).sum(-1)

    def set_X_pending(self, X_pending=None):
        self.X_pending = X_pending


def test_neighbours_change_exactly_one_parameter_by_one_step():
    moves = NeighbourMoves(SPACE)
    assert len(moves) == 1 + 3 + 2 + 1
    X = SPACE.sample(7, generator=torch.Generator().manual_seed(0))
    neighbours = moves.apply(X)
    assert neighbours.shape == (7, len(moves), SPACE.dim)
    assert SPACE.contains(neighbours.reshape(-1, SPACE.dim)).all()
    changed = (neighbours != X.unsqueeze(1)).sum(-1)
    assert (changed <= 1).all()  # integer moves at a bound are no-ops
    categorical = neighbours[:, 1:4, 1]  # the three other values of "c"
    assert (categorical.sort(-1).values != X[:, 1:2]).all()


def test_a_chosen_move_gives_that_neighbour_and_builds_no_other():
    moves = NeighbourMoves(SPACE)
    X = SPACE.sample(6, generator=torch.Generator().manual_seed(3))
    move = torch.tensor([0, 3, 4, 5, 6, 2])  # a bit flip, categorical values, integer steps
    assert torch.equal(moves.apply_at(X, move), moves.apply(X)[torch.arange(6), move])
    parent = torch.tensor([5, 5, 0])  # several moves of one row, of chosen rows
    assert torch.equal(moves.apply_at(X, move[:3], parent), moves.apply(X)[parent, move[:3]])
    assert moves.apply_at(X, move).data_ptr() != X.data_ptr()  # X itself is unchanged


def test_row_keys_are_equal_exactly_for_equal_rows():
    X = SPACE.sample(200, generator=torch.Generator().manual_seed(1))
    keys = row_keys(SPACE, X)
    same_rows = (X.unsqueeze(1) == X.unsqueeze(0)).all(-1)
    assert torch.equal(keys.unsqueeze(1) == keys.unsqueeze(0), same_rows)


def test_neighbour_keys_are_the_row_keys_of_the_neighbours():
    space = SearchSpace([*SPACE.parameters, Continuous("u", -1.0, 2.0)])
    moves = NeighbourMoves(space)
    X = space.sample(9, generator=torch.Generator().manual_seed(2))
    keys = moves.keys(space, X, row_keys(space, X))
    assert torch.equal(keys, row_keys(space, moves.apply(X)))


def test_local_search_finds_the_maximum_and_respects_avoid():
    space = SearchSpace([Binary(f"x{i}") for i in range(40)])
    target = (torch.arange(40) % 3 == 0).to(torch.float64)
    acq = NegativeDistance(target, torch.ones(40, dtype=torch.float64))
    with torch.random.fork_rng():
        torch.manual_seed(0)
        x, value = local_search(acq, space, avoid=torch.empty(0, 40, dtype=torch.float64))
        assert torch.equal(x, target) and value == 0
        x2, value2 = local_search(acq, space, avoid=target.unsqueeze(0))
    assert not torch.equal(x2, target) and value2 == -1  # the best point not avoided


def test_optimize_acquisition_batches_are_distinct_and_new():
    scale = torch.tensor([1.0, 1.0, 3.0, 1.0], dtype=torch.float64)
    target = torch.tensor([1.0, 2.0, 1 / 3, 0.0], dtype=torch.float64)
    acq = NegativeDistance(target, scale)
    avoid = target.unsqueeze(0)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        X = optimize_acquisition(acq, SPACE, q=5, avoid=avoid)
    assert X.shape == (5, SPACE.dim)
    assert len(torch.unique(X, dim=0)) == 5
    assert not (target == X).all(-1).any()
    assert SPACE.contains(X).all()


def test_exhausted_space_is_reported():
    space = SearchSpace([Binary("a"), Binary("b")])
    everything = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    acq = NegativeDistance(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
    X = optimize_acquisition(acq, space, avoid=everything)
    assert torch.equal(X, torch.tensor([[1.0, 1.0]], dtype=torch.float64))
    with pytest.raises(SearchSpaceExhaustedError):
        optimize_acquisition(acq, space, avoid=torch.cat([everything, X]))


def test_method_choice_is_validated():
    mixed = SearchSpace([Binary("a"), Continuous("u", 0, 1)])
    acq = NegativeDistance(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="unknown"):
        optimize_acquisition(acq, mixed, method="annealing")


def test_local_search_interleaves_continuous_steps_in_mixed_spaces():
    mixed = SearchSpace([Binary("a"), Categorical("c", ["x", "y", "z"]), Continuous("u", 0, 1),
                         Continuous("v", 0, 1)])
    target = torch.tensor([1.0, 2.0, 0.3, 0.8], dtype=torch.float64)
    acq = NegativeDistance(target, torch.ones(4, dtype=torch.float64))
    torch.manual_seed(0)
    x = optimize_acquisition(acq, mixed, method="local", num_restarts=4, raw_samples=64)
    assert x.shape == (1, 4)
    assert torch.equal(x[0, :2], target[:2])
    assert torch.allclose(x[0, 2:], target[2:], atol=1e-3)


class RecordsPending(NegativeDistance):
    """Like BoTorch's incremental qLogNEI, it reports no ``X_pending`` of its own."""

    def __init__(self, target, scale):
        super().__init__(target, scale)
        self.calls = []

    def set_X_pending(self, X_pending=None):
        self.calls.append(None if X_pending is None else X_pending.clone())


@pytest.mark.parametrize("method", ["local", "botorch"])
def test_a_batch_keeps_the_given_pending_points_while_it_grows(method):
    space = SPACE if method == "local" else SearchSpace(
        [Binary("a"), Categorical("c", ["x", "y", "z"]), Continuous("u", 0, 1)]
    )
    target = space.sample(1, generator=torch.Generator().manual_seed(3))[0]
    acq = RecordsPending(target, torch.ones(space.dim, dtype=torch.float64))
    pending = space.sample(2, generator=torch.Generator().manual_seed(4))
    torch.manual_seed(0)
    X = optimize_acquisition(acq, space, q=3, pending=pending, method=method,
                             num_restarts=2, raw_samples=32)
    growing = [c for c in acq.calls if c is not None and len(c) > len(pending)]
    # the pending points, then each new point (BoTorch's loop adds the last one too)
    assert [len(c) for c in growing][:2] == [3, 4]
    for calls in growing:
        torch.testing.assert_close(calls[:2], pending)
    torch.testing.assert_close(growing[1][2:], X[:2])
    torch.testing.assert_close(acq.calls[-1], pending)  # left as it was given


def test_a_pool_with_a_part_of_only_evaluated_points_is_skipped():
    space = SearchSpace([Binary(f"b{i}") for i in range(3)])
    acq = NegativeDistance(torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
    everything = torch.tensor([[float(b) for b in f"{i:03b}"] for i in range(8)],
                              dtype=torch.float64)
    # every spray neighbour of the incumbent is evaluated: that part has nothing to score
    incumbent = torch.zeros(1, 3, dtype=torch.float64)
    avoid = everything[(everything.sum(-1) <= 1)]
    x, value = local_search(acq, space, avoid=avoid, incumbents=incumbent, raw_samples=4,
                            num_restarts=2)
    assert x.sum() >= 2 and torch.isfinite(value)


def test_restarts_that_meet_climb_once_and_end_where_they_would_have_ended():
    from bodi.acquisition.local_search import _climb

    space = SearchSpace([Binary(f"b{i}") for i in range(8)])
    moves = NeighbourMoves(space)
    target = torch.tensor([1.0, 0, 1, 1, 0, 0, 1, 0], dtype=torch.float64)
    weights = torch.arange(1, 9, dtype=torch.float64)  # no ties between moves

    def f(points):
        return -((points != target).to(points) * weights).sum(-1)

    scored = []

    def score_neighbours(parents, keys):
        scored.append(parents.clone())
        return f(moves.apply(parents)), None

    starts = torch.tensor([[0.0] * 8, [0.0] * 8, [1.0] * 8, [0.0] * 7 + [1.0],
                           [1.0, 1, 1, 1, 1, 1, 1, 0]], dtype=torch.float64)
    X, values = _climb(starts.clone(), f(starts), None, score_neighbours, moves, max_steps=3)
    for row in range(len(starts)):  # each row as if it had climbed alone
        alone = _climb(starts[row:row + 1].clone(), f(starts[row:row + 1]), None,
                       lambda p, k: (f(moves.apply(p)), None), moves, max_steps=3)
        torch.testing.assert_close(X[row], alone[0][0])
        torch.testing.assert_close(values[row], alone[1][0])
    assert all(len(torch.unique(p, dim=0)) == len(p) for p in scored)  # no point twice a step
    assert sum(len(p) for p in scored) < 3 * len(starts)  # rows 0 and 1 climbed once
