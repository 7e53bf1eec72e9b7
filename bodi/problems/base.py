"""Benchmark problems: a search space, a vectorised objective and what is known of the optimum."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from bodi.space import DTYPE, SearchSpace


@dataclass(frozen=True)
class Problem:
    """A test problem.

    Attributes:
        name: short name (e.g. ``"planted-binary20"``).
        space: its search space.
        evaluate_encoded: ``n x dim`` encoded inputs -> ``n`` values (batched evaluation).
        direction: ``"minimize"`` or ``"maximize"``.
        optimal_value: the known optimum, if any.
        optimal_params: a configuration reaching it, if known.
        initial_params: a known working configuration that a user would start from (e.g. a
            feasible sequence where most are infeasible); the benchmark runner evaluates it
            first in every run, before the initial design.
    """

    name: str
    space: SearchSpace
    evaluate_encoded: Callable[[Tensor], Tensor]
    direction: str = "minimize"
    optimal_value: float | None = None
    optimal_params: dict[str, Any] | None = None
    initial_params: dict[str, Any] | None = None

    def __call__(self, params: dict[str, Any]) -> float:
        """Evaluate one configuration given as a dict of parameter values."""
        return float(self.evaluate_encoded(self.space.encode(params))[0])

    def evaluate(self, configs: list[dict[str, Any]]) -> Tensor:
        """Evaluate a list of configurations: ``n`` values.

        Row by row: a batched matrix product sums in an order that depends on the batch, so a
        value could change in its last bit with the rows beside it (and a resumed benchmark,
        which evaluates a different batch, would then differ from an uninterrupted one).
        """
        X = self.space.encode(configs)
        if len(X) == 0:
            return torch.empty(0, dtype=DTYPE)
        return torch.cat([self.evaluate_encoded(x.unsqueeze(0)).reshape(1) for x in X]).to(DTYPE)


def random_bits(d: int, generator: torch.Generator) -> Tensor:
    """A random ``d``-bit string that is neither all zeros nor all ones (for ``d > 1``)."""
    while True:
        bits = torch.randint(0, 2, (d,), generator=generator).to(DTYPE)
        if d == 1 or 0 < bits.sum() < d:
            return bits
