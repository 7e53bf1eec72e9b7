"""The HED kernel and the GP built on it."""

import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.optim.closures.model_closures import get_loss_closure
from gpytorch.mlls import ExactMarginalLogLikelihood
from mixed_data import MIXED, mixed_data

from bodi.hed.dictionaries import make_dictionary
from bodi.models.gp import fit_model, lengthscales, make_hed_model
from bodi.models.single_task import MAX_FAST_JOINT_POINTS, FastSingleTaskGP
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace


def test_covariance_is_positive_semidefinite_and_depends_on_all_parameter_kinds():
    dictionary = make_dictionary("diverse", 32, MIXED.cardinalities, seed=2)
    model = make_hed_model(*mixed_data(MIXED), MIXED, dictionary)
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
    train_X, train_Y = (t.to(dtype) for t in mixed_data(MIXED, n=20))
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
    for q in (2, 5, 9):  # joint posteriors: computed here up to MAX_FAST_JOINT_POINTS
        batch = MIXED.sample(3 * q, generator=torch.Generator().manual_seed(q)).to(dtype)
        batch = batch.view(3, q, -1)
        with torch.no_grad():
            ours, reference = model.posterior(batch), SingleTaskGP.posterior(model, batch)
        torch.testing.assert_close(ours.mean, reference.mean)
        torch.testing.assert_close(ours.covariance_matrix, reference.covariance_matrix)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_joint_posterior_with_points_every_batch_shares_equals_singletaskgps(dtype, monkeypatch):
    """qLogNEI's baseline in front of each candidate and the pending points behind it are the
    same in every batch: measured once, with the posterior of GPyTorch's computation."""
    dictionary = make_dictionary("diverse", 24, MIXED.cardinalities, seed=5)
    train_X, train_Y = (t.to(dtype) for t in mixed_data(MIXED, n=20))
    model = fit_model(make_hed_model(train_X, train_Y, MIXED, dictionary), maxiter=20)
    g = torch.Generator().manual_seed(8)
    baseline, pending = (MIXED.sample(k, generator=g).to(dtype) for k in (10, 2))
    for varying in (1, 3, 9):  # 9 candidates per batch: more than the fast path takes
        candidates = MIXED.sample(4 * varying, generator=g).to(dtype).view(4, varying, -1)
        X = torch.cat([baseline.expand(4, -1, -1), candidates, pending.expand(4, -1, -1)], -2)
        with torch.no_grad(), monkeypatch.context() as patch:
            reference = SingleTaskGP.posterior(model, X)
            if varying <= MAX_FAST_JOINT_POINTS:  # computed here, not by GPyTorch
                patch.setattr(SingleTaskGP, "posterior", None)
            ours = model.posterior(X)
        assert ours.mean.shape == reference.mean.shape == (4, 12 + varying, 1)
        torch.testing.assert_close(ours.mean, reference.mean)
        torch.testing.assert_close(ours.covariance_matrix, reference.covariance_matrix)
    X = X.view(2, 2, *X.shape[-2:])[..., :13, :]  # two batch dimensions: 10 shared, 3 not
    with torch.no_grad():
        ours, reference = model.posterior(X), SingleTaskGP.posterior(model, X)
    torch.testing.assert_close(ours.mean, reference.mean)
    torch.testing.assert_close(ours.covariance_matrix, reference.covariance_matrix)


def test_points_shared_by_batch():
    from bodi.models.single_task import points_shared_by_batch

    X = torch.arange(24.0).view(2, 4, 3)
    assert points_shared_by_batch(X) is None  # nothing shared
    X[1, 0] = X[0, 0]
    X[1, 3] = X[0, 3]
    assert points_shared_by_batch(X).tolist() == [True, False, False, True]
    assert points_shared_by_batch(X.view(2, 1, 4, 3)).tolist() == [True, False, False, True]
    assert points_shared_by_batch(X[:1]) is None  # one batch: nothing to share
    assert points_shared_by_batch(X[0]) is None  # not a batch
    assert points_shared_by_batch(X[:, :1]) is None  # every point shared
    assert points_shared_by_batch(X.expand(3, 2, 4, 3)[:, :1]) is None  # equal batches


