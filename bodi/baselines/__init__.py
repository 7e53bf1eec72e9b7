"""Baseline optimizers of the benchmark, each behind :class:`bodi.optimizers.Optimizer`."""

from bodi.baselines.smac3 import SMAC
from bodi.baselines.tpe import TPE

__all__ = [
    "SMAC",
    "TPE",
]
