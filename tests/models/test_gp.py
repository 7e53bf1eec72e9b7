"""The HED kernel and the GP built on it."""

import pytest
import torch
from botorch.models import SingleTaskGP

from bodi.hed.dictionaries import make_dictionary
from bodi.models.gp import HEDSingleTaskGP, fit_model, lengthscales, make_hed_model
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

MIXED = SearchSpace(
    [Binary("b0"), Binary("b1"), Categorical("c", ["x", "y", "z"]), Continuous("u", 0.0, 2.0),
     Integer("k", 0, 4), Binary("b2")]
)


def _data(space, n=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = space.sample(n, generator=g)
    Y = torch.sin(3 * X.sum(-1, keepdim=True)) + 0.1 * X[:, :1]
    return X, Y


def test_covariance_is_positive_semidefinite_and_depends_on_all_parameter_kinds():
    dictionary = make_dictionary("diverse", 32, MIXED.cardinalities, seed=2)
    model = make_hed_model(*_data(MIXED), MIXED, dictionary)
    X = MIXED.sample(30, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        K = model.covar_module(X).to_dense()
        assert torch.linalg.eigvalsh(K).min() > -1e-8
        for column in range(MIXED.dim):  # changing any one parameter changes the covariance
            Y = X.clone()
            Y[0, column] = 1.0 if Y[0, column] == 0 else 0.0
            assert not torch.allclose(model.covar_module(Y).to_dense()[0, 1:], K[0, 1:])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_flat_posterior_equals_singletaskgp_posterior(dtype):
    dictionary = make_dictionary("diverse", 24, MIXED.cardinalities, seed=5)
    train_X, train_Y = (t.to(dtype) for t in _data(MIXED, n=20))
    model = fit_model(make_hed_model(train_X, train_Y, MIXED, dictionary), maxiter=20)
    assert all(p.dtype == dtype for p in model.parameters())
    assert all(b.dtype == dtype for b in model.buffers() if b.is_floating_point())
    X = MIXED.sample(40, generator=torch.Generator().manual_seed(6)).to(dtype).unsqueeze(-2)
    with torch.no_grad():
        ours = model.posterior(X)
        reference = SingleTaskGP.posterior(model, X)
    assert ours.mean.shape == reference.mean.shape == (40, 1, 1)
    torch.testing.assert_close(ours.mean, reference.mean)
    torch.testing.assert_close(ours.variance, reference.variance)
    batch = MIXED.sample(6, generator=torch.Generator().manual_seed(7)).to(dtype).view(3, 2, -1)
    with torch.no_grad():  # q > 1 goes through the parent implementation
        torch.testing.assert_close(
            model.posterior(batch).mean, SingleTaskGP.posterior(model, batch).mean
        )


def test_fit_improves_marginal_likelihood_and_reports_lengthscales():
    from gpytorch.mlls import ExactMarginalLogLikelihood

    space = SearchSpace([Binary(f"x{i}") for i in range(12)])
    X, _ = _data(space, n=30)
    Y = X[:, :3].sum(-1, keepdim=True)
    model = make_hed_model(X, Y, space, make_dictionary("diverse", 20, [2] * 12, seed=0))
    mll = ExactMarginalLogLikelihood(model.likelihood, model)

    def loss():
        model.train()
        with torch.no_grad():
            return -mll(model(X), model.train_targets).item()

    before = loss()
    fit_model(model)
    assert loss() < before
    scales = lengthscales(model)
    assert scales["embedding"].shape == (20,) and "ordinal" not in scales


def test_model_without_discrete_parameters_and_dictionary_checks():
    space = SearchSpace([Continuous("u", 0, 1), Integer("k", 1, 3)])
    model = make_hed_model(*_data(space), space, None)
    assert isinstance(model, HEDSingleTaskGP)
    with pytest.raises(ValueError, match="needs a dictionary"):
        make_hed_model(*_data(MIXED), MIXED, None)
    with pytest.raises(ValueError, match="columns"):
        make_hed_model(*_data(MIXED), MIXED, make_dictionary("diverse", 4, [2, 2], seed=0))


def test_a_kernel_on_every_column_selects_no_columns():
    """GPyTorch copies the input's active columns on every call; over all columns it is
    skipped (``active_dims=None``), and the covariance is the same."""
    binary = SearchSpace([Binary(f"b{i}") for i in range(8)])
    dictionary = make_dictionary("diverse", 16, binary.cardinalities, seed=0)
    model = make_hed_model(*_data(binary), binary, dictionary)
    assert model.covar_module.active_dims is None
    X = binary.sample(10, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model.covar_module(X).to_dense()
        model.covar_module.active_dims = torch.arange(8)
        torch.testing.assert_close(model.covar_module(X).to_dense(), full)
    mixed = make_hed_model(*_data(MIXED), MIXED, make_dictionary("diverse", 16,
                                                                 MIXED.cardinalities, seed=0))
    hed = mixed.covar_module.kernels[0]
    assert hed.active_dims.tolist() == MIXED.discrete_dims
