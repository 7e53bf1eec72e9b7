"""The BODi surrogate: ``SingleTaskGP`` with the HED kernel, fitted with ``fit_gpytorch_mll``.

Kernel (paper, "Representation of mixed input spaces"):

    k(x, x') = k_HED(z, z') * k_ord(u, u')

where ``z`` are the binary/categorical columns, embedded by the dictionary, and ``u`` the
continuous and integer columns (already in ``[0, 1]``). Both factors are Matérn-5/2 with ARD.

Priors: BoTorch's defaults for ``SingleTaskGP`` (Hvarfner et al., 2024): a LogNormal lengthscale
prior ``LN(sqrt(2) + log(D) / 2, sqrt(3))`` with ``D = m + #ordinal`` the number of kernel inputs,
a LogNormal(-4, 1) noise prior, no outputscale (the outcome is standardised). The prior's median
lengthscale grows like ``sqrt(D)``, so with ``m = 128`` embedding coordinates an ARD lengthscale
only shrinks where the data ask for it: the data-driven pruning the paper credits for the
cardinality reduction (Prop. 3, Theorem 1).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.exceptions.warnings import InputDataWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from botorch.posteriors import GPyTorchPosterior
from gpytorch import settings as gpytorch_settings
from gpytorch.constraints import GreaterThan
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import Kernel, MaternKernel, ProductKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.likelihoods.noise_models import HomoskedasticNoise
from gpytorch.means import ConstantMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import LogNormalPrior
from linear_operator.operators import DiagLinearOperator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from bodi.hed.dictionaries import Dictionary
from bodi.hed.kernel import HammingDistanceKernel, HammingEmbeddingKernel
from bodi.space import SearchSpace

FIT_MAXITER = 100


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
    return 0.5 * (alpha @ alpha.transpose(-1, -2) - torch.cholesky_inverse(L))


class _GaussianLogDensity(torch.autograd.Function):
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


def matern_with_dim_scaled_prior(
    ard_num_dims: int | None, prior_dims: int, active_dims: list[int] | None = None
) -> MaternKernel:
    """Matérn-5/2 ARD kernel (one lengthscale if ``ard_num_dims`` is ``None``) with BoTorch's
    dimension-scaled LogNormal lengthscale prior."""
    prior = LogNormalPrior(loc=math.sqrt(2) + 0.5 * math.log(prior_dims), scale=math.sqrt(3))
    return MaternKernel(
        nu=2.5,
        ard_num_dims=ard_num_dims,
        active_dims=active_dims,
        lengthscale_prior=prior,
        lengthscale_constraint=GreaterThan(2.5e-2, transform=None, initial_value=prior.mode),
    )


def make_hed_kernel(space: SearchSpace, dictionary: Dictionary | None) -> Kernel:
    """The product kernel ``k_HED * k_ord`` for ``space`` (either factor may be absent)."""
    discrete, ordinal = space.discrete_dims, space.ordinal_dims
    m = dictionary.m if discrete and dictionary is not None else 0
    if discrete and dictionary is None:
        raise ValueError("a space with binary/categorical parameters needs a dictionary")
    if discrete and dictionary.d != len(discrete):
        raise ValueError(
            f"dictionary has {dictionary.d} columns but the space has {len(discrete)} "
            "binary/categorical parameters"
        )
    prior_dims = m + len(ordinal)
    factors: list[Kernel] = []
    if discrete:
        base = matern_with_dim_scaled_prior(m, prior_dims)
        # A kernel on every column takes no active_dims: GPyTorch would copy each input
        # (``N x dim``, an index_select) on every call, the costliest step at large ``dim``.
        columns = None if list(discrete) == list(range(space.dim)) else discrete
        factors.append(HammingEmbeddingKernel(dictionary, base, active_dims=columns))
    if ordinal:
        factors.append(matern_with_dim_scaled_prior(len(ordinal), prior_dims, ordinal))
    return factors[0] if len(factors) == 1 else ProductKernel(*factors)


def make_hed_hamming_kernel(space: SearchSpace, dictionary: Dictionary | None) -> Kernel:
    """``k_HED * k_H`` (with ``k_ord`` once): the product of :func:`make_hed_kernel` and the
    Hamming-distance factor of :func:`make_hamming_kernel`. Either discrete factor can fit to
    a constant (a long lengthscale), so the product holds both models and the marginal
    likelihood weighs them."""
    hed = make_hed_kernel(space, dictionary)
    if not space.discrete_dims:
        return hed
    hamming = make_hamming_kernel(space)
    hamming = hamming.kernels[0] if isinstance(hamming, ProductKernel) else hamming
    factors = list(hed.kernels) if isinstance(hed, ProductKernel) else [hed]
    return ProductKernel(factors[0], hamming, *factors[1:])


def make_hamming_kernel(space: SearchSpace) -> Kernel:
    """The product kernel ``k_H * k_ord`` for ``space`` (either factor may be absent):
    ``k_H`` a Matérn-5/2 of the Hamming distance of the discrete columns with one lengthscale
    (:class:`~bodi.hed.kernel.HammingDistanceKernel`), ``k_ord`` as in
    :func:`make_hed_kernel`; the lengthscale priors are BoTorch's, scaled with
    ``d + #ordinal``."""
    discrete, ordinal = space.discrete_dims, space.ordinal_dims
    prior_dims = len(discrete) + len(ordinal)
    factors: list[Kernel] = []
    if discrete:
        columns = None if list(discrete) == list(range(space.dim)) else discrete
        base = matern_with_dim_scaled_prior(None, prior_dims)
        factors.append(HammingDistanceKernel(space.cardinalities, base, active_dims=columns))
    if ordinal:
        factors.append(matern_with_dim_scaled_prior(len(ordinal), prior_dims, ordinal))
    return factors[0] if len(factors) == 1 else ProductKernel(*factors)


