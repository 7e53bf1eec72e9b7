"""Simulated annealing with MCBO's settings: its moves, its acceptance rule and a state that is a
pure function of the history."""

import math

import pytest
import torch

import bodi
from bodi.baselines import SimulatedAnnealing
from bodi.problems.planted import planted_binary
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study

MIXED = SearchSpace([Binary("a"), Binary("b"), Categorical("c", ["x", "y", "z"]),
                     Integer("k", 0, 9), Continuous("u", 0.0, 1.0)])


def _run(opt, f, steps):
    for _ in range(steps):
        x = opt.ask()
        opt.tell(x, f(x))
    return opt


def test_a_proposal_changes_one_discrete_parameter_and_nudges_the_numeric_ones():
    study = create_study(SimulatedAnnealing(MIXED, seed=0, n_init=4))
    _run(study, lambda p: p["a"] + p["k"] + p["u"], 4)
    current, _, temp = study.optimizer.annealing_state(study.history)
    assert temp == 100.0  # the design is MCBO's initialize: no cooling yet
    proposal = study.space.encode(study.ask())[0]
    discrete = MIXED.discrete_dims
    assert int((proposal[discrete] != current[discrete]).sum()) == 1
    assert (proposal[MIXED.ordinal_dims] - current[MIXED.ordinal_dims]).abs().max() < 0.6


def test_the_temperature_cools_and_the_acceptance_rule_is_mcbos():
    space = SearchSpace([Binary(f"b{i}") for i in range(6)])
    study = create_study(SimulatedAnnealing(space, seed=1, n_init=2))
    values = {}

    def f(p):
        values[tuple(p.values())] = v = float(sum(p.values()))
        return v

    _run(study, f, 12)
    current, current_loss, temp = study.optimizer.annealing_state(study.history)
    assert temp == pytest.approx(100.0 * 0.8**10)
    # replay by hand: better than the best -> taken; worse -> taken with MCBO's probability
    trials = [t for t in study.trials if t.state == "complete"]
    cur = min(trials[:2], key=lambda t: t.value)
    cur_loss, best, t_ = cur.value, cur.value, 100.0
    for trial in trials[2:]:
        t_ *= 0.8
        if trial.value < best:
            cur, cur_loss, best = trial, trial.value, trial.value
            continue
        p = min(max(math.exp(min(max(-(trial.value - cur_loss) / t_, -12), 0)), 1e-5), 1)
        g = torch.Generator().manual_seed(bodi.seeding.derive_seed(1, trial.number, 0x5A))
        if torch.rand(1, generator=g, dtype=torch.float64).item() < p:
            cur, cur_loss = trial, trial.value
    assert torch.equal(current, cur.x) and current_loss == cur_loss


def test_a_resumed_study_continues_exactly_and_maximize_works(tmp_path):
    problem = planted_binary(16, seed=3)
    path = tmp_path / "sa.db"
    stored = _run(
        create_study(
            SimulatedAnnealing(problem.space, seed=2, n_init=5, direction="maximize"), storage=path
        ),
        lambda p: -float(problem(p)),
        15,
    )
    twin = _run(
        create_study(SimulatedAnnealing(problem.space, seed=2, n_init=5, direction="maximize")),
        lambda p: -float(problem(p)),
        15,
    )
    assert [t.params for t in twin.trials] == [t.params for t in stored.trials]
    resumed = bodi.load_study(path)
    assert resumed.optimizer.settings() == stored.optimizer.settings()
    assert resumed.ask() == twin.ask(), "same state, same next proposal"
    # losses are negated values when maximizing
    current, loss, _ = twin.optimizer.annealing_state(twin.history)
    assert any(torch.equal(t.x, current) and t.value == -loss for t in twin.trials)


def test_options_are_checked():
    for kwargs in ({"init_temp": 0}, {"cooling": 1.5}, {"step": float("nan")},
                   {"tolerance": 0}):
        with pytest.raises(ValueError):
            SimulatedAnnealing(MIXED, **kwargs)