def test_fit_improves_marginal_likelihood_and_reports_lengthscales():
    from gpytorch.mlls import ExactMarginalLogLikelihood

    space = SearchSpace([Binary(f"x{i}") for i in range(12)])
    X, _ = mixed_data(space, n=30)
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
    model = make_hed_model(*mixed_data(space), space, None)
    assert isinstance(model, FastSingleTaskGP)
    with pytest.raises(ValueError, match="needs a dictionary"):
        make_hed_model(*mixed_data(MIXED), MIXED, None)
    with pytest.raises(ValueError, match="columns"):
        make_hed_model(*mixed_data(MIXED), MIXED, make_dictionary("diverse", 4, [2, 2], seed=0))


def test_a_kernel_on_every_column_selects_no_columns():
    """GPyTorch copies the input's active columns on every call; over all columns it is
    skipped (``active_dims=None``), and the covariance is the same."""
    binary = SearchSpace([Binary(f"b{i}") for i in range(8)])
    dictionary = make_dictionary("diverse", 16, binary.cardinalities, seed=0)
    model = make_hed_model(*mixed_data(binary), binary, dictionary)
    assert model.covar_module.active_dims is None
    X = binary.sample(10, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model.covar_module(X).to_dense()
        model.covar_module.active_dims = torch.arange(8)
        torch.testing.assert_close(model.covar_module(X).to_dense(), full)
    mixed = make_hed_model(*mixed_data(MIXED), MIXED, make_dictionary("diverse", 16,
                                                                 MIXED.cardinalities, seed=0))
    hed = mixed.covar_module.kernels[0]
    assert hed.active_dims.tolist() == MIXED.discrete_dims


def gpytorch_loss(mll):
    """GPyTorch's ``-mll(model(X), y)``, the loss BoTorch's default closure computes."""
    model = mll.model
    return -mll(model(*model.train_inputs), model.train_targets)


def _graph_names(tensor):
    """Names of the autograd nodes ``tensor`` was computed through."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(next_node for next_node, _ in node.next_functions)
    return {type(node).__name__ for node in seen}


def _loss_and_gradient(model, loss):
    params = [p for p in model.parameters() if p.requires_grad]
    value = loss()
    return value.detach(), torch.autograd.grad(value, params)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("space", ["mixed", "binary"])
def test_the_fit_loss_equals_gpytorchs_negative_mll_in_value_and_gradient(dtype, space):
    space = MIXED if space == "mixed" else SearchSpace([Binary(f"b{i}") for i in range(30)])
    dictionary = make_dictionary("diverse", 16, space.cardinalities, seed=1)
    train_X, train_Y = (t.to(dtype) for t in mixed_data(space, n=25, seed=3))
    model = make_hed_model(train_X, train_Y, space, dictionary)
    with torch.no_grad():  # away from the initial values, where every lengthscale is equal
        for p in model.parameters():
            p.add_(0.3 * torch.rand(p.shape, generator=torch.Generator().manual_seed(8)).to(p))
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    graph = _graph_names(get_loss_closure(mll)())
    assert "MaternGPLossBackward" in graph  # the whole loss in one step
    ours = _loss_and_gradient(model, get_loss_closure(mll))  # BoTorch picks the model's hook
    gpytorch = _loss_and_gradient(model, lambda: gpytorch_loss(mll))
    tolerance = ({"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32
                 else {"rtol": 1e-12, "atol": 1e-12})  # rounding only
    torch.testing.assert_close(ours[0], gpytorch[0], **tolerance)
    for a, b in zip(ours[1], gpytorch[1], strict=True):
        torch.testing.assert_close(a, b, **tolerance)


def _assert_one_step_loss_equals_gpytorchs(model):
    """The fit loss is one closed-form step whose value and gradient equal GPyTorch's."""
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    assert "MaternGPLossBackward" in _graph_names(get_loss_closure(mll)())
    ours = _loss_and_gradient(model, get_loss_closure(mll))
    gpytorch = _loss_and_gradient(model, lambda: gpytorch_loss(mll))
    torch.testing.assert_close(ours[0], gpytorch[0], rtol=1e-12, atol=1e-12)
    for a, b in zip(ours[1], gpytorch[1], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_the_fit_loss_with_one_shared_lengthscale_equals_gpytorchs():
    """A HED kernel whose Matérn has one lengthscale for all ``m`` columns (no ARD)."""
    from gpytorch.kernels import MaternKernel

    from bodi.hed.kernel import HammingEmbeddingKernel
    from bodi.models.gp import make_gp

    space = SearchSpace([Binary(f"b{i}") for i in range(30)])
    dictionary = make_dictionary("diverse", 16, space.cardinalities, seed=1)
    ard = make_hed_model(*mixed_data(space, n=5), space, dictionary)
    prior = ard.covar_module.base_kernel.lengthscale_prior
    kernel = HammingEmbeddingKernel(dictionary, MaternKernel(nu=2.5, lengthscale_prior=prior))
    model = make_gp(*mixed_data(space, n=25, seed=3), kernel)
    with torch.no_grad():
        kernel.base_kernel.lengthscale = 2.0
    _assert_one_step_loss_equals_gpytorchs(model)


@pytest.mark.parametrize("space", ["mixed", "categorical"])
def test_the_fit_loss_of_the_hamming_kernel_equals_gpytorchs(space):
    from bodi.models.gp import make_gp, make_hamming_kernel

    space = MIXED if space == "mixed" else SearchSpace(
        [Categorical(f"c{i}", list(range(5))) for i in range(8)])
    model = make_gp(*mixed_data(space, n=25, seed=3), make_hamming_kernel(space))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.rand(p.shape, generator=torch.Generator().manual_seed(8)).to(p))
    _assert_one_step_loss_equals_gpytorchs(model)
    fit_model(model)
    assert set(lengthscales(model)) == ({"hamming", "ordinal"} if space is MIXED
                                         else {"hamming"})
    assert lengthscales(model)["hamming"].numel() == 1


@pytest.mark.parametrize("case", ["two outputs", "input transform"])
def test_a_model_outside_the_plain_case_gets_gpytorchs_loss(case):
    from botorch.models.transforms.input import Normalize

    from bodi.models.gp import make_hed_kernel

    space = SearchSpace([Binary(f"b{i}") for i in range(6)] + [Continuous("u", 0.0, 1.0)])
    dictionary = make_dictionary("diverse", 8, space.cardinalities, seed=1)
    train_X, train_Y = mixed_data(space, n=10)
    kwargs = {"input_transform": Normalize(d=space.dim)} if case == "input transform" else {}
    Y = torch.cat([train_Y, -train_Y], -1) if case == "two outputs" else train_Y
    model = FastSingleTaskGP(train_X, Y, covar_module=make_hed_kernel(space, dictionary), **kwargs)
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    ours = get_loss_closure(mll)()
    assert "GaussianLogDensityBackward" not in _graph_names(ours)
    torch.testing.assert_close(ours, gpytorch_loss(mll))
    assert ours.shape == ((2,) if case == "two outputs" else ())


@pytest.mark.parametrize("kernel", ["overlap", "matern", "matern with a gamma prior"])
def test_the_fit_loss_of_other_kernels_equals_gpytorchs(kernel):
    """Kernels other than the HED kernel: the overlap kernel (CASMOPOLITAN's) through GPyTorch,
    a Matérn-5/2 on every column (as ``botorch-mixed`` builds it) in one closed-form step, and
    with a prior other than LogNormal through the closed-form covariance only."""
    from gpytorch.priors import GammaPrior

    from bodi.models.baseline_kernels import make_overlap_kernel
    from bodi.models.gp import make_gp, matern_with_dim_scaled_prior

    covar = (make_overlap_kernel(MIXED) if kernel == "overlap"
             else matern_with_dim_scaled_prior(MIXED.dim, MIXED.dim))
    if kernel == "matern with a gamma prior":
        covar.register_prior("lengthscale_prior", GammaPrior(3.0, 6.0),
                             lambda m: m.lengthscale, lambda m, v: m._set_lengthscale(v))
    model = make_gp(*mixed_data(MIXED, n=20, seed=4), covar)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.2 * torch.rand(p.shape, generator=torch.Generator().manual_seed(2)).to(p))
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    graph = _graph_names(get_loss_closure(mll)())
    assert ("MaternGPLossBackward" in graph) == (kernel == "matern")
    assert ("Matern52CovarianceBackward" in graph) == (kernel == "matern with a gamma prior")
    ours = _loss_and_gradient(model, get_loss_closure(mll))
    gpytorch = _loss_and_gradient(model, lambda: gpytorch_loss(mll))
    torch.testing.assert_close(ours[0], gpytorch[0])
    for a, b in zip(ours[1], gpytorch[1], strict=True):
        torch.testing.assert_close(a, b)


