"""The user's objective: loaded from ``module:function`` or ``file.py:function``, and shipped
to other machines.

A file objective imports like a script: its folder is importable (modules beside it, e.g. a
``helper.py`` it imports), but last on the path, so that a file named like a standard-library
module shadows nothing; it is loaded under a private module name. The modules of its folder
cannot be imported on the workers of a cluster (they are not installed there), so
:func:`pickled_by_value` serializes the objective with them by value (cloudpickle), and each
task runs :func:`call_pickled` (importable wherever bodi is installed) on those bytes.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import sysconfig
import zlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any


def load_objective(spec: str) -> Callable[..., Any]:
    """``"module:function"`` or ``"path/to/file.py:function"`` -> the callable."""
    module_name, sep, function_name = spec.rpartition(":")
    if not sep or not module_name or not function_name:
        raise ValueError(f"--objective must look like module:function, got {spec!r}")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise ValueError(f"objective file {path} does not exist")
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.append(folder)
        # A private module name: a file called random.py or types.py shadows nothing.
        name = f"_bodi_objective_{zlib.crc32(str(path.resolve()).encode()):08x}_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module  # so that its functions pickle (Dask, process pools)
        module_spec.loader.exec_module(module)
    else:
        # after everything else: a module of the working directory shadows no other module
        if str(Path.cwd()) not in sys.path:
            sys.path.append(str(Path.cwd()))
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            raise ValueError(f"cannot import objective module {module_name!r}: {err}") from err
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(f"{module_name} has no function {function_name!r}")
    return function


def local_modules(function: Callable[..., Any]) -> list[ModuleType]:
    """The modules loaded from the folder of ``function``'s module (its own included), unless
    that folder is part of the Python installation (an installed package ships itself)."""
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    if module is None or file is None:
        return []  # __main__ of a notebook, or a builtin: cloudpickle handles those
    folder = Path(file).resolve().parent
    installed = {Path(p).resolve() for p in (sysconfig.get_paths()["purelib"],
                                              sysconfig.get_paths()["stdlib"], sys.prefix)}
    if any(folder == root or root in folder.parents for root in installed):
        return []
    found = []
    for candidate in list(sys.modules.values()):
        path = getattr(candidate, "__file__", None)
        if path and Path(path).resolve().parent == folder:
            found.append(candidate)
    return found


def pickled_by_value(function: Callable[..., Any]) -> bytes:
    """``function`` serialized by cloudpickle with its :func:`local_modules` by value, so that
    a process that cannot import them can still run it (:func:`call_pickled`)."""
    import cloudpickle

    modules = [m for m in local_modules(function) if m.__name__ != "__main__"]
    registered = set(cloudpickle.list_registry_pickle_by_value())
    for module in modules:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(function)
    finally:
        for module in modules:
            if module.__name__ not in registered:
                cloudpickle.unregister_pickle_by_value(module)


def call_pickled(payload: bytes, *args: Any) -> Any:
    """Run the function of :func:`pickled_by_value` on ``args`` (on a cluster's worker)."""
    import pickle

    return pickle.loads(payload)(*args)
