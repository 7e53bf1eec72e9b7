"""Numerical warnings gathered instead of flooding the console.

GPyTorch and linear_operator warn on every Cholesky that needs jitter, BoTorch on every
acquisition optimization that stops early. :func:`numerical_warnings` collects those of one
suggestion; the optimizer counts them and logs a summary on the ``"bodi"`` logger at DEBUG
level (``bodi.minimize`` logs one line per run at INFO level).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

logger = logging.getLogger("bodi")

#: modules whose warnings are numerical noise of model fitting and acquisition optimization
NOISY_MODULES = ("linear_operator", "gpytorch", "botorch", "scipy")


def _is_numerical(message: warnings.WarningMessage) -> bool:
    """A warning class of those packages (NumericalWarning, OptimizationWarning, ...), or any
    warning raised from their code."""
    filename = message.filename or ""
    return message.category.__module__.startswith(NOISY_MODULES) or any(
        f"/{name}/" in filename for name in NOISY_MODULES
    )


@contextmanager
def numerical_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Collect the numerical warnings raised in the block; other warnings pass through."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seen: list[warnings.WarningMessage] = []
        yield seen
    for message in caught:
        if _is_numerical(message):
            seen.append(message)
        else:
            warnings.warn_explicit(message.message, message.category, message.filename,
                                   message.lineno, source=message.source)
    if seen:
        kinds = sorted({m.category.__name__ for m in seen})
        logger.debug("%d numerical warning(s) (%s); first: %s", len(seen), ", ".join(kinds),
                     seen[0].message)


@contextmanager
def quiet_logger(name: str, level: int = logging.ERROR) -> Iterator[None]:
    """Raise the level of logger ``name`` for the duration of a block (then restore it)."""
    logger = logging.getLogger(name)
    old = logger.level
    logger.setLevel(max(level, old))
    try:
        yield
    finally:
        logger.setLevel(old)
