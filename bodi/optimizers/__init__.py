"""Ask/tell optimizers: BODi and the baselines, all behind :class:`Optimizer`."""

from bodi.optimizers.base import Optimizer, Trial
from bodi.optimizers.bo import BODi
from bodi.optimizers.model_based import ModelBasedOptimizer
from bodi.optimizers.random_search import RandomSearch

#: optimizer class name -> class (how a stored study names its optimizer)
OPTIMIZERS: dict[str, type[Optimizer]] = {"BODi": BODi, "RandomSearch": RandomSearch}

__all__ = ["OPTIMIZERS", "BODi", "ModelBasedOptimizer", "Optimizer", "RandomSearch", "Trial"]