def _matern52(Z: Tensor, lengthscale: Tensor) -> tuple[Tensor, tuple[Tensor, ...]]:
    """The Matérn-5/2 ARD covariance ``K`` (``n x n``) of ``n x m`` inputs ``Z`` with ``m``
    lengthscales, and what :func:`_matern52_lengthscale_gradient` needs:

        K_ab = (1 + r + r^2 / 3) exp(-r),   r_ab^2 = 5 sum_j (z_aj - z_bj)^2 / l_j^2.
    """
    Z = Z - Z.mean(-2, keepdim=True)  # as GPyTorch: distances are unchanged, rounding less
    X = Z / lengthscale
    squared = X.pow(2).sum(-1)
    distance2 = (squared.unsqueeze(-1) + squared.unsqueeze(-2) - 2 * X @ X.transpose(-1, -2))
    distance2 = distance2.clamp_min(0)
    distance2.diagonal(dim1=-2, dim2=-1).zero_()
    r = (5 * distance2).sqrt()
    decay = torch.exp(-r)
    return (1 + r + r.pow(2) / 3) * decay, (Z, lengthscale, r, decay)


def _matern52_lengthscale_gradient(G: Tensor, saved: tuple[Tensor, ...]) -> Tensor:
    """``dL / dl`` (the lengthscale's shape) for an upstream gradient ``G = dL / dK``:

        dK_ab / dl_j = (5 / 3) (1 + r_ab) exp(-r_ab) (z_aj - z_bj)^2 / l_j^3,

    so with ``M = G o (5 / 3) (1 + r) exp(-r)``,
    ``dL / dl_j = (sum_a z_aj^2 (M 1 + M^T 1)_a - 2 z_j^T M z_j) / l_j^3``: two ``n x n x m``
    products; a single lengthscale shared by all ``m`` columns gets the sum over ``j``."""
    Z, lengthscale, r, decay = saved
    M = G * (5 / 3) * (1 + r) * decay
    outer = (Z.pow(2) * (M.sum(-1) + M.sum(-2)).unsqueeze(-1)).sum(-2)
    inner = (Z * (M @ Z)).sum(-2)
    gradient = (outer - 2 * inner) / lengthscale.reshape(-1).pow(3)
    if lengthscale.numel() == 1 < Z.shape[-1]:  # one lengthscale shared by every column
        gradient = gradient.sum(-1)
    return gradient.reshape(lengthscale.shape)


class _Matern52Covariance(torch.autograd.Function):
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


