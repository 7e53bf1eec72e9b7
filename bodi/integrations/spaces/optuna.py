"""Optuna distributions <-> bodi parameters, both ways.

* bodi -> Optuna (the ``tpe`` baseline runs Optuna's sampler on a bodi space):
  :func:`make_distributions`, :func:`to_optuna_params`, :func:`from_optuna_params`;
* Optuna -> bodi (:class:`bodi.integrations.optuna.BODiSampler` runs BODi on an Optuna study):
  :func:`codec_for`, one :class:`~bodi.integrations.spaces.codecs.Codec` per distribution.

Optuna is imported inside the functions (the ``optuna`` or ``baselines`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bodi.integrations.spaces.codecs import (
    BinaryCodec,
    ChoiceCodec,
    Codec,
    FloatCodec,
    GridCodec,
    LogIntCodec,
    host_choices,
)
from bodi.parameters import Parameter, Value

if TYPE_CHECKING:
    from torch import Tensor

    from bodi.space import SearchSpace


def make_distributions(space: SearchSpace | Sequence[Parameter]) -> dict[str, Any]:
    """Optuna distributions of a bodi space (or of its parameters).

    Binary -> ``CategoricalDistribution([False, True])``; Categorical -> categorical over the
    choices (see :func:`bodi.integrations.spaces.codecs.host_choices`); Continuous ->
    ``FloatDistribution``
    (``log`` kept); Integer -> ``IntDistribution``. Categorical internal values are then exactly
    bodi's encoding.
    """
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    distributions: dict[str, Any] = {}
    for p in getattr(space, "parameters", space):
        if p.kind == "binary":
            distributions[p.name] = CategoricalDistribution([False, True])
        elif p.kind == "categorical":
            distributions[p.name] = CategoricalDistribution(host_choices(p))
        elif p.kind == "continuous":
            distributions[p.name] = FloatDistribution(p.low, p.high, log=p.log)
        else:
            distributions[p.name] = IntDistribution(p.low, p.high)
    return distributions


def to_optuna_params(
    space: SearchSpace, distributions: dict[str, Any], x: Tensor
) -> dict[str, Value]:
    """Optuna parameter values of one encoded bodi row (:func:`optuna_params_of` of its
    decoded values)."""
    decoded = {p.name: p.decode(value)
               for p, value in zip(space.parameters, x.tolist(), strict=True)}
    return optuna_params_of(space.parameters, distributions, decoded)


def optuna_params_of(
    parameters: Sequence[Parameter], distributions: dict[str, Any], params: Mapping[str, Value]
) -> dict[str, Value]:
    """Optuna parameter values of one configuration (the user's values, a trial's
    ``params``)."""
    out: dict[str, Value] = {}
    for p in parameters:
        value = params[p.name]
        if p.kind in ("binary", "categorical"):
            value = distributions[p.name].to_external_repr(round(p.encode(value)))
        out[p.name] = value
    return out


def from_optuna_params(
    space: SearchSpace, distributions: dict[str, Any], params: dict[str, Any]
) -> list[float]:
    """The encoded bodi row of Optuna parameter values."""
    row = []
    for p in space.parameters:
        value = params[p.name]
        if p.kind in ("binary", "categorical"):
            row.append(float(distributions[p.name].to_internal_repr(value)))
        elif p.kind == "continuous":
            row.append(p.encode(min(max(float(value), p.low), p.high)))
        else:
            row.append(p.encode(min(max(round(value), p.low), p.high)))
    return row


def codec_for(name: str, distribution: Any) -> Codec | None:
    """The bodi parameter (and value conversion) for one Optuna distribution.

    ``None`` for single-valued distributions (nothing to optimize) and unknown types.
    """
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    if distribution.single():
        return None
    if isinstance(distribution, CategoricalDistribution):
        choices = tuple(distribution.choices)
        if len(choices) == 2 and all(type(c) is bool for c in choices) and choices[0] != choices[1]:
            return BinaryCodec(name)
        return ChoiceCodec(name, choices)
    if isinstance(distribution, IntDistribution):
        if distribution.log:
            return LogIntCodec(name, distribution.low, distribution.high)
        count = (distribution.high - distribution.low) // distribution.step + 1
        return GridCodec(name, low=distribution.low, step=distribution.step, count=count)
    if isinstance(distribution, FloatDistribution):
        if distribution.step is not None:
            count = round((distribution.high - distribution.low) / distribution.step) + 1
            return GridCodec(name, low=distribution.low, step=distribution.step, count=count,
                             integer=False)
        return FloatCodec(name, distribution.low, distribution.high, log=distribution.log)
    return None
