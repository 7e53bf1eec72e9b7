"""Thompson sampling over a candidate set: the maximizers of joint posterior samples.

TuRBO's acquisition (Eriksson et al., NeurIPS 2019) in bodi's discrete trust region: the
candidates are ``n`` random points of the region (of the whole space without one) and every
one-parameter neighbour of its centre (the incumbent), less the points already evaluated or
pending and, in a constrained space, the infeasible ones. For each requested point one joint
sample of the GP posterior over all candidates is drawn and its maximizer taken (BoTorch's
``MaxPosteriorSampling``, without replacement). A sample is one plausible function, so the
choice explores where the model is unsure with no exploration weight to set (measured against
LogEI in docs/results.md, section 5).
"""

from __future__ import annotations

import torch
from botorch.generation.sampling import MaxPosteriorSampling
from botorch.models.model import Model
from torch import Tensor

from bodi.acquisition.trust_region import TrustRegion
from bodi.neighbours import NeighbourMoves
from bodi.novelty import SearchSpaceExhaustedError, first_occurrences, row_keys
from bodi.space import DTYPE, SearchSpace


def thompson_candidates(space: SearchSpace, n: int, *, center: Tensor,
                        region: TrustRegion | None, avoid: Tensor) -> Tensor:
    """``N x dim`` distinct candidates: ``n`` random points of ``region`` (or ``space``) and
    the one-parameter neighbours of ``center`` (``dim``), none of them in ``avoid``
    (``k x dim``) or infeasible."""
    random = space.sample(n) if region is None else region.sample(n)
    neighbours = NeighbourMoves(space).apply(center.unsqueeze(0))[0]
    if region is not None:
        neighbours = neighbours[region.contains(neighbours)]
    X = torch.cat([neighbours, random])
    keys = row_keys(space, X)
    first = first_occurrences(keys)
    X, keys = X[first], keys[first]
    keep = ~torch.isin(keys, row_keys(space, avoid)) if len(avoid) else torch.ones(
        len(X), dtype=torch.bool)
    if space.constraints:
        keep &= space.feasible(X)
    return X[keep]


def thompson_sample(model: Model, space: SearchSpace, q: int, n: int, *, center: Tensor,
                    region: TrustRegion | None, avoid: Tensor,
                    tensor_kwargs: dict | None = None) -> Tensor:
    """``q x dim`` points (CPU, float64): the maximizers of ``q`` joint posterior samples of
    ``model`` over :func:`thompson_candidates` (computed in the model's ``tensor_kwargs``).

    Raises:
        SearchSpaceExhaustedError: with fewer than ``q`` candidates.
    """
    X = thompson_candidates(space, n, center=center, region=region, avoid=avoid)
    if len(X) < q:
        raise SearchSpaceExhaustedError(f"only {len(X)} new candidates for {q} point(s)")
    sampler = MaxPosteriorSampling(model, replacement=False)
    with torch.no_grad():
        chosen = sampler(X.to(**(tensor_kwargs or {})), num_samples=q)
    return space.round(chosen.to("cpu", DTYPE))
