"""A genetic algorithm that maximizes an acquisition function (MCBO's GA acquisition optimizer).

MCBO (Dreczkowski et al., NeurIPS 2023) found a trust region searched by a genetic algorithm
among the strongest combinations on combinatorial tasks. Its settings are used here: a
population of ``population`` points (the region's centre and uniform points of the region),
``evaluations`` acquisition values in all (``evaluations / population`` generations), the
``elite`` best points kept, and children bred from the ``parents`` best:

    child_i = parent_a,i or parent_b,i (uniform crossover, a and b drawn from the parents)
    then each parameter moved to another random value with probability 1 / dim (mutation).

A child outside the trust region is repaired: the box clamps its continuous/integer columns,
and discrete columns that differ from the centre beyond the radius are set back to the
centre's values (:meth:`TrustRegion.project`). The search returns the best point it scored
that is neither evaluated nor pending; if it scored none (a nearly exhausted space), it falls
back on :func:`bodi.acquisition.local_search.local_search`, which walks to the points left.
Unlike the local search it does not climb to a local maximum of the acquisition function:
fewer, coarser evaluations, so its choice is less greedy. Inside BODi's trust region it lost
to the local search on the yardstick (CHANGELOG.md).
"""

from __future__ import annotations

import torch
from botorch.acquisition import AcquisitionFunction
from torch import Tensor

from bodi.acquisition.local_search import allowed_points, local_search
from bodi.acquisition.trust_region import TrustRegion
from bodi.novelty import row_keys
from bodi.space import DTYPE, SearchSpace

__all__ = ["genetic_search"]


def genetic_search(
    acq_function: AcquisitionFunction,
    space: SearchSpace,
    *,
    avoid: Tensor,
    incumbents: Tensor | None = None,
    region: TrustRegion | None = None,
    population: int = 100,
    evaluations: int = 500,
    parents: int = 20,
    elite: int = 10,
    batch_limit: int = 16384,
) -> tuple[Tensor, Tensor]:
    """Maximize ``acq_function`` with a genetic algorithm (module docstring).

    Args:
        acq_function: evaluated on ``b x 1 x dim`` inputs.
        space: the search space.
        avoid: ``k x dim`` points that must not be returned (evaluated and pending).
        incumbents: ``c x dim`` best points so far (best first); without a region the first
            is the starting population's first member (with one, the region's centre is).
        region: a trust region; every member lies inside it.
        population: members per generation (MCBO: 100).
        evaluations: acquisition values in all, ``>= population`` (MCBO: 500).
        parents: the best members children are bred from (MCBO: 20).
        elite: the best members carried into the next generation (MCBO: 10).

    Returns:
        The best point found (``dim``) and its acquisition value (scalar).

    Raises:
        SearchSpaceExhaustedError: if no point outside ``avoid`` is left.
    """
    if not 1 <= elite < population or not 1 <= parents <= population:
        raise ValueError("the genetic search needs 1 <= elite < population and "
                         "1 <= parents <= population")
    if evaluations < population:
        raise ValueError("the genetic search needs evaluations >= population")
    avoid_keys = row_keys(space, avoid) if len(avoid) else None

    def score(X: Tensor) -> Tensor:
        allowed = allowed_points(space, X, avoid_keys, region)
        values = torch.full((len(X),), -torch.inf, dtype=DTYPE)
        rows = allowed.nonzero().squeeze(-1)
        with torch.no_grad():
            for chunk in rows.split(batch_limit) if len(rows) else ():
                values[chunk] = acq_function(X[chunk].unsqueeze(-2)).to(DTYPE)
        return values

    if region is not None:
        first, members = region.center, region.sample(population - 1)
    else:
        first = incumbents[0] if incumbents is not None and len(incumbents) else None
        members = space.sample(population - (first is not None))
    X = members if first is None else torch.cat([first.unsqueeze(0).to(DTYPE), members])
    values = score(X)
    best_x, best_value = X[values.argmax()], values.max()
    for _ in range(evaluations // population - 1):
        order = values.argsort(descending=True)
        children = _breed(space, X[order[:parents]], population - elite, region)
        child_values = score(children)
        X = torch.cat([X[order[:elite]], children])
        values = torch.cat([values[order[:elite]], child_values])
        if child_values.max() > best_value:
            best_x, best_value = children[child_values.argmax()], child_values.max()
    if torch.isfinite(best_value):
        return best_x, best_value
    return local_search(acq_function, space, avoid=avoid, incumbents=incumbents, region=region)


def _breed(space: SearchSpace, parents: Tensor, n: int, region: TrustRegion | None) -> Tensor:
    """``n x dim`` children of the ``p x dim`` ``parents``: uniform crossover of two random
    parents, mutation of each parameter with probability ``1 / dim`` (a discrete parameter to
    another of its values, an ordinal one uniformly in the region's box), repaired into the
    region and onto the space's grid."""
    p, dim = parents.shape
    a, b = torch.randint(p, (n,)), torch.randint(p, (n,))
    children = torch.where(torch.rand(n, dim) < 0.5, parents[a], parents[b])
    mutated = torch.rand(n, dim) < 1.0 / dim
    discrete = torch.tensor(space.discrete_dims, dtype=torch.long)
    if len(discrete):
        moved = space.other_discrete_values(children[:, discrete])
        children[:, discrete] = torch.where(mutated[:, discrete], moved, children[:, discrete])
    ordinal = torch.tensor(space.ordinal_dims, dtype=torch.long)
    if len(ordinal):
        bounds = (space.bounds if region is None else region.bounds)[:, ordinal]
        uniform = bounds[0] + torch.rand(n, len(ordinal), dtype=DTYPE) * (bounds[1] - bounds[0])
        children[:, ordinal] = torch.where(mutated[:, ordinal], uniform, children[:, ordinal])
    if region is not None:
        children = region.project(children)
    return space.round(children)
