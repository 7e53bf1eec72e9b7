"""The fit loss's pieces that are computed once per fit give the values computed each time."""

import pytest
import torch
from gpytorch.priors import LogNormalPrior

from bodi.models.fit_loss import (
    _lognormal_log_density,
    _matern52,
    _matern52_lengthscale_gradient,
    centred_inputs,
    lognormal_terms,
)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_centred_inputs_give_the_covariance_and_gradient_of_the_inputs_bit_for_bit(dtype):
    g = torch.Generator().manual_seed(0)
    Z = torch.randint(0, 40, (30, 16), generator=g).to(dtype)
    lengthscale = (torch.rand(1, 16, generator=g) * 10 + 1).to(dtype)
    G = torch.randn(30, 30, generator=g).to(dtype)
    G = G + G.T
    K, saved = _matern52(Z, lengthscale)
    K_once, saved_once = _matern52(centred_inputs(Z), lengthscale)
    assert torch.equal(K, K_once)
    assert torch.equal(_matern52_lengthscale_gradient(G, saved),
                       _matern52_lengthscale_gradient(G, saved_once))


def test_lognormal_terms_give_the_priors_log_density():
    prior = LogNormalPrior(torch.tensor(1.4, dtype=torch.float64),
                           torch.tensor(1.7, dtype=torch.float64))
    x = torch.tensor([0.3, 2.0, 15.0], dtype=torch.float64, requires_grad=True)
    value, gradient = _lognormal_log_density(x.detach(), lognormal_terms(prior))
    expected = prior.log_prob(x).sum()
    expected.backward()
    assert torch.allclose(value, expected, rtol=1e-14, atol=0)
    assert torch.allclose(gradient, x.grad, rtol=1e-12, atol=0)
    assert lognormal_terms(None) is None
