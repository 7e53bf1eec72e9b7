"""bodi: Bayesian optimization over high-dimensional binary, categorical and mixed spaces with
Hamming embeddings via dictionaries (BODi, Deshwal et al., AISTATS 2023)."""

from bodi.checks import UnusedOptionWarning
from bodi.constraints import InfeasibleConstraintsError, LinearConstraint, Predicate
from bodi.minimize import OptimizeResult, minimize
from bodi.optimizers import BODi, Optimizer, RandomSearch
from bodi.optimizers.loading import load_study
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.storage import InMemoryStorage, SQLiteStorage
from bodi.study import Study
from bodi.trials import History, Outcome, Trial

__version__ = "0.11.0"

__all__ = [
    "BODi",
    "Binary",
    "Categorical",
    "Continuous",
    "History",
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
    "Study",
    "Trial",
    "UnusedOptionWarning",
    "load_study",
    "minimize",
]