def _lognormal_log_density(x: Tensor, prior: LogNormalPrior) -> tuple[Tensor, Tensor]:
    """``sum log LN(x; mu, s)`` and its gradient in ``x`` (``x``'s shape):

        log LN(x) = -log x - log s - log(2 pi) / 2 - (log x - mu)^2 / (2 s^2),
        d / dx = -(1 + (log x - mu) / s^2) / x,

    rounded as ``torch.distributions.LogNormal.log_prob`` rounds it (``s^2`` and ``log s`` in
    the prior's dtype), so the value equals the prior's ``log_prob``."""
    log_x = x.log()
    variance, centred = prior.scale.pow(2), log_x - prior.loc
    value = (-centred.pow(2) / (2 * variance) - prior.scale.log()
             - math.log(math.sqrt(2 * math.pi)) - log_x).sum()
    return value, -(1 + centred / variance) / x


class _MaternGPLoss(torch.autograd.Function):
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

    Args (of ``apply``): ``y`` (``n``), the factors' inputs ``Z_k`` (a tuple), their priors (a
    tuple of ``LogNormalPrior`` or ``None``), the noise's prior, then the tensors that take a
    gradient: ``s2`` (1 element), ``c`` (1 element) and the lengthscales ``l_k``.
    """

    @staticmethod
    def forward(ctx, y: Tensor, inputs: tuple[Tensor, ...], priors: tuple, noise_prior: Any,
                noise: Tensor, constant: Tensor, *lengthscales: Tensor) -> Tensor:
        factors = [_matern52(Z, lengthscale) for Z, lengthscale in
                   zip(inputs, lengthscales, strict=True)]
        K = math.prod((K_k for K_k, _ in factors[1:]), start=factors[0][0])
        n = y.shape[-1]
        covariance = K + torch.diag_embed(noise.reshape(-1).expand(n))
        log_p, L, alpha = _gaussian_log_density(covariance, y - constant)
        gradients: list[Tensor] = []
        if any(ctx.needs_input_grad):
            G = _gaussian_log_density_gradient(L, alpha)
            gradients.append(G.diagonal().sum().reshape(noise.shape))
            gradients.append(alpha.sum().reshape(constant.shape))
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
        return (None, None, None, None, *(grad * g for g in ctx.gradients))


#: kernels that apply their ``base_kernel`` to ``embed(discrete_columns(X))``
EMBEDDING_KERNELS = (HammingEmbeddingKernel, HammingDistanceKernel)


def _matern_of(kernel: Kernel) -> Kernel:
    """The kernel whose lengthscales a covariance factor uses: an embedding kernel's base
    kernel, else the factor itself."""
    return kernel.base_kernel if isinstance(kernel, EMBEDDING_KERNELS) else kernel


def _factor_inputs(kernel: Kernel, X: Tensor) -> Tensor:
    """The ``n x m`` inputs of a factor's Matérn kernel: the embedding of the discrete
    columns, or the factor's columns of ``X``."""
    if isinstance(kernel, EMBEDDING_KERNELS):
        return kernel.embed(kernel.discrete_columns(X))
    return X if kernel.active_dims is None else X[..., kernel.active_dims.to(X.device)]


def _is_plain_matern52(kernel: Kernel) -> bool:
    """A GPyTorch ``MaternKernel(nu=2.5)`` without batch dimensions (ARD or not)."""
    return type(kernel) is MaternKernel and kernel.nu == 2.5 and not kernel.batch_shape


def _dense_train_covariance(kernel: Kernel, X: Tensor) -> Tensor:
    """``kernel(X, X)`` as a dense ``n x n`` tensor for ``n x dim`` inputs ``X``; its Matérn-5/2
    factors (the HED kernel's base, the ordinal kernel) through :class:`_Matern52Covariance`,
    any other kernel through GPyTorch."""
    if isinstance(kernel, ProductKernel):
        factors = [_dense_train_covariance(k, X) for k in kernel.kernels]
        return math.prod(factors[1:], start=factors[0])
    matern = _matern_of(kernel)
    if X.requires_grad or not _is_plain_matern52(matern):
        return kernel(X).to_dense()
    return _Matern52Covariance.apply(_factor_inputs(kernel, X), matern.lengthscale)


