"""Several objectives: Pareto fronts, reference points, hypervolumes and scalarizations.

Everything here works in the *larger-is-better* orientation of the models (``Y * signs``, see
:attr:`bodi.optimizers.Optimizer.Y_completed`): ``Y`` is ``n x k`` for ``n`` points and ``k``
objectives. The hypervolume of a set of points is the volume of the region they dominate
above the reference point ``r``:

    HV(Y; r) = vol{ z : r <= z <= y for some y in Y }   (Zitzler and Thiele, 1998)

and is what a multi-objective study maximizes (BODi through qLogNEHVI, Daulton et al., 2021).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from botorch.utils.multi_objective.hypervolume import Hypervolume
from botorch.utils.multi_objective.hypervolume import (
    infer_reference_point as botorch_infer_reference_point,
)
from botorch.utils.multi_objective.pareto import is_non_dominated
from torch import Tensor

from bodi.directions import signs
from bodi.space import DTYPE


def pareto_mask(Y: Tensor) -> Tensor:
    """``n`` mask of the rows of ``n x k`` ``Y`` that no other row dominates (ties kept)."""
    if len(Y) == 0:
        return torch.zeros(0, dtype=torch.bool)
    return is_non_dominated(Y, deduplicate=False)


def infer_reference_point(Y: Tensor) -> Tensor:
    """``k`` reference point for ``n x k`` observed ``Y``: BoTorch's
    ``infer_reference_point`` on the Pareto front (its nadir point minus 10% of the front's
    range in each objective)."""
    return botorch_infer_reference_point(Y[pareto_mask(Y)]).to(DTYPE)


def hypervolume(Y: Tensor, ref_point: Tensor) -> float:
    """``HV(Y; ref_point)`` of ``n x k`` points (rows not above ``ref_point`` add nothing)."""
    Y = Y.to(DTYPE)
    ref_point = torch.as_tensor(ref_point, dtype=DTYPE)
    above = Y[(ref_point < Y).all(-1)]
    if len(above) == 0:
        return 0.0
    return float(Hypervolume(ref_point).compute(above[pareto_mask(above)]))


def running_hypervolume(Y: Tensor, ref_point: Tensor) -> list[float]:
    """``[HV(Y[:1]), HV(Y[:2]), ..., HV(Y)]``: the hypervolume after each of ``n`` points."""
    out: list[float] = []
    front = torch.empty(0, Y.shape[-1], dtype=DTYPE)
    value = 0.0
    for y in Y.to(DTYPE):
        if not (y > ref_point).all() or (front >= y).all(-1).any():
            out.append(value)  # dominated or not above the reference: no change
            continue
        front = torch.cat([front, y.unsqueeze(0)])
        front = front[pareto_mask(front)]
        value = float(Hypervolume(ref_point.to(DTYPE)).compute(front))
        out.append(value)
    return out


def random_weights(k: int, generator: torch.Generator) -> Tensor:
    """``k`` weights drawn uniformly from the probability simplex."""
    w = -torch.rand(k, generator=generator, dtype=DTYPE).clamp_min(1e-12).log()
    return w / w.sum()


def chebyshev_utility(Y: Tensor, weights: Tensor) -> Tensor:
    """``n`` augmented Chebyshev scalarization of ``n x k`` ``Y`` (ParEGO, Knowles 2006):

        u(y) = min_i w_i y~_i + 0.05 sum_i w_i y~_i,

    with ``y~`` each objective scaled to ``[0, 1]`` over the rows of ``Y``. Its maximizer is
    a Pareto-optimal row, and different weights pick different parts of the front."""
    low, high = Y.min(0).values, Y.max(0).values
    scaled = (Y - low) / (high - low).clamp_min(1e-12)
    weighted = scaled * weights
    return weighted.min(-1).values + 0.05 * weighted.sum(-1)


def oriented(values: Sequence[Sequence[float]], directions: Sequence[str]) -> Tensor:
    """``n x k`` ``values`` in the larger-is-better orientation (minimized columns negated)."""
    return torch.tensor(values, dtype=DTYPE).reshape(-1, len(directions)) * signs(
        directions, DTYPE)
