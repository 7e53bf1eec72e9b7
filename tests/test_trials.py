"""History: an immutable snapshot of trials, built from a study or from observations made
elsewhere, and what an optimizer suggests from it."""

import math

import pytest
import torch

import bodi
from bodi.optimizers import make_optimizer
from bodi.study import create_study
from bodi.trials import History

SPACE = bodi.SearchSpace([bodi.Binary(f"b{i}") for i in range(10)]
                         + [bodi.Categorical("c", ["x", "y", "z"])])


def score(params: dict) -> float:
    return sum((i % 3 - 1) * params[f"b{i}"] for i in range(10)) + (params["c"] == "y")


def test_from_observations_keeps_the_order_and_marks_non_finite_values_failed():
    a, b, c, d = SPACE.decode(SPACE.sample(4, torch.Generator().manual_seed(0)))
    history = History.from_observations(
        SPACE, ["minimize"], completed=[(a, 1.0), (b, math.nan), (c, 2.0)], pending=[d])
    assert [t.state for t in history] == ["complete", "failed", "complete", "pending"]
    assert [t.number for t in history] == [0, 1, 2, 3]
    assert history.Y_completed.squeeze(-1).tolist() == [-1.0, -2.0]  # larger is better
    assert history.best == (a, 1.0)
    assert history.finished_losses() == {0: 1.0, 1: 1.0, 2: 2.0}
    assert len(history.X_pending) == 1 and history.n_finished == 3


def test_constraints_and_several_objectives():
    a, b = SPACE.decode(SPACE.sample(2, torch.Generator().manual_seed(1)))
    history = History.from_observations(
        SPACE, ["minimize", "maximize"], completed=[(a, [1.0, 2.0]), (b, [0.5, 3.0])],
        constraints=[[0.5], [-1.0]])
    assert history.outcome_constraints == 1
    assert history.feasible_completed.tolist() == [False, True]
    assert [t.params for t in history.pareto_front] == [b]
    with pytest.raises(ValueError, match="2 objectives"):
        History.from_observations(SPACE, ["minimize", "maximize"], completed=[(a, 1.0)])


def test_a_snapshot_does_not_change_when_the_study_does():
    study = create_study(bodi.RandomSearch(SPACE, seed=0))
    x = study.ask()
    snapshot = study.history
    study.tell(x, 1.0)
    assert snapshot[0].state == "pending" and study.history[0].state == "complete"
    with pytest.raises(AttributeError):
        snapshot.trials = ()


@pytest.mark.parametrize("method", ["bodi", "random", "sa", "casmopolitan", "tpe"])
def test_suggest_from_a_history_equals_ask_after_the_same_tells(method):
    """The algorithm alone (what the integrations and bodi bench call) proposes what the
    ask/tell study proposes after the same trials, and creates no study."""
    kwargs = {"num_restarts": 2, "raw_samples": 64} if method in ("bodi", "casmopolitan") else {}
    if method == "bodi":
        kwargs["dictionary_size"] = 8
    study = create_study(
        make_optimizer(method, SPACE, seed=4, direction="minimize", n_init=4, **kwargs)
    )
    observed = []
    for _ in range(7):
        x = study.ask()
        study.tell(x, score(x))
        observed.append((x, score(x)))
    asked = study.ask()
    algorithm = make_optimizer(method, SPACE, seed=4, direction="minimize", n_init=4, **kwargs)
    history = History.from_observations(SPACE, ["minimize"], completed=observed)
    X = algorithm.suggest(history, 1)
    assert SPACE.decode(X)[0] == asked
    assert not hasattr(algorithm, "ask")  # no storage, no trials of its own, nothing replayed


def test_suggest_never_returns_a_trial_of_the_history():
    full = SPACE.decode(SPACE.sample(40, torch.Generator().manual_seed(2)))
    history = History.from_observations(SPACE, ["minimize"],
                                        completed=[(p, score(p)) for p in full[:30]],
                                        pending=full[30:])
    X = bodi.RandomSearch(SPACE, seed=0).suggest(history, 5)
    keys = {tuple(row.tolist()) for row in history.X}
    assert len({tuple(row.tolist()) for row in X} | keys) == len(keys) + 5


def test_options_are_checked_without_a_space():
    bodi.BODi.check_options(dictionary_size=8, trust_region={"schedule": "geometric"})
    with pytest.raises(TypeError, match="unexpected option"):
        bodi.BODi.check_options(dictionary_sise=8)
    with pytest.raises(ValueError, match="dictionary"):
        bodi.BODi.check_options(dictionary="nope")
    with pytest.raises(ValueError, match="trust region"):
        bodi.BODi.check_options(trust_region={"schedule": "nope"})
    assert "seed" not in bodi.BODi.option_defaults()  # the study's, not the algorithm's
