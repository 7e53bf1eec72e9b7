"""Every GP kernel of bodi by name: the one registry that BODi (``kernel=``), the GP baselines
and the model-fit experiments (:func:`make_surrogate`) read.

==================  ===================================================================  ==========
name                covariance of the binary/categorical columns (times a Matérn-5/2     dictionary
                    ARD of the integer/continuous ones)
==================  ===================================================================  ==========
``hed*hamming``     HED times a Matérn-5/2 of the exact Hamming distance (BODi's           yes
                    default; :func:`~bodi.models.gp.make_hed_hamming_kernel`)
``hed``             the HED kernel, the paper's (:func:`~bodi.models.gp.make_hed_kernel`)  yes
``hamming``         a Matérn-5/2 of the exact Hamming distance, one lengthscale (BODi's    no
                    default on all-categorical spaces;
                    :func:`~bodi.models.gp.make_hamming_kernel`)
``overlap``         CASMOPOLITAN's (:func:`~bodi.models.baseline_kernels.make_overlap_kernel`)   no
``diffusion``       COMBO's (:func:`~bodi.models.baseline_kernels.make_diffusion_kernel`)        no
==================  ===================================================================  ==========

Adding a kernel is one factory ``(space, dictionary) -> Kernel`` and one entry of
:data:`KERNELS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpytorch.kernels import Kernel
from torch import Tensor

from bodi.hed.dictionaries import DICTIONARY_KINDS, Dictionary, dictionary_problem, make_dictionary
from bodi.models.baseline_kernels import make_diffusion_kernel, make_overlap_kernel
from bodi.models.gp import (
    make_gp,
    make_hamming_kernel,
    make_hed_hamming_kernel,
    make_hed_kernel,
)
from bodi.models.single_task import FastSingleTaskGP
from bodi.space import SearchSpace


@dataclass(frozen=True)
class KernelEntry:
    """A kernel of the registry: its factory ``make(space, dictionary)`` (``dictionary``:
    ``None`` for a kernel that uses none, or on a space without binary/categorical
    parameters) and whether it uses a dictionary."""

    make: Callable[[SearchSpace, Dictionary | None], Kernel]
    uses_dictionary: bool


#: name -> kernel
KERNELS: dict[str, KernelEntry] = {
    "hed*hamming": KernelEntry(make_hed_hamming_kernel, True),
    "hed": KernelEntry(make_hed_kernel, True),
    "hamming": KernelEntry(lambda space, _: make_hamming_kernel(space), False),
    "overlap": KernelEntry(lambda space, _: make_overlap_kernel(space), False),
    "diffusion": KernelEntry(lambda space, _: make_diffusion_kernel(space), False),
}


def check_kernel(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is a kernel of :data:`KERNELS`."""
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; choose one of {list(KERNELS)}")


def uses_dictionary(name: str) -> bool:
    """Whether kernel ``name`` is built on a dictionary (the HED kernels)."""
    check_kernel(name)
    return KERNELS[name].uses_dictionary


def make_kernel(name: str, space: SearchSpace, dictionary: Dictionary | None = None) -> Kernel:
    """Kernel ``name`` for ``space`` (with ``dictionary`` where it uses one)."""
    check_kernel(name)
    return KERNELS[name].make(space, dictionary)


def _surrogate_parts(name: str) -> tuple[str, str | None]:
    """``"hed-wavelet"`` -> ``("hed", "wavelet")``; ``"overlap"`` -> ``("overlap", None)``."""
    kernel, _, kind = name.rpartition("-") if "-" in name else (name, "", "")
    if kernel not in KERNELS or (kind and kind not in DICTIONARY_KINDS):
        raise ValueError(f"unknown surrogate {name!r}: a kernel of {list(KERNELS)}, with "
                         f"'-<dictionary>' ({', '.join(DICTIONARY_KINDS)}) where it uses one")
    if KERNELS[kernel].uses_dictionary and not kind:
        raise ValueError(f"surrogate {name!r} needs a dictionary: '{name}-<dictionary>' "
                         f"({', '.join(DICTIONARY_KINDS)})")
    if kind and not KERNELS[kernel].uses_dictionary:
        raise ValueError(f"kernel {kernel!r} of surrogate {name!r} uses no dictionary")
    return kernel, kind or None


def make_surrogate(name: str, train_X: Tensor, train_Y: Tensor, space: SearchSpace, *,
                   seed: int, dictionary_size: int = 128) -> FastSingleTaskGP:
    """An unfitted GP (:func:`bodi.models.gp.make_gp`) called ``name`` on ``n x dim`` encoded
    ``train_X`` and ``n x 1`` ``train_Y``: a kernel of :data:`KERNELS`, followed by
    ``-<kind>`` for one that uses a dictionary (``"hed-diverse"``); ``seed`` draws the
    dictionary (``make_dictionary(kind, dictionary_size, space.cardinalities, seed=seed)``).

    Raises:
        ValueError: for an unknown name, and for a dictionary kind defined for bits only
            (``wavelet``, ``gaussian``) on a space with a categorical parameter.
    """
    kernel, kind = _surrogate_parts(name)
    dictionary = None
    if kind is not None and space.discrete_dims:
        problem = dictionary_problem(kind, space.cardinalities)
        if problem is not None:
            raise ValueError(f"surrogate {name!r} needs binary parameters only: {problem}")
        dictionary = make_dictionary(kind, dictionary_size, space.cardinalities, seed=seed)
    return make_gp(train_X, train_Y, make_kernel(kernel, space, dictionary))


def surrogate_available(name: str, space: SearchSpace) -> bool:
    """Whether :func:`make_surrogate` can build ``name`` on ``space``."""
    _, kind = _surrogate_parts(name)
    return kind is None or dictionary_problem(kind, space.cardinalities) is None


__all__ = ["KERNELS", "KernelEntry", "check_kernel", "make_kernel", "make_surrogate",
           "surrogate_available", "uses_dictionary"]
