"""Planted problems with a hidden optimum at a random configuration (for demos and tests).

Each objective counts weighted mismatches with a hidden configuration ``s`` plus pairwise
interaction terms, so the optimum ``0`` sits at ``s`` (a random bit string, never all zeros or
all ones) and nowhere else:

    f(z, u) = sum_j w_j e_j + sum_(j,k) v_jk e_j e_k + c * ||u - u*||^2 ,   e_j = [z_j != s_j]
"""

from __future__ import annotations

import torch
from torch import Tensor

from bodi.problems.base import Problem, random_bits
from bodi.seeding import as_generator
from bodi.space import DTYPE, Binary, Categorical, Continuous, SearchSpace


def _planted(
    name: str, space: SearchSpace, hidden: Tensor, seed: int, u_star: Tensor | None = None
) -> Problem:
    g = as_generator(seed + 7919)
    discrete = space.discrete_dims
    d = len(discrete)
    weights = 0.5 + torch.rand(d, generator=g, dtype=DTYPE)
    pairs = torch.randint(0, d, (d, 2), generator=g)
    pair_weights = torch.rand(d, generator=g, dtype=DTYPE)
    ordinal = space.ordinal_dims

    def evaluate(X: Tensor) -> Tensor:
        errors = (X[..., discrete] != hidden).to(DTYPE)
        interactions = errors[..., pairs[:, 0]] * errors[..., pairs[:, 1]]
        value = errors @ weights + interactions @ pair_weights
        if ordinal:
            value = value + 4.0 * ((X[..., ordinal] - u_star) ** 2).sum(-1)
        return value

    optimum = torch.zeros(space.dim, dtype=DTYPE)
    optimum[discrete] = hidden
    if ordinal:
        optimum[ordinal] = u_star
    return Problem(name, space, evaluate, "minimize", 0.0, space.decode(optimum)[0])


def planted_binary(d: int = 20, seed: int = 0) -> Problem:
    """``d`` binary variables; optimum 0 at a hidden random bit string."""
    space = SearchSpace([Binary(f"x{i}") for i in range(d)])
    return _planted(f"planted-binary{d}", space, random_bits(d, as_generator(seed)), seed)


def planted_categorical(d: int = 15, choices: int = 4, seed: int = 0) -> Problem:
    """``d`` categorical variables with ``choices`` values; optimum 0 at a hidden configuration."""
    space = SearchSpace(
        [Categorical(f"c{i}", [f"v{k}" for k in range(choices)]) for i in range(d)]
    )
    hidden = torch.randint(0, choices, (d,), generator=as_generator(seed)).to(DTYPE)
    return _planted(f"planted-categorical{d}", space, hidden, seed)


def planted_mixed(d_binary: int = 10, d_categorical: int = 5, d_continuous: int = 2,
                  seed: int = 0) -> Problem:
    """Binary, 3-valued categorical and continuous variables; optimum 0 at a hidden point."""
    g = as_generator(seed)
    space = SearchSpace(
        [Binary(f"b{i}") for i in range(d_binary)]
        + [Categorical(f"c{i}", ["a", "b", "c"]) for i in range(d_categorical)]
        + [Continuous(f"u{i}", 0.0, 1.0) for i in range(d_continuous)]
    )
    hidden = torch.cat([
        random_bits(d_binary, g),
        torch.randint(0, 3, (d_categorical,), generator=g).to(DTYPE),
    ])
    u_star = 0.2 + 0.6 * torch.rand(d_continuous, generator=g, dtype=DTYPE)
    return _planted(f"planted-mixed{d_binary + d_categorical + d_continuous}", space, hidden,
                    seed, u_star)
