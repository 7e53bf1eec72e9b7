"""Optimizers: new points from a history. BODi and the baselines, all behind :class:`Optimizer`."""

from bodi.optimizers.base import Optimizer
from bodi.optimizers.bo import BODi, PaperBODi
from bodi.optimizers.gp_optimizer import GPOptimizer
from bodi.optimizers.model_based import ModelBasedOptimizer
from bodi.optimizers.random_search import RandomSearch
from bodi.optimizers.registry import METHODS, make_optimizer, optimizer_class, parse_method
from bodi.trials import History, Outcome, Trial

__all__ = [
    "METHODS",
    "BODi",
    "GPOptimizer",
    "History",
    "ModelBasedOptimizer",
    "Optimizer",
    "Outcome",
    "PaperBODi",
    "RandomSearch",
    "Trial",
    "make_optimizer",
    "optimizer_class",
    "parse_method",
]
