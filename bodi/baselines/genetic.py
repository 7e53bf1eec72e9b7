"""A genetic algorithm with MCBO's settings, built on pymoo's mixed-variable GA.

Needs ``pymoo`` (the ``baselines`` extra); it is imported when a suggestion needs it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.extras import require
from bodi.integrations.spaces.codecs import from_index_values, index_values
from bodi.optimizers.model_based import ModelBasedOptimizer
from bodi.optimizers.random_search import sample_new_points
from bodi.seeding import derive_seed
from bodi.space import DTYPE, SearchSpace
from bodi.trials import History


class GeneticAlgorithm(ModelBasedOptimizer):
    """pymoo's ``MixedVariableGA`` as MCBO runs it (``PymooGeneticAlgorithm``), ask/tell.

    Settings (MCBO's): population 50, offspring 50 per generation, binary tournament selection
    by fitness, pymoo's mixed-variable mating (per variable type: crossover and mutation for
    binary, choice, integer and real variables) with duplicate elimination, fitness survival.
    Variables: ``Binary``, ``Choice`` over the category indices, ``Integer`` over ``[low, high]``
    and ``Real`` over the encoded ``[0, 1]`` of a continuous parameter. The shared initial design
    is told as the first population (MCBO's ``initialize``); with ``n_init=0`` the GA samples its
    own.

    pymoo's algorithm is stateful; each suggestion rebuilds it with the same seed and replays the
    history: the design as the first population, then generation after generation, each asked
    from pymoo and told with the trials that took its places (their points, which equal pymoo's
    unless the base class replaced a repeat, and their losses). A suggestion is the next unused
    member of the current generation. A failed trial gets the worst loss of the complete trials
    before it (``+inf`` if none). When a batch needs more points than the current generation has
    left (asynchronous workers), the rest are uniform samples.

    Args:
        space, seed, direction, directions, outcome_constraints, allow_repeats:
            see :class:`bodi.optimizers.Optimizer`.
        n_init: size of the shared initial design.
        pop_size: population size (MCBO: 50).
    """

    def __init__(self, space: SearchSpace, *, pop_size: int = 50, **kwargs: Any) -> None:
        pop_size = check_integer("pop_size", pop_size, 2)
        self.pop_size = pop_size
        super().__init__(space, **kwargs)

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "pop_size": self.pop_size}

    def _model_points(self, history: History, q: int, design: Tensor, taken: Tensor) -> Tensor:
        rows = self._next_members(history)[:q]
        if len(rows) == q:
            return torch.stack(rows)
        chosen = torch.stack(rows) if rows else taken[:0]
        more = sample_new_points(self.space, q - len(rows), torch.cat([taken, chosen]))
        return torch.cat([chosen, more])

    def _next_members(self, history: History) -> list[Tensor]:
        """The members of the current generation that no trial of ``history`` has taken yet
        (encoded rows)."""
        pymoo = _pymoo()
        problem = pymoo.problem(self.space)
        algorithm = pymoo.algorithm(self.pop_size)
        algorithm.setup(problem, termination=pymoo.NoTermination(),
                        seed=derive_seed(self.seed, 0, 0x6A) % 2**32)
        losses = {number: math.inf if loss is None else loss
                  for number, loss in history.finished_losses().items()}
        design = [t for t in history.trials if t.number < self.n_init and t.number in losses]
        rest = [t for t in history.trials if t.number >= self.n_init]
        if design:  # MCBO's initialize: the design is the first population
            population = pymoo.Population.new(
                "X", np.array([self._to_pymoo(t.x) for t in design], dtype=object)
            )
            self._evaluate(pymoo, problem, population, [losses[t.number] for t in design])
            algorithm.tell(infills=population)
        start = 0
        while True:
            generation = algorithm.ask()
            members = rest[start:start + len(generation)]
            if len(members) < len(generation) or any(t.number not in losses for t in members):
                return [self._from_pymoo(x) for x in generation.get("X")[len(members):]]
            for individual, trial in zip(generation, members, strict=True):
                individual.X = self._to_pymoo(trial.x)
            self._evaluate(pymoo, problem, generation, [losses[t.number] for t in members])
            algorithm.tell(infills=generation)
            start += len(generation)

    @staticmethod
    def _evaluate(pymoo: Any, problem: Any, population: Any, losses: list[float]) -> None:
        static = pymoo.StaticProblem(problem, F=np.asarray(losses, dtype=float).reshape(-1, 1))
        pymoo.Evaluator().eval(static, population)

    def _to_pymoo(self, x: Tensor) -> dict[str, Any]:
        values = index_values(self.space, x)
        for i in self.space.binary_dims:  # pymoo's Binary variables hold bools
            name = self.space.parameters[i].name
            values[name] = bool(values[name])
        return values

    def _from_pymoo(self, value: dict[str, Any]) -> Tensor:
        return torch.tensor(from_index_values(self.space, value), dtype=DTYPE)


class _Pymoo:
    """The pymoo pieces the GA uses, imported once (the ``baselines`` extra)."""

    def __init__(self) -> None:
        require("pymoo", "the ga baseline", "baselines")
        from pymoo.algorithms.soo.nonconvex.ga import FitnessSurvival, comp_by_cv_and_fitness
        from pymoo.config import Config
        from pymoo.core.evaluator import Evaluator
        from pymoo.core.mixed import (
            MixedVariableDuplicateElimination,
            MixedVariableGA,
            MixedVariableMating,
        )
        from pymoo.core.population import Population
        from pymoo.core.problem import Problem
        from pymoo.core.termination import NoTermination
        from pymoo.core.variable import Binary, Choice, Integer, Real
        from pymoo.operators.selection.tournament import TournamentSelection
        from pymoo.problems.static import StaticProblem

        Config.warnings["not_compiled"] = False
        self.Evaluator, self.Population, self.NoTermination = Evaluator, Population, NoTermination
        self.StaticProblem = StaticProblem
        self._vars = (Binary, Choice, Integer, Real)
        self._problem_class = Problem
        self._ga = (MixedVariableGA, MixedVariableMating, MixedVariableDuplicateElimination,
                    TournamentSelection, comp_by_cv_and_fitness, FitnessSurvival)

    def problem(self, space: SearchSpace) -> Any:
        Binary, Choice, Integer, Real = self._vars
        variables: dict[str, Any] = {}
        for p in space.parameters:
            if p.kind == "binary":
                variables[p.name] = Binary()
            elif p.kind == "categorical":
                variables[p.name] = Choice(options=list(range(p.cardinality)))
            elif p.kind == "integer":
                variables[p.name] = Integer(bounds=(p.low, p.high))
            else:
                variables[p.name] = Real(bounds=(0.0, 1.0))
        return self._problem_class(vars=variables, n_obj=1)

    def algorithm(self, pop_size: int) -> Any:
        GA, Mating, Duplicates, Tournament, compare, Survival = self._ga
        mating = Mating(selection=Tournament(func_comp=compare),
                        eliminate_duplicates=Duplicates())
        return GA(pop_size=pop_size, mating=mating, eliminate_duplicates=Duplicates(),
                  survival=Survival())


_PYMOO: _Pymoo | None = None


def _pymoo() -> _Pymoo:
    global _PYMOO
    if _PYMOO is None:
        _PYMOO = _Pymoo()
    return _PYMOO
