"""Surrogate models: the HED kernel and the GP built on it."""

from bodi.models.gp import fit_model, make_hed_model
from bodi.models.kernels import HammingEmbeddingKernel

__all__ = ["HammingEmbeddingKernel", "fit_model", "make_hed_model"]
