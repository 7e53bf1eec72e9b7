"""Nevergrad's NGOpt baseline: the space round trip, a rebuilt optimizer continuing as the live
one would, failures, options and progress on a planted problem. Skipped without nevergrad."""

import json

import pytest
import torch

import bodi
from bodi.baselines import NGOpt
from bodi.integrations.spaces.codecs import from_index_values as from_nevergrad_value
from bodi.integrations.spaces.codecs import index_values as to_nevergrad_value
from bodi.integrations.spaces.nevergrad import make_parametrization
from bodi.optimizers import make_optimizer
from bodi.problems.planted import planted_binary
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study

pytest.importorskip("nevergrad")

SPACE = SearchSpace([
    Binary("b0"), Binary("b1"), Binary("b2"), Categorical("c", ["x", "y", 3]),
    Categorical("d", [1, 1.0, True]), Continuous("u", -2.0, 3.0),
    Continuous("lr", 1e-4, 1e-1, log=True), Integer("k", 1, 9),
])


def objective(p):
    return (p["b0"] + p["b1"] + (p["c"] != "y") + abs(p["u"] - 0.5) + abs(p["k"] - 4)
            + abs(p["lr"] - 0.01))


def test_values_round_trip_and_lie_in_the_parametrization():
    X = SPACE.sample(30, generator=torch.Generator().manual_seed(0))
    parametrization = make_parametrization(SPACE)
    for x in X:
        value = to_nevergrad_value(SPACE, x)
        child = parametrization.spawn_child(new_value=value)  # raises outside the bounds
        assert child.value == value
        torch.testing.assert_close(
            torch.tensor(from_nevergrad_value(SPACE, value), dtype=torch.float64), x,
            atol=1e-12, rtol=0,
        )


def test_a_rebuilt_optimizer_continues_as_the_live_one(tmp_path):
    path = tmp_path / "study.db"
    live = create_study(NGOpt(SPACE, seed=3, budget=40), storage=path)
    for _ in range(12):
        x = live.ask()
        live.tell(x, objective(x))
    again = create_study(NGOpt(SPACE, seed=3, budget=40))  # the same seed: the same run
    for _ in range(12):
        x = again.ask()
        again.tell(x, objective(x))
    assert [t.params for t in again.trials] == [t.params for t in live.trials]
    resumed = bodi.load_study(path)
    assert (resumed.optimizer.budget, resumed.optimizer.num_workers) == (40, 1)
    assert resumed.ask() == again.ask()  # the same next point, from the replayed history


def test_failures_pending_points_and_batches():
    study = create_study(NGOpt(SPACE, seed=0, budget=30))
    first = study.ask(3)  # a batch; the first two fail
    study.tell(first[0], float("nan"))
    study.tell_failure(first[1], "crashed")
    study.tell(first[2], objective(first[2]))
    pending = study.ask()  # left pending while more are asked
    for _ in range(5):
        x = study.ask()
        study.tell(x, objective(x))
    study.tell(pending, objective(pending))
    states = [t.state for t in study.trials]
    assert states.count("failed") == 2 and states.count("complete") == 7
    assert len({tuple(t.x.tolist()) for t in study.trials}) == len(study.trials)


def test_options_are_checked_and_bench_passes_its_budget():
    with pytest.raises(ValueError, match="budget"):
        NGOpt(SPACE, budget=0)
    with pytest.raises(ValueError, match="num_workers"):
        NGOpt(SPACE, num_workers=1.5)
    opt = make_optimizer("ngopt", SPACE, seed=0, direction="minimize", budget=77, n_init=5)
    assert opt.budget == 77
    assert make_optimizer("ngopt[budget=9]", SPACE, seed=0, direction="minimize",
                          budget=77).budget == 9


def test_the_values_steer_the_search():
    # A quality claim belongs to the benchmarks: on planted-binary30 NGOpt's best after 60
    # evaluations was 0.82x its best of the first 10 (mean over seeds 0-9; NGOpt chose its
    # CMA/PSO/DE portfolio for these softmax choices). Here: the same seed told other values
    # proposes other points, once its first population of 30 random points is evaluated.
    problem = planted_binary(30, seed=1)
    runs = []
    for sign in (1.0, -1.0):
        study = create_study(NGOpt(problem.space, seed=0, budget=60))
        for _ in range(35):
            x = study.ask()
            study.tell(x, sign * float(problem(x)))
        runs.append([t.params for t in study.trials])
    assert runs[0][:30] == runs[1][:30]
    assert runs[0][30:] != runs[1][30:]


def test_bench_keeps_the_live_optimizer_between_steps_with_the_result_of_a_rebuild():
    from bodi.experiments import runner

    task = runner.Task("planted-binary12", "ngopt", 0, budget=12, n_init=4)
    history = list(runner.run_step(task, ()))  # the shared design
    while len(history) < 10:
        history += runner.run_step(task, tuple(history))
        live, seen = runner._LIVE[task]  # the optimizer and the history it suggested from
        assert [json.loads(p) for p in seen] == [e.params for e in history[:-1]]
        assert live._nevergrad.told == set(range(len(history) - 1))
    cached = runner.run_step(task, tuple(history))
    runner._LIVE.clear()
    rebuilt = runner.run_step(task, tuple(history))
    assert cached[0].params == rebuilt[0].params
