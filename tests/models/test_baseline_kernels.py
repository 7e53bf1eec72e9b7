"""Baseline kernels: COMBO's diffusion kernel, CASMOPOLITAN's overlap kernel, make_surrogate."""

import numpy as np
import pytest
import scipy.linalg
import torch
from botorch.models.kernels.categorical import CategoricalKernel
from gpytorch.kernels import AdditiveKernel, ScaleKernel
from gpytorch.priors import HalfCauchyPrior, HorseshoePrior

from bodi.experiments.modelfit import SURROGATES
from bodi.models.baseline_kernels import (
    DiffusionKernel,
    SharedKernel,
    make_diffusion_kernel,
    make_overlap_kernel,
)
from bodi.models.gp import fit_model
from bodi.models.registry import make_surrogate
from bodi.models.single_task import FastSingleTaskGP
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

BINARY = SearchSpace([Binary(f"b{i}") for i in range(8)])
CATEGORICAL = SearchSpace([Categorical(f"c{i}", ["x", "y", "z"]) for i in range(5)]
                          + [Binary("b")])
MIXED = SearchSpace([Binary("b0"), Categorical("c", ["x", "y", "z", "w"]), Continuous("u", 0, 2),
                     Integer("k", 0, 4), Binary("b1")])
ORDINAL = SearchSpace([Continuous("u", 0, 1), Integer("k", 0, 3)])


def _data(space, n=16, seed=0):
    X = space.sample(n, generator=torch.Generator().manual_seed(seed))
    Y = torch.sin(2 * X.sum(-1, keepdim=True)) + 0.3 * X[:, :1]
    return X, Y


@pytest.mark.parametrize("C", [2, 3, 5])
@pytest.mark.parametrize("beta", [0.05, 0.4, 2.0])
def test_diffusion_closed_form_equals_expm_of_the_complete_graph_laplacian(C, beta):
    kernel = DiffusionKernel([C]).double()
    kernel.beta = torch.tensor([[beta]])
    nodes = torch.arange(C, dtype=torch.float64).unsqueeze(-1)
    with torch.no_grad():
        K = kernel(nodes, nodes).to_dense().numpy()
    laplacian = C * np.eye(C) - np.ones((C, C))
    beta = kernel.beta.item()  # the constraint's transform rounds in the last bits
    heat = scipy.linalg.expm(-beta * laplacian)
    np.testing.assert_allclose(K, heat / np.diag(heat)[0], rtol=1e-10, atol=1e-12)


