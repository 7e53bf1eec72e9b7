"""``SingleTaskGP`` with a one-pass posterior for batches of single points and the closed-form
fit loss: the exact GP of every bodi surrogate (HED, Hamming, overlap, diffusion) and of the
Bounce baseline."""

from __future__ import annotations

from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models import SingleTaskGP
from botorch.posteriors import GPyTorchPosterior
from gpytorch import settings as gpytorch_settings
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import AdditiveKernel, Kernel, MaternKernel, ProductKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.likelihoods.noise_models import HomoskedasticNoise
from gpytorch.means import ConstantMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import LogNormalPrior
from linear_operator.operators import DenseLinearOperator, DiagLinearOperator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from bodi.models.fit_loss import (
    GaussianLogDensity,
    MaternGPLoss,
    dense_train_covariance,
    is_embedding_kernel,
    is_plain_matern52,
    lognormal_terms,
    loss_inputs,
    matern_of,
)


def scaled_sum(covar: Kernel) -> tuple[ScaleKernel, ScaleKernel] | None:
    """``(a k, b f)`` when ``covar`` is ``a k + b f`` (two ``ScaleKernel`` of one output scale
    each, ``f`` without hyperparameters, as :func:`bodi.models.gp.with_first_order` builds
    it); ``None`` otherwise."""
    if type(covar) is not AdditiveKernel or len(covar.kernels) != 2:
        return None
    main, fixed = covar.kernels
    if not all(type(k) is ScaleKernel and not k.batch_shape for k in (main, fixed)):
        return None
    if any(True for _ in fixed.base_kernel.parameters()):
        return None
    return main, fixed


#: the most points of a ``b x q x dim`` batch, beside those every batch shares, whose joint
#: posterior :meth:`FastSingleTaskGP.posterior` computes itself (a suggestion beside pending
#: points, behind qLogNEI's baseline); larger joint batches keep GPyTorch's lazy computation
MAX_FAST_JOINT_POINTS = 8


def points_shared_by_batch(X: Tensor) -> Tensor | None:
    """Which of the ``q`` points of a batch of joint posteriors (``b x q x dim``, any batch
    shape with more than one batch) every batch holds in the same place (``q`` booleans), when
    some are and some are not; else ``None``. An acquisition function beside pending points
    appends the same pending points to every candidate, and qLogNEI puts its baseline in front
    of them: those points' cross-covariances need computing once, not ``b`` times."""
    if X.ndim < 3 or X.shape[:-2].numel() < 2 or X.shape[-2] < 2:
        return None
    flat = X.reshape(-1, *X.shape[-2:])
    shared = (flat == flat[:1]).all(-1).all(0)
    return shared if bool(shared.any()) and not bool(shared.all()) else None


