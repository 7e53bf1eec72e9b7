"""Benchmark problems with several objectives: ``svm53-cost`` (test error against feature cost).

A :class:`MultiObjectiveProblem` has a search space, a function of one configuration that returns
one value per objective, the directions, a fixed reference point for the hypervolume of the
results (in the objectives' own units) and the objectives that are known functions of the
parameters (given to BODi as ``known_objectives``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bodi.problems.svm import N_FEATURES, svm53
from bodi.space import SearchSpace

#: the seed of the feature costs of ``svm53-cost``
COST_SEED = 0


@dataclass(frozen=True)
class MultiObjectiveProblem:
    """A test problem with ``k`` objectives.

    Attributes:
        name: short name.
        space: its search space.
        evaluate: a configuration (dict) -> ``k`` values.
        directions: ``k`` directions.
        ref_point: ``k`` values (objectives' units): the hypervolume of a result counts what
            it dominates between its points and this point.
        known_objectives: the objectives known exactly, as BODi's ``known_objectives`` takes
            them (``{index: function(params)}`` or ``{index: {binary parameter: weight}}``).
    """

    name: str
    space: SearchSpace
    evaluate: Callable[[dict[str, Any]], list[float]]
    directions: tuple[str, ...]
    ref_point: tuple[float, ...]
    known_objectives: dict[int, Any] = field(default_factory=dict)

    def __call__(self, params: dict[str, Any]) -> list[float]:
        return self.evaluate(params)


def feature_costs(seed: int = COST_SEED) -> np.ndarray:
    """``N_FEATURES`` costs, uniform in ``[0.1, 1]`` (``numpy.random.RandomState(seed)``),
    scaled to sum to 1."""
    costs = np.random.RandomState(seed).uniform(0.1, 1.0, size=N_FEATURES)
    return costs / costs.sum()


def svm53_cost(csv_path: str | None = None, seed: int = 0) -> MultiObjectiveProblem:
    """``svm53`` as two objectives to minimize: the test RMSE (:func:`bodi.problems.svm53`)
    and the summed cost of the selected features (in ``[0, 1]``; each feature's cost from
    :func:`feature_costs`, a known function of the parameters). Reference point ``(1, 1)``:
    an RMSE of 1 is that of predicting the mean (the target is standardized), a cost of 1
    that of every feature."""
    problem = svm53(csv_path, seed)
    costs = feature_costs()
    names = [f"f{i + 1}" for i in range(N_FEATURES)]

    def cost(params: dict[str, Any]) -> float:
        return float(sum(c for c, name in zip(costs, names, strict=True) if params[name]))

    def evaluate(params: dict[str, Any]) -> list[float]:
        x = problem.space.encode(params)
        return [float(problem.evaluate_encoded(x)[0]), cost(params)]

    weights = {name: float(c) for name, c in zip(names, costs, strict=True)}
    return MultiObjectiveProblem("svm53-cost", problem.space, evaluate,
                                 ("minimize", "minimize"), (1.0, 1.0), {1: weights})


#: name -> constructor
MULTI_OBJECTIVE_PROBLEMS: dict[str, Callable[[], MultiObjectiveProblem]] = {
    "svm53-cost": svm53_cost,
}
