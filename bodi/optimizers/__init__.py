"""Ask/tell optimizers: BODi and the baselines, all behind :class:`Optimizer`."""

from bodi.optimizers.base import Optimizer, Trial
from bodi.optimizers.bo import BODi
from bodi.optimizers.random_search import RandomSearch

__all__ = ["BODi", "Optimizer", "RandomSearch", "Trial"]
