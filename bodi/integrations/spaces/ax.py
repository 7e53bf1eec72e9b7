"""Ax parameters -> bodi parameters (for :mod:`bodi.integrations.ax`).

Ax is imported inside the function (the ``ax`` extra).
"""

from __future__ import annotations

from typing import Any

from bodi.integrations.spaces.codecs import (
    BinaryCodec,
    ChoiceCodec,
    Codec,
    FloatCodec,
    GridCodec,
    LogIntCodec,
)


def codec_for(parameter: Any) -> Codec:
    """The bodi parameter (and value conversion) for one Ax parameter."""
    from ax.core.parameter import ChoiceParameter, ParameterType, RangeParameter
    from ax.exceptions.core import UnsupportedError

    name = parameter.name
    if isinstance(parameter, ChoiceParameter):
        if getattr(parameter, "is_hierarchical", False):
            raise UnsupportedError(f"BODi: hierarchical parameter {name!r} is not supported")
        values = list(parameter.values)
        if parameter.parameter_type == ParameterType.BOOL and sorted(values) == [False, True]:
            return BinaryCodec(name)
        if parameter.is_ordered and len(values) > 2:  # Ax calls every 2-value choice ordered
            return GridCodec(name, values=values)
        return ChoiceCodec(name, values)
    if isinstance(parameter, RangeParameter):
        low, high = parameter.lower, parameter.upper
        if parameter.parameter_type == ParameterType.INT:
            if parameter.log_scale:
                return LogIntCodec(name, int(low), int(high))
            return GridCodec(name, low=int(low), count=int(high) - int(low) + 1)
        return FloatCodec(name, float(low), float(high), log=parameter.log_scale,
                          digits=parameter.digits)
    raise UnsupportedError(
        f"BODi: parameter {name!r} of type {type(parameter).__name__} is not supported"
    )
