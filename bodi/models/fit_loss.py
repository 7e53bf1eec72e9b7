"""The fit loss of a GP in closed form: ``-log N(y; c, K + s2 I)`` minus its priors, and the
gradient, without GPyTorch's lazy tensors (docs/speed.md).

:class:`GaussianLogDensity` is the Gaussian log density of any covariance with the gradient of
eq. 5.9 (Rasmussen & Williams); :class:`MaternGPLoss` the whole loss of a GP whose covariance
is a product of Matérn-5/2 factors (each on columns or on an embedding), in one autograd
node. :class:`bodi.models.single_task.FastSingleTaskGP` uses them when it can.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from gpytorch.kernels import Kernel, MaternKernel, ProductKernel
from gpytorch.priors import LogNormalPrior
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor


def _gaussian_log_density(K: Tensor, r: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``log N(r; 0, K)`` for an ``n x n`` covariance ``K`` and an ``n`` residual ``r``, with
    the Cholesky factor ``L`` and ``alpha = K^{-1} r`` (``n x 1``). ``K`` is factored with
    GPyTorch's ``psd_safe_cholesky``, which adds jitter when needed, as in
    ``MultivariateNormal.log_prob``."""
    L = psd_safe_cholesky(K)
    alpha = torch.cholesky_solve(r.unsqueeze(-1), L)
    quadratic = (r.unsqueeze(-1) * alpha).sum()
    value = -0.5 * quadratic - L.diagonal().log().sum() - 0.5 * r.shape[-1] * math.log(
        2 * math.pi)
    return value, L, alpha


def _gaussian_log_density_gradient(L: Tensor, alpha: Tensor) -> Tensor:
    """``d log N(r; 0, K) / dK = (alpha alpha^T - K^{-1}) / 2`` (Rasmussen & Williams, eq. 5.9),
    ``n x n``, from :func:`_gaussian_log_density`'s ``L`` and ``alpha``."""
    return (alpha @ alpha.transpose(-1, -2)).sub_(torch.cholesky_inverse(L)).mul_(0.5)


class GaussianLogDensity(torch.autograd.Function):
    """``log N(r; 0, K)`` with the closed-form gradient of eq. 5.9 (Rasmussen & Williams):

        d log p / dK = (alpha alpha^T - K^{-1}) / 2,   d log p / dr = -alpha,   alpha = K^{-1} r.

    One ``cholesky_inverse`` replaces autograd's backward through the Cholesky factor (two
    ``n x n`` triangular solves and their copies): half the cost of a likelihood gradient at
    ``n >= 500`` (docs/speed.md).
    """

    @staticmethod
    def forward(ctx, K: Tensor, r: Tensor) -> Tensor:
        value, L, alpha = _gaussian_log_density(K, r)
        ctx.save_for_backward(L, alpha)
        return value

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor]:
        L, alpha = ctx.saved_tensors
        return grad * _gaussian_log_density_gradient(L, alpha), -grad * alpha.squeeze(-1)


@dataclass(frozen=True)
class PairwiseSquaredDistances:
    """The ``n x n`` squared distances ``sum_j (z_aj - z_bj)^2`` of a factor's inputs: all that a
    Matérn factor with one lengthscale needs of them, computed once per fit (an ``n x n x m``
    product) instead of once per evaluation of the loss (:func:`loss_inputs`)."""

    value: Tensor


def pairwise_squared_distances(Z: Tensor) -> PairwiseSquaredDistances:
    """The :class:`PairwiseSquaredDistances` of ``n x m`` inputs ``Z`` (zero diagonal)."""
    return PairwiseSquaredDistances(_squared_distances(_centred(Z)))


@dataclass(frozen=True)
class CentredInputs:
    """A factor's ``n x m`` inputs less their column means, and their squares: what a Matérn
    factor with ``m`` lengthscales needs of them, computed once per fit instead of once per
    evaluation of the loss (:func:`loss_inputs`). The values are those :func:`_matern52`
    computes from the inputs themselves."""

    value: Tensor
    squares: Tensor


def centred_inputs(Z: Tensor) -> CentredInputs:
    """The :class:`CentredInputs` of ``n x m`` inputs ``Z``."""
    centred = _centred(Z)
    return CentredInputs(centred, centred.pow(2))


def _centred(Z: Tensor) -> Tensor:
    """``Z`` less its column means, as GPyTorch centres a kernel's inputs: the distances are
    unchanged and their rounding less."""
    return Z - Z.mean(-2, keepdim=True)