class FastSingleTaskGP(SingleTaskGP):
    """``SingleTaskGP`` whose posterior over a batch of a few points is computed in one pass.

    Acquisition optimization evaluates ``b x q x dim`` inputs (``b`` candidates, each of ``q``
    points: one, or one beside the pending points). GPyTorch would treat them as ``b``
    separate problems and rebuild the ``n`` training inputs in every one of them (and select
    every kernel's columns of them), and a flat ``b q x dim`` call would build the
    ``b q x b q`` test covariance. Here only what the acquisition function uses is computed,
    with one cross-covariance ``k_*`` of all ``b q`` points against the training inputs:

        mean = m + k_*^T alpha,      var = k(x, x) - ||L^{-1} k_*||^2,

    and for ``1 < q <= MAX_FAST_JOINT_POINTS`` each batch's joint covariance
    ``k(X_b, X_b) - (L^{-1} k_*b)^T (L^{-1} k_*b)`` (``q x q``),

    with ``L L^T = K + sigma^2 I`` and ``alpha = (K + sigma^2 I)^{-1} (y - m)`` cached after the
    fit. Points that every batch holds in the same place (pending points, qLogNEI's baseline;
    :func:`points_shared_by_batch`) are measured once and the joint covariance is built in
    block form, so only the other points count against ``MAX_FAST_JOINT_POINTS``. Values
    equal ``SingleTaskGP.posterior`` (tested); larger joint batches use the parent method.
    """

    _marginal_cache: tuple[Tensor, Tensor] | None = None
    _loss_plan: tuple | None = None
    _loss_input_cache: tuple | None = None
    _added_loss_terms_absent: bool | None = None

    def compute_custom_loss(self, mll: ExactMarginalLogLikelihood, **kwargs: Any) -> Tensor:
        """The loss ``fit_gpytorch_mll`` minimises: ``-mll(model(X), y)``, i.e.

            -(log N(y; m, K + sigma^2 I) + sum of the priors' log densities) / n,

        computed without GPyTorch's lazy tensors and with the closed-form gradient of
        :class:`GaussianLogDensity` (BoTorch calls this hook when the model defines it). Value
        and gradient equal GPyTorch's (tested); a model outside the plain case (batched, with an
        input transform or extra loss terms) gets GPyTorch's computation.
        """
        y = self.train_targets
        plain = (
            y.ndim == 1 and getattr(self, "input_transform", None) is None
            and type(mll) is ExactMarginalLogLikelihood and mll.model is self
            and self._without_added_loss_terms()
            and gpytorch_settings.observation_nan_policy.value() == "ignore" and not kwargs
        )
        if not plain:
            inputs = (self.transform_inputs(X=x) for x in self.train_inputs)
            return -mll(self(*self.train_inputs), y, *inputs, **kwargs)
        X = self.train_inputs[0]
        plan = None if X.requires_grad else self._matern_loss_plan()
        if plan is not None:
            factors, priors, noise_prior, scaled = plan
            inputs, fixed = self._loss_inputs(factors, scaled, X)
            lengthscales = (matern_of(kernel).lengthscale for kernel in factors)
            scales = (None, None) if scaled is None else (scaled[0].outputscale,
                                                          scaled[1].outputscale)
            return MaternGPLoss.apply(y, inputs, priors, noise_prior, fixed,
                                       self.likelihood.noise, self.mean_module.constant,
                                       *scales, *lengthscales)
        log_p = GaussianLogDensity.apply(*self._train_covariance_and_residual())
        for _, module, prior, closure, _ in self.named_priors():
            log_p = log_p + prior.log_prob(closure(module)).sum()
        return -log_p / y.shape[-1]

    def _without_added_loss_terms(self) -> bool:
        """Whether no module of the model has an added loss term (GPyTorch's
        ``added_loss_terms``, which a forward pass may register), found once per training
        phase: the fit loss computed here makes no forward pass."""
        if self._added_loss_terms_absent is None:  # ``train()`` forgets it
            self._added_loss_terms_absent = not list(self.added_loss_terms())
        return self._added_loss_terms_absent

    def _matern_loss_plan(self) -> tuple | None:
        """The covariance's factors, their lengthscale priors' and the noise's prior's
        :func:`lognormal_terms`, and the scaled sum's two ``ScaleKernel`` (or ``None``), when
        :class:`MaternGPLoss` computes the fit loss: every factor a plain Matérn-5/2 (on the
        HED embedding or on columns), their product alone or, scaled, plus a scaled kernel
        without hyperparameters (:func:`scaled_sum`), a ``ConstantMean`` and a homoskedastic
        Gaussian likelihood, and no priors but
        LogNormal ones on those lengthscales and on the noise. ``None`` otherwise."""
        if self._loss_plan is None:  # once per training phase (``train()`` forgets it)
            self._loss_plan = (self._find_matern_loss_plan(),)
        return self._loss_plan[0]

    def _loss_inputs(self, factors: tuple[Kernel, ...], scaled: tuple | None,
                     X: Tensor) -> tuple[tuple, Tensor | None]:
        """The factors' :func:`loss_inputs` of the training inputs ``X`` and the fixed
        kernel's ``n x n`` covariance (``None`` without one), computed once per training
        phase while ``X`` is the same, unmodified tensor (they depend on nothing that the fit
        changes)."""
        cached = self._loss_input_cache
        if cached is None or cached[0] is not X or cached[1] != X._version:
            fixed = None
            if scaled is not None:
                with torch.no_grad():
                    fixed = scaled[1].base_kernel(X).to_dense()
            cached = (X, X._version, tuple(loss_inputs(kernel, X) for kernel in factors), fixed)
            self._loss_input_cache = cached
        return cached[2], cached[3]

    def _find_matern_loss_plan(self) -> tuple | None:
        covar, noise = self.covar_module, getattr(self.likelihood, "noise_covar", None)
        scaled = scaled_sum(covar)
        if scaled is not None:
            covar = scaled[0].base_kernel
        factors = tuple(covar.kernels) if type(covar) is ProductKernel else (covar,)
        if (type(self.mean_module) is not ConstantMean or type(noise) is not HomoskedasticNoise
                or type(self.likelihood) is not GaussianLikelihood
                or noise.noise.numel() != 1 or self.mean_module.constant.numel() != 1
                or not all((type(k) is MaternKernel or is_embedding_kernel(k))
                           and is_plain_matern52(matern_of(k)) for k in factors)):
            return None
        factor_of = {id(matern_of(k)): i for i, k in enumerate(factors)}  # Matérn -> factor
        priors: list[LogNormalPrior | None] = [None] * len(factors)
        noise_prior = None
        for name, module, prior, _, _ in self.named_priors():
            leaf = name.rsplit(".", 1)[-1]
            if type(prior) is not LogNormalPrior or prior.loc.numel() != 1 or (
                    prior.scale.numel() != 1):
                return None
            if module is noise and leaf == "noise_prior":
                noise_prior = prior
            elif leaf == "lengthscale_prior" and id(module) in factor_of:
                priors[factor_of[id(module)]] = prior
            else:
                return None
        return (factors, tuple(lognormal_terms(prior) for prior in priors),
                lognormal_terms(noise_prior), scaled)

    def _train_covariance_and_residual(self) -> tuple[Tensor, Tensor]:
        """``K + sigma^2 I`` (``n x n``) and ``y - m`` (``n``) of the training data."""
        X = self.train_inputs[0]
        K = dense_train_covariance(self.covar_module, X)
        noise = self.likelihood.noise.reshape(-1).expand(X.shape[-2])
        return K + torch.diag_embed(noise), self.train_targets - self.mean_module(X)

    def train(self, mode: bool = True) -> FastSingleTaskGP:
        if mode or self.training:  # hyperparameters or data may have changed in training mode;
            self._marginal_cache = None  # eval() while already in eval mode keeps the cache
            self._loss_plan = None
            self._loss_input_cache = None
            self._added_loss_terms_absent = None
        return super().train(mode)

    def _against_training_inputs(self, flat: Tensor, L: Tensor,
                                 alpha: Tensor) -> tuple[Tensor, Tensor]:
        """The posterior mean ``m + k_*^T alpha`` (``N``) of ``N x dim`` points and
        ``v = L^{-1} k_*`` (``n x N``), from their one cross-covariance with the training
        inputs."""
        k_star = self.covar_module(flat, self.train_inputs[0]).to_dense()  # N x n
        mean = self.mean_module(flat) + k_star @ alpha
        return mean, torch.linalg.solve_triangular(L, k_star.transpose(-1, -2), upper=False)

    def _joint_beside_shared_points(self, X: Tensor, shared: Tensor, L: Tensor,
                                    alpha: Tensor) -> tuple[Tensor, Tensor]:
        """The joint posterior's mean (``batch x q``) and covariance (``batch x q x q``) of
        ``X`` (``batch x q x dim``) whose points ``shared`` (``q`` booleans) are the same in
        every batch: in block form, with ``S`` the shared points and ``R_b`` batch ``b``'s
        others, and ``W = L^{-1} k(., X_train)^T``,

            [[k(S, S) - W_S^T W_S,      k(S, R_b) - W_S^T W_Rb ],
             [k(R_b, S) - W_Rb^T W_S,   k(R_b, R_b) - W_Rb^T W_Rb]],

        so the shared points are embedded and measured against the training inputs once,
        not once per batch; then put back in their places (a permutation, exact)."""
        batch, dim = X.shape[:-2], X.shape[-1]
        points = X.reshape(-1, *X.shape[-2:])[0][shared]  # S x dim
        others = X[..., ~shared, :]  # batch x r x dim
        flat_mean, v = self._against_training_inputs(
            torch.cat([points, others.reshape(-1, dim)]), L, alpha)
        W = v.transpose(-1, -2)  # (S + B r) x n
        S, r = len(points), others.shape[-2]
        W_S, W_R = W[:S], W[S:].reshape(*batch, r, -1)
        cross = self.covar_module(others, points.expand(*batch, S, dim)).to_dense() - (
            W_R @ W_S.transpose(-1, -2))  # batch x r x S
        top = torch.cat([(self.covar_module(points).to_dense() - W_S @ W_S.transpose(-1, -2))
                         .expand(*batch, S, S), cross.transpose(-1, -2)], -1)
        bottom = torch.cat([cross, self.covar_module(others).to_dense()
                            - W_R @ W_R.transpose(-1, -2)], -1)
        order = torch.cat([shared.nonzero().squeeze(-1), (~shared).nonzero().squeeze(-1)])
        place = torch.argsort(order)  # where each of the q points is in the block form
        mean = torch.cat([flat_mean[:S].expand(*batch, S), flat_mean[S:].reshape(*batch, r)],
                         -1)[..., place]
        covariance = torch.cat([top, bottom], -2)[..., place, :][..., place]
        return mean, covariance

    def _fast_posterior(self, X: Tensor, shared: Tensor | None, L: Tensor, alpha: Tensor
                        ) -> tuple[Tensor, DenseLinearOperator | DiagLinearOperator]:
        """The posterior mean (``batch x q``) and covariance of ``X`` (``batch x q x dim``)
        from the training inputs' Cholesky factor ``L`` and ``alpha``: the marginals for
        ``q = 1``, else each batch's joint covariance (beside its ``shared`` points, if any)."""
        batch, q = X.shape[:-2], X.shape[-2]
        if shared is not None:
            mean, covariance = self._joint_beside_shared_points(X, shared, L, alpha)
            return mean, DenseLinearOperator(covariance)
        flat = X.reshape(-1, X.shape[-1])
        mean, v = self._against_training_inputs(flat, L, alpha)
        if q == 1:
            prior_variance = self.covar_module(flat, diag=True)
            floor = gpytorch_settings.min_variance.value(prior_variance.dtype)  # 1e-10
            variance = (prior_variance - v.pow(2).sum(-2)).clamp_min(floor)
            return mean.reshape(*batch, q), DiagLinearOperator(variance.reshape(*batch, 1))
        V = v.transpose(-1, -2).reshape(*batch, q, -1)  # ... x q x n
        return mean.reshape(*batch, q), DenseLinearOperator(
            self.covar_module(X).to_dense() - V @ V.transpose(-1, -2))

    def _cache(self) -> tuple[Tensor, Tensor]:
        if self._marginal_cache is None:
            with torch.no_grad():
                covariance, residual = self._train_covariance_and_residual()
                L = psd_safe_cholesky(covariance)
                alpha = torch.cholesky_solve(residual.unsqueeze(-1), L).squeeze(-1)
            self._marginal_cache = (L, alpha)
        return self._marginal_cache

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
    ) -> GPyTorchPosterior:
        # shared points are measured once, so their gradient would reach one batch's copy
        shared = None if X.requires_grad else points_shared_by_batch(X)
        varying = X.shape[-2] if shared is None else int((~shared).sum())
        if X.ndim < 3 or varying > MAX_FAST_JOINT_POINTS or output_indices is not None or (
            observation_noise is not False
        ):
            return super().posterior(X, output_indices, observation_noise, posterior_transform)
        self.eval()
        L, alpha = self._cache()
        with gpytorch_settings.lazily_evaluate_kernels(False):  # each kernel is read densely
            mean, covariance = self._fast_posterior(X, shared, L, alpha)
        posterior = GPyTorchPosterior(MultivariateNormal(mean, covariance))
        if hasattr(self, "outcome_transform"):
            posterior = self.outcome_transform.untransform_posterior(posterior, X=X)
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior
