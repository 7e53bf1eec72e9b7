"""Observation noise that is larger on some marked inputs: trust some trials less.

The model's likelihood is ``y_i = f(x_i) + e_i`` with ``e_i ~ N(0, sigma^2 + tau^2 [x_i in M])``:
the usual homoskedastic noise ``sigma^2`` plus an extra variance ``tau^2`` on the trials whose
inputs are among the marked points ``M`` (``r x dim``; BODi marks its random initial design
with ``design_noise=True``). ``tau^2`` is a hyperparameter fitted with the others by the
marginal likelihood, so the data decide how far the marked trials are trusted: near zero when
they agree with the rest (the model is then the usual GP), large when they do not (the GP then
all but ignores them, as if they were left out).
"""

from __future__ import annotations

from typing import Any

import torch
from gpytorch.constraints import Positive
from gpytorch.likelihoods.noise_models import HomoskedasticNoise, Noise
from linear_operator.operators import DiagLinearOperator
from torch import Tensor

#: ``tau^2`` before the fit, in the standardized outcome's units
INITIAL_EXTRA_NOISE = 0.01


class MarkedInputsNoise(Noise):
    """``sigma^2 + tau^2 [x in M]`` per training point: ``base`` gives ``sigma^2`` (its prior
    and constraint as they are), ``marked`` is ``M`` (``r x dim``, matched exactly), and
    ``tau^2 > 0`` is the parameter ``raw_extra_noise`` (no prior). ``noise`` is ``sigma^2``,
    as code reading a homoskedastic likelihood's noise expects."""

    def __init__(self, base: HomoskedasticNoise, marked: Tensor) -> None:
        super().__init__()
        self.base = base
        self.register_buffer("marked", marked)
        self.register_parameter(
            "raw_extra_noise", torch.nn.Parameter(torch.zeros(1, dtype=marked.dtype)))
        self.register_constraint("raw_extra_noise", Positive())
        with torch.no_grad():
            self.raw_extra_noise.copy_(
                self.raw_extra_noise_constraint.inverse_transform(
                    torch.tensor(INITIAL_EXTRA_NOISE, dtype=marked.dtype)))

    @property
    def noise(self) -> Tensor:
        return self.base.noise

    @property
    def extra_noise(self) -> Tensor:
        """``tau^2`` (shape ``1``)."""
        return self.raw_extra_noise_constraint.transform(self.raw_extra_noise)

    def is_marked(self, X: Tensor) -> Tensor:
        """``... x n`` booleans: which rows of ``X`` (``... x n x dim``) are marked points."""
        return exact_matches(X, self.marked.to(X)).any(-1)

    def forward(self, *params: Any, shape: torch.Size | None = None,
                **kwargs: Any) -> DiagLinearOperator:
        X = params[0] if params and torch.is_tensor(params[0]) else (
            params[0][0] if params else None)
        base = self.base(*params, shape=shape, **kwargs).diagonal(dim1=-1, dim2=-2)
        if X is None or X.shape[-1] != self.marked.shape[-1]:
            return DiagLinearOperator(base)
        return DiagLinearOperator(base + self.extra_noise * self.is_marked(X).to(base))


def exact_matches(X: Tensor, points: Tensor) -> Tensor:
    """``... x n x r`` booleans: whether row ``i`` of ``X`` (``... x n x dim``) equals point
    ``j`` of ``points`` (``r x dim``) exactly."""
    return torch.cdist(X, points.expand(*X.shape[:-2], *points.shape), p=1) == 0


def observation_noise(likelihood: Any, X: Tensor) -> Tensor:
    """``n`` observation-noise variances of a Gaussian likelihood at the training inputs
    ``X`` (``n x dim``): ``sigma^2`` each for a homoskedastic one."""
    noise_covar = getattr(likelihood, "noise_covar", None)
    if isinstance(noise_covar, MarkedInputsNoise):
        return noise_covar(X).diagonal(dim1=-1, dim2=-2)
    return likelihood.noise.reshape(-1).expand(X.shape[-2])