def _squared_distances(X: Tensor) -> Tensor:
    """``n x n`` squared distances of the rows of ``X``, clamped at 0, with a zero diagonal."""
    squared = X.pow(2).sum(-1)
    cross = X @ X.transpose(-1, -2)
    distance2 = (squared.unsqueeze(-1) + squared.unsqueeze(-2)).sub_(cross.mul_(2))
    distance2.clamp_min_(0)
    distance2.diagonal(dim1=-2, dim2=-1).zero_()
    return distance2


def _matern52(
    Z: Tensor | CentredInputs | PairwiseSquaredDistances, lengthscale: Tensor
) -> tuple[Tensor, tuple[Tensor | None, ...]]:
    """The Matérn-5/2 ARD covariance ``K`` (``n x n``) of ``n x m`` inputs ``Z`` (or their
    :class:`CentredInputs`) with ``m`` lengthscales (or one shared lengthscale, when ``Z`` may
    also be given as its :class:`PairwiseSquaredDistances`), and what
    :func:`_matern52_lengthscale_gradient` needs:

        K_ab = (1 + r + r^2 / 3) exp(-r),   r_ab^2 = 5 sum_j (z_aj - z_bj)^2 / l_j^2.
    """
    centred = squares = None
    if isinstance(Z, PairwiseSquaredDistances):
        distance2 = Z.value / lengthscale.reshape(()).pow(2)
    else:
        centred, squares = (Z.value, Z.squares) if isinstance(Z, CentredInputs) else (
            _centred(Z), None)
        distance2 = _squared_distances(centred / lengthscale)
    # In place where a tensor is new (each n x n temporary costs a pass of page faults);
    # the operations and their order are those of the formula, so the values are unchanged.
    r = distance2.mul_(5).sqrt_()
    decay = torch.neg(r).exp_()
    K = (r + 1).add_(r.pow(2).div_(3)).mul_(decay)  # (1 + r + r^2 / 3) exp(-r)
    return K, (centred, squares, lengthscale, r, decay)


def _matern52_lengthscale_gradient(G: Tensor, saved: tuple[Tensor | None, ...]) -> Tensor:
    """``dL / dl`` (the lengthscale's shape) for an upstream gradient ``G = dL / dK``:

        dK_ab / dl_j = (5 / 3) (1 + r_ab) exp(-r_ab) (z_aj - z_bj)^2 / l_j^3,

    so with ``M = G o (5 / 3) (1 + r) exp(-r)``,
    ``dL / dl_j = (sum_a z_aj^2 (M 1 + M^T 1)_a - 2 z_j^T M z_j) / l_j^3``: two ``n x n x m``
    products. A single lengthscale shared by all ``m`` columns gets the sum over ``j``, which
    is ``sum_ab M_ab r_ab^2 / (5 l)`` (``sum_j (z_aj - z_bj)^2 = r_ab^2 l^2 / 5``): ``O(n^2)``."""
    Z, squares, lengthscale, r, decay = saved
    M = (G * (5 / 3)).mul_(r + 1).mul_(decay)
    if lengthscale.numel() == 1:  # one lengthscale shared by every column
        return (M.mul_(r.pow(2)).sum() / (5 * lengthscale.reshape(()))).reshape(
            lengthscale.shape)
    squares = Z.pow(2) if squares is None else squares
    outer = (squares * (M.sum(-1) + M.sum(-2)).unsqueeze(-1)).sum(-2)
    inner = (Z * (M @ Z)).sum(-2)
    gradient = (outer - 2 * inner) / lengthscale.reshape(-1).pow(3)
    return gradient.reshape(lengthscale.shape)


class Matern52Covariance(torch.autograd.Function):
    """The Matérn-5/2 ARD covariance of :func:`_matern52` with the closed-form lengthscale
    gradient of :func:`_matern52_lengthscale_gradient`, where autograd through GPyTorch's
    ``MaternKernel`` records and replays about twenty elementwise steps per evaluation of the
    fit loss. Values equal ``MaternKernel(nu=2.5)`` (tested). ``Z`` takes no gradient (the
    training inputs).
    """

    @staticmethod
    def forward(ctx, Z: Tensor, lengthscale: Tensor) -> Tensor:
        K, saved = _matern52(Z, lengthscale)
        ctx.save_for_backward(*saved)
        return K

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[None, Tensor]:
        return None, _matern52_lengthscale_gradient(grad, ctx.saved_tensors)


