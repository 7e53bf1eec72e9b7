"""Several objectives: the API (minimize, ask/tell, Pareto front), the models, the baselines that
take them, hypervolumes, storage, the CLI and a study killed and resumed."""

import itertools
import json
import os
import sqlite3
import subprocess
import sys

import pytest
import torch
from botorch.models.deterministic import GenericDeterministicModel
from botorch.models.model import ModelList

import bodi
from bodi.optimizers.registry import make_optimizer
from bodi.pareto import (
    chebyshev_utility,
    hypervolume,
    infer_reference_point,
    oriented,
    pareto_mask,
    random_weights,
    running_hypervolume,
)
from bodi.space import Binary, Categorical, SearchSpace
from bodi.storage import VERSION as STORAGE_VERSION
from bodi.storage import SQLiteStorage
from bodi.study import create_study

SMALL = {"dictionary_size": 16, "num_restarts": 2, "raw_samples": 64, "n_init": 6}
SPACE = SearchSpace([Binary(f"b{i}") for i in range(8)] + [Categorical("c", ["x", "y", "z"])])
TARGET = [1, 0, 1, 1, 0, 0, 1, 0]


def error_and_cost(params):
    """Two conflicting objectives: distance to TARGET (wants 4 bits on) and bits on."""
    bits = [int(params[f"b{i}"]) for i in range(8)]
    error = sum(b != t for b, t in zip(bits, TARGET, strict=True)) + (params["c"] != "y")
    return [float(error), float(sum(bits))]


def test_minimize_returns_the_pareto_front_of_its_trials():
    result = bodi.minimize(error_and_cost, SPACE, budget=10, seed=0,
                           directions=["minimize", "minimize"], **SMALL)
    assert result.best_params is None and result.best_value is None
    assert all(len(v) == 2 for v in result.values)
    front = result.pareto_front
    values = [t.objective_values for t in result.trials]
    brute = [v for v in values
             if not any(all(w[i] <= v[i] for i in range(2)) and w != v for w in values)]
    assert sorted(t.objective_values for t in front) == sorted(brute)
    assert all(t.params and t.values == error_and_cost(t.params) for t in front)
    # the model is one GP per objective, the acquisition qLogNEHVI
    assert isinstance(result.study.optimizer.model, ModelList)
    assert len(result.study.optimizer.model.models) == 2


def test_the_same_seed_gives_the_same_study():
    runs = [bodi.minimize(error_and_cost, SPACE, budget=8, seed=3,
                          directions=["minimize", "maximize"], **SMALL) for _ in range(2)]
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_tell_checks_the_number_of_values_and_fails_non_finite_ones():
    study = create_study(bodi.BODi(SPACE, directions=["minimize", "minimize"], **SMALL))
    x = study.ask()
    with pytest.raises(ValueError, match="2 objectives"):
        study.tell(x, 1.0)
    with pytest.raises(ValueError, match="got 3 values"):
        study.tell(x, [1.0, 2.0, 3.0])
    with pytest.warns(UserWarning):
        trial = study.tell(x, [1.0, float("nan")])
    assert trial.state == "failed" and trial.objective_values is None
    y = study.ask()
    assert study.tell(y, torch.tensor([1.0, 2.0])).values == [1.0, 2.0]
    with pytest.raises(ValueError, match="no single best"):
        study.best  # noqa: B018


def test_options_are_checked():
    with pytest.raises(ValueError, match="one objective"):
        make_optimizer("sa", SPACE, seed=0, direction="minimize,minimize")
    with pytest.raises(ValueError, match="maximize"):
        bodi.BODi(SPACE, directions=["minimize", "up"])
    with pytest.raises(ValueError, match="disagree"):
        bodi.BODi(SPACE, direction="maximize", directions=["minimize", "minimize"])
    with pytest.raises(ValueError, match="ref_point must be 2"):
        bodi.BODi(SPACE, directions=["minimize", "minimize"], ref_point=[1.0])
    with pytest.raises(ValueError, match="qLogNEHVI"):
        bodi.BODi(SPACE, directions=["minimize", "minimize"], acquisition="ucb")
    with pytest.raises(ValueError, match="indices"):
        bodi.BODi(SPACE, directions=["minimize", "minimize"], known_objectives={2: sum})
    with pytest.raises(ValueError, match="nothing to model"):
        bodi.BODi(SPACE, directions=["minimize", "minimize"],
                  known_objectives={0: len, 1: len})


