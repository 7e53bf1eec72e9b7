"""Mixed Ackley with 50 binary and 3 continuous variables ("Ackley53", minimize).

``z = (x_1 .. x_50, v_1 .. v_3)`` with binary ``x`` (parameters ``x1 .. x50``) and
``v = 2u - 1`` for the continuous ``u`` in ``[0, 1]^3`` (parameters ``u1 .. u3``), ``D = 53``:

    f = 20 + e - 20 exp(-0.2 sqrt(sum z^2 / D)) - exp(sum cos(2 pi z) / D)

The optimum 0 is at ``x = 0``, ``u = 0.5``. The authors' code adds uniform noise in
``[0, 1e-6)``; ``noise=True`` does the same (drawn from a generator seeded with ``seed``).
(BoTorch's ``AckleyMixed`` is a different parametrisation, not the paper's.)

:func:`categorical_ackley` is Ackley on an 11-value grid whose values the optimizer sees as
categories (``ackley-categorical<N>``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from bodi.problems.base import Problem
from bodi.seeding import as_generator
from bodi.space import DTYPE, Binary, Categorical, Continuous, SearchSpace

N_BINARY = 50
N_CONTINUOUS = 3
NOISE_SCALE = 1e-6


def ackley_mixed(X: Tensor, n_continuous: int = N_CONTINUOUS) -> Tensor:
    """Mixed Ackley of each row of an ``... x D`` encoded tensor: ``D - n_continuous`` bits,
    then ``n_continuous`` values ``u`` in ``[0, 1]`` (Ackley53: ``D = 53``, 3 continuous)."""
    X = torch.as_tensor(X, dtype=DTYPE)
    n_binary = X.shape[-1] - n_continuous
    if n_binary < 1:
        raise ValueError(f"expected ... x D inputs with D > {n_continuous}, got {tuple(X.shape)}")
    return ackley_function(torch.cat([X[..., :n_binary], 2.0 * X[..., n_binary:] - 1.0], dim=-1))


def ackley_function(z: Tensor) -> Tensor:
    """The standard Ackley function (``a = 20``, ``b = 0.2``, ``c = 2 pi``) of each row of an
    ``... x D`` tensor ``z``: ``...`` values."""
    d = z.shape[-1]
    return (
        20.0
        + math.e
        - 20.0 * torch.exp(-0.2 * torch.sqrt((z**2).sum(-1) / d))
        - torch.exp(torch.cos(2.0 * math.pi * z).sum(-1) / d)
    )


def ackley(dim: int = N_BINARY + N_CONTINUOUS, noise: bool = False, seed: int | None = 0
           ) -> Problem:
    """Mixed Ackley with ``dim - 3`` binary and 3 continuous parameters, named ``ackley<dim>``
    (minimize, optimum 0 at ``x = 0``, ``u = 0.5``); ``ackley(53)`` is the paper's Ackley53,
    ``ackley(103)`` has 100 binary parameters."""
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= N_CONTINUOUS:
        raise ValueError(f"dim must be an integer > {N_CONTINUOUS}, got {dim!r}")
    n_binary = dim - N_CONTINUOUS
    space = SearchSpace(
        [Binary(f"x{i + 1}") for i in range(n_binary)]
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

    optimum = {**{f"x{i + 1}": False for i in range(n_binary)},
               **{f"u{j + 1}": 0.5 for j in range(N_CONTINUOUS)}}
    return Problem(f"ackley{dim}", space, evaluate, "minimize", 0.0, optimum)


def ackley53(noise: bool = False, seed: int | None = 0) -> Problem:
    """The paper's mixed Ackley problem (minimize, optimum 0 at ``x = 0``, ``u = 0.5``)."""
    return ackley(N_BINARY + N_CONTINUOUS, noise, seed)


#: the values of each parameter of :func:`categorical_ackley` (MCBO's categorical Ackley)
CATEGORICAL_GRID = torch.linspace(-32.768, 32.768, 11, dtype=DTYPE)


def categorical_ackley(dim: int = 20) -> Problem:
    """Ackley on a grid, ``dim`` categorical parameters ``c1 .. c<dim>`` with 11 values each,
    named ``ackley-categorical<dim>`` (minimize, optimum 0 at the middle value ``v5``).

    Value ``k`` of a parameter stands for ``z = -32.768 + 6.5536 k``, and the value is
    :func:`ackley_function` of ``z``; the optimizer sees the values as unordered categories
    (after the categorical Ackley of the MCBO suite, there with 20 parameters).
    """
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    labels = [f"v{k}" for k in range(len(CATEGORICAL_GRID))]
    space = SearchSpace([Categorical(f"c{i + 1}", labels) for i in range(dim)])

    def evaluate(X: Tensor) -> Tensor:
        return ackley_function(CATEGORICAL_GRID[torch.as_tensor(X, dtype=DTYPE).round().long()])

    optimum = {f"c{i + 1}": "v5" for i in range(dim)}
    return Problem(f"ackley-categorical{dim}", space, evaluate, "minimize", 0.0, optimum)
