"""Constrained variants of the benchmark problems: ``<problem>-atmost<K>``.

``svm53-atmost10`` is SVM53's feature selection with at most 10 of its 50 features: the space
gets the linear constraint ``sum of the binary parameters <= K``
(:class:`bodi.constraints.LinearConstraint`); the objective is unchanged. Every configuration an
optimizer proposes then satisfies it (see :mod:`bodi.constraints`).
"""

from __future__ import annotations

import dataclasses

from bodi.constraints import LinearConstraint
from bodi.problems.base import Problem
from bodi.space import SearchSpace

#: the name suffix of :func:`at_most`, followed by ``K``
SUFFIX = "-atmost"


def at_most(problem: Problem, k: int) -> Problem:
    """``problem`` with at most ``k`` of its binary parameters on (true).

    The optimum is no longer known (the unconstrained one may use more than ``k``), so
    ``optimal_value`` is dropped.
    """
    binary = [problem.space.parameters[i].name for i in problem.space.binary_dims]
    if not binary:
        raise ValueError(f"{problem.name}{SUFFIX}{k}: the problem has no binary parameter")
    if not 0 <= k < len(binary):
        raise ValueError(f"{problem.name}{SUFFIX}{k}: K must be in 0 .. {len(binary) - 1}")
    space = SearchSpace(problem.space.parameters,
                        [*problem.space.constraints,
                         LinearConstraint(dict.fromkeys(binary, 1.0), upper=k)])
    return dataclasses.replace(problem, name=f"{problem.name}{SUFFIX}{k}", space=space,
                               optimal_value=None, optimal_params=None)
