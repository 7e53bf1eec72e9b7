"""bodi: Bayesian optimization over high-dimensional binary, categorical and mixed spaces with
Hamming embeddings via dictionaries (BODi, Deshwal et al., AISTATS 2023)."""

from bodi.constraints import InfeasibleConstraintsError, LinearConstraint, Predicate
from bodi.minimize import OptimizeResult, minimize
from bodi.optimizers import BODi, Optimizer, Outcome, RandomSearch, Trial
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.storage import InMemoryStorage, SQLiteStorage
from bodi.study import load_study

__version__ = "0.1.0"

__all__ = [
    "BODi",
    "Binary",
    "Categorical",
    "Continuous",
    "InMemoryStorage",
    "InfeasibleConstraintsError",
    "Integer",
    "LinearConstraint",
    "OptimizeResult",
    "Optimizer",
    "Outcome",
    "Predicate",
    "RandomSearch",
    "SQLiteStorage",
    "SearchSpace",
    "Trial",
    "load_study",
    "minimize",
]
