"""Simulated annealing with the settings of MCBO's ``SimulatedAnnealing`` (Dreczkowski, Grosnit
and Bou Ammar, NeurIPS 2023), behind bodi's ask/tell interface.

Small and our own: no package fits, and MCBO's own is a few lines of state on top of its search
space classes.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from bodi.checks import check_integer, check_positive_number
from bodi.novelty import SeenConfigurations
from bodi.optimizers.model_based import ModelBasedOptimizer
from bodi.optimizers.random_search import sample_new_points
from bodi.seeding import derive_seed
from bodi.space import SearchSpace
from bodi.trials import History


class SimulatedAnnealing(ModelBasedOptimizer):
    """Simulated annealing over binary, categorical and mixed spaces (MCBO's settings).

    State: a current point, the best point and a temperature ``T`` (``init_temp = 100``). The
    shared initial design plays MCBO's ``initialize``: its best point becomes the current one and
    ``T`` is kept. Each later observation (a complete trial, in trial order; MCBO observes a batch
    at once and we observe one trial at a time) multiplies ``T`` by ``cooling = 0.8``; a point
    better than the best becomes the current one, a worse one replaces the current one with
    probability ``clip(exp(clip(-(y - y_current) / T, -12, 0)), 1e-5, 1)`` (losses, i.e. values
    for ``minimize`` and negated values for ``maximize``). A proposal is a neighbour of the current
    point: one binary/categorical parameter set to another value chosen uniformly (the parameter
    too), retried up to ``tolerance = 1000`` times until the point was never proposed, then a
    uniform sample; every continuous and integer parameter moved by a Gaussian step of standard
    deviation ``step = 0.1`` on its ``[0, 1]`` encoding, clipped (integers rounded).

    The state is a pure function of the history: the acceptance draw of trial ``k`` comes from a
    generator seeded by ``(seed, k)``, so a resumed or rebuilt optimizer continues exactly.

    Args:
        space, seed, direction, directions, outcome_constraints, allow_repeats:
            see :class:`bodi.optimizers.Optimizer`.
        n_init: size of the shared initial design (``0``: the first point is uniform).
        init_temp, cooling, step, tolerance: as above (MCBO's defaults).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        init_temp: float = 100.0,
        cooling: float = 0.8,
        step: float = 0.1,
        tolerance: int = 1000,
        **kwargs: Any,
    ) -> None:
        for name, value in (("init_temp", init_temp), ("step", step)):
            check_positive_number(name, value)
        if isinstance(cooling, bool) or not isinstance(cooling, int | float) or not (
            0 < cooling <= 1
        ):
            raise ValueError(f"cooling must be in (0, 1], got {cooling!r}")
        tolerance = check_integer("tolerance", tolerance)
        self.init_temp, self.cooling, self.step = float(init_temp), float(cooling), float(step)
        self.tolerance = tolerance
        super().__init__(space, **kwargs)

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "init_temp": self.init_temp, "cooling": self.cooling,
                "step": self.step, "tolerance": self.tolerance}

    def annealing_state(self, history: History) -> tuple[Tensor, float, float]:
        """``(current point, its loss, temperature)`` after replaying the complete trials of
        ``history``."""
        complete = [t for t in history.trials if t.state == "complete"]
        design = [t for t in complete if t.number < self.n_init]
        later = [t for t in complete if t.number >= self.n_init]
        if not design:  # MCBO's first observation initializes the state
            design, later = later[:1], later[1:]
        first = min(design, key=lambda t: -self.sign * t.value)
        current, current_loss = first.x, -self.sign * first.value
        best_loss, temp = current_loss, self.init_temp
        for trial in later:
            temp *= self.cooling
            loss = -self.sign * trial.value
            if loss < best_loss:
                current, current_loss, best_loss = trial.x, loss, loss
                continue
            exponent = min(max(-(loss - current_loss) / temp, -12.0), 0.0)
            accept = min(max(math.exp(exponent), 1e-5), 1.0)
            g = torch.Generator().manual_seed(derive_seed(self.seed, trial.number, 0x5A))
            if torch.rand(1, generator=g, dtype=torch.float64).item() < accept:
                current, current_loss = trial.x, loss
        return current, current_loss, temp

    def _model_points(self, history: History, q: int, design: Tensor, taken: Tensor) -> Tensor:
        current, _, _ = self.annealing_state(history)
        g = torch.Generator().manual_seed(derive_seed(self.seed, len(history.trials), 0x5A1))
        seen = SeenConfigurations(self.space, taken)
        points = []
        for _ in range(q):
            x = self._neighbour(history, current, seen, g)
            seen.add(x)
            points.append(x)
        return torch.stack(points)

    def _neighbour(self, history: History, current: Tensor, seen: SeenConfigurations,
                   g: torch.Generator) -> Tensor:
        space = self.space
        discrete, numeric = space.discrete_dims, space.ordinal_dims
        for _ in range(self.tolerance):
            x = current.clone()
            if discrete:
                i = discrete[int(torch.randint(len(discrete), (1,), generator=g))]
                others = [v for v in range(space.parameters[i].cardinality) if v != x[i]]
                x[i] = float(others[int(torch.randint(len(others), (1,), generator=g))])
            if numeric:
                noise = torch.randn(len(numeric), generator=g, dtype=x.dtype) * self.step
                x[numeric] = (x[numeric] + noise).clamp(0.0, 1.0)
            x = space.round(x.unsqueeze(0))[0]
            if not space.is_discrete or x not in seen:
                return x
        taken = torch.cat([history.X, current.unsqueeze(0)])
        return sample_new_points(space, 1, taken)[0]