def test_a_known_objective_is_computed_exactly():
    def cost(params):
        return float(sum(int(params[f"b{i}"]) for i in range(8)))

    study = create_study(
        bodi.BODi(
            SPACE,
            directions=["minimize", "minimize"],
            known_objectives={1: cost},
            ref_point=[10.0, 9.0],
            **SMALL,
        )
    )
    for _ in range(8):
        x = study.ask()
        study.tell(x, error_and_cost(x))
    _, cost_model = study.optimizer.model.models
    assert isinstance(cost_model, GenericDeterministicModel)
    X = SPACE.sample(5, generator=torch.Generator().manual_seed(0))
    expected = torch.tensor([-cost(p) for p in SPACE.decode(X)], dtype=torch.float64)
    assert torch.equal(cost_model.posterior(X).mean.squeeze(-1), expected)
    assert study.optimizer.settings()["ref_point"] == [10.0, 9.0]


@pytest.mark.parametrize("method", ["random", "tpe", "nsga2"])
def test_baselines_with_several_objectives(method):
    study = create_study(
        make_optimizer(method, SPACE, seed=0, direction="minimize,minimize", n_init=6)
    )
    for _ in range(10):
        x = study.ask()
        study.tell(x, error_and_cost(x))
    keys = [tuple(t.params.values()) for t in study.trials]
    assert len(set(keys)) == 10 and all(t.state == "complete" for t in study.trials)
    assert study.pareto_front


def test_nsga2_breeds_from_the_generations():
    """After the first generation (the design plus random trials), NSGA-II's children are
    made from the Pareto-sorted parents: here they reach a front that 200 random points miss."""
    space = SearchSpace([Binary(f"b{i}") for i in range(30)])

    def f(p):
        bits = [int(p[f"b{i}"]) for i in range(30)]
        return [float(sum(bits[:15]) - sum(bits[15:])), float(-sum(bits[:15]) - sum(bits))]

    fronts = {}
    for method in ("nsga2", "random"):
        study = create_study(
            make_optimizer(method, space, seed=1, direction="minimize,minimize", n_init=10)
        )
        for _ in range(10 * 8):
            x = study.ask()
            study.tell(x, f(x))
        fronts[method] = hypervolume(study.history.Y_completed, torch.tensor([-30.0, -30.0]))
    assert fronts["nsga2"] > fronts["random"]


def test_hypervolume_by_hand():
    Y = torch.tensor([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0], [1.0, 1.0]])
    ref = torch.tensor([0.0, 0.0])
    # the staircase: 1x3 + 1x2 + 1x1
    assert hypervolume(Y, ref) == pytest.approx(6.0)
    assert running_hypervolume(Y, ref) == pytest.approx([3.0, 5.0, 6.0, 6.0])
    assert hypervolume(Y, torch.tensor([5.0, 5.0])) == 0.0
    assert pareto_mask(Y).tolist() == [True, True, True, False]
    r = infer_reference_point(Y)
    assert (r < Y[:3].min(0).values).all()
    assert oriented([[1.0, 2.0]], ["minimize", "maximize"]).tolist() == [[-1.0, 2.0]]


def test_the_chebyshev_utility_picks_pareto_points():
    Y = torch.tensor(list(itertools.product(range(5), range(5))), dtype=torch.float64)
    Y = Y[Y.sum(-1) <= 4]  # the front: x + y = 4
    for seed in range(5):
        w = random_weights(2, torch.Generator().manual_seed(seed))
        assert w.sum() == pytest.approx(1.0) and (w > 0).all()
        assert Y[chebyshev_utility(Y, w).argmax()].sum() == 4


