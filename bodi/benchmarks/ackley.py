"""Mixed Ackley with 50 binary and 3 continuous variables ("Ackley53", minimize).

``z = (x_1 .. x_50, v_1 .. v_3)`` with binary ``x`` (parameters ``x1 .. x50``) and
``v = 2u - 1`` for the continuous ``u`` in ``[0, 1]^3`` (parameters ``u1 .. u3``), ``D = 53``:

    f = 20 + e - 20 exp(-0.2 sqrt(sum z^2 / D)) - exp(sum cos(2 pi z) / D)

The optimum 0 is at ``x = 0``, ``u = 0.5``. The authors' code adds uniform noise in
``[0, 1e-6)``; ``noise=True`` does the same (drawn from a generator seeded with ``seed``).
(BoTorch's ``AckleyMixed`` is a different parametrisation, not the paper's.)
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from bodi.benchmarks.base import Problem
from bodi.seeding import as_generator
from bodi.space import DTYPE, Binary, Continuous, SearchSpace

N_BINARY = 50
N_CONTINUOUS = 3
NOISE_SCALE = 1e-6


def ackley_mixed(X: Tensor) -> Tensor:
    """Ackley53 of each row of an ``... x 53`` encoded tensor (50 bits, then 3 ``u`` in [0,1])."""
    X = torch.as_tensor(X, dtype=DTYPE)
    if X.shape[-1] != N_BINARY + N_CONTINUOUS:
        raise ValueError(f"expected ... x {N_BINARY + N_CONTINUOUS} inputs, got {tuple(X.shape)}")
    z = torch.cat([X[..., :N_BINARY], 2.0 * X[..., N_BINARY:] - 1.0], dim=-1)
    d = z.shape[-1]
    return (
        20.0
        + math.e
        - 20.0 * torch.exp(-0.2 * torch.sqrt((z**2).sum(-1) / d))
        - torch.exp(torch.cos(2.0 * math.pi * z).sum(-1) / d)
    )


def ackley53(noise: bool = False, seed: int | None = 0) -> Problem:
    """The paper's mixed Ackley problem (minimize, optimum 0 at ``x = 0``, ``u = 0.5``)."""
    space = SearchSpace(
        [Binary(f"x{i + 1}") for i in range(N_BINARY)]
        + [Continuous(f"u{j + 1}", 0.0, 1.0) for j in range(N_CONTINUOUS)]
    )
    generator = as_generator(seed) if noise else None

    def evaluate(X: Tensor) -> Tensor:
        value = ackley_mixed(X)
        if generator is not None:
            value = value + NOISE_SCALE * torch.rand(
                value.shape, generator=generator, dtype=DTYPE
            )
        return value

    optimum = {**{f"x{i + 1}": False for i in range(N_BINARY)},
               **{f"u{j + 1}": 0.5 for j in range(N_CONTINUOUS)}}
    return Problem("ackley53", space, evaluate, "minimize", 0.0, optimum)
