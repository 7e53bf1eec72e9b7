"""RNA inverse folding with ViennaRNA: design a sequence that folds into a target structure.

``rna<N>`` (instance seed 0) and ``rna<N>-i<S>`` by name: ``N`` categorical parameters
``b1 .. bN`` with the choices ``A, C, G, U``; the objective (minimize) is the base-pair
distance between the minimum-free-energy (MFE) structure of the designed sequence, folded by
ViennaRNA (``RNA.fold``), and the target structure, ``RNA.bp_distance``: the number of base
pairs in one structure and not in the other. The target is the MFE structure of a sequence
drawn uniformly at random with ``numpy.random.RandomState(S)``, so every instance is designable
and its optimum is 0 (reached by that sequence, among others). A target without any base pair
(a short random sequence may fold to none) is drawn again with the next sequence of the same
generator, so every instance has something to design.

ViennaRNA is the ``viennarna`` package on PyPI (in the ``bench`` extra); it is imported when
a problem is built.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.extras import require
from bodi.problems.base import Problem
from bodi.space import DTYPE, Categorical, SearchSpace

BASES = ("A", "C", "G", "U")
#: sequences shorter than this cannot pair (hairpin loops need at least three unpaired bases)
MIN_LENGTH = 8


def target_structure(length: int, instance_seed: int = 0) -> tuple[str, str]:
    """``(sequence, structure)``: a random sequence of ``length`` bases and its MFE structure
    (dot-bracket), the first draw of the generator whose structure has a base pair."""
    rna = require("RNA", "the RNA inverse-folding problems")
    generator = np.random.RandomState(instance_seed)
    while True:
        sequence = "".join(BASES[i] for i in generator.randint(0, len(BASES), size=length))
        structure, _ = rna.fold(sequence)
        if "(" in structure:
            return sequence, structure


def rna_folding(length: int, instance_seed: int = 0) -> Problem:
    """The inverse-folding instance with ``length`` bases and target seed ``instance_seed``
    (see the module docstring)."""
    length = check_integer("length", length)
    if length < MIN_LENGTH:
        raise ValueError(f"rna<N> needs N >= {MIN_LENGTH}, got {length}")
    rna = require("RNA", "the RNA inverse-folding problems")
    designed, target = target_structure(length, instance_seed)
    space = SearchSpace([Categorical(f"b{i + 1}", list(BASES)) for i in range(length)])

    def evaluate(X: Tensor) -> Tensor:
        rows = torch.as_tensor(X).reshape(-1, length).round().long().tolist()
        distances = [rna.bp_distance(rna.fold("".join(BASES[b] for b in row))[0], target)
                     for row in rows]
        return torch.tensor(distances, dtype=DTYPE).reshape(torch.as_tensor(X).shape[:-1])

    name = f"rna{length}" if instance_seed == 0 else f"rna{length}-i{instance_seed}"
    return Problem(name, space, evaluate, "minimize", optimal_value=0.0,
                   optimal_params={f"b{i + 1}": base for i, base in enumerate(designed)})
