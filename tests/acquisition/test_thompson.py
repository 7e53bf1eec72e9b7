"""Thompson sampling over a candidate set: the candidates, and BODi(acquisition="ts")."""

import pytest
import torch

import bodi
from bodi.acquisition import make_acquisition
from bodi.acquisition.thompson import thompson_candidates
from bodi.acquisition.trust_region import TrustRegion
from bodi.novelty import row_keys
from bodi.problems import planted_binary
from bodi.space import Binary, Categorical, SearchSpace

SPACE = SearchSpace([Binary(f"b{i}") for i in range(10)] + [Categorical("c", ["x", "y", "z"])])


def test_candidates_are_new_distinct_points_of_the_region_with_the_centre_neighbours():
    torch.manual_seed(0)
    center = torch.zeros(SPACE.dim, dtype=torch.float64)
    region = TrustRegion(SPACE, center, radius=2, length=1.0)
    neighbours = center.repeat(4, 1)
    for i in range(3):
        neighbours[i, i] = 1.0
    neighbours[3, -1] = 2.0
    avoid = torch.cat([center.unsqueeze(0), neighbours[:1]])
    X = thompson_candidates(SPACE, 200, center=center, region=region, avoid=avoid)
    keys = row_keys(SPACE, X)
    assert len(keys.unique()) == len(X)
    assert region.contains(X).all()
    assert not torch.isin(keys, row_keys(SPACE, avoid)).any()
    assert torch.isin(row_keys(SPACE, neighbours[1:]), keys).all()


def test_bodi_with_thompson_sampling_beats_random_search_without_repeats():
    problem = planted_binary(12, seed=3)
    opt = bodi.BODi(problem.space, seed=0, n_init=8, acquisition="ts", kernel="hamming",
                    raw_samples=256)
    for _ in range(10):
        batch = opt.ask(3)
        opt.tell(batch, [float(problem(x)) for x in batch])
    points = [tuple(t.params.items()) for t in opt.trials]
    assert len(set(points)) == len(points) == 30
    random_best = min(float(problem(x)) for x in problem.space.decode(
        problem.space.sample(30, generator=torch.Generator().manual_seed(0))))
    assert opt.best[1] < random_best
    assert opt.settings()["acquisition"] == "ts"


def test_thompson_sampling_is_for_one_objective_and_is_not_a_function_to_maximize():
    with pytest.raises(ValueError, match="one objective"):
        bodi.BODi(SPACE, directions=["minimize", "minimize"], acquisition="ts")
    X = SPACE.sample(4)
    opt = bodi.BODi(SPACE, seed=0, n_init=4)
    model = opt.make_model(X, torch.arange(4.0, dtype=torch.float64).unsqueeze(-1))
    with pytest.raises(ValueError, match="not a function to maximize"):
        make_acquisition("ts", model, X, torch.zeros(4, 1, dtype=torch.float64))
