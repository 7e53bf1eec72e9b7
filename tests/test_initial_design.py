"""The shared initial design: its two kinds, shift invariance, and where the kind is recorded."""

import json
import sqlite3

import pytest
import torch
from study_files import forget_settings

import bodi
from bodi.experiments.runner import run_benchmark
from bodi.initial_design import DESIGNS, initial_design
from bodi.problems import get_problem
from bodi.problems.shifted import Shift
from bodi.space import Binary, Categorical, Continuous, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(30)] + [Continuous("u", 0, 1)])


@pytest.mark.parametrize("kind", DESIGNS)
def test_each_kind_is_seeded_and_is_what_bodi_asks_first(kind):
    design = initial_design(SPACE, 40, seed=7, kind=kind)
    assert torch.equal(design, initial_design(SPACE, 40, seed=7, kind=kind))
    assert not torch.equal(design, initial_design(SPACE, 40, seed=8, kind=kind))
    assert len({tuple(row) for row in design.tolist()}) == 40
    study = create_study(bodi.BODi(SPACE, seed=7, n_init=40, design=kind))
    assert torch.equal(SPACE.encode(study.ask(40)), design)
    assert study.optimizer.settings()["design"] == kind


def test_sparsity_design_covers_all_sparsity_levels_and_uniform_is_bernoulli_half():
    ones = initial_design(SPACE, 40, seed=7, kind="sparsity")[:, :30].sum(-1)
    assert ones.min() >= 1 and ones.max() <= 29 and ones.std() > 5
    ones = initial_design(SPACE, 400, seed=7, kind="uniform")[:, :30].sum(-1)
    assert abs(ones.mean() - 15) < 0.5 and abs(ones.std() - 30**0.5 / 2) < 0.5


def test_the_uniform_design_does_not_start_near_special_points():
    # distance of the closest design point to all-zeros, and to shifted all-zeros (a random
    # point, where a shifted problem has its optimum); 10 seeds of 20 points in 60 dimensions
    space = SearchSpace([Binary(f"b{i}") for i in range(60)] + [Categorical("c", list("abcd"))])
    mask = Shift.draw(space, seed=0).mask
    for kind, gap in (("uniform", (-3, 3)), ("sparsity", (10, 60))):
        near_zero, near_mask = [], []
        for seed in range(10):
            X = initial_design(space, 20, seed, kind)[:, :60]
            near_zero.append(X.sum(-1).min())
            near_mask.append((X - mask).abs().sum(-1).min())
        difference = float(torch.stack(near_mask).mean() - torch.stack(near_zero).mean())
        assert gap[0] < difference < gap[1], (kind, difference)


def test_unknown_design_is_refused():
    with pytest.raises(ValueError, match="design must be one of"):
        initial_design(SPACE, 4, seed=0, kind="latin")
    with pytest.raises(ValueError, match="design must be one of"):
        bodi.BODi(SPACE, design="latin")


def test_a_study_stored_before_the_design_option_keeps_the_sparsity_design(tmp_path):
    path = tmp_path / "study.db"
    study = create_study(
        bodi.BODi(SPACE, n_init=6, design="sparsity", dictionary_size=8), storage=path
    )
    for _ in range(3):
        x = study.ask()
        study.tell(x, float(sum(x[f"b{i}"] for i in range(30))))
    forget_settings(path, "design")
    loaded = bodi.load_study(path)
    assert loaded.optimizer.design == "sparsity"
    assert torch.equal(loaded.optimizer._design, initial_design(SPACE, 6, 0, "sparsity"))


def test_benchmark_records_its_design_and_refuses_to_mix_designs(tmp_path):
    out = tmp_path / "res"
    common = dict(budget=3, n_init=3, out=out, n_workers=1, progress=False)
    run_benchmark(["planted-binary10"], ["random"], [0], design="sparsity", **common).close()
    db = sqlite3.connect(out / "results.db")
    params = [json.loads(p) for (p,) in db.execute("SELECT params FROM evaluations")]
    assert db.execute("SELECT design FROM tasks").fetchall() == [("sparsity",)]
    db.close()
    space = get_problem("planted-binary10").space
    assert space.encode(params).tolist() == initial_design(space, 3, 0, "sparsity").tolist()
    with pytest.raises(ValueError, match="initial design of 3 sparsity points"):
        run_benchmark(["planted-binary10"], ["random"], [0], design="uniform", **common)
    with pytest.raises(ValueError, match="names design 'sparsity'"):
        run_benchmark(["planted-binary10"], ["bodi[design=sparsity]"], [0], **common)


def test_a_results_database_from_before_the_design_column_reads_as_sparsity(tmp_path):
    out = tmp_path / "old"
    out.mkdir()
    with sqlite3.connect(out / "results.db") as db:
        db.execute("CREATE TABLE tasks (problem TEXT NOT NULL, method TEXT NOT NULL, seed "
                   "INTEGER NOT NULL, direction TEXT NOT NULL, optimal_value REAL, budget "
                   "INTEGER NOT NULL, n_init INTEGER NOT NULL, PRIMARY KEY (problem, method, "
                   "seed))")
        db.execute("INSERT INTO tasks VALUES ('p', 'random', 0, 'minimize', NULL, 5, 2)")
        db.execute("CREATE TABLE evaluations (problem TEXT NOT NULL, method TEXT NOT NULL, "
                   "seed INTEGER NOT NULL, number INTEGER NOT NULL)")
    from bodi.experiments.results import ResultsStore

    store = ResultsStore(out, read_only=True)
    assert store.tasks()[0]["design"] == "sparsity"
    store.close()
