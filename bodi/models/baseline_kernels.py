"""The kernels of BODi's baselines and their factories.

* :class:`DiffusionKernel`: COMBO's diffusion kernel on a product of complete graphs (Oh et
  al., NeurIPS 2019), :func:`make_diffusion_kernel`;
* CASMOPOLITAN's overlap kernel (Wan et al., ICML 2021), :class:`OverlapKernel` after BoTorch's
  :class:`botorch.models.kernels.categorical.CategoricalKernel`, :func:`make_overlap_kernel`;
* :class:`MixtureKernel`: Bounce's (after CoCaBO's) mixture of a discrete and a continuous
  Matern-5/2 kernel.

BODi's own kernels are :class:`bodi.hed.HammingEmbeddingKernel` and
:class:`bodi.hed.HammingDistanceKernel`; :mod:`bodi.models.registry` names every kernel. The GP
baselines share the GP of :func:`bodi.models.gp.make_gp` (constant mean, Gaussian likelihood
with BoTorch's noise prior, standardised outcomes) and its fit
(:func:`bodi.models.gp.fit_model`: MAP by L-BFGS-B), so they differ only in the kernel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from botorch.models.kernels.categorical import CategoricalKernel
from gpytorch.constraints import GreaterThan, Interval
from gpytorch.kernels import Kernel, MaternKernel, ScaleKernel
from gpytorch.priors import HalfCauchyPrior, HorseshoePrior, Prior
from torch import Tensor

from bodi.models.gp import matern_with_dim_scaled_prior
from bodi.space import SearchSpace

#: COMBO's horseshoe scale ``tau`` for the diffusion weights ``beta`` (``graphGP/sampler/priors``).
COMBO_HORSESHOE_SCALE = 5.0
#: Priors of :class:`DiffusionKernel` by name, each with scale :data:`COMBO_HORSESHOE_SCALE`.
BETA_PRIORS = {"halfcauchy": HalfCauchyPrior, "horseshoe": HorseshoePrior}


#: Inputs with more distinct values than this are not category indices: :func:`weighted_mismatches`
#: leaves them to the ``N x M x d`` comparison.
MAX_LEVELS = 64


def weighted_mismatches(x1: Tensor, x2: Tensor, weights: Tensor) -> Tensor | None:
    r"""``sum_i w_i [x1_ni != x2_mi]`` (``... x N x M``) for ``... x N x d`` and ``... x M x d``
    inputs and ``... x 1 x d`` weights, with one matrix product.

    With the ``V`` distinct values of the inputs (category indices; ``V = 2`` for binary
    columns) and ``e(x)`` the ``d V`` indicators ``[x_i = v]``,

    .. math::

        \sum_i w_i [x_i \ne x'_i] = \sum_i w_i - (e(x) \circ w)^\top e(x'),

    an ``N x dV`` by ``dV x M`` product, where comparing builds (and autograd keeps) an
    ``N x M x d`` tensor. Equal to the comparison up to rounding (tested). Returns ``None`` when
    the inputs have more than :data:`MAX_LEVELS` distinct values.
    """
    levels = torch.unique(torch.cat([x1.reshape(-1), x2.reshape(-1)]))
    if len(levels) > MAX_LEVELS:
        return None
    equal1 = (x1.unsqueeze(-1) == levels).to(weights)  # ... x N x d x V
    equal2 = (x2.unsqueeze(-1) == levels).to(weights)  # ... x M x d x V
    matches = (equal1 * weights.unsqueeze(-1)).flatten(-2) @ equal2.flatten(-2).transpose(-1, -2)
    return weights.sum(-1, keepdim=True) - matches


class DiffusionKernel(Kernel):
    r"""COMBO's diffusion kernel on a product of complete graphs (Oh et al., NeurIPS 2019).

    Every binary/categorical variable ``i`` with ``C_i`` values is a complete graph ``K_{C_i}``
    (COMBO's graph for a categorical variable; for ``C = 2`` it is also the binary one). The
    diffusion kernel of the Cartesian product graph with one ARD weight ``beta_i > 0`` per
    variable factorises, ``K = prod_i exp(-beta_i L_i)``, and on ``K_C`` it has the closed form
    (normalised by its constant diagonal, as COMBO does, so that ``k(x, x) = 1``)

    .. math::

        k_i(x_i, y_i) = 1 \text{ if } x_i = y_i \text{ else }
        r_i = \frac{1 - e^{-C_i \beta_i}}{1 + (C_i - 1) e^{-C_i \beta_i}} \in (0, 1),

    so ``k(x, y) = exp(sum_i [x_i != y_i] log r_i)``: one weighted sum of mismatch indicators.
    ``beta_i -> 0`` gives ``r_i -> 0`` (points differing in ``x_i`` are uncorrelated), a large
    ``beta_i`` gives ``r_i -> 1`` (``x_i`` is irrelevant). The signal variance is left to an
    outer ``ScaleKernel``.

    Hyperparameters, and how they differ from COMBO: COMBO puts a horseshoe prior (scale
    ``tau = 5``, ``beta <= 100``) on each ``beta_i`` and integrates over the hyperparameters by
    slice sampling (MCMC). Here ``beta`` is a **point estimate**, the MAP fitted with the other
    hyperparameters by L-BFGS-B on the marginal likelihood (:func:`bodi.models.gp.fit_model`),
    with ``beta`` constrained to ``[1e-6, 100]``. The default prior is a half-Cauchy with COMBO's
    scale ``tau = 5`` (``beta_prior="halfcauchy"``): the horseshoe's local-scale distribution,
    with the same ``1/beta^2`` tail but a bounded density at 0. The horseshoe itself
    (``beta_prior="horseshoe"``: GPyTorch's :class:`~gpytorch.priors.HorseshoePrior`, log density
    ``log((lb + ub) / 2)`` of the standard bounds ``lb = K/2 log(1 + 4 tau^2/beta^2)``,
    ``ub = K log(1 + 2 tau^2/beta^2)``) is fine for MCMC but its density is unbounded at
    ``beta = 0``, so its MAP degenerates: on MaxSAT60 with 50 points every ``beta`` went to the
    lower bound, i.e. the white-noise kernel ``k(x, y) = [x = y]``, with constant predictions.
    ``beta`` starts where ``r_i = exp(-1/d)``, i.e. where the kernel equals the overlap kernel
    ``exp(-mean_i [x_i != y_i])`` with unit lengthscales.

    Args:
        cardinalities: number of values ``C_i >= 2`` of each of the kernel's ``d`` columns
            (inputs are indices ``0 .. C_i - 1``).
        active_dims: the ``d`` columns of the input the kernel acts on.
        beta_prior: prior on ``beta``: ``"halfcauchy"`` (default, ``HalfCauchyPrior(5.0)``),
            ``"horseshoe"`` (``HorseshoePrior(5.0)``), a GPyTorch ``Prior`` or ``None``.
        beta_constraint: constraint on ``beta`` (default ``Interval(1e-6, 100)``).
    """

    has_lengthscale = False

    def __init__(
        self,
        cardinalities: Sequence[int],
        active_dims: Any = None,
        beta_prior: Prior | str | None = "halfcauchy",
        beta_constraint: Interval | None = None,
        **kwargs: Any,
    ) -> None:
        cards = [int(c) for c in cardinalities]
        if not cards or min(cards) < 2:
            raise ValueError(f"cardinalities must be >= 2 and non-empty, got {cardinalities!r}")
        if active_dims is not None and len(active_dims) != len(cards):
            raise ValueError(
                f"{len(cards)} cardinalities but {len(active_dims)} active dimensions"
            )
        super().__init__(active_dims=active_dims, **kwargs)
        self.register_buffer("cardinalities", torch.tensor(cards, dtype=torch.float64))
        d = len(cards)
        batch = self.batch_shape
        self.register_parameter("raw_beta", torch.nn.Parameter(torch.zeros(*batch, 1, d)))
        constraint = beta_constraint if beta_constraint is not None else Interval(1e-6, 100.0)
        self.register_constraint("raw_beta", constraint)
        if isinstance(beta_prior, str):
            if beta_prior not in BETA_PRIORS:
                raise ValueError(f"unknown beta prior {beta_prior!r}; choose from {BETA_PRIORS}")
            beta_prior = BETA_PRIORS[beta_prior](COMBO_HORSESHOE_SCALE)
        if beta_prior is not None:
            self.register_prior(
                "beta_prior", beta_prior, lambda m: m.beta, lambda m, v: m._set_beta(v)
            )
        # Start at r_i = exp(-1/d): the overlap kernel with unit lengthscales.
        r = math.exp(-1.0 / d)
        c = self.cardinalities
        e = (1.0 - r) / (1.0 + r * (c - 1.0))
        self._set_beta(-torch.log(e) / c)

    @property
    def beta(self) -> Tensor:
        return self.raw_beta_constraint.transform(self.raw_beta)

    @beta.setter
    def beta(self, value: Tensor) -> None:
        self._set_beta(value)

    def _set_beta(self, value: Tensor | float) -> None:
        value = torch.as_tensor(value).to(self.raw_beta)
        self.initialize(raw_beta=self.raw_beta_constraint.inverse_transform(value))

    def log_ratio(self) -> Tensor:
        """``log r_i`` (``... x 1 x d``): the log correlation of a mismatch in variable ``i``."""
        c = self.cardinalities.to(self.raw_beta)
        cb = c * self.beta
        # log(1 - e^{-cb}) - log(1 + (c - 1) e^{-cb}), stable for small and large c * beta.
        return torch.log(-torch.expm1(-cb)) - torch.log1p((c - 1.0) * torch.exp(-cb))

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        w = self.log_ratio()  # ... x 1 x d
        if diag:
            mismatch = (x1 != x2).to(w.dtype)  # ... x n x d
            return torch.exp((mismatch * w).sum(-1))
        weighted = weighted_mismatches(x1, x2, w)  # one product (category indices)
        if weighted is None:
            mismatch = (x1.unsqueeze(-2) != x2.unsqueeze(-3)).to(w.dtype)  # ... x n x n' x d
            weighted = (mismatch * w.unsqueeze(-2)).sum(-1)
        return torch.exp(weighted)


class OverlapKernel(CategoricalKernel):
    """BoTorch's ``CategoricalKernel`` (CASMOPOLITAN's transformed overlap kernel,
    ``k(h, h') = exp(-mean_i [h_i != h'_i] / l_i)``) with its weighted mismatches counted by
    one matrix product (:func:`weighted_mismatches`).

    The parent builds the ``N x M x d`` tensor of mismatches, and autograd keeps and replays
    it at every evaluation of the fit loss; after 190 observations of labs50 a CASMOPOLITAN
    suggestion took a median 9.5 s with it and 1.5 s with the product (docs/speed.md). Values
    and lengthscale gradients equal the parent's up to rounding (tested). The diagonal is
    computed without any ``N x N`` tensor; ``last_dim_is_batch`` takes the parent's path.
    """

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        if params.get("last_dim_is_batch", False):
            return super().forward(x1, x2, diag=diag, **params)
        weights = 1.0 / self.lengthscale  # ... x 1 x d
        d = x1.shape[-1]
        if diag:
            return torch.exp(-((x1 != x2).to(weights) * weights).sum(-1) / d)
        mismatches = weighted_mismatches(x1, x2, weights)
        if mismatches is None:
            return super().forward(x1, x2, diag=diag, **params)
        return torch.exp(-mismatches / d)


class MixtureKernel(Kernel):
    """``(1 - lambda) (k_d + k_c) + lambda k_d k_c`` on ``n x d`` inputs (Bounce's kernel for
    mixed spaces; CoCaBO's mixture).

    ``k_d`` is a Matern-5/2 kernel with one lengthscale on the ``discrete_dims`` columns and
    ``k_c`` a Matern-5/2 kernel with ARD lengthscales on the ``continuous_dims`` columns;
    ``lambda in (0, 1)`` is learnt (starting, as in Bounce, at ``sigmoid(1)``).
    """

    def __init__(self, discrete_dims: Sequence[int], continuous_dims: Sequence[int],
                 discrete_lengthscale_prior: Prior | None = None,
                 continuous_lengthscale_prior: Prior | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if set(discrete_dims) & set(continuous_dims):
            raise ValueError("discrete and continuous dims must be disjoint")
        self.discrete_kernel = MaternKernel(
            nu=2.5, active_dims=tuple(discrete_dims),
            lengthscale_prior=discrete_lengthscale_prior,
        )
        self.continuous_kernel = MaternKernel(
            nu=2.5, ard_num_dims=len(continuous_dims), active_dims=tuple(continuous_dims),
            lengthscale_prior=continuous_lengthscale_prior,
        )
        self.register_parameter("raw_lamda", torch.nn.Parameter(torch.ones(1)))
        self.register_constraint("raw_lamda", Interval(0.0, 1.0))

    @property
    def lamda(self) -> Tensor:
        return self.raw_lamda_constraint.transform(self.raw_lamda)

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        k_d = self.discrete_kernel(x1, x2, diag=diag, **params)
        k_c = self.continuous_kernel(x1, x2, diag=diag, **params)
        if not diag:
            k_d, k_c = k_d.to_dense(), k_c.to_dense()
        lamda = self.lamda
        return (1 - lamda) * (k_d + k_c) + lamda * k_d * k_c


class SharedKernel(Kernel):
    """A second occurrence of ``kernel`` in a kernel expression (same hyperparameters).

    It evaluates ``kernel`` but does not register it as a submodule, so the kernel's parameters
    and priors are counted once, by its registered occurrence. (GPyTorch's ``named_priors`` does
    not deduplicate modules: a kernel used twice directly would add its prior twice to the MAP
    objective.) The registered occurrence must be part of the same model.
    """

    def __init__(self, kernel: Kernel) -> None:
        super().__init__()
        self._shared = (kernel,)  # a tuple: invisible to named_children / named_priors

    @property
    def kernel(self) -> Kernel:
        return self._shared[0]

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        out = self.kernel(x1, x2, diag=diag, **params)
        return out if diag else out.to_dense()


def _ordinal_kernel(space: SearchSpace) -> Kernel:
    ordinal = space.ordinal_dims
    return matern_with_dim_scaled_prior(len(ordinal), len(ordinal), ordinal)


def _check_space(space: SearchSpace) -> None:
    if not space.discrete_dims and not space.ordinal_dims:
        raise ValueError("the search space has no parameters")


def make_overlap_kernel(space: SearchSpace) -> Kernel:
    r"""CASMOPOLITAN's kernel (Wan et al., ICML 2021) for ``space``.

    Categorical part: the transformed overlap kernel
    ``k_h(h, h') = exp(-mean_i [h_i != h'_i] / l_i)`` with one ARD lengthscale per
    binary/categorical column, BoTorch's :class:`CategoricalKernel`, set up as in BoTorch's
    ``MixedSingleTaskGP`` (no lengthscale prior, ``l_i >= 1e-6``).

    * only binary/categorical parameters: ``ScaleKernel(k_h)``;
    * with continuous/integer parameters too, CASMOPOLITAN's mixture
      ``s^2 (lambda k_h k_x + (1 - lambda)(k_h + k_x))``, written equivalently as
      ``ScaleKernel(k_h * k_x) + ScaleKernel(k_h + k_x)`` (two free outputscales ``s^2 lambda``
      and ``s^2 (1 - lambda)``) with the same ``k_h`` and ``k_x`` in both terms (the second
      occurrences are :class:`SharedKernel` aliases, so each prior counts once), ``k_x`` a
      Matérn-5/2 ARD on the ordinal columns with BoTorch's dimension-scaled lengthscale prior;
    * only continuous/integer parameters: ``ScaleKernel(k_x)``.
    """
    _check_space(space)
    discrete, ordinal = space.discrete_dims, space.ordinal_dims
    if not discrete:
        return ScaleKernel(_ordinal_kernel(space))
    k_h = OverlapKernel(
        ard_num_dims=len(discrete),
        active_dims=discrete,
        lengthscale_constraint=GreaterThan(1e-6),
    )
    if not ordinal:
        return ScaleKernel(k_h)
    k_x = _ordinal_kernel(space)
    return ScaleKernel(k_h * k_x) + ScaleKernel(SharedKernel(k_h) + SharedKernel(k_x))


def make_diffusion_kernel(space: SearchSpace) -> Kernel:
    """COMBO's kernel (Oh et al., NeurIPS 2019) for ``space``.

    ``ScaleKernel(DiffusionKernel)`` over the binary/categorical columns: the diffusion kernel of
    the product of complete graphs, one ARD weight ``beta_i`` per variable, fitted as a MAP point
    estimate under COMBO's horseshoe prior (COMBO samples it by MCMC; see
    :class:`~bodi.models.baseline_kernels.DiffusionKernel`). COMBO has no continuous variables; with
    continuous/integer parameters the kernel here is
    ``ScaleKernel(DiffusionKernel * k_x)``, ``k_x`` a Matérn-5/2 ARD on the ordinal columns with
    BoTorch's dimension-scaled prior (the product construction BODi uses for mixed spaces), and
    on purely ordinal spaces ``ScaleKernel(k_x)``.
    """
    _check_space(space)
    discrete, ordinal = space.discrete_dims, space.ordinal_dims
    if not discrete:
        return ScaleKernel(_ordinal_kernel(space))
    k_d = DiffusionKernel(space.cardinalities, active_dims=discrete)
    return ScaleKernel(k_d * _ordinal_kernel(space) if ordinal else k_d)