def test_the_product_kernels_fit_loss_equals_gpytorchs_and_keeps_both_lengthscales():
    """``hed*hamming``: the one-lengthscale factor's loss inputs are its pairwise distances
    (computed once per fit), the HED factor's its embedding; value and gradient as GPyTorch's."""
    from bodi.models.gp import make_gp, make_hed_hamming_kernel

    dictionary = make_dictionary("diverse", 6, MIXED.cardinalities, seed=1)
    model = make_gp(*mixed_data(MIXED, n=25, seed=4), make_hed_hamming_kernel(MIXED, dictionary))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.rand(p.shape, generator=torch.Generator().manual_seed(9)).to(p))
    _assert_one_step_loss_equals_gpytorchs(model)
    fit_model(model)
    scales = lengthscales(model)
    assert set(scales) == {"embedding", "hamming", "ordinal"}
    assert scales["embedding"].numel() == 6 and scales["hamming"].numel() == 1


def test_leave_one_out_density_equals_refitting_without_each_point():
    """The closed form equals the GP conditioned on the other n - 1 points (same
    hyperparameters), point by point, in the outcome's own units."""
    from torch.distributions import Normal

    from bodi.models.gp import leave_one_out_log_densities, leave_one_out_log_likelihood

    dictionary = make_dictionary("diverse", 16, MIXED.cardinalities, seed=1)
    train_X, train_Y = mixed_data(MIXED, n=15)
    model = fit_model(make_hed_model(train_X, 3.0 * train_Y + 7.0, MIXED, dictionary))
    X, y = model.train_inputs[0], model.train_targets
    shift = model.outcome_transform.means.reshape(-1)[0]
    scale = model.outcome_transform.stdvs.reshape(-1)[0]
    with torch.no_grad():
        K = model.covar_module(X).to_dense() + model.likelihood.noise * torch.eye(len(y),
                                                                                   dtype=y.dtype)
        m = model.mean_module(X)
        densities = []
        for i in range(len(y)):
            rest = [j for j in range(len(y)) if j != i]
            weights = torch.linalg.solve(K[rest][:, rest], K[rest, i])
            mean = m[i] + weights @ (y[rest] - m[rest])
            variance = K[i, i] - weights @ K[rest, i]
            predictive = Normal(shift + scale * mean, scale * variance.sqrt())
            densities.append(predictive.log_prob(3.0 * train_Y[i, 0] + 7.0))
    expected = torch.stack(densities)
    assert torch.allclose(leave_one_out_log_densities(model), expected, rtol=1e-6)
    assert torch.allclose(leave_one_out_log_likelihood(model), expected.mean(), rtol=1e-6)
    assert not model.training  # still ready to predict