class HEDSingleTaskGP(SingleTaskGP):
    """``SingleTaskGP`` whose posterior over a batch of single points is computed in one pass.

    Acquisition optimization evaluates ``b x 1 x dim`` inputs (``b`` independent points).
    GPyTorch would treat them as ``b`` separate problems and rebuild the ``n`` training inputs in
    every one of them, and a flat ``b x dim`` call would build the ``b x b`` test covariance.
    Here only what a ``q = 1`` acquisition function uses is computed, for all points at once:

        mean = m + k_*^T alpha,      var = k(x, x) - ||L^{-1} k_*||^2,

    with ``L L^T = K + sigma^2 I`` and ``alpha = (K + sigma^2 I)^{-1} (y - m)`` cached after the
    fit. Values equal ``SingleTaskGP.posterior`` (tested); ``q > 1`` uses the parent method.
    """

    _marginal_cache: tuple[Tensor, Tensor] | None = None
    _loss_plan: tuple | None = None

    def compute_custom_loss(self, mll: ExactMarginalLogLikelihood, **kwargs: Any) -> Tensor:
        """The loss ``fit_gpytorch_mll`` minimises: ``-mll(model(X), y)``, i.e.

            -(log N(y; m, K + sigma^2 I) + sum of the priors' log densities) / n,

        computed without GPyTorch's lazy tensors and with the closed-form gradient of
        :class:`_GaussianLogDensity` (BoTorch calls this hook when the model defines it). Value
        and gradient equal GPyTorch's (tested); a model outside the plain case (batched, with an
        input transform or extra loss terms) gets GPyTorch's computation.
        """
        y = self.train_targets
        plain = (
            y.ndim == 1 and getattr(self, "input_transform", None) is None
            and type(mll) is ExactMarginalLogLikelihood and mll.model is self
            and not list(self.added_loss_terms())
            and gpytorch_settings.observation_nan_policy.value() == "ignore" and not kwargs
        )
        if not plain:
            inputs = (self.transform_inputs(X=x) for x in self.train_inputs)
            return -mll(self(*self.train_inputs), y, *inputs, **kwargs)
        X = self.train_inputs[0]
        plan = None if X.requires_grad else self._matern_loss_plan()
        if plan is not None:
            factors, priors, noise_prior = plan
            inputs = tuple(_factor_inputs(kernel, X) for kernel in factors)
            lengthscales = (_matern_of(kernel).lengthscale for kernel in factors)
            return _MaternGPLoss.apply(y, inputs, priors, noise_prior, self.likelihood.noise,
                                       self.mean_module.constant, *lengthscales)
        log_p = _GaussianLogDensity.apply(*self._train_covariance_and_residual())
        for _, module, prior, closure, _ in self.named_priors():
            log_p = log_p + prior.log_prob(closure(module)).sum()
        return -log_p / y.shape[-1]

    def _matern_loss_plan(self) -> tuple[tuple[Kernel, ...], tuple, LogNormalPrior | None] | None:
        """The covariance's factors, their lengthscale priors and the noise's prior, when
        :class:`_MaternGPLoss` computes the fit loss: every factor a plain Matérn-5/2 (on the
        HED embedding or on columns), a ``ConstantMean`` and a homoskedastic Gaussian
        likelihood, and no priors but LogNormal ones on those lengthscales and on the noise.
        ``None`` otherwise."""
        if self._loss_plan is None:  # once per training phase (``train()`` forgets it)
            self._loss_plan = (self._find_matern_loss_plan(),)
        return self._loss_plan[0]

    def _find_matern_loss_plan(
        self,
    ) -> tuple[tuple[Kernel, ...], tuple, LogNormalPrior | None] | None:
        covar, noise = self.covar_module, getattr(self.likelihood, "noise_covar", None)
        factors = tuple(covar.kernels) if type(covar) is ProductKernel else (covar,)
        if (type(self.mean_module) is not ConstantMean or type(noise) is not HomoskedasticNoise
                or type(self.likelihood) is not GaussianLikelihood
                or noise.noise.numel() != 1 or self.mean_module.constant.numel() != 1
                or not all(type(k) in (MaternKernel, *EMBEDDING_KERNELS)
                           and _is_plain_matern52(_matern_of(k)) for k in factors)):
            return None
        factor_of = {id(_matern_of(k)): i for i, k in enumerate(factors)}  # Matérn -> factor
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
        return factors, tuple(priors), noise_prior

    def _train_covariance_and_residual(self) -> tuple[Tensor, Tensor]:
        """``K + sigma^2 I`` (``n x n``) and ``y - m`` (``n``) of the training data."""
        X = self.train_inputs[0]
        K = _dense_train_covariance(self.covar_module, X)
        noise = self.likelihood.noise.reshape(-1).expand(K.shape[-1])
        return K + torch.diag_embed(noise), self.train_targets - self.mean_module(X)

    def train(self, mode: bool = True) -> HEDSingleTaskGP:
        if mode or self.training:  # hyperparameters or data may have changed in training mode;
            self._marginal_cache = None  # eval() while already in eval mode keeps the cache
            self._loss_plan = None
        return super().train(mode)

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
        if X.ndim < 3 or X.shape[-2] != 1 or output_indices is not None or (
            observation_noise is not False
        ):
            return super().posterior(X, output_indices, observation_noise, posterior_transform)
        self.eval()
        L, alpha = self._cache()
        flat = X.reshape(-1, X.shape[-1])
        k_star = self.covar_module(flat, self.train_inputs[0]).to_dense()  # N x n
        mean = self.mean_module(flat) + k_star @ alpha
        v = torch.linalg.solve_triangular(L, k_star.transpose(-1, -2), upper=False)
        prior_variance = self.covar_module(flat, diag=True)
        floor = gpytorch_settings.min_variance.value(prior_variance.dtype)  # 1e-10 for float64
        variance = (prior_variance - v.pow(2).sum(-2)).clamp_min(floor)
        batch = X.shape[:-2]
        mvn = MultivariateNormal(
            mean.reshape(*batch, 1), DiagLinearOperator(variance.reshape(*batch, 1))
        )
        posterior = GPyTorchPosterior(mvn)
        if hasattr(self, "outcome_transform"):
            posterior = self.outcome_transform.untransform_posterior(posterior, X=X)
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior


