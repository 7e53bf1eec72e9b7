"""Coarse-to-fine group moves: the stages, lifting and projecting moves, and BODi's use."""

import pytest
import torch

import bodi
from bodi.acquisition.coarse_to_fine import (
    coarse_groups,
    stage_lengths,
    stage_sizes,
)
from bodi.space import Binary, Categorical, Continuous, SearchSpace

SPACE = SearchSpace(
    [Binary(f"b{i}") for i in range(30)]
    + [Categorical(f"c{i}", ["x", "y", "z"]) for i in range(10)]
    + [Continuous("u", 0, 1)]
)


def test_stages_grow_threefold_and_share_the_steps_in_proportion():
    assert stage_sizes(100) == [5, 15, 45]
    assert stage_sizes(5) == []
    lengths = stage_lengths(100, 40)
    assert sum(lengths) == 40 and lengths[0] < lengths[1] < lengths[2]
    assert min(lengths) >= 2
    assert stage_lengths(1000, 4) == [2, 2]  # stages that do not fit are dropped
    assert stage_lengths(100, 0) == []


def test_groups_partition_the_discrete_columns_and_refine_by_stage():
    lengths = stage_lengths(40, 20)  # stages of 5 and 15 groups
    first = coarse_groups(SPACE, seed=3, step=0, coarse_steps=20)
    later = coarse_groups(SPACE, seed=3, step=lengths[0], coarse_steps=20)
    assert (first.n_groups, later.n_groups) == (5, 15)
    for groups in (first, later):
        assert sorted(groups.columns.tolist()) == SPACE.discrete_dims
    # nested: each later group lies inside one first-stage group
    first_of = dict(zip(first.columns.tolist(), first.group.tolist(), strict=True))
    for g in range(later.n_groups):
        members = later.columns[later.group == g].tolist()
        assert len({first_of[c] for c in members}) == 1
    assert coarse_groups(SPACE, seed=3, step=20, coarse_steps=20) is None
    assert coarse_groups(SPACE, seed=3, step=0, coarse_steps=0) is None


def test_lift_moves_whole_groups_and_project_recovers_the_moves():
    groups = coarse_groups(SPACE, seed=0, step=0, coarse_steps=10)
    center = SPACE.sample(1, generator=torch.Generator().manual_seed(1))[0]
    Z = groups.group_space().sample(64, generator=torch.Generator().manual_seed(2))
    X = groups.lift(Z, center)
    cards = torch.tensor(SPACE.cardinalities, dtype=torch.float64)
    for g in range(groups.n_groups):
        columns = groups.columns[groups.group == g]
        shift = torch.remainder(X[:, columns] - center[columns], cards[columns])
        assert torch.equal(shift, Z[:, g : g + 1].expand_as(shift))
    assert torch.equal(X[:, -1], center[-1].expand(64))  # the continuous column stays
    Z_back, inside = groups.project(X, center)
    assert inside.all() and torch.equal(Z_back, Z)
    other = X.clone()
    other[:, groups.columns[0]] = 1 - other[:, groups.columns[0]]  # one column alone moved
    assert not groups.project(other, center)[1].any()


def _count_ones(params):
    return -float(sum(params[f"b{i}"] for i in range(30)))


def test_bodi_first_suggestions_after_the_design_are_group_moves_of_the_incumbent():
    opt = bodi.BODi(SPACE, seed=0, n_init=6, coarse_steps=4, dictionary_size=16,
                    num_restarts=3, raw_samples=64)
    for _ in range(6):
        x = opt.ask()
        opt.tell(x, _count_ones(x))
    for step in range(4):
        groups = coarse_groups(SPACE, seed=0, step=step, coarse_steps=4)
        incumbent = opt.space.encode([opt.best[0]])[0]
        x = opt.ask()
        encoded = opt.space.encode([x])
        _, inside = groups.project(encoded, incumbent)
        assert inside.all()
        assert (encoded[0] != incumbent).any()
        opt.tell(x, _count_ones(x))
    x = opt.ask()  # past the coarse steps: single-parameter moves again
    assert x not in [t.params for t in opt.trials[:-1]]  # the last is x, pending
    assert opt.settings()["coarse_steps"] == 4


def test_coarse_steps_must_be_a_non_negative_integer():
    with pytest.raises(ValueError, match="coarse_steps"):
        bodi.BODi(SPACE, coarse_steps=-1)
