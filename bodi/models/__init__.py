"""Surrogate models: the HED kernel, the GP built on it and the baselines' kernels."""

from bodi.hed.kernel import HammingDistanceKernel, HammingEmbeddingKernel
from bodi.models.baseline_kernels import DiffusionKernel, make_diffusion_kernel, make_overlap_kernel
from bodi.models.gp import (
    fit_model,
    make_gp,
    make_hamming_kernel,
    make_hed_hamming_kernel,
    make_hed_model,
)
from bodi.models.registry import KERNELS, make_kernel, make_surrogate
from bodi.models.single_task import FastSingleTaskGP

__all__ = [
    "KERNELS",
    "DiffusionKernel",
    "FastSingleTaskGP",
    "HammingDistanceKernel",
    "HammingEmbeddingKernel",
    "fit_model",
    "make_diffusion_kernel",
    "make_gp",
    "make_hamming_kernel",
    "make_hed_hamming_kernel",
    "make_hed_model",
    "make_kernel",
    "make_overlap_kernel",
    "make_surrogate",
]
