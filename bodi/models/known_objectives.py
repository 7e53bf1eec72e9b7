"""Objectives that are known functions of the parameters (e.g. the summed cost of the selected
features): computed exactly beside the modelled ones instead of modelled."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from botorch.models.deterministic import GenericDeterministicModel
from botorch.models.model import Model
from torch import Tensor

from bodi.space import DTYPE, Binary, SearchSpace, Value

#: a known objective: a function of the decoded parameters, or weights of binary parameters
KnownObjective = Callable[[dict[str, Value]], float] | Mapping[str, float]


def check_known_objectives(space: SearchSpace, k: int, known: Mapping[int, Any] | None
                           ) -> dict[int, KnownObjective]:
    """``known`` (objective index -> :data:`KnownObjective`) as a dict, checked against ``k``
    objectives on ``space``: several objectives, valid indices, finite weights of binary
    parameters or a callable, and at least one objective left to model."""
    known = dict(known or {})
    if known and k == 1:
        raise ValueError("known_objectives are for several objectives (directions=[...])")
    for index, function in known.items():
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < k:
            raise ValueError(f"known_objectives keys are objective indices 0..{k - 1}, got "
                             f"{index!r}")
        if isinstance(function, Mapping):
            binary = {p.name for p in space.parameters if isinstance(p, Binary)}
            unknown = [name for name in function if name not in binary]
            if unknown or not all(isinstance(w, int | float) and math.isfinite(w)
                                  for w in function.values()):
                raise ValueError(f"known objective {index}: a weighted sum takes finite weights "
                                 f"of binary parameters; not binary parameters: {unknown}")
        elif not callable(function):
            raise ValueError(f"known objective {index} must be a function of the parameters or "
                             "{binary parameter: weight}")
    if len(known) == k:
        raise ValueError("every objective is known: there is nothing to model")
    return known


def known_objective_model(space: SearchSpace, sign: float, function: KnownObjective) -> Model:
    """A known objective as BoTorch's ``GenericDeterministicModel`` of ``... x dim`` encoded
    points, in the larger-is-better orientation (``sign``: ``-1`` when minimized):
    ``function`` of the decoded parameters of each point, or the weighted sum of the encoded
    binary columns (one matrix product for a whole batch)."""
    if isinstance(function, Mapping):
        names = [p.name for p in space.parameters]
        weights = torch.zeros(space.dim, dtype=DTYPE)
        for name, weight in function.items():
            weights[names.index(name)] = sign * float(weight)

        def linear(X: Tensor) -> Tensor:
            return (X @ weights.to(X)).unsqueeze(-1)

        return GenericDeterministicModel(linear, num_outputs=1)

    def exact(X: Tensor) -> Tensor:
        flat = space.round(X.detach().reshape(-1, X.shape[-1]).to("cpu", DTYPE))
        values = [sign * float(function(params)) for params in space.decode(flat)]
        return torch.tensor(values, dtype=X.dtype, device=X.device).reshape(*X.shape[:-1], 1)

    return GenericDeterministicModel(exact, num_outputs=1)