def test_the_gp_has_botorchs_lognormal_noise_prior_and_fits_through_the_fast_loss():
    from gpytorch.priors import LogNormalPrior

    from bodi.models.gp import make_gp, make_hed_kernel

    dictionary = make_dictionary("diverse", 16, MIXED.cardinalities, seed=1)
    X, Y = mixed_data(MIXED, n=16)
    model = fit_model(make_gp(X, Y, make_hed_kernel(MIXED, dictionary)))
    assert isinstance(model.likelihood.noise_covar.noise_prior, LogNormalPrior)
    assert model._matern_loss_plan() is not None


def test_a_warm_started_fit_starts_from_the_source_and_stops_early():
    from bodi.models.gp import copy_hyperparameters, warm_started_fits

    dictionary = make_dictionary("diverse", 16, MIXED.cardinalities, seed=1)
    train_X, train_Y = mixed_data(MIXED, n=15)
    source = fit_model(make_hed_model(train_X, train_Y, MIXED, dictionary))
    copied = make_hed_model(train_X[:12], train_Y[:12], MIXED, dictionary)
    copy_hyperparameters(source, copied)
    for (name, a), (_, b) in zip(source.named_parameters(), copied.named_parameters(),
                                 strict=True):
        assert torch.equal(a, b), name
    with warm_started_fits(source, maxiter=1):
        warm = fit_model(make_hed_model(train_X[:12], train_Y[:12], MIXED, dictionary))
    cold = fit_model(make_hed_model(train_X[:12], train_Y[:12], MIXED, dictionary))
    start = lengthscales(source)["embedding"]
    # one iteration from the source moves less than a whole fit from the prior's mode
    assert (lengthscales(warm)["embedding"] - start).abs().max() < (
        lengthscales(cold)["embedding"] - start).abs().max()


