"""Nevergrad parametrizations of bodi spaces (the ``ngopt`` baseline runs NGOpt on them).

Binary -> ``ng.p.Choice([0, 1])`` and Categorical -> ``ng.p.Choice`` over the choice indices
(Nevergrad's unordered discrete variable), Integer -> ``ng.p.Scalar`` with integer casting over
``[low, high]``, Continuous -> ``ng.p.Scalar`` over the encoded ``[0, 1]`` (uniform in log space for
``log=True``, as bodi encodes it). Values convert both ways with
:func:`bodi.integrations.spaces.codecs.index_values` and
:func:`~bodi.integrations.spaces.codecs.from_index_values`.
Nevergrad is imported inside the function.
"""

from __future__ import annotations

from typing import Any

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
