"""Nevergrad parametrizations of bodi spaces (the ``ngopt`` baseline runs NGOpt on them).

Binary -> ``ng.p.Choice([0, 1])`` and Categorical -> ``ng.p.Choice`` over the choice indices
(Nevergrad's unordered discrete variable), Integer -> ``ng.p.Scalar`` with integer casting over
``[low, high]``, Continuous -> ``ng.p.Scalar`` over the encoded ``[0, 1]`` (uniform in log space for
``log=True``, as bodi encodes it). Nevergrad is imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from bodi.space import SearchSpace


def make_parametrization(space: SearchSpace) -> Any:
    """An ``ng.p.Dict`` with one Nevergrad parameter per bodi parameter (same names)."""
    import nevergrad as ng

    params: dict[str, Any] = {}
    for p in space.parameters:
        if p.kind in ("binary", "categorical"):
            params[p.name] = ng.p.Choice(list(range(p.cardinality)))
        elif p.kind == "integer":
            params[p.name] = ng.p.Scalar(lower=p.low, upper=p.high).set_integer_casting()
        else:
            params[p.name] = ng.p.Scalar(lower=0.0, upper=1.0)
    return ng.p.Dict(**params)


def to_nevergrad_value(space: SearchSpace, x: Tensor) -> dict[str, Any]:
    """The Nevergrad value (a dict) of one encoded bodi row."""
    value: dict[str, Any] = {}
    for p, v in zip(space.parameters, x.tolist(), strict=True):
        if p.kind in ("binary", "categorical"):
            value[p.name] = round(v)
        elif p.kind == "integer":
            value[p.name] = p.decode(v)
        else:
            value[p.name] = min(max(float(v), 0.0), 1.0)
    return value


def from_nevergrad_value(space: SearchSpace, value: dict[str, Any]) -> list[float]:
    """The encoded bodi row of a Nevergrad value."""
    row = []
    for p in space.parameters:
        v = value[p.name]
        if p.kind in ("binary", "categorical"):
            row.append(float(v))
        elif p.kind == "integer":
            row.append(p.encode(min(max(round(float(v)), p.low), p.high)))
        else:
            row.append(min(max(float(v), 0.0), 1.0))
    return row
