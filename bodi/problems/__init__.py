"""Benchmark problems."""

from bodi.problems.ackley import ackley, ackley53
from bodi.problems.base import Problem
from bodi.problems.labs import labs
from bodi.problems.maxsat import (
    frb_maxsat,
    frb_wcnf,
    maxsat,
    maxsat60,
    random_maxsat,
    read_wcnf,
    write_wcnf,
)
from bodi.problems.pest import pest
from bodi.problems.planted import planted_binary, planted_categorical, planted_mixed
from bodi.problems.registry import PROBLEMS, get_problem
from bodi.problems.shifted import shifted
from bodi.problems.svm import svm53

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