def test_the_first_order_term_learns_an_additive_function_the_distance_kernel_cannot():
    """``with_first_order``: on ``f(x) = sum_i w_i x_i`` over 40 bits the GP with the
    first-order term predicts unseen points far better than the Hamming-distance kernel alone
    (which cannot tell which bits differ), and its output scale is fitted; a space without
    discrete parameters keeps its kernel."""
    from bodi.hed.kernel import FirstOrderKernel
    from bodi.models.gp import make_gp, make_hamming_kernel, with_first_order

    space = SearchSpace([Binary(f"b{i}") for i in range(40)])
    g = torch.Generator().manual_seed(0)
    w = torch.randn(40, generator=g, dtype=torch.float64)
    X, X_test = space.sample(60, generator=g), space.sample(200, generator=g)
    errors = {}
    for first_order in (False, True):
        covar = make_hamming_kernel(space)
        if first_order:
            covar = with_first_order(space, covar)
        model = fit_model(make_gp(X, (X @ w).unsqueeze(-1), covar))
        with torch.no_grad():
            mean = model.posterior(X_test).mean.squeeze(-1)
        errors[first_order] = float((mean - X_test @ w).pow(2).mean().sqrt())
    assert errors[True] < 0.5 * errors[False]
    scaled = [k for k in model.covar_module.modules() if isinstance(k, FirstOrderKernel)]
    assert len(scaled) == 1
    continuous = SearchSpace([Continuous("u", 0.0, 1.0)])
    ordinal = make_hamming_kernel(continuous)
    assert with_first_order(continuous, ordinal) is ordinal


def test_the_first_order_sums_fit_loss_is_one_step_equal_to_gpytorchs():
    """``a (HED x Hamming x ordinal) + b (first order)``: the sum's loss in one closed-form
    step (the fixed first-order covariance computed once), value and gradient, output scales
    included, equal to GPyTorch's; the fit moves both scales."""
    from bodi.models.gp import make_gp, make_hed_hamming_kernel, with_first_order

    dictionary = make_dictionary("diverse", 6, MIXED.cardinalities, seed=1)
    covar = with_first_order(MIXED, make_hed_hamming_kernel(MIXED, dictionary))
    model = make_gp(*mixed_data(MIXED, n=25, seed=4), covar)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.rand(p.shape, generator=torch.Generator().manual_seed(9)).to(p))
    _assert_one_step_loss_equals_gpytorchs(model)
    before = [float(k.outputscale) for k in covar.kernels]
    fit_model(model)
    assert all(float(k.outputscale) != b for k, b in zip(covar.kernels, before, strict=True))


