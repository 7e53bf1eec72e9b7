"""The kernels of BODi's GP baselines: CASMOPOLITAN's (Wan et al., ICML 2021,
:func:`make_overlap_kernel`) and COMBO's (Oh et al., NeurIPS 2019,
:func:`make_diffusion_kernel`); :mod:`bodi.models.registry` names them beside BODi's.

All share the GP of :func:`bodi.models.gp.make_gp` (constant mean, Gaussian likelihood with
BoTorch's noise prior, standardised outcomes) and are fitted the same way
(:func:`bodi.models.gp.fit_model`: MAP by L-BFGS-B), so they differ only in the kernel.
"""

from __future__ import annotations

from typing import Any

from gpytorch.constraints import GreaterThan
from gpytorch.kernels import Kernel, ScaleKernel
from torch import Tensor

from bodi.models.gp import matern_with_dim_scaled_prior
from bodi.models.kernels import DiffusionKernel, OverlapKernel
from bodi.space import SearchSpace


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
    :class:`~bodi.models.kernels.DiffusionKernel`). COMBO has no continuous variables; with
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


__all__ = [
    "SharedKernel",
    "make_diffusion_kernel",
    "make_overlap_kernel",
]
