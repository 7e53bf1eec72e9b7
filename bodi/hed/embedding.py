"""The Hamming embedding via dictionaries (HED), computed as one matrix product.

For a dictionary ``A`` with rows ``a_1 .. a_m`` of discrete values, the embedding of ``z`` is

    phi_A(z)_i = h(a_i, z) = #{ j : a_ij != z_j }                       (paper, Sec. 3)

For binary inputs Proposition 1 gives the affine form ``2 phi_A(z) = d 1_m - Abar zbar`` with
``Abar = 2A - 1`` and ``zbar = 2z - 1``; for categorical inputs the same count is
``d - onehot(z) . onehot(a_i)``. Both are a single matrix product over a batch of inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor


def one_hot(Z: Tensor, cardinalities: Sequence[int]) -> Tensor:
    """One-hot encode index-valued inputs.

    Args:
        Z: ``... x d`` tensor; column ``j`` holds an index in ``0 .. cardinalities[j] - 1``.
        cardinalities: number of values of each column.

    Returns:
        ``... x sum(cardinalities)`` tensor of zeros and ones, dtype of ``Z``.
    """
    cards = torch.as_tensor(list(cardinalities), device=Z.device)
    offsets = torch.cumsum(cards, 0) - cards
    index = Z.detach().round().long().clamp(min=0) + offsets
    out = torch.zeros(*Z.shape[:-1], int(cards.sum()), dtype=Z.dtype, device=Z.device)
    return out.scatter_(-1, index, 1.0)


def affine_embedding(Z: Tensor, A_bar: Tensor) -> Tensor:
    """Proposition 1: ``phi(z) = (d - Abar (2z - 1)) / 2`` for binary ``z``.

    With ``A_bar = 2A - 1`` for a binary dictionary ``A`` this is exactly the Hamming distance to
    each row; with a real ``A_bar`` (e.g. Gaussian) it is the paper's affine comparison embedding.

    Args:
        Z: ``... x d`` binary inputs (0/1).
        A_bar: ``m x d`` matrix.

    Returns:
        ``... x m`` embedding.
    """
    d = Z.shape[-1]
    return 0.5 * (d - (2.0 * Z - 1.0) @ A_bar.to(Z).transpose(-1, -2))


def hamming_embedding(Z: Tensor, A: Tensor, cardinalities: Sequence[int]) -> Tensor:
    """Hamming distances between each input and each dictionary row, in one matrix product.

    Args:
        Z: ``... x d`` index-valued inputs.
        A: ``m x d`` index-valued dictionary.
        cardinalities: number of values of each of the ``d`` columns.

    Returns:
        ``... x m`` tensor; entry ``i`` is ``h(a_i, z)``, an integer in ``0 .. d``.
    """
    if all(c == 2 for c in cardinalities):
        return affine_embedding(Z, 2.0 * A.to(Z) - 1.0)
    return onehot_embedding(Z, one_hot(A.to(Z), cardinalities), cardinalities)


def onehot_embedding(Z: Tensor, A_onehot: Tensor, cardinalities: Sequence[int]) -> Tensor:
    """``phi(z) = d - onehot(z) onehot(A)^T`` for index-valued ``z`` (``... x d``) and a one-hot
    encoded dictionary ``A_onehot`` (``m x sum(cardinalities)``); returns ``... x m``."""
    return Z.shape[-1] - one_hot(Z, cardinalities) @ A_onehot.to(Z).transpose(-1, -2)
