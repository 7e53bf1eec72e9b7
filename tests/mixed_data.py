"""A small mixed space and data on it, shared by the kernel and GP tests."""

import torch

from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace

#: two binary, one categorical, one continuous, one integer and one more binary parameter
MIXED = SearchSpace(
    [Binary("b0"), Binary("b1"), Categorical("c", ["x", "y", "z"]), Continuous("u", 0.0, 2.0),
     Integer("k", 0, 4), Binary("b2")]
)


def mixed_data(space: SearchSpace, n: int = 12, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` uniform points of ``space`` (encoded) and a smooth function of them (``n x 1``)."""
    g = torch.Generator().manual_seed(seed)
    X = space.sample(n, generator=g)
    Y = torch.sin(3 * X.sum(-1, keepdim=True)) + 0.1 * X[:, :1]
    return X, Y