@dataclass(frozen=True)
class LogNormalTerms:
    """What the log density of a ``LogNormalPrior(mu, s)`` needs of it, computed once per
    fit: ``mu``, ``s^2``, ``2 s^2`` and ``log s``, in the prior's dtype (as
    ``torch.distributions.LogNormal.log_prob`` rounds them)."""

    loc: Tensor
    variance: Tensor
    twice_variance: Tensor
    log_scale: Tensor


def lognormal_terms(prior: LogNormalPrior | None) -> LogNormalTerms | None:
    """The :class:`LogNormalTerms` of ``prior`` (``None`` for no prior)."""
    if prior is None:
        return None
    variance = prior.scale.pow(2)
    return LogNormalTerms(prior.loc, variance, 2 * variance, prior.scale.log())


_HALF_LOG_2PI = math.log(math.sqrt(2 * math.pi))


def _lognormal_log_density(x: Tensor, prior: LogNormalTerms) -> tuple[Tensor, Tensor]:
    """``sum log LN(x; mu, s)`` and its gradient in ``x`` (``x``'s shape):

        log LN(x) = -log x - log s - log(2 pi) / 2 - (log x - mu)^2 / (2 s^2),
        d / dx = -(1 + (log x - mu) / s^2) / x,

    rounded as ``torch.distributions.LogNormal.log_prob`` rounds it, so the value equals the
    prior's ``log_prob``."""
    log_x = x.log()
    centred = log_x - prior.loc
    value = (-centred.pow(2) / prior.twice_variance - prior.log_scale - _HALF_LOG_2PI
             - log_x).sum()
    return value, -(1 + centred / prior.variance) / x


class MaternGPLoss(torch.autograd.Function):
    """The whole fit loss of a GP whose covariance is a product of Matérn-5/2 ARD factors
    ``K = prod_k K_k(Z_k; l_k)``, with a constant mean ``c``, a homoskedastic noise ``s2`` and
    LogNormal priors (or none) on the lengthscales and the noise, in one step:

        loss = -(log N(y; c 1, K + s2 I) + sum_k log LN(l_k) + log LN(s2)) / n,

    with the closed-form gradient, ``G = dlog N / dK`` of eq. 5.9 (Rasmussen & Williams):
    ``dlog N / ds2 = tr G``, ``dlog N / dc = 1^T alpha``, and each ``l_k`` through
    :func:`_matern52_lengthscale_gradient` with ``G o prod_{j != k} K_j``. One autograd node
    replaces the per-factor graph, the prior modules and their ``torch.distributions`` (half
    an evaluation's time at ``n = 100``, docs/speed.md). Value and gradient equal GPyTorch's
    ``-mll(model(X), y)`` (tested).

    With a fixed covariance ``F`` (``n x n``, a kernel without hyperparameters, e.g. the
    first-order kernel of :func:`bodi.models.gp.with_first_order`) the covariance is
    ``a K + b F`` with output scales ``a`` and ``b`` (no priors): ``dlog N / da = <G, K>``,
    ``dlog N / db = <G, F>``, and the lengthscales' upstream gradient is ``a G``.

    Args (of ``apply``): ``y`` (``n``), the factors' inputs ``Z_k`` (a tuple, of
    :func:`loss_inputs`), their priors (a tuple of :func:`lognormal_terms`, ``None`` for no
    prior), the noise's prior (the same), ``F`` (or ``None``), then the tensors that take a
    gradient: ``s2`` (1 element), ``c`` (1 element), ``a`` and ``b`` (or ``None`` without
    ``F``) and the lengthscales ``l_k``.
    """

    @staticmethod
    def forward(ctx, y: Tensor, inputs: tuple, priors: tuple, noise_prior: Any,
                fixed: Tensor | None, noise: Tensor, constant: Tensor, scale: Tensor | None,
                fixed_scale: Tensor | None, *lengthscales: Tensor) -> Tensor:
        factors = [_matern52(Z, lengthscale) for Z, lengthscale in
                   zip(inputs, lengthscales, strict=True)]
        K = math.prod((K_k for K_k, _ in factors[1:]), start=factors[0][0])
        if fixed is not None:  # a K + b F, a new tensor
            covariance = (K * scale).add_(fixed * fixed_scale)
        else:
            covariance = K if len(factors) > 1 else K.clone()  # a new tensor: noise in place
        n = y.shape[-1]
        covariance.diagonal(dim1=-2, dim2=-1).add_(noise.reshape(-1).expand(n))
        log_p, L, alpha = _gaussian_log_density(covariance, y - constant)
        gradients: list[Tensor] = []
        ctx.scale_gradients = None
        if any(ctx.needs_input_grad):
            G = _gaussian_log_density_gradient(L, alpha)
            gradients.append(G.diagonal().sum().reshape(noise.shape))
            gradients.append(alpha.sum().reshape(constant.shape))
            if fixed is not None:
                ctx.scale_gradients = (-(G * K).sum().reshape(scale.shape) / n,
                                       -(G * fixed).sum().reshape(fixed_scale.shape) / n)
                G = G * scale
            for k, (_, saved) in enumerate(factors):
                G_k = math.prod((K_j for j, (K_j, _) in enumerate(factors) if j != k), start=G)
                gradients.append(_matern52_lengthscale_gradient(G_k, saved))
        for i, (prior, value) in enumerate(zip((noise_prior, None, *priors),
                                               (noise, constant, *lengthscales), strict=True)):
            if prior is not None:
                prior_log_p, prior_gradient = _lognormal_log_density(value, prior)
                log_p = log_p + prior_log_p
                if gradients:
                    gradients[i] = gradients[i] + prior_gradient
        ctx.gradients = [-g / n for g in gradients]
        return -log_p / n

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, ...]:
        noise, constant, *lengthscales = (grad * g for g in ctx.gradients)
        scales = (None, None) if ctx.scale_gradients is None else tuple(
            grad * g for g in ctx.scale_gradients)
        return (None, None, None, None, None, noise, constant, *scales, *lengthscales)

