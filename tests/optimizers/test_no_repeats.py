"""A suggestion never equals an earlier trial (finished, failed or pending), in every space kind
and mode; ``allow_repeats=True`` lifts that for noisy objectives."""

import pytest
import torch

import bodi
from bodi.neighbours import nearby_new_point
from bodi.novelty import row_keys
from bodi.optimizers import RandomSearch
from bodi.space import Binary, Continuous, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(12)] + [Continuous("u", 0.0, 1.0)])
SMALL = {"dictionary_size": 16, "num_restarts": 4, "raw_samples": 128}


def ones_plus_u(params):
    """Optimum at a corner: all False, u = 0 (where the box-bounded search lands exactly)."""
    return sum(params[f"b{i}"] for i in range(12)) + params["u"]


def _distinct(history):
    return len({tuple(sorted(t.params.items())) for t in history})


@pytest.mark.heavy
@pytest.mark.parametrize("mode", ["sequential", "batch", "asynchronous"])
def test_forty_distinct_configurations_with_the_optimum_at_a_corner(mode):
    options = {"sequential": {}, "batch": {"batch_size": 4}, "asynchronous": {"n_workers": 3}}
    result = bodi.minimize(ones_plus_u, SPACE, budget=40, seed=0, n_init=10, **SMALL,
                           **options[mode])
    assert len(result.trials) == 40
    assert _distinct(result.trials) == 40
    assert result.best_value < 2.0


def test_default_bodi_makes_no_repeat_in_the_reported_setting():
    result = bodi.minimize(ones_plus_u, SPACE, budget=40, seed=0)
    assert _distinct(result.trials) == 40


def test_a_suggestion_equal_to_a_trial_is_replaced_by_a_near_new_one():
    class Stubborn(RandomSearch):
        """Always proposes the same point: the guard must replace the repeats."""

        def _suggest(self, history, n):
            return torch.zeros(n, self.space.dim, dtype=torch.float64)

    study = create_study(Stubborn(SPACE, seed=0))
    first = study.ask(3)
    assert first[0] == {**{f"b{i}": False for i in range(12)}, "u": 0.0}
    keys = row_keys(SPACE, torch.stack([t.x for t in study.trials])).tolist()
    assert len(set(keys)) == 3
    # the replacements are neighbours: one parameter changed
    for params in first[1:]:
        assert sum(params[k] != first[0][k] for k in params) == 1
    repeats = create_study(Stubborn(SPACE, seed=0, allow_repeats=True))
    assert repeats.ask(2) == [first[0], first[0]]


def test_nearby_new_point_covers_a_tiny_space_and_then_reports_exhaustion():
    space = SearchSpace([Binary("a"), Binary("b")])
    x = torch.zeros(2, dtype=torch.float64)
    taken = {int(row_keys(space, x.unsqueeze(0))[0])}
    g = torch.Generator().manual_seed(0)
    for _ in range(3):
        y = nearby_new_point(space, x, taken, g)
        taken.add(int(row_keys(space, y.unsqueeze(0))[0]))
    assert len(taken) == 4
    with pytest.raises(bodi.novelty.SearchSpaceExhaustedError):
        nearby_new_point(space, x, taken, g)


@pytest.mark.parametrize("method", ["casmopolitan", "tpe", "random"])
def test_other_methods_make_no_repeat_in_a_mixed_space(method):
    from bodi.optimizers.registry import make_optimizer

    opt = make_optimizer(method, SPACE, seed=1, direction="minimize", n_init=6)
    result = bodi.minimize(ones_plus_u, SPACE, budget=14, optimizer=opt)
    assert _distinct(result.trials) == 14
