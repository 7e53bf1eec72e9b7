"""Directions of objectives: the one home of ``"minimize"``/``"maximize"``.

A study's direction is parsed here (:func:`check_directions`), turned into the sign that makes
larger better (:func:`sign`, :func:`signs`: the models maximize ``sign * value``), and used to
pick the better of values (:func:`best_of`, :func:`is_better`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where tensors are made, so that reading a study needs none
    import torch
    from torch import Tensor

DIRECTIONS = ("minimize", "maximize")


def check_directions(direction: str, directions: Sequence[str] | None = None) -> tuple[str, ...]:
    """The directions of a study, one per objective, from ``direction`` (a stored
    multi-objective study joins them with commas) or ``directions``."""
    if directions is None:
        if not isinstance(direction, str):
            raise ValueError(f"direction must be 'minimize' or 'maximize', got {direction!r}")
        directions = direction.split(",")
    else:
        if isinstance(directions, str) or not isinstance(directions, Sequence) or not directions:
            raise ValueError("directions must be a non-empty list such as ['minimize', "
                             f"'maximize'], got {directions!r}")
        directions = list(directions)
        if direction not in ("minimize", ",".join(map(str, directions))):
            raise ValueError(f"direction={direction!r} and directions={directions!r} disagree; "
                             "give one of them")
    for d in directions:
        if d not in DIRECTIONS:
            raise ValueError(f"direction must be 'minimize' or 'maximize', got {d!r}")
    return tuple(directions)


def sign(direction: str) -> float:
    """``+1`` for ``"maximize"``, ``-1`` for ``"minimize"``: ``sign * value`` is larger when
    better."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'minimize' or 'maximize', got {direction!r}")
    return 1.0 if direction == "maximize" else -1.0


def loss_sign(direction: str) -> float:
    """``+1`` for ``"minimize"``, ``-1`` for ``"maximize"``: ``loss_sign * value`` is smaller
    when better (a loss, as ranks and the loss-minimizing baselines read values)."""
    return -sign(direction)


def signs(directions: Sequence[str], dtype: torch.dtype | None = None) -> Tensor:
    """``k`` signs, one per objective (see :func:`sign`), as a tensor (float64 by default)."""
    import torch

    return torch.tensor([sign(d) for d in directions], dtype=dtype or torch.float64)


def best_of(values: Iterable[float], direction: str) -> float:
    """The best of ``values``: the smallest when minimizing, the largest when maximizing."""
    return (max if direction == "maximize" else min)(values)


def is_better(value: float, than: float, direction: str) -> bool:
    """Whether ``value`` is strictly better than ``than``."""
    return sign(direction) * value > sign(direction) * than