def make_gp(train_X: Tensor, train_Y: Tensor, covar_module: Kernel) -> HEDSingleTaskGP:
    """An (unfitted) GP with ``covar_module``, a constant mean, BoTorch's default Gaussian
    likelihood and standardized outcomes; ``train_X`` is ``n x dim`` (encoded), ``train_Y``
    ``n x 1`` (larger is better). Every surrogate of bodi (HED, overlap, diffusion) is one."""
    with warnings.catch_warnings():
        # Categorical indices lie outside [0, 1] by design; the kernels handle them.
        warnings.simplefilter("ignore", InputDataWarning)
        return HEDSingleTaskGP(
            train_X, train_Y, covar_module=covar_module, outcome_transform=Standardize(m=1)
        )


def make_hed_model(
    train_X: Tensor, train_Y: Tensor, space: SearchSpace, dictionary: Dictionary | None
) -> HEDSingleTaskGP:
    """An (unfitted) GP on the HED embedding.

    Args:
        train_X: ``n x dim`` encoded inputs (see :mod:`bodi.space`).
        train_Y: ``n x 1`` outcomes, larger is better.
        space: the search space the inputs encode.
        dictionary: dictionary over ``space.discrete_dims`` (``None`` for purely ordinal spaces).
    """
    return make_gp(train_X, train_Y, make_hed_kernel(space, dictionary))


def fit_model(model: SingleTaskGP, maxiter: int | None = FIT_MAXITER) -> SingleTaskGP:
    """Fit hyperparameters by maximising the marginal log likelihood (MAP under the priors).

    Uses ``fit_gpytorch_mll`` (L-BFGS-B) with at most ``maxiter`` iterations (``None``: scipy's
    default). With ``m = 128`` ARD lengthscales most of them sit in flat directions of the
    likelihood, and L-BFGS-B spends >1000 evaluations crawling along them; the cap keeps a fit
    well under a second (see docs/speed.md).
    """
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    kwargs = {} if maxiter is None else {"optimizer_kwargs": {"options": {"maxiter": maxiter}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        fit_gpytorch_mll(mll, **kwargs)
    model.eval()
    return model


def lengthscales(model: SingleTaskGP) -> dict[str, Tensor]:
    """Lengthscales of the fitted HED or Hamming (``"embedding"``) and ordinal (``"ordinal"``)
    factors."""
    out: dict[str, Tensor] = {}
    covar = model.covar_module
    factors = covar.kernels if isinstance(covar, ProductKernel) else [covar]
    for kernel in factors:
        if isinstance(kernel, EMBEDDING_KERNELS):
            out["embedding"] = kernel.base_kernel.lengthscale.detach().reshape(-1)
        else:
            out["ordinal"] = kernel.lengthscale.detach().reshape(-1)
    return out


__all__ = [
    "HEDSingleTaskGP",
    "fit_model",
    "lengthscales",
    "make_gp",
    "make_hed_kernel",
    "make_hed_model",
    "matern_with_dim_scaled_prior",
]
