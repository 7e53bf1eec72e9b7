"""Benchmark problems."""

from bodi.benchmarks.base import Problem
from bodi.benchmarks.planted import planted_binary, planted_categorical, planted_mixed

__all__ = ["Problem", "planted_binary", "planted_categorical", "planted_mixed"]
