"""Shifted variants: the optimum moved away from special points (after Bounce, NeurIPS 2023).

A shift acts on encoded configurations: binary ``x -> x XOR mask``, categorical index
``x_i -> (x_i + s_i) mod k_i``, continuous and integer columns unchanged. The shifted problem is

    f_shifted(z) = f(unshift(z)),   so   f_shifted(shift(x)) = f(x)

and its optimum is ``shift(original optimum)`` with the same value. The mask (never all zeros or
all ones when there are at least two binary parameters) and the offsets ``s_i`` (uniform in
``0 .. k_i - 1``) are drawn once from a ``torch.Generator`` seeded with the shift seed (default
0), which is independent of any optimizer seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from bodi.problems.base import Problem, random_bits
from bodi.seeding import as_generator
from bodi.space import DTYPE, SearchSpace

SUFFIX = "-shifted"
DEFAULT_SHIFT_SEED = 0


@dataclass(frozen=True)
class Shift:
    """A shift of a search space's encoding: ``mask`` on the binary and ``offsets`` on the
    categorical columns (``binary_dims``/``categorical_dims`` of the space, in that order)."""

    binary_dims: tuple[int, ...]
    mask: Tensor
    categorical_dims: tuple[int, ...]
    offsets: Tensor
    cardinalities: Tensor

    @classmethod
    def draw(cls, space: SearchSpace, seed: int = DEFAULT_SHIFT_SEED) -> Shift:
        g = as_generator(seed)
        binary = tuple(space.binary_dims)
        categorical = tuple(space.categorical_dims)
        mask = random_bits(len(binary), g) if binary else torch.zeros(0, dtype=DTYPE)
        k = torch.tensor([space.parameters[i].cardinality for i in categorical], dtype=DTYPE)
        offsets = (torch.rand(len(categorical), generator=g, dtype=DTYPE) * k).floor()
        return cls(binary, mask, categorical, torch.minimum(offsets, k - 1), k)

    def _move(self, X: Tensor, sign: float) -> Tensor:
        X = torch.as_tensor(X, dtype=DTYPE).clone()
        if self.binary_dims:
            b = list(self.binary_dims)
            X[..., b] = (X[..., b] - self.mask).abs()  # XOR on 0/1 values
        if self.categorical_dims:
            c = list(self.categorical_dims)
            X[..., c] = torch.remainder(X[..., c] + sign * self.offsets, self.cardinalities)
        return X

    def apply(self, X: Tensor) -> Tensor:
        """``shift(x)`` of encoded rows."""
        return self._move(X, 1.0)

    def invert(self, Z: Tensor) -> Tensor:
        """``unshift(z)``: the inverse of :meth:`apply`."""
        return self._move(Z, -1.0)


def shifted(problem: Problem, seed: int = DEFAULT_SHIFT_SEED) -> Problem:
    """The shifted variant of ``problem``, named ``problem.name + "-shifted"``."""
    shift = Shift.draw(problem.space, seed)
    original = problem.evaluate_encoded

    def evaluate(Z: Tensor) -> Tensor:
        return original(shift.invert(Z))

    def moved(params: dict | None) -> dict | None:  # a configuration, where the shift puts it
        if params is None:
            return None
        return problem.space.decode(shift.apply(problem.space.encode(params)))[0]

    return Problem(
        problem.name + SUFFIX, problem.space, evaluate, problem.direction,
        problem.optimal_value, moved(problem.optimal_params), moved(problem.initial_params),
    )
