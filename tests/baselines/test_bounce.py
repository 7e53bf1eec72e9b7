"""Bounce: its nested embedding, stage budgets, trust region, replay and runs on each kind."""

import warnings

import numpy as np
import pytest
import torch

import bodi
from bodi.baselines.bounce import (
    Bounce,
    BounceTrustRegion,
    Embedding,
    _fit_gp,
    _join,
)
from bodi.experiments.results import ResultsStore
from bodi.experiments.runner import run_benchmark
from bodi.initial_design import initial_design
from bodi.problems import get_problem
from bodi.space import DTYPE, Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study

MIXED = SearchSpace(
    [Binary(f"b{i}") for i in range(12)]
    + [Categorical(f"c{i}", list("abcde"[: 3 + i % 3])) for i in range(6)]
    + [Continuous("u", -2.0, 3.0), Integer("k", 0, 9)]
)


def _random_target_points(emb: Embedding, n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    Y = -torch.ones(n, emb.target_dim, dtype=DTYPE)
    for b, cols in zip(emb.bins, emb.columns(), strict=True):
        if b.kind == "categorical":
            Y[torch.arange(n), cols.start + torch.randint(0, b.size, (n,), generator=g)] = 1
        elif b.kind == "binary":
            Y[:, cols.start] = torch.randint(0, 2, (n,), generator=g) * 2.0 - 1
        else:
            Y[:, cols.start] = torch.rand(n, generator=g, dtype=DTYPE) * 2 - 1
    return Y


def test_embedding_bins_signs_and_projection():
    emb = Embedding(MIXED, 5, np.random.default_rng(0))
    assert sorted(p for b in emb.bins for p in b.params) == list(range(MIXED.dim))
    assert len(emb.bins) == 5 and {b.kind for b in emb.bins} == {"binary", "categorical",
                                                                 "continuous"}
    for b in emb.bins:
        assert len({MIXED.parameters[p].kind for p in b.params} - {"integer", "continuous"}) <= 1
        if b.kind == "categorical":  # Bounce's "min" bin sizing
            assert b.size == min(MIXED.parameters[p].cardinality for p in b.params)
    Y = _random_target_points(emb, 64)
    X = emb.project_up(Y)
    assert bool(MIXED.contains(X).all())
    for b, cols in zip(emb.bins, emb.columns(), strict=True):
        if b.kind == "binary":  # every parameter copies the bin's value, or its complement
            for p in b.params:
                expected = (Y[:, cols.start] * emb.sign[p] + 1) / 2
                assert torch.equal(X[:, p], expected)
    # discrete coordinates come back exactly; continuous ones up to the integer rounding
    back = emb.project_down(X)
    discrete = emb.kind_columns("binary", "categorical")
    assert torch.equal(back[:, discrete], Y[:, discrete])


def test_split_keeps_every_point_where_it_was():
    emb = Embedding(MIXED, 5, np.random.default_rng(1))
    Y = _random_target_points(emb, 32)
    X = emb.project_up(Y)
    before = emb.target_dim
    mapping = emb.split(2, np.random.default_rng(2))
    assert emb.target_dim > before
    assert torch.equal(emb.project_up(_join(Y, mapping, emb.target_dim)), X)
    while any(len(b.params) > 1 for b in emb.bins):
        emb.split(2, np.random.default_rng(3))
    assert all(len(b.params) == 1 for b in emb.bins)
    assert emb.target_dim == sum(b.size for b in emb.bins)


def test_the_model_is_bounces_single_task_gp_with_a_one_pass_posterior():
    # Bounce's mixture kernel, priors and likelihood; the candidates' posterior (b x 1 x dim,
    # as analytic EI asks for it) equals BoTorch's SingleTaskGP with the same hyperparameters
    from botorch.models import SingleTaskGP

    from bodi.models.single_task import FastSingleTaskGP

    emb = Embedding(MIXED, 5, np.random.default_rng(0))
    X = (_random_target_points(emb, 30) + 1) / 2
    y = torch.sin(3 * X).sum(-1)
    y = (y - y.mean()) / y.std()
    model = _fit_gp(X, y, emb)
    assert isinstance(model, FastSingleTaskGP)
    reference = SingleTaskGP(X, y.unsqueeze(-1), covar_module=model.covar_module,
                             likelihood=model.likelihood, mean_module=model.mean_module,
                             outcome_transform=None).eval()
    candidates = (_random_target_points(emb, 200, seed=1) + 1) / 2
    fast = model.posterior(candidates.unsqueeze(1))
    slow = reference.posterior(candidates.unsqueeze(1))
    assert torch.allclose(fast.mean, slow.mean, atol=1e-9)
    assert torch.allclose(fast.variance, slow.variance, atol=1e-9)


def test_a_bounce_study_with_the_removed_hed_kernel_fails_with_one_line():
    with pytest.raises(TypeError, match="kernel"):
        Bounce(MIXED, kernel="hed")
    settings = Bounce(MIXED).settings()
    assert Bounce.complete_settings({**settings, "kernel": "bounce"}, MIXED) == settings
    with pytest.raises(ValueError, match=r"^this study ran Bounce with kernel='hed', "
                                         r"dictionary_size=16, an option"):
        Bounce.complete_settings({**settings, "kernel": "hed", "dictionary_size": 16}, MIXED)


def test_stage_budgets_and_trust_region_follow_bounce():
    space = SearchSpace([Binary(f"b{i}") for i in range(50)])
    study = create_study(Bounce(space, budget=200))
    state = study.optimizer._catch_up(study.history)
    # d0 = 5, Bounce adjusts 2 new bins per split to 1 (5 * 2**4 = 80 is closest to 50)
    assert (state.d0, state.new_bins, state.n_splits) == (5, 1, 4)
    assert state.budgets == {5: 3, 10: 6, 20: 12, 40: 25, 80: 200}
    region = BounceTrustRegion(20)
    assert region.length_discrete == 10
    for left in (3, 2, 1):  # a stage without improvement collapses with its last evaluation
        region.update(1.0, 0.0, (1 / region.length) ** (1 / left))
    assert region.terminated
    region.reset()
    region.update(-1.0, 0.0, 0.5)
    assert region.length == 20 and not region.terminated


def _run(opt, f, n):
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, f(x))
    return opt


