"""The checks of option values shared across bodi: one home for "a positive integer" and
"a positive number", each with one wording of its error, and the warning for an option set
where it has no effect."""

from __future__ import annotations

import math
import numbers
from typing import Any


class UnusedOptionWarning(UserWarning):
    """An option was set where it has no effect (e.g. a dictionary option of BODi where no
    dictionary is drawn)."""


def _integer_phrase(minimum: int) -> str:
    return {0: "a non-negative integer", 1: "a positive integer"}.get(
        minimum, f"an integer >= {minimum}")


def check_integer(name: str, value: Any, minimum: int = 1, *, optional: bool = False) -> Any:
    """``value`` as an ``int`` if it is an integer (a ``bool`` is not) of at least ``minimum``
    (or ``None`` if ``optional``); otherwise ``ValueError("<name> must be a positive integer,
    got ...")``."""
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be {_integer_phrase(minimum)}"
                         f"{' or None' if optional else ''}, got {value!r}")
    return int(value)


def check_positive_number(name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a finite real number ``> 0`` (a ``bool`` is not);
    otherwise ``ValueError("<name> must be a positive number, got ...")``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)