def test_without_first_order_keeps_the_sums_mean_at_unit_prior_variance():
    """``without_first_order``: with the first-order scale set to 0, the sum ``s_0 k + sigma^2
    I`` and the rescaled kernel alone ``k + sigma^2 / s_0 I`` predict the same mean, and the
    latter's variance is the former's divided by ``s_0``."""
    from bodi.models.gp import (
        make_gp,
        make_hed_hamming_kernel,
        with_first_order,
        without_first_order,
    )

    dictionary = make_dictionary("diverse", 6, MIXED.cardinalities, seed=1)
    X, Y = mixed_data(MIXED, n=25, seed=4)
    model = fit_model(make_gp(X, Y, with_first_order(MIXED, make_hed_hamming_kernel(
        MIXED, dictionary))))
    main, first_order = model.covar_module.kernels
    first_order.outputscale = 1e-12
    model.eval()
    alone = without_first_order(model, X, Y)
    assert alone.covar_module is not main.base_kernel and not alone.training
    test = MIXED.sample(7, generator=torch.Generator().manual_seed(5)).unsqueeze(1)
    with torch.no_grad():
        summed, rescaled = model.posterior(test), alone.posterior(test)
    torch.testing.assert_close(rescaled.mean, summed.mean, rtol=1e-6, atol=1e-8)
    torch.testing.assert_close(rescaled.variance * main.outputscale.detach(), summed.variance,
                               rtol=1e-6, atol=1e-10)


def test_the_joint_posteriors_gradient_equals_singletaskgps():
    """A mixed space's continuous columns are climbed by gradient beside pending points: the
    joint posterior's mean and covariance have GPyTorch's gradient."""
    dictionary = make_dictionary("diverse", 16, MIXED.cardinalities, seed=5)
    model = fit_model(make_hed_model(*mixed_data(MIXED, n=20), MIXED, dictionary), maxiter=20)
    batch = MIXED.sample(8, generator=torch.Generator().manual_seed(9)).view(2, 4, -1)
    gradients = []
    for posterior in (model.posterior, lambda X: SingleTaskGP.posterior(model, X)):
        X = batch.clone().requires_grad_(True)
        result = posterior(X)
        (result.mean.sum() + result.covariance_matrix.sum()).backward()
        gradients.append(X.grad)
    assert gradients[0].abs().sum() > 0
    torch.testing.assert_close(gradients[0], gradients[1])


def test_a_fit_on_another_dictionary_starts_from_the_median_lengthscale_unless_worse():
    from bodi.models.gp import _start_from

    train_X, train_Y = mixed_data(MIXED, n=15)
    source = fit_model(make_hed_model(train_X, train_Y, MIXED, make_dictionary(
        "diverse", 16, MIXED.cardinalities, seed=1)))
    other = make_dictionary("diverse", 16, MIXED.cardinalities, seed=2)

    def model(noise: float):
        gp = make_hed_model(train_X, train_Y, MIXED, other)
        with torch.no_grad():
            gp.likelihood.noise_covar.noise = torch.tensor([noise], dtype=train_X.dtype)
        return gp

    poor = model(5.0)  # a start far worse than the source's values
    assert _start_from(source, poor, same_inputs=False)
    start, given = lengthscales(poor)["embedding"], lengthscales(source)["embedding"]
    assert torch.allclose(start, start.median().expand_as(start))
    assert torch.allclose(start.median(), given.median())
    assert torch.allclose(poor.likelihood.noise, source.likelihood.noise)
    # values that fit these data worse than the model's own are not started from
    good = fit_model(model(1e-2))
    before = {n: p.detach().clone() for n, p in good.named_parameters()}
    assert not _start_from(model(5.0), good, same_inputs=False)
    assert all(torch.equal(p, before[n]) for n, p in good.named_parameters())
