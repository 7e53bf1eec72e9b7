"""Extra observation noise on marked inputs: the likelihood, the fit, the posterior."""

import torch
from botorch.models import SingleTaskGP

from bodi.models.gp import fit_model, leave_one_out_log_densities, make_gp, make_hamming_kernel
from bodi.models.noise import MarkedInputsNoise, observation_noise
from bodi.space import Binary, SearchSpace


def _data(n=30, d=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randint(0, 2, (n, d), generator=g).to(torch.float64)
    y = X[:, :4].sum(-1, keepdim=True) + 0.01 * torch.randn(n, 1, generator=g, dtype=X.dtype)
    return SearchSpace([Binary(f"x{i}") for i in range(d)]), X, y


def test_marked_rows_get_sigma2_plus_tau2_and_the_others_sigma2():
    space, X, y = _data()
    model = make_gp(X, y, make_hamming_kernel(space), noisier_inputs=X[:5])
    noise = model.likelihood.noise_covar
    assert isinstance(noise, MarkedInputsNoise)
    diagonal = observation_noise(model.likelihood, X)
    sigma2, tau2 = model.likelihood.noise.reshape(()), noise.extra_noise.reshape(())
    assert torch.allclose(diagonal[:5], (sigma2 + tau2).expand(5))
    assert torch.allclose(diagonal[5:], sigma2.expand(25))


def test_the_fit_learns_a_large_extra_noise_for_marked_rows_of_unrelated_values():
    space, X, y = _data()
    y[:8] = 5.0 * torch.randn(8, 1, generator=torch.Generator().manual_seed(1), dtype=y.dtype)
    model = fit_model(make_gp(X, y, make_hamming_kernel(space), noisier_inputs=X[:8]))
    assert float(model.likelihood.noise_covar.extra_noise.detach()) > 100 * float(
        model.likelihood.noise.detach())
    clean = fit_model(make_gp(X, y, make_hamming_kernel(space)))
    # the marked rows barely move the posterior at the clean rows: it predicts them better
    densities = leave_one_out_log_densities(model)[8:].mean()
    assert densities > leave_one_out_log_densities(clean)[8:].mean()


def test_the_fast_posterior_equals_gpytorchs_with_the_marked_noise():
    space, X, y = _data(seed=2)
    model = fit_model(make_gp(X, y, make_hamming_kernel(space), noisier_inputs=X[:6]))
    test = torch.randint(0, 2, (7, 1, 12), generator=torch.Generator().manual_seed(3)).double()
    fast = model.posterior(test)
    reference = SingleTaskGP.posterior(model, test)
    assert torch.allclose(fast.mean, reference.mean, atol=1e-8)
    assert torch.allclose(fast.variance, reference.variance, atol=1e-8)


def test_the_one_step_fit_loss_with_marked_rows_equals_gpytorchs():
    from botorch.optim.closures import get_loss_closure
    from gpytorch.mlls import ExactMarginalLogLikelihood

    space, X, y = _data(seed=4)
    model = make_gp(X, y, make_hamming_kernel(space), noisier_inputs=X[:7])
    with torch.no_grad():
        model.likelihood.noise_covar.raw_extra_noise.fill_(0.4)
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    params = [p for p in model.parameters() if p.requires_grad]
    assert any(p is model.likelihood.noise_covar.raw_extra_noise for p in params)
    ours = get_loss_closure(mll)()
    assert type(ours.grad_fn).__name__ == "MaternGPLossBackward"
    reference = -mll(model(X), model.train_targets, X)
    torch.testing.assert_close(ours, reference, rtol=1e-12, atol=1e-12)
    for a, b in zip(torch.autograd.grad(ours, params), torch.autograd.grad(reference, params),
                    strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
