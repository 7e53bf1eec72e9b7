"""Benchmark problems by name.

Names: ``labs<N>`` (e.g. ``labs50``), ``maxsat60`` (needs the frb10-6-4.wcnf file: ``wcnf=``),
``maxsat-random<N>``, ``maxsat-frb<N>`` (frb10-6-4's construction at ``N`` variables, a
multiple of 6, e.g. ``maxsat-frb126``), ``pest`` and ``pest<N>`` (``N`` stages, e.g.
``pest50``), ``ackley53``, ``svm53`` (optional ``csv=``),
``planted-binary<N>``, ``ackley<N>`` (``N - 3`` binary and 3 continuous parameters, e.g.
``ackley103``), ``ackley-categorical<N>`` (``N`` categorical parameters with 11 values,
e.g. ``ackley-categorical20``), ``rna<N>`` and ``rna<N>-i<S>`` (RNA inverse folding of ``N``
bases, target seed ``S``; :mod:`bodi.problems.rna`), and any of these followed by
``-shifted``, which may carry an instance seed, ``-shifted-i<S>`` (the shift drawn with seed
``S``; ``-shifted`` is ``-shifted-i0``), so that every family has as many instances as
seeds; ``ehrlich<L>`` and ``ehrlich<L>-i<S>`` (Ehrlich functions of length ``L``, 20 states,
2 motifs of 4, instance seed ``S``; :mod:`bodi.problems.ehrlich`); then optionally by
``-atmost<K>`` (at most ``K`` binary parameters on, e.g. ``svm53-atmost10``;
:mod:`bodi.problems.constrained`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from bodi.problems.ackley import ackley, categorical_ackley
from bodi.problems.base import Problem
from bodi.problems.constrained import SUFFIX as AT_MOST
from bodi.problems.constrained import at_most
from bodi.problems.labs import labs
from bodi.problems.maxsat import frb_maxsat, maxsat60, random_maxsat
from bodi.problems.pest import pest
from bodi.problems.planted import planted_binary
from bodi.problems.shifted import DEFAULT_SHIFT_SEED, SUFFIX, shifted
from bodi.problems.svm import svm53

#: Concrete names, each resolvable by :func:`get_problem` (``maxsat60`` needs its data file).
PROBLEMS: tuple[str, ...] = (
    "labs50", "maxsat60", "pest", "ackley53", "svm53", "maxsat-random60", "planted-binary20",
)
#: Families with a size ``N``.
PATTERNS: tuple[str, ...] = (
    "labs<N>", "maxsat-random<N>", "maxsat-frb<N>", "planted-binary<N>", "ackley<N>", "pest<N>",
    "ackley-categorical<N>", "rna<N>", "rna<N>-i<S>", "ehrlich<L>", "ehrlich<L>-i<S>",
)

_FAMILIES: dict[str, tuple[int, Callable[[int], Problem]]] = {
    "labs": (2, labs),
    "maxsat-random": (1, random_maxsat),
    "maxsat-frb": (12, frb_maxsat),
    "planted-binary": (1, planted_binary),
    "ackley": (4, ackley),
    "pest": (1, lambda stages: pest(stages=stages)),
    "ackley-categorical": (1, categorical_ackley),
}


#: the families' names as a regular-expression alternation, longest first (``ackley`` after
#: ``ackley-categorical``)
_FAMILY_NAMES = "|".join(sorted(map(re.escape, _FAMILIES), key=len, reverse=True))


def _valid_names() -> str:
    return (
        ", ".join([*PROBLEMS, *PATTERNS])
        + f" (any of them may end in {SUFFIX!r}, then in '{AT_MOST}<K>')"
    )


def get_problem(
    name: str,
    *,
    wcnf: str | Path | None = None,
    csv: str | Path | None = None,
    shift_seed: int = DEFAULT_SHIFT_SEED,
) -> Problem:
    """The problem called ``name``; ``wcnf`` is the frb10-6-4 file for ``maxsat60`` (else
    searched for, see :func:`~bodi.problems.maxsat.find_maxsat60`), ``csv`` the slice
    localization data for ``svm53`` (else the bundled digits stand-in), ``shift_seed`` the seed
    of the ``-shifted`` variants."""
    if not isinstance(name, str):
        raise ValueError(f"problem name must be a string, got {name!r}")
    base = name.strip().lower()
    limit = re.fullmatch(rf"(.+){AT_MOST}(\d+)", base)
    if limit:
        inner = get_problem(limit.group(1), wcnf=wcnf, csv=csv, shift_seed=shift_seed)
        return at_most(inner, int(limit.group(2)))
    instance = re.fullmatch(rf"(.+){SUFFIX}-i(\d+)", base)
    if instance:  # a shift of its own: another instance of the family
        base, shift_seed = instance.group(1) + SUFFIX, int(instance.group(2))
    is_shifted = base.endswith(SUFFIX)
    if is_shifted:
        base = base[: -len(SUFFIX)]
    problem = _base_problem(base, name, wcnf, csv)
    if not is_shifted:
        return problem
    moved = shifted(problem, shift_seed)
    if shift_seed == DEFAULT_SHIFT_SEED:
        return moved
    return dataclasses.replace(moved, name=f"{moved.name}-i{shift_seed}")


def _base_problem(base: str, name: str, wcnf, csv) -> Problem:
    if base == "maxsat60":
        return maxsat60(wcnf)
    if base == "pest":
        return pest()
    if base == "svm53":
        return svm53(csv)
    sequence = re.fullmatch(r"ehrlich(\d+)(?:-i(\d+))?", base)
    if sequence:
        from bodi.problems.ehrlich import ehrlich

        return ehrlich(int(sequence.group(1)), instance_seed=int(sequence.group(2) or 0))
    rna = re.fullmatch(r"rna(\d+)(?:-i(\d+))?", base)
    if rna:
        from bodi.problems.rna import rna_folding

        return rna_folding(int(rna.group(1)), int(rna.group(2) or 0))
    match = re.fullmatch(rf"({_FAMILY_NAMES})(\d+)", base)
    if match:
        family, size = match.group(1), int(match.group(2))
        minimum, factory = _FAMILIES[family]
        if size < minimum:
            raise ValueError(f"unknown problem {name!r}: {family}<N> needs N >= {minimum}")
        return factory(size)
    raise ValueError(f"unknown problem {name!r}; valid names: {_valid_names()}")
