"""The HED kernel: a base kernel evaluated on the Hamming embedding of the discrete inputs."""

from __future__ import annotations

from typing import Any

from gpytorch.kernels import Kernel
from torch import Tensor

from bodi.dictionaries import Dictionary


class HammingEmbeddingKernel(Kernel):
    r"""``k(z, z') = k_base(phi_A(z) / d, phi_A(z') / d)`` (paper, Sec. 3 and Theorem 1).

    The embedding ``phi_A`` (one matrix product, :meth:`Dictionary.embed`) is divided by the
    number ``d`` of discrete variables so that its coordinates lie in ``[0, 1]``, the scale
    BoTorch's lengthscale priors assume. The base kernel (Matérn-5/2 with one ARD lengthscale per
    dictionary row in :func:`bodi.models.gp.make_hed_model`) owns all hyperparameters.

    Args:
        dictionary: the ``m x d`` dictionary.
        base_kernel: a kernel on ``m``-dimensional inputs.
        active_dims: the ``d`` columns of the input holding the discrete variables.
    """

    has_lengthscale = False

    def __init__(
        self, dictionary: Dictionary, base_kernel: Kernel, active_dims: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(active_dims=active_dims, **kwargs)
        self.dictionary = dictionary
        self.base_kernel = base_kernel

    def embed(self, Z: Tensor) -> Tensor:
        """``... x d`` discrete inputs -> ``... x m`` normalised embedding in ``[0, 1]``."""
        return self.dictionary.embed(Z) / self.dictionary.d

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        return self.base_kernel.forward(self.embed(x1), self.embed(x2), diag=diag, **params)
