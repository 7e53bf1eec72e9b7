"""Benchmark problems."""

from bodi.benchmarks.ackley import ackley, ackley53
from bodi.benchmarks.base import Problem
from bodi.benchmarks.labs import labs
from bodi.benchmarks.maxsat import (
    frb_maxsat,
    frb_wcnf,
    maxsat,
    maxsat60,
    random_maxsat,
    read_wcnf,
    write_wcnf,
)
from bodi.benchmarks.pest import pest
from bodi.benchmarks.planted import planted_binary, planted_categorical, planted_mixed
from bodi.benchmarks.registry import PROBLEMS, get_problem
from bodi.benchmarks.shifted import shifted
from bodi.benchmarks.svm import svm53

__all__ = [
    "PROBLEMS",
    "Problem",
    "ackley",
    "ackley53",
    "frb_maxsat",
    "frb_wcnf",
    "get_problem",
    "labs",
    "maxsat",
    "maxsat60",
    "pest",
    "planted_binary",
    "planted_categorical",
    "planted_mixed",
    "random_maxsat",
    "read_wcnf",
    "shifted",
    "svm53",
    "write_wcnf",
]
