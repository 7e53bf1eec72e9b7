"""bodi: Bayesian optimization over high-dimensional binary, categorical and mixed spaces with
Hamming embeddings via dictionaries (BODi, Deshwal et al., AISTATS 2023).

The names below are imported when first used (PEP 562), so that ``bodi --version`` and the
commands that only read a study do not load torch and BoTorch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bodi.version import __version__ as __version__

#: public name -> the module that defines it
_HOMES = {
    "BODi": "bodi.optimizers",
    "Binary": "bodi.space",
    "Categorical": "bodi.space",
    "Continuous": "bodi.space",
    "History": "bodi.trials",
    "InMemoryStorage": "bodi.storage",
    "InfeasibleConstraintsError": "bodi.constraints",
    "Integer": "bodi.space",
    "LinearConstraint": "bodi.constraints",
    "OptimizeResult": "bodi.optimize",
    "Optimizer": "bodi.optimizers",
    "Outcome": "bodi.trials",
    "Predicate": "bodi.constraints",
    "RandomSearch": "bodi.optimizers",
    "SQLiteStorage": "bodi.storage",
    "SearchSpace": "bodi.space",
    "Study": "bodi.study",
    "Trial": "bodi.trials",
    "UnusedOptionWarning": "bodi.checks",
    "create_study": "bodi.study",
    "load_study": "bodi.loading",
    "minimize": "bodi.optimize",
}

__all__ = [
    "BODi", "Binary", "Categorical", "Continuous", "History", "InMemoryStorage",
    "InfeasibleConstraintsError", "Integer", "LinearConstraint", "OptimizeResult", "Optimizer",
    "Outcome", "Predicate", "RandomSearch", "SQLiteStorage", "SearchSpace", "Study", "Trial",
    "UnusedOptionWarning", "create_study", "load_study", "minimize",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'bodi' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # imported once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


if TYPE_CHECKING:  # for type checkers and editors: the names as eager imports
    from bodi.checks import UnusedOptionWarning
    from bodi.constraints import InfeasibleConstraintsError, LinearConstraint, Predicate
    from bodi.loading import load_study
    from bodi.optimize import OptimizeResult, minimize
    from bodi.optimizers import BODi, Optimizer, RandomSearch
    from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
    from bodi.storage import InMemoryStorage, SQLiteStorage
    from bodi.study import Study, create_study
    from bodi.trials import History, Outcome, Trial