def test_diffusion_kernel_is_a_product_over_variables_and_psd():
    cards = [2, 3, 5, 2]
    kernel = DiffusionKernel(cards).double()
    kernel.beta = torch.tensor([[0.3, 1.0, 0.2, 2.0]])
    space = SearchSpace([Categorical(f"v{i}", list(range(c))) for i, c in enumerate(cards)])
    X = space.sample(40, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        K = kernel(X, X).to_dense()
        factors = []
        for i, c in enumerate(cards):
            single = DiffusionKernel([c]).double()
            single.beta = kernel.beta[..., i : i + 1]
            factors.append(single(X[:, i : i + 1], X[:, i : i + 1]).to_dense())
        torch.testing.assert_close(K, torch.stack(factors).prod(0))
        assert torch.linalg.eigvalsh(K).min() > -1e-10
        torch.testing.assert_close(kernel(X, X, diag=True), torch.ones(40, dtype=K.dtype))
        torch.testing.assert_close(kernel(X[:7], X[3:10], diag=True), K[range(7), range(3, 10)])


def test_diffusion_kernel_active_dims_batches_and_priors():
    kernel = DiffusionKernel([2, 3], active_dims=[0, 2]).double()
    X = torch.tensor([[0.0, 0.7, 2.0], [1.0, 0.1, 2.0], [0.0, 0.3, 1.0]], dtype=torch.float64)
    with torch.no_grad():
        K = kernel(X, X).to_dense()
        assert K[0, 0] == 1 and K[0, 1] < 1 and K[0, 2] < 1
        torch.testing.assert_close(kernel(X.expand(4, 3, 3), X.expand(4, 3, 3)).to_dense(),
                                   K.expand(4, 3, 3))
    batched = DiffusionKernel([2, 2], batch_shape=torch.Size([3])).double()
    assert batched.beta.shape == (3, 1, 2)
    assert batched(torch.rand(3, 5, 2).round().double()).to_dense().shape == (3, 5, 5)
    # initial r = exp(-1/d): the overlap kernel with unit lengthscales
    torch.testing.assert_close(kernel.log_ratio(), torch.full((1, 2), -0.5, dtype=torch.float64),
                               atol=1e-6, rtol=0)  # set in float32, the parameters' default
    assert isinstance(next(p for _, _, p, _, _ in kernel.named_priors()), HalfCauchyPrior)
    horseshoe = DiffusionKernel([2], beta_prior="horseshoe")
    assert isinstance(next(p for _, _, p, _, _ in horseshoe.named_priors()), HorseshoePrior)
    assert not list(DiffusionKernel([2], beta_prior=None).named_priors())
    with pytest.raises(ValueError, match="cardinalities"):
        DiffusionKernel([1, 2])
    with pytest.raises(ValueError, match="active"):
        DiffusionKernel([2, 2], active_dims=[0])
    with pytest.raises(ValueError, match="unknown beta prior"):
        DiffusionKernel([2], beta_prior="laplace")


@pytest.mark.parametrize("space", [BINARY, CATEGORICAL, MIXED, ORDINAL],
                         ids=["binary", "categorical", "mixed", "ordinal"])
@pytest.mark.parametrize("builder", [make_overlap_kernel, make_diffusion_kernel])
def test_baseline_kernels_build_fit_and_predict(space, builder):
    X, Y = _data(space)
    kernel = builder(space)
    model = fit_model(FastSingleTaskGP(X, Y, covar_module=kernel), maxiter=30)
    X_test = space.sample(5, generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        posterior = model.posterior(X_test, observation_noise=True)
        K = model.covar_module(space.sample(25, generator=torch.Generator().manual_seed(2)))
        assert torch.linalg.eigvalsh(K.to_dense()).min() > -1e-8
    assert torch.isfinite(posterior.mean).all() and (posterior.variance > 0).all()
    if space is ORDINAL:
        return
    kind = CategoricalKernel if builder is make_overlap_kernel else DiffusionKernel
    assert any(isinstance(k, kind) for k in model.covar_module.modules())


def test_overlap_kernel_is_botorch_categorical_kernel_and_casmopolitan_mixture():
    kernel = make_overlap_kernel(BINARY).double()
    assert isinstance(kernel, ScaleKernel) and isinstance(kernel.base_kernel, CategoricalKernel)
    assert kernel.base_kernel.lengthscale.shape[-1] == 8
    X = BINARY.sample(6, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ls = kernel.base_kernel.lengthscale
        expected = torch.exp(-((X.unsqueeze(1) != X.unsqueeze(0)) / ls).mean(-1))
        torch.testing.assert_close(kernel.base_kernel(X, X).to_dense(), expected.to(X))
    mixed = make_overlap_kernel(MIXED)  # ScaleKernel(k_h * k_x) + ScaleKernel(k_h + k_x)
    assert isinstance(mixed, AdditiveKernel)
    k_h, k_x = mixed.kernels[0].base_kernel.kernels
    shared = mixed.kernels[1].base_kernel.kernels
    assert all(isinstance(k, SharedKernel) for k in shared)
    assert shared[0].kernel is k_h and shared[1].kernel is k_x
    X = MIXED.sample(7, generator=torch.Generator().manual_seed(3))
    model = make_surrogate("overlap", X, torch.randn(7, 1, dtype=X.dtype), MIXED, seed=0)
    covar = model.covar_module
    s1, s2 = covar.kernels[0].outputscale, covar.kernels[1].outputscale
    with torch.no_grad():
        h, x = covar.kernels[0].base_kernel.kernels
        kh, kx = h(X, X).to_dense(), x(X, X).to_dense()
        torch.testing.assert_close(covar(X, X).to_dense(), s1 * kh * kx + s2 * (kh + kx))
    # each prior once (the marginal likelihood adds model.named_priors(); a kernel used twice
    # directly would add its prior twice)
    priors = [name for name, *_ in model.named_priors()]
    assert len(priors) == 2  # the noise and the Matérn lengthscales


def test_make_surrogate_names_and_errors():
    X, Y = _data(BINARY)
    for name in SURROGATES:
        model = make_surrogate(name, X, Y, BINARY, seed=0, dictionary_size=16)
        assert isinstance(model, FastSingleTaskGP)
    hed = make_surrogate("hed-diverse", X, Y, BINARY, seed=3, dictionary_size=16)
    again = make_surrogate("hed-diverse", X, Y, BINARY, seed=3, dictionary_size=16)
    assert torch.equal(hed.covar_module.dictionary.rows, again.covar_module.dictionary.rows)
    assert hed.covar_module.dictionary.m == 16
    with pytest.raises(ValueError, match="unknown surrogate"):
        make_surrogate("casmo", X, Y, BINARY, seed=0)
    Xc, Yc = _data(CATEGORICAL)
    for name in ("hed-wavelet", "hed-gaussian"):
        with pytest.raises(ValueError, match="binary parameters only"):
            make_surrogate(name, Xc, Yc, CATEGORICAL, seed=0)
    for name in ("hed-diverse", "hed-naive", "overlap", "diffusion"):
        make_surrogate(name, Xc, Yc, CATEGORICAL, seed=0, dictionary_size=8)


def test_overlap_kernel_diagonal_matches_the_full_matrix():
    from bodi.models.baseline_kernels import OverlapKernel

    kernel = OverlapKernel(ard_num_dims=5).double()
    kernel.lengthscale = torch.tensor([0.3, 1.0, 2.0, 0.7, 5.0], dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    x1 = torch.randint(0, 3, (7, 5), generator=g).double()
    x2 = torch.randint(0, 3, (7, 5), generator=g).double()
    with torch.no_grad():
        full = kernel(x1, x2).to_dense()
        assert torch.allclose(kernel(x1, x2, diag=True), torch.diagonal(full))
        assert torch.allclose(kernel(x1, x1, diag=True), torch.ones(7, dtype=torch.float64))


@pytest.mark.parametrize("levels", [2, 5])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_overlap_kernel_equals_botorchs_categorical_kernel_with_its_gradient(levels, batch):
    from botorch.models.kernels.categorical import CategoricalKernel

    from bodi.models.baseline_kernels import OverlapKernel

    g = torch.Generator().manual_seed(levels)
    lengthscale = torch.rand(1, 6, generator=g, dtype=torch.float64) * 3 + 0.05
    x1 = torch.randint(0, levels, (*batch, 9, 6), generator=g).double()
    x2 = torch.cat([x1[..., :4, :], torch.randint(0, levels, (*batch, 3, 6), generator=g)], -2)
    upstream = torch.randn(*batch, 9, 7, generator=g, dtype=torch.float64)
    kernels = []
    for kind in (OverlapKernel, CategoricalKernel):
        kernel = kind(ard_num_dims=6).double()
        kernel.lengthscale = lengthscale
        kernels.append(kernel)
    values = _assert_same_values_and_gradients(kernels, x1, x2, upstream, "raw_lengthscale")
    equal_rows = values[..., torch.arange(4), torch.arange(4)]
    torch.testing.assert_close(equal_rows, torch.ones_like(equal_rows), rtol=0, atol=1e-14)


def test_overlap_kernel_takes_the_parents_path_for_non_index_inputs():
    from botorch.models.kernels.categorical import CategoricalKernel

    from bodi.models.baseline_kernels import OverlapKernel, weighted_mismatches

    g = torch.Generator().manual_seed(0)
    x = torch.rand(20, 4, generator=g, dtype=torch.float64)  # 80 distinct values
    ours, parent = OverlapKernel(ard_num_dims=4).double(), CategoricalKernel(ard_num_dims=4)
    assert weighted_mismatches(x, x, torch.ones(1, 4, dtype=torch.float64)) is None
    assert torch.equal(ours.forward(x, x), parent.double().forward(x, x))


def test_diffusion_kernel_product_equals_the_comparison_with_its_gradient(monkeypatch):
    import bodi.models.baseline_kernels as kernels

    cards = [2, 3, 5, 2, 4]
    space = SearchSpace([Categorical(f"v{i}", list(range(c))) for i, c in enumerate(cards)])
    g = torch.Generator().manual_seed(2)
    X1, X2 = space.sample(11, generator=g), space.sample(6, generator=g)
    upstream = torch.randn(11, 6, generator=g, dtype=torch.float64)
    outcomes = []
    for max_levels in (kernels.MAX_LEVELS, 0):  # the product, then the N x M x d comparison
        monkeypatch.setattr(kernels, "MAX_LEVELS", max_levels)
        kernel = DiffusionKernel(cards).double()
        kernel.beta = torch.tensor([[0.3, 1.0, 0.2, 2.0, 0.05]])
        outcomes.append(_value_and_gradient(kernel, X1, X2, upstream, "raw_beta"))
    _assert_close_pairs(outcomes)


def _value_and_gradient(kernel, x1, x2, upstream, parameter: str):
    """``kernel.forward(x1, x2)`` and the gradient of its sum weighted by ``upstream`` in the
    kernel's ``parameter``."""
    K = kernel.forward(x1, x2)
    (gradient,) = torch.autograd.grad((K * upstream).sum(), getattr(kernel, parameter))
    return K, gradient


def _assert_close_pairs(outcomes) -> None:
    """Two ``(value, gradient)`` pairs are equal up to rounding."""
    (values, gradient), (other_values, other_gradient) = outcomes
    torch.testing.assert_close(values, other_values, rtol=0, atol=1e-13)
    torch.testing.assert_close(gradient, other_gradient, rtol=1e-10, atol=1e-12)


def _assert_same_values_and_gradients(kernels, x1, x2, upstream, parameter: str):
    """Two kernels give equal values and gradients on ``x1``, ``x2``; returns the values."""
    outcomes = [_value_and_gradient(k, x1, x2, upstream, parameter) for k in kernels]
    _assert_close_pairs(outcomes)
    return outcomes[0][0]