def test_parallel_workers_with_several_objectives():
    result = bodi.minimize(error_and_cost, SPACE, budget=9, seed=0, n_workers=2,
                           directions=["minimize", "minimize"], **SMALL)
    assert sum(t.state == "complete" for t in result.trials) == 9
    assert result.pareto_front


def test_a_version_2_study_file_is_upgraded(tmp_path):
    path = tmp_path / "old.db"
    bodi.minimize(lambda p: float(p["b0"]), SPACE, budget=3, storage=path, n_init=3)
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE trials DROP COLUMN objective_values")
    db.execute("UPDATE bodi_meta SET value = '2' WHERE key = 'version'")
    db.commit()
    db.close()
    storage = SQLiteStorage(path)
    assert [t.state for t in storage.trials("default")] == ["complete"] * 3
    storage.close()
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM bodi_meta WHERE key = 'version'").fetchone()
    assert version == (str(STORAGE_VERSION),)  # upgraded to the current format
    db.close()


OBJECTIVE = """
import os, signal
from pathlib import Path

def f(params):
    marker = Path(__file__).with_name("killed")
    count = Path(__file__).with_name("count")
    n = int(count.read_text()) + 1 if count.exists() else 1
    count.write_text(str(n))
    if n == 8 and not marker.exists():
        marker.write_text("")
        os.kill(os.getpid(), signal.SIGKILL)  # as if the machine went down mid-study
    bits = [int(params[f"b{i}"]) for i in range(6)]
    return [float(sum(b != t for b, t in zip(bits, [1, 0, 1, 1, 0, 0]))), float(sum(bits))]
"""


def test_a_multi_objective_study_killed_and_resumed_from_the_cli(tmp_path):
    (tmp_path / "objective.py").write_text(OBJECTIVE)
    SearchSpace([Binary(f"b{i}") for i in range(6)]).to_json(tmp_path / "space.json")
    db = tmp_path / "study.db"
    command = [sys.executable, "-m", "bodi", "run", "--objective",
               f"{tmp_path / 'objective.py'}:f", "--space", str(tmp_path / "space.json"),
               "--storage", str(db), "--quiet", "--n-init", "5", "--budget", "12",
               "--directions", "minimize,minimize"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    killed = subprocess.run(command, capture_output=True, text=True, env=env)
    command.append("--resume")
    assert killed.returncode == -9
    before = _complete(db)
    assert len(before) == 7 and all(len(v) == 2 for v in before.values())
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "Pareto-optimal trials" in done.stdout
    after = _complete(db)
    assert len(after) == 12 and len(set(after)) == 12  # every configuration once
    assert {k: after[k] for k in before} == before  # nothing evaluated before was lost
    shown = subprocess.run([sys.executable, "-m", "bodi", "show", str(db)],
                           capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "Pareto-front plot" in shown.stdout and db.with_suffix(".png").stat().st_size > 0
    study = bodi.load_study(db)
    assert study.directions == ("minimize", "minimize") and study.pareto_front


def _complete(path):
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT params, objective_values FROM trials "
                          "WHERE state = 'complete'").fetchall()
    finally:
        db.close()
    return {params: json.loads(values) for params, values in rows}


def test_a_known_weighted_sum_of_binary_parameters_is_one_matrix_product():
    weights = {f"b{i}": 0.5 * i for i in range(8)}
    study = create_study(
        bodi.BODi(
            SPACE, directions=["minimize", "minimize"], known_objectives={1: weights}, **SMALL
        )
    )
    for _ in range(7):
        x = study.ask()
        study.tell(x, error_and_cost(x))
    _, cost_model = study.optimizer.model.models
    X = SPACE.sample(5, generator=torch.Generator().manual_seed(1))
    expected = [-sum(w for name, w in weights.items() if p[name]) for p in SPACE.decode(X)]
    assert cost_model.posterior(X).mean.squeeze(-1).tolist() == pytest.approx(expected)
    with pytest.raises(ValueError, match="not binary parameters: \\['c'\\]"):
        bodi.BODi(SPACE, directions=["minimize", "minimize"], known_objectives={1: {"c": 1.0}})
