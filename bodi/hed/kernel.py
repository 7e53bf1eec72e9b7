"""The HED kernel: a base kernel on the Hamming embedding of the discrete columns."""

from __future__ import annotations

from typing import Any

import torch
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel
from torch import Tensor

from bodi.hed.dictionaries import Dictionary
from bodi.hed.embedding import affine_embedding, onehot_embedding


class HammingEmbeddingKernel(Kernel):
    r"""``k(z, z') = k_base(phi_A(z) / d, phi_A(z') / d)`` (paper, Sec. 3 and Theorem 1).

    The embedding ``phi_A`` (one matrix product, Proposition 1 for binary columns, a one-hot
    product for categorical ones) is divided by the number ``d`` of discrete variables so that
    its coordinates lie in ``[0, 1]``, the scale BoTorch's lengthscale priors assume. The base
    kernel (Matérn-5/2 with one ARD lengthscale per dictionary row in
    :func:`bodi.models.gp.make_hed_model`) owns all hyperparameters.

    The dictionary's projection matrix (``Abar = 2A - 1``, ``m x d``, or the one-hot rows,
    ``m x sum(cardinalities)``) is a registered buffer, so ``model.to(device, dtype)`` moves it
    with the model and ``state_dict()`` saves it.

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
        self.register_buffer("dictionary_rows", dictionary.rows.clone())
        self.register_buffer("projection", dictionary.projection.clone())
        self.cardinalities = dictionary.cardinalities
        self.kind = dictionary.kind
        self.affine = dictionary.affine
        self.base_kernel = base_kernel

    @property
    def dictionary(self) -> Dictionary:
        """The dictionary, rebuilt from the buffer (on the buffer's device)."""
        return Dictionary(rows=self.dictionary_rows, cardinalities=self.cardinalities,
                          kind=self.kind)

    def embed(self, Z: Tensor) -> Tensor:
        """``... x d`` discrete inputs -> ``... x m`` normalised embedding in ``[0, 1]``."""
        if self.affine:
            phi = affine_embedding(Z, self.projection)
        else:
            phi = onehot_embedding(Z, self.projection, self.cardinalities)
        return phi / len(self.cardinalities)

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        """The base kernel on the embeddings; inputs that are the same points (the diagonal,
        the training covariance) are embedded once: the embedding is the costly part when
        ``d`` is large (``N x d x m`` multiply-adds). The diagonal of a stationary base kernel
        (Matérn, RBF) is its value at distance zero and needs no embedding at all."""
        if diag and x2 is x1 and isinstance(self.base_kernel, MaternKernel | RBFKernel):
            zero = x1.new_zeros(*x1.shape[:-2], 1, self.projection.shape[0])
            at_zero = self.base_kernel.forward(zero, zero, diag=True, **params)
            return at_zero.expand(*x1.shape[:-1])
        phi1 = self.embed(x1)
        same = x2 is x1 or (
            x2.shape == x1.shape and not (x1.requires_grad or x2.requires_grad)
            and torch.equal(x1, x2)
        )
        phi2 = phi1 if same else self.embed(x2)
        return self.base_kernel.forward(phi1, phi2, diag=diag, **params)
