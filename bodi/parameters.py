"""The parameters of a search space (binary, categorical, continuous, integer): their
definitions, checks, one-column encoding and JSON form, without torch (so that reading a stored
study's definition is cheap). :class:`bodi.space.SearchSpace` holds them."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Value = bool | int | float | str
def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"parameter name must be a non-empty string, got {name!r}")
    return name


def _is_real(value: Any) -> bool:
    """A real number that is not a bool (Python or NumPy scalars)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _check_number(name: str, what: str, value: Any) -> float:
    if not _is_real(value):
        raise ValueError(f"parameter {name!r}: {what} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"parameter {name!r}: {what} is too large, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"parameter {name!r}: {what} must be finite, got {value!r}")
    return number


@dataclass(frozen=True)
class Binary:
    """A yes/no choice, decoded as ``bool``."""

    name: str
    kind = "binary"

    def __post_init__(self) -> None:
        _check_name(self.name)

    @property
    def cardinality(self) -> int:
        return 2

    def encode(self, value: Any) -> float:
        if isinstance(value, bool | np.bool_) or (_is_real(value) and value in (0, 1)):
            return float(value)
        raise ValueError(f"parameter {self.name!r}: expected a bool (or 0/1), got {value!r}")

    def decode(self, x: float) -> bool:
        return bool(round(x))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": "binary"}


@dataclass(frozen=True)
class Categorical:
    """One of at least two distinct choices (strings, numbers or bools)."""

    name: str
    choices: tuple[Value, ...]
    kind = "categorical"

    def __init__(self, name: str, choices: Sequence[Value]) -> None:
        object.__setattr__(self, "name", _check_name(name))
        if isinstance(choices, str | bytes) or not isinstance(choices, Sequence):
            raise ValueError(f"parameter {name!r}: choices must be a list, got {choices!r}")
        choices = tuple(choices)
        for choice in choices:
            if not isinstance(choice, bool | int | float | str):
                raise ValueError(
                    f"parameter {name!r}: choices must be strings, numbers or bools, "
                    f"got {choice!r}"
                )
            if isinstance(choice, float) and not math.isfinite(choice):
                raise ValueError(f"parameter {name!r}: choice {choice!r} is not finite")
        if len(choices) < 2:
            raise ValueError(f"parameter {name!r}: needs at least two choices, got {len(choices)}")
        keys = [(type(c).__name__, c) for c in choices]
        if len(set(keys)) != len(keys):
            raise ValueError(f"parameter {name!r}: choices must be distinct, got {list(choices)}")
        object.__setattr__(self, "choices", choices)

    @property
    def cardinality(self) -> int:
        return len(self.choices)

    def encode(self, value: Any) -> float:
        for index, choice in enumerate(self.choices):
            if type(choice) is type(value) and choice == value:
                return float(index)
        if _is_real(value):
            for index, choice in enumerate(self.choices):  # 3 for 3.0, numpy scalars, ...
                if _is_real(choice) and choice == value:
                    return float(index)
        raise ValueError(
            f"parameter {self.name!r}: {value!r} is not one of the choices {list(self.choices)}"
        )

    def decode(self, x: float) -> Value:
        return self.choices[min(max(round(x), 0), len(self.choices) - 1)]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": "categorical", "choices": list(self.choices)}


@dataclass(frozen=True)
class Continuous:
    """A real number in ``[low, high]``; ``log=True`` searches uniformly in log space."""

    name: str
    low: float
    high: float
    log: bool = False
    kind = "continuous"

    def __post_init__(self) -> None:
        _check_name(self.name)
        low = _check_number(self.name, "low", self.low)
        high = _check_number(self.name, "high", self.high)
        if not low < high:
            raise ValueError(f"parameter {self.name!r}: low must be < high, got {low} >= {high}")
        if not math.isfinite(high - low):
            raise ValueError(f"parameter {self.name!r}: the range [{low}, {high}] is too wide")
        if not isinstance(self.log, bool):
            raise ValueError(f"parameter {self.name!r}: log must be true or false")
        if self.log and low <= 0:
            raise ValueError(
                f"parameter {self.name!r}: log=True needs a positive range, got low={low}"
            )
        object.__setattr__(self, "low", float(low))
        object.__setattr__(self, "high", float(high))

    def _span(self) -> tuple[float, float]:
        if self.log:
            return math.log(self.low), math.log(self.high)
        return self.low, self.high

    def encode(self, value: Any) -> float:
        value = _check_number(self.name, "value", value)
        if not self.low <= value <= self.high:
            raise ValueError(
                f"parameter {self.name!r}: {value} is outside [{self.low}, {self.high}]"
            )
        lo, hi = self._span()
        v = math.log(value) if self.log else value
        return min(max((v - lo) / (hi - lo), 0.0), 1.0)

    def decode(self, x: float) -> float:
        lo, hi = self._span()
        v = lo + min(max(x, 0.0), 1.0) * (hi - lo)
        return min(max(math.exp(v) if self.log else v, self.low), self.high)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": "continuous",
            "low": self.low,
            "high": self.high,
            "log": self.log,
        }


