"""Optional dependencies: which extra provides which module, and one clear error without it.

The core (``pip install bodi``) needs only PyTorch, BoTorch/GPyTorch, NumPy and SciPy. The
rest is imported lazily, where it is used:

- ``progress``: rich, for ``progress=True``;
- ``plot``: matplotlib, for ``bodi show`` and ``bodi plot``;
- ``dask``: distributed, for Dask executors and ``bodi run --scheduler``;
- ``baselines``: smac, ConfigSpace, optuna, nevergrad and pymoo, for the SMAC, TPE, NGOpt
  and GA baselines;
- ``bench``: all of the above, for ``bodi bench``, ``bodi report`` and ``bodi modelfit``,
  and ViennaRNA (``RNA``) for the RNA inverse-folding problems;
- ``optuna``: optuna, for :mod:`bodi.integrations.optuna`;
- ``ax``: ax-platform, for :mod:`bodi.integrations.ax`;
- ``pandas``: pandas, for ``trials_dataframe()``;
- ``postgres``: psycopg, for studies in PostgreSQL (:mod:`bodi.storage.postgres`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: top-level module -> the extra that installs it
EXTRA_OF = {
    "rich": "progress",
    "matplotlib": "plot",
    "distributed": "dask",
    "dask": "dask",
    "smac": "baselines",
    "ConfigSpace": "baselines",
    "nevergrad": "baselines",
    "pymoo": "baselines",
    "optuna": "optuna",
    "ax": "ax",
    "pandas": "pandas",
    "psycopg": "postgres",
    "RNA": "bench",
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def missing_extra_message(module: str, what: str, extra: str | None = None) -> str:
    extra = extra or EXTRA_OF.get(module.split(".")[0], "bench")
    return (f"{what} needs the '{extra}' extra (module {module!r} is not installed): "
            f"pip install 'bodi[{extra}]'")


def require(module: str, what: str, extra: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra for ``what``."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        if err.name is None or err.name.split(".")[0] != module.split(".")[0]:
            raise  # a broken installation, not a missing extra
        raise MissingExtraError(missing_extra_message(module, what, extra)) from None


def available(module: str) -> bool:
    """Whether the optional ``module`` can be imported (it is then imported)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
