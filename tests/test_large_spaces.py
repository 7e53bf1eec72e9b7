"""Spaces of any size: exact cardinalities, and every optimizer runs at 1000+ binary parameters
and hundreds of categoricals (correctness; speed at that size is benchmarks/ territory)."""

import math
from types import MappingProxyType

import pytest

import bodi
from bodi.optimizers.registry import make_optimizer
from bodi.space import Binary, Categorical, Continuous, SearchSpace

# small acquisition settings: these tests check that nothing overflows or breaks, not speed
QUICK = {"dictionary_size": 16, "num_restarts": 2, "raw_samples": 32, "n_init": 20, "seed": 0}


class QuickBODi(bodi.BODi):
    """BODi with a local search of one step from one spray centre."""

    acquisition_options = MappingProxyType({"max_steps": 1, "num_spray_centers": 1})


def count_true(params):
    return float(sum(v is True or v == "v0" for v in params.values()))


def test_cardinalities_are_exact_integers_at_any_size():
    space = SearchSpace([Binary(f"b{i}") for i in range(10_000)])
    assert space.cardinality == 2**10_000
    assert space.log_cardinality == pytest.approx(10_000 * math.log(2))
    cats = SearchSpace([Categorical(f"c{i}", list(range(50))) for i in range(200)])
    assert cats.cardinality == 50**200
    assert math.isinf(SearchSpace([Binary("b"), Continuous("u", 0, 1)]).cardinality)


def test_minimize_on_4096_binary_parameters():
    space = SearchSpace([Binary(f"b{i}") for i in range(4096)])
    result = bodi.minimize(count_true, space, budget=25, optimizer=QuickBODi(space, **QUICK))
    assert len(result.trials) == 25 and all(t.state == "complete" for t in result.trials)
    assert len({tuple(t.params.values()) for t in result.trials}) == 25


def test_minimize_on_300_categoricals_with_20_choices():
    space = SearchSpace([Categorical(f"c{i}", [f"v{j}" for j in range(20)]) for i in range(300)])
    result = bodi.minimize(count_true, space, budget=25, optimizer=QuickBODi(space, **QUICK))
    assert len(result.trials) == 25 and all(t.state == "complete" for t in result.trials)


SPACE_1024 = SearchSpace([Binary(f"b{i}") for i in range(1024)])
GP_OPTIONS = "[num_restarts=2,raw_samples=32]"


@pytest.mark.parametrize("method", ["random", "bodi", "bodi-paper", "casmopolitan", "combo",
                                    "tpe", "smac"])
def test_every_optimizer_runs_on_a_large_binary_space(method):
    """SMAC runs at 256: its random forest and local search over 1024 features take 40-70 s
    of the suite for the same check."""
    options = "[m=16,num_restarts=2,raw_samples=32]" if method.startswith("bodi") else (
        GP_OPTIONS if method in ("casmopolitan", "combo") else "")
    space = SPACE_1024 if method != "smac" else SearchSpace([Binary(f"b{i}") for i in range(256)])
    opt = make_optimizer(method + options, space, seed=0, direction="minimize", n_init=4)
    result = bodi.minimize(count_true, space, budget=5, optimizer=opt)  # 1 model-based
    assert [t.state for t in result.trials] == ["complete"] * 5