@dataclass(frozen=True)
class Integer:
    """An integer in ``[low, high]`` (both included), modelled as an ordinal coordinate."""

    name: str
    low: int
    high: int
    kind = "integer"

    def __post_init__(self) -> None:
        _check_name(self.name)
        for what in ("low", "high"):
            value = getattr(self, what)
            integral = isinstance(value, numbers.Integral) and not isinstance(
                value, bool | np.bool_
            )
            if integral or (
                isinstance(value, float) and math.isfinite(value) and value.is_integer()
            ):
                object.__setattr__(self, what, int(value))
            else:
                raise ValueError(
                    f"parameter {self.name!r}: {what} must be an integer, got {value!r}"
                )
        if not self.low < self.high:
            raise ValueError(
                f"parameter {self.name!r}: low must be < high, got {self.low} >= {self.high}"
            )
        if self.high - self.low > 2**52:
            raise ValueError(
                f"parameter {self.name!r}: the range [{self.low}, {self.high}] is too wide "
                "(at most 2**52 values)"
            )

    @property
    def cardinality(self) -> int:
        return self.high - self.low + 1

    def grid(self) -> list[float]:
        """The encoded values of all integers in the range."""
        n = self.high - self.low
        return [i / n for i in range(n + 1)]

    def encode(self, value: Any) -> float:
        integral = isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
        if not (integral or (isinstance(value, float) and value.is_integer())):
            raise ValueError(f"parameter {self.name!r}: expected an integer, got {value!r}")
        if not self.low <= value <= self.high:
            raise ValueError(
                f"parameter {self.name!r}: {value} is outside [{self.low}, {self.high}]"
            )
        return (int(value) - self.low) / (self.high - self.low)

    def decode(self, x: float) -> int:
        return self.low + round(min(max(x, 0.0), 1.0) * (self.high - self.low))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": "integer", "low": self.low, "high": self.high}


Parameter = Binary | Categorical | Continuous | Integer
_PARAMETER_TYPES: dict[str, type] = {
    "binary": Binary,
    "categorical": Categorical,
    "continuous": Continuous,
    "integer": Integer,
}
_FIELDS = {
    "binary": {"name", "type"},
    "categorical": {"name", "type", "choices"},
    "continuous": {"name", "type", "low", "high", "log"},
    "integer": {"name", "type", "low", "high"},
}


def parameter_from_dict(spec: Any, position: int = 0) -> Parameter:
    """A parameter from its JSON form (``to_dict``); ``position`` names it in errors when the
    name is missing."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"parameter #{position} must be an object, got {spec!r}")
    name = spec.get("name", f"#{position}")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _PARAMETER_TYPES:
        raise ValueError(
            f"parameter {name!r}: unknown type {kind!r} "
            f"(expected one of {sorted(_PARAMETER_TYPES)})"
        )
    unknown = set(spec) - _FIELDS[kind]
    if unknown:
        raise ValueError(f"parameter {name!r}: unknown field(s) {sorted(unknown)}")
    required = _FIELDS[kind] - {"log"}
    missing = required - set(spec)
    if missing:
        raise ValueError(f"parameter {name!r}: missing field(s) {sorted(missing)}")
    kwargs = {k: v for k, v in spec.items() if k != "type"}
    try:
        return _PARAMETER_TYPES[kind](**kwargs)
    except TypeError as err:  # pragma: no cover - guarded by the field checks above
        raise ValueError(f"parameter {name!r}: {err}") from err


__all__ = ["Binary", "Categorical", "Continuous", "Integer", "Parameter", "Value",
           "parameter_from_dict"]