def _objective(x):
    bits = sum(float(x[f"b{i}"]) for i in range(12))
    cats = sum(x[f"c{i}"] != "a" for i in range(6))
    return bits + cats + (x["u"] - 1.0) ** 2 + abs(x["k"] - 4)


def test_a_rebuilt_optimizer_continues_the_live_one_and_splits_happen():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        live = _run(create_study(Bounce(MIXED, seed=3, budget=16)), _objective, 12)
        twin = create_study(Bounce(MIXED, seed=3, budget=16))
        for trial in live.trials:
            twin.tell(trial.params, trial.value)
        assert twin.ask() == live.ask()
    assert live.optimizer._state.splits_done >= 1
    assert len({tuple(t.x.tolist()) for t in live.trials}) == len(live.trials)


def test_stored_study_resumes(tmp_path):
    space = SearchSpace([Binary(f"b{i}") for i in range(12)])

    def f(x):
        return sum(float(x[f"b{i}"]) for i in range(12))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stored = _run(
            create_study(Bounce(space, seed=1, budget=20), storage=tmp_path / "s.db"), f, 12
        )
        twin = _run(create_study(Bounce(space, seed=1, budget=20)), f, 12)
        loaded = bodi.load_study(tmp_path / "s.db")
        assert (
            isinstance(loaded.optimizer, Bounce)
            and loaded.optimizer.settings() == stored.optimizer.settings()
        )
        assert loaded.ask() == twin.ask()


def test_bounce_improves_on_its_initial_points():
    space = SearchSpace([Binary(f"b{i}") for i in range(30)])

    def f(x):  # optimum at all-ones (shifted from all-zeros by nothing special to Bounce)
        return -sum(float(x[f"b{i}"]) for i in range(30))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = _run(create_study(Bounce(space, seed=0, budget=40)), f, 40)
    values = [t.value for t in opt.trials]
    assert min(values) < min(values[:5]) - 5


@pytest.mark.parametrize("problem", ["planted-binary12", "pest", "ackley8"])
def test_bench_runs_bounce_on_binary_categorical_and_mixed_problems(tmp_path, problem):
    out = tmp_path / "res"
    run_benchmark([problem], ["bounce"], [0], budget=10, n_init=4, out=out, n_workers=1,
                  progress=False).close()
    store = ResultsStore(out)
    history = store.history(problem, "bounce", 0)
    store.close()
    assert len(history) == 10 and all(e.value is not None for e in history)
    space = get_problem(problem).space
    X = space.encode([e.params for e in history])
    assert bool(space.contains(X).all())
    assert len({tuple(r) for r in X.tolist()}) == 10
    design = initial_design(space, 4, 0)  # not the shared design
    assert not torch.equal(X[:4], design)
