"""CASMOPOLITAN, COMBO and BoTorch's mixed GP: improve on the design, run on every space kind."""

import pytest
import torch

from bodi import load_study
from bodi.baselines import CASMOPOLITAN, COMBO, BoTorchMixed
from bodi.initial_design import initial_design
from bodi.problems import planted_binary, planted_categorical, planted_mixed
from bodi.study import create_study

SMALL = {"num_restarts": 4, "raw_samples": 256}


def _run(cls, problem, n_init, budget, seed, **options):
    study = create_study(cls(problem.space, seed=seed, direction=problem.direction,
                           n_init=n_init, **SMALL, **options))
    for _ in range(budget):
        x = study.ask()
        study.tell(x, float(problem(x)))
    return study


def _best(values, direction):
    return min(values) if direction == "minimize" else max(values)


@pytest.mark.parametrize("cls", [CASMOPOLITAN, COMBO, BoTorchMixed])
def test_improves_on_its_initial_design_on_a_planted_problem(cls):
    problem = planted_binary(12, seed=0)
    opt = _run(cls, problem, n_init=8, budget=24, seed=0)
    values = [t.value for t in opt.trials]
    design_best = _best(values[:8], problem.direction)
    final = _best(values, problem.direction)
    # planted problems count mismatches to a hidden point: 0 is the optimum
    assert final < design_best - 1.5, (values[:8], final)


@pytest.mark.parametrize("cls", [CASMOPOLITAN, COMBO, BoTorchMixed])
@pytest.mark.parametrize("make_problem", [
    lambda: planted_binary(8, seed=1),
    lambda: planted_categorical(5, 3, seed=1),
    lambda: planted_mixed(4, 2, 2, seed=1),
], ids=["binary", "categorical", "mixed"])
def test_runs_on_every_kind_of_space(cls, make_problem):
    problem = make_problem()
    opt = _run(cls, problem, n_init=5, budget=8, seed=3)
    assert len(opt.trials) == 8 and all(t.state == "complete" for t in opt.trials)
    design = problem.space.decode(initial_design(problem.space, 5, 3))
    assert [t.params for t in opt.trials[:5]] == design
    if problem.space.is_discrete:  # never a repeated point
        assert len({tuple(t.params.items()) for t in opt.trials}) == 8


def test_casmopolitan_proposals_stay_in_its_trust_region():
    problem = planted_binary(30, seed=2)
    study = create_study(CASMOPOLITAN(problem.space, seed=0, direction=problem.direction,
                                    n_init=6, trust_region={"init_radius": 3, "max_radius": 5},
                                    **SMALL))
    for _ in range(14):
        x = study.ask()
        if study.optimizer.region is not None:
            assert study.optimizer.region.contains(problem.space.encode(x)).all()
            assert study.optimizer.region.radius <= 5
        study.tell(x, float(problem(x)))
    assert study.optimizer.region is not None


def test_same_seed_same_run_and_a_stored_study_resumes(tmp_path):
    problem = planted_mixed(4, 2, 2, seed=0)
    a = _run(CASMOPOLITAN, problem, n_init=4, budget=7, seed=5)
    b = _run(CASMOPOLITAN, problem, n_init=4, budget=7, seed=5)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]
    path = tmp_path / "study.db"
    stored = create_study(CASMOPOLITAN(problem.space, seed=5, direction=problem.direction,
                                       n_init=4, **SMALL), storage=path)
    for t in a.trials[:6]:
        stored.tell(t.params, t.value)
    resumed = load_study(path)
    assert isinstance(resumed.optimizer, CASMOPOLITAN)
    assert (resumed.optimizer.trust_region_settings
            == stored.optimizer.trust_region_settings)
    assert resumed.ask() == a.trials[6].params


def test_botorch_mixed_refuses_a_trust_region():
    with pytest.raises(ValueError, match="trust region"):
        BoTorchMixed(planted_binary(4).space, trust_region=True)
    assert BoTorchMixed.acquisition_optimizer == "botorch"
    with pytest.raises(TypeError, match="acquisition_optimizer"):
        BoTorchMixed(planted_binary(4).space, acquisition_optimizer="local")


def test_combo_model_is_the_diffusion_kernel():
    from bodi.models.baseline_kernels import DiffusionKernel

    problem = planted_binary(6, seed=0)
    opt = _run(COMBO, problem, n_init=4, budget=5, seed=0)
    model = opt.optimizer.model
    assert any(isinstance(m, DiffusionKernel) for m in model.covar_module.modules())
    assert torch.isfinite(model.posterior(opt.history.X_completed).mean).all()
