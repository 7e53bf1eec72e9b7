"""bodi works whichever L-BFGS-B path BoTorch takes (its batched fast path is used only inside
the SciPy range BoTorch has tested; outside it, per-row fixed features need one row per
problem)."""

import pytest
from botorch.generation import gen as botorch_gen

import bodi
from bodi.space import Binary, Continuous, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(30)] + [Continuous("u", 0.0, 1.0)])


def f(params):
    return sum(params[f"b{i}"] for i in range(0, 30, 3)) + (params["u"] - 0.3) ** 2


@pytest.mark.parametrize("fast_path", [True, False])
def test_mixed_space_asks_with_and_without_botorchs_batched_lbfgs(monkeypatch, fast_path):
    if not fast_path:
        monkeypatch.setattr(botorch_gen, "get_reasons_against_fast_path",
                            lambda *args, **kwargs: ["forced off by the test"])
    study = create_study(
        bodi.BODi(SPACE, seed=0, n_init=6, dictionary_size=16, num_restarts=4, raw_samples=128)
    )
    for _ in range(10):
        x = study.ask()
        study.tell(x, f(x))
    assert sum(t.state == "complete" for t in study.trials) == 10
