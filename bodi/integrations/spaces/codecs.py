"""Codecs: one parameter of another library <-> one bodi parameter, values both ways.

A *codec* maps one parameter of the host framework to one bodi parameter and converts values
both ways. ``to_bodi`` raises ``ValueError`` for a value outside the codec's domain, so a trial
recorded under another search space is skipped instead of corrupting the model.

Mappings (the same for Optuna and Ax; :mod:`bodi.integrations.spaces.optuna` and
:mod:`bodi.integrations.spaces.ax` choose the codec of each parameter):

* a choice between ``False`` and ``True`` (either order) -> :class:`~bodi.space.Binary`;
* any other unordered choice -> :class:`~bodi.space.Categorical` over the user's choices, or over
  their indices ``0..k-1`` when bodi does not accept a choice (e.g. ``None``); values are
  converted back to the user's own objects;
* an integer range with step 1 -> :class:`~bodi.space.Integer`;
* an integer range with step ``s > 1``, a float range with a step, and an *ordered* choice ->
  :class:`~bodi.space.Integer` over the index ``k`` of the grid (``low + k * step``; the ``k``-th
  ordered value). The grid is exact, so fully discrete spaces stay discrete (BODi then never
  proposes a configuration twice);
* a log-scaled integer range ``[low, high]`` -> ``Continuous(low - 0.5, high + 0.5, log=True)``
  rounded to the nearest integer (the same transform Optuna's own samplers use). This keeps the
  log geometry for the kernel, but the space is then mixed, and two proposals can round to the
  same integer;
* a float range -> :class:`~bodi.space.Continuous` (``log=True`` kept).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from bodi.parameters import Binary, Categorical, Continuous, Integer, Parameter

if TYPE_CHECKING:
    from torch import Tensor

    from bodi.space import SearchSpace

GRID_TOLERANCE = 1e-8  # how far (in steps) a value may sit from a grid point and still match it


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def _index_of(choices: Sequence[Any], value: Any) -> int:
    """Index of ``value`` in ``choices``: same type first, then equal numbers; else ValueError."""
    for i, choice in enumerate(choices):
        if choice is value or (type(choice) is type(value) and choice == value):
            return i
    if isinstance(value, numbers.Number) and not _is_bool(value):
        for i, choice in enumerate(choices):
            if isinstance(choice, numbers.Number) and not _is_bool(choice) and choice == value:
                return i
    if _is_bool(value):
        for i, choice in enumerate(choices):
            if _is_bool(choice) and bool(choice) == bool(value):
                return i
    raise ValueError(f"{value!r} is not one of {list(choices)}")


class Codec:
    """One host parameter <-> one bodi parameter."""

    parameter: Parameter

    @property
    def name(self) -> str:
        return self.parameter.name

    def to_bodi(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def from_bodi(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class BinaryCodec(Codec):
    """Choices ``(False, True)`` in either order -> Binary; values stay ``bool``."""

    def __init__(self, name: str) -> None:
        self.parameter = Binary(name)

    def to_bodi(self, value: Any) -> bool:
        if not _is_bool(value):
            raise ValueError(f"parameter {self.name!r}: expected a bool, got {value!r}")
        return bool(value)

    def from_bodi(self, value: Any) -> bool:
        return bool(value)


class ChoiceCodec(Codec):
    """Unordered choices -> Categorical (over the choices, or over their indices)."""

    def __init__(self, name: str, choices: Sequence[Any]) -> None:
        self.choices = tuple(choices)
        try:
            self.parameter = Categorical(name, self.choices)
        except ValueError:  # e.g. None among the choices: work with indices
            self.parameter = Categorical(name, list(range(len(self.choices))))

    def to_bodi(self, value: Any) -> Any:
        return self.parameter.choices[_index_of(self.choices, value)]

    def from_bodi(self, value: Any) -> Any:
        return self.choices[int(self.parameter.encode(value))]


class GridCodec(Codec):
    """``low + k * step`` for ``k = 0..n-1`` (ints, stepped floats) -> Integer over ``k``.

    With ``values`` instead, the ``k``-th of a list of ordered values.
    """

    def __init__(
        self,
        name: str,
        *,
        low: float = 0,
        step: float = 1,
        count: int | None = None,
        values: Sequence[Any] | None = None,
        integer: bool = True,
    ) -> None:
        self.values = None if values is None else tuple(values)
        self.low, self.step, self.integer = low, step, integer
        self.count = len(self.values) if self.values is not None else int(count)
        if self.values is None and integer and step == 1:
            self.parameter = Integer(name, int(low), int(low) + self.count - 1)
            self.offset = int(low)
        else:
            self.parameter = Integer(name, 0, self.count - 1)
            self.offset = 0

    def to_bodi(self, value: Any) -> int:
        if self.values is not None:
            return _index_of(self.values, value)
        if _is_bool(value) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"parameter {self.name!r}: expected a number, got {value!r}")
        position = (value - self.low) / self.step
        k = round(position)
        if abs(position - k) > GRID_TOLERANCE or not 0 <= k < self.count:
            raise ValueError(f"parameter {self.name!r}: {value!r} is not on the grid")
        return k + self.offset

    def from_bodi(self, value: Any) -> Any:
        k = int(value) - self.offset
        if self.values is not None:
            return self.values[k]
        if self.integer:
            return int(self.low + k * self.step)
        # Decimal keeps e.g. 0.1 + 2 * 0.1 == 0.3 instead of 0.30000000000000004.
        exact = float(Decimal(repr(float(self.low))) + k * Decimal(repr(float(self.step))))
        high = self.low + (self.count - 1) * self.step
        return min(max(exact, float(self.low)), float(high))


class LogIntCodec(Codec):
    """A log-scaled integer range -> ``Continuous(low - 0.5, high + 0.5, log=True)``, rounded."""

    def __init__(self, name: str, low: int, high: int) -> None:
        self.low, self.high = int(low), int(high)
        self.parameter = Continuous(name, self.low - 0.5, self.high + 0.5, log=True)

    def to_bodi(self, value: Any) -> float:
        integral = isinstance(value, numbers.Integral) or (
            isinstance(value, float) and value.is_integer()
        )
        if _is_bool(value) or not integral or not self.low <= value <= self.high:
            raise ValueError(f"parameter {self.name!r}: {value!r} is not an integer in range")
        return float(value)

    def from_bodi(self, value: Any) -> int:
        return min(max(round(value), self.low), self.high)


class FloatCodec(Codec):
    """A float range -> Continuous; ``digits`` rounds proposals (Ax's ``digits``)."""

    def __init__(self, name: str, low: float, high: float, log: bool = False,
                 digits: int | None = None) -> None:
        self.parameter = Continuous(name, low, high, log=log)
        self.digits = digits

    def to_bodi(self, value: Any) -> float:
        if _is_bool(value) or not isinstance(value, numbers.Real):
            raise ValueError(f"parameter {self.name!r}: expected a number, got {value!r}")
        self.parameter.encode(value)  # range check
        return float(value)

    def from_bodi(self, value: Any) -> float:
        value = float(value)
        if self.digits is not None:
            value = round(value, self.digits)
        return min(max(value, self.parameter.low), self.parameter.high)


def to_bodi(codecs: Sequence[Codec], params: Mapping[str, Any]) -> dict[str, Any] | None:
    """A host configuration as bodi params, or ``None`` if it is not in the codecs' domain."""
    out = {}
    for codec in codecs:
        if codec.name not in params:
            return None
        try:
            out[codec.name] = codec.to_bodi(params[codec.name])
        except (ValueError, TypeError):
            return None
    return out


def from_bodi(codecs: Sequence[Codec], params: Mapping[str, Any]) -> dict[str, Any]:
    """bodi params as a host configuration."""
    return {codec.name: codec.from_bodi(params[codec.name]) for codec in codecs}


def index_values(space: SearchSpace, x: Tensor) -> dict[str, Any]:
    """One encoded row as plain values for libraries that take indices: binary and
    categorical -> the index (``int``), integer -> the integer, continuous -> its encoded value
    in ``[0, 1]`` (so ``log=True`` stays uniform in log space)."""
    values: dict[str, Any] = {}
    for p, v in zip(space.parameters, x.tolist(), strict=True):
        if p.kind in ("binary", "categorical"):
            values[p.name] = round(v)
        elif p.kind == "integer":
            values[p.name] = p.decode(v)
        else:
            values[p.name] = min(max(float(v), 0.0), 1.0)
    return values


def from_index_values(space: SearchSpace, values: Mapping[str, Any]) -> list[float]:
    """The encoded row of :func:`index_values`-style values (indices may be bools)."""
    row = []
    for p in space.parameters:
        v = values[p.name]
        if p.kind in ("binary", "categorical"):
            row.append(float(v))
        elif p.kind == "integer":
            row.append(p.encode(min(max(round(float(v)), p.low), p.high)))
        else:
            row.append(min(max(float(v), 0.0), 1.0))
    return row


def host_choices(parameter: Categorical) -> list[Any]:
    """The choices handed to a host library (ConfigSpace, Optuna): the user's own, or the
    indices ``0..k-1`` when two of them compare equal there (e.g. ``1``, ``1.0`` and ``True``)."""
    choices = list(parameter.choices)
    return choices if len(set(choices)) == len(choices) else list(range(len(choices)))
