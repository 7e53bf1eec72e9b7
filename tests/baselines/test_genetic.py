"""pymoo's mixed-variable GA with MCBO's settings: generations replayed from the history, values
that steer the offspring, failures and oversized batches. Skipped without pymoo."""

import pytest

import bodi
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

pytest.importorskip("pymoo")
from bodi.baselines import GeneticAlgorithm
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(8)] + [
    Categorical("c", ["x", "y", "z"]), Integer("k", 0, 5),
    Continuous("u", 0.1, 10.0, log=True),
])


def objective(p):
    return (sum(p[f"b{i}"] for i in range(8)) + (p["c"] != "y") + abs(p["k"] - 2)
            + abs(p["u"] - 1.0))


def _run(opt, f, steps):
    for _ in range(steps):
        x = opt.ask()
        opt.tell(x, f(x))
    return opt


def test_a_resumed_study_continues_the_same_generations(tmp_path):
    path = tmp_path / "ga.db"
    stored = _run(create_study(GeneticAlgorithm(SPACE, seed=4, n_init=6, pop_size=6), storage=path),
                  objective, 17)
    twin = _run(create_study(GeneticAlgorithm(SPACE, seed=4, n_init=6, pop_size=6)), objective, 17)
    assert [t.params for t in twin.trials] == [t.params for t in stored.trials]
    resumed = bodi.load_study(path)
    assert resumed.optimizer.settings() == {"n_init": 6, "design": "uniform", "pop_size": 6}
    assert resumed.ask() == twin.ask()  # mid-generation: the next unused member


def test_the_values_steer_the_offspring():
    runs = []
    for sign in (1.0, -1.0):
        opt = _run(create_study(GeneticAlgorithm(SPACE, seed=0, n_init=6, pop_size=6)),
                   lambda p, s=sign: s * objective(p), 18)
        runs.append([t.params for t in opt.trials])
    assert runs[0][:6] == runs[1][:6]  # the shared design
    assert runs[0][6:] != runs[1][6:]  # the generations bred from it


def test_failures_and_a_batch_larger_than_the_generation():
    study = create_study(
        GeneticAlgorithm(SPACE, seed=1, n_init=4, pop_size=4, direction="maximize")
    )
    design = study.ask(4)
    study.tell(design[:3], [objective(x) for x in design[:3]])
    study.tell_failure(design[3], "crashed")
    batch = study.ask(7)  # 4 members of the next generation, then 3 uniform samples
    assert len(batch) == 7
    study.tell(batch, [objective(x) for x in batch])
    _run(study, objective, 5)
    assert len({tuple(t.x.tolist()) for t in study.trials}) == len(study.trials) == 16
    assert [t.state for t in study.trials].count("failed") == 1


def test_options_are_checked():
    with pytest.raises(ValueError, match="pop_size"):
        GeneticAlgorithm(SPACE, pop_size=1)