def is_embedding_kernel(kernel: Kernel) -> bool:
    """Whether ``kernel`` applies its ``base_kernel`` to ``embed(discrete_columns(X))`` (the
    HED kernel and the Hamming-distance kernel of :mod:`bodi.hed.kernel` do)."""
    return (isinstance(getattr(kernel, "base_kernel", None), Kernel)
            and callable(getattr(kernel, "embed", None))
            and callable(getattr(kernel, "discrete_columns", None)))


def matern_of(kernel: Kernel) -> Kernel:
    """The kernel whose lengthscales a covariance factor uses: an embedding kernel's base
    kernel, else the factor itself."""
    return kernel.base_kernel if is_embedding_kernel(kernel) else kernel


def factor_inputs(kernel: Kernel, X: Tensor) -> Tensor:
    """The ``n x m`` inputs of a factor's Matérn kernel: the embedding of the discrete
    columns, or the factor's columns of ``X``."""
    if is_embedding_kernel(kernel):
        return kernel.embed(kernel.discrete_columns(X))
    return X if kernel.active_dims is None else X[..., kernel.active_dims.to(X.device)]


def loss_inputs(kernel: Kernel, X: Tensor) -> CentredInputs | PairwiseSquaredDistances:
    """What :class:`MaternGPLoss` needs of a factor's inputs (:func:`factor_inputs`): their
    :class:`CentredInputs`, or their :class:`PairwiseSquaredDistances` when the factor's
    Matérn has one lengthscale."""
    Z = factor_inputs(kernel, X)
    if matern_of(kernel).lengthscale.numel() == 1:
        return pairwise_squared_distances(Z)
    return centred_inputs(Z)


def is_plain_matern52(kernel: Kernel) -> bool:
    """A GPyTorch ``MaternKernel(nu=2.5)`` without batch dimensions (ARD or not)."""
    return type(kernel) is MaternKernel and kernel.nu == 2.5 and not kernel.batch_shape


def dense_train_covariance(kernel: Kernel, X: Tensor) -> Tensor:
    """``kernel(X, X)`` as a dense ``n x n`` tensor for ``n x dim`` inputs ``X``; its Matérn-5/2
    factors (the HED kernel's base, the ordinal kernel) through :class:`Matern52Covariance`,
    any other kernel through GPyTorch."""
    if isinstance(kernel, ProductKernel):
        factors = [dense_train_covariance(k, X) for k in kernel.kernels]
        return math.prod(factors[1:], start=factors[0])
    matern = matern_of(kernel)
    if X.requires_grad or not is_plain_matern52(matern):
        return kernel(X).to_dense()
    return Matern52Covariance.apply(factor_inputs(kernel, X), matern.lengthscale)
