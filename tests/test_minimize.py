"""bodi.minimize: the one-call entry point."""

import math

import pytest

import bodi
from bodi.space import Binary, Continuous, SearchSpace

SPACE = SearchSpace([Binary(f"b{i}") for i in range(8)] + [Continuous("u", -1.0, 1.0)])


def objective(c):
    return sum(c[f"b{i}"] for i in range(8)) + c["u"] ** 2


def test_result_fields_and_callback():
    finished = []
    result = bodi.minimize(objective, SPACE, budget=14, seed=0, n_init=8,
                           callback=finished.append)
    assert len(result.history) == len(finished) == 14
    assert result.best_value == min(result.values)
    assert objective(result.best_params) == pytest.approx(result.best_value)
    assert result.optimizer.best == (result.best_params, result.best_value)


def test_failures_are_recorded_and_the_budget_is_completed():
    calls = []

    def flaky(c):
        calls.append(c)
        k = len(calls)
        if k % 4 == 1:
            raise RuntimeError("simulator crashed")
        if k % 4 == 2:
            return math.nan
        if k % 4 == 3:
            return math.inf
        return objective(c)

    result = bodi.minimize(flaky, SPACE, budget=16, seed=1, n_init=6)
    states = [t.state for t in result.history]
    assert len(states) == 16 and states.count("failed") == 12
    messages = [t.message for t in result.history if t.state == "failed"]
    assert any("simulator crashed" in m for m in messages)
    assert any("nan" in m for m in messages) and any("inf" in m for m in messages)
    assert result.best_value == min(t.value for t in result.history if t.state == "complete")


def test_consecutive_failures_stop_with_a_clear_message():
    def broken(c):
        raise ValueError("license server unreachable")

    with pytest.raises(RuntimeError, match=r"5 evaluations failed in a row.*license server"):
        bodi.minimize(broken, SPACE, budget=20, seed=0, max_consecutive_failures=5)


def test_argument_checks():
    with pytest.raises(ValueError, match="budget"):
        bodi.minimize(objective, SPACE, budget=0)
    with pytest.raises(ValueError, match="callable"):
        bodi.minimize(42, SPACE, budget=3)
    with pytest.raises(ValueError, match="cannot be combined"):
        bodi.minimize(objective, SPACE, budget=3, optimizer=bodi.RandomSearch(SPACE),
                      n_init=4)
