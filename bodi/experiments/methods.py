"""Methods by name for the experiment runner: ``bodi``, ``random``, and variants with options.

Methods: ``bodi`` (bodi's defaults: incumbent-relative dictionary and a Hamming trust region),
``bodi-paper`` (the paper's configuration; ``bodi-paper[m=32]`` etc. vary it), ``random``,
``casmopolitan``, ``combo``, ``smac``, ``tpe`` and ``botorch-mixed`` (:mod:`bodi.baselines`).

A method spec is a name with optional keyword options in brackets, e.g. ``bodi``,
``bodi[m=32]`` or ``bodi[dictionary=wavelet,m=64]``. Options are the keyword arguments of the
method's optimizer class (``m`` is short for ``dictionary_size``); values are parsed as int,
float, bool (``true``/``false``) or string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from bodi.baselines import CASMOPOLITAN, COMBO, SMAC, TPE, BoTorchMixed
from bodi.optimizers import BODi, Optimizer, RandomSearch
from bodi.space import SearchSpace

#: name -> optimizer class (every class takes ``space, seed=, direction=`` and its options)
METHODS: dict[str, Callable[..., Optimizer]] = {
    "bodi": BODi,
    # the paper's configuration, pinned whatever bodi's defaults become
    "bodi-paper": partial(BODi, dictionary="diverse", dictionary_size=128,
                          dictionary_reference="none", trust_region=False),
    "random": RandomSearch,
    "casmopolitan": CASMOPOLITAN,
    "combo": COMBO,
    "smac": SMAC,
    "tpe": TPE,
    "botorch-mixed": BoTorchMixed,
}
#: methods whose initial design size is the runner's ``n_init``
USES_N_INIT = {"bodi", "bodi-paper", "casmopolitan", "combo", "smac", "tpe", "botorch-mixed"}
ALIASES = {"m": "dictionary_size"}
_SPEC = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*(?:\[(.*)\])?\s*$")


def _value(text: str) -> Any:
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_method(spec: str) -> tuple[str, dict[str, Any]]:
    """``"bodi[m=32]"`` -> ``("bodi", {"dictionary_size": 32})``; errors name the problem."""
    match = _SPEC.match(spec) if isinstance(spec, str) else None
    if match is None:
        raise ValueError(f"cannot parse method {spec!r}; expected e.g. 'bodi' or 'bodi[m=32]'")
    name, body = match.group(1), match.group(2)
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {sorted(METHODS)}")
    options: dict[str, Any] = {}
    for item in filter(None, (body or "").split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"method {spec!r}: option {item!r} is not key=value")
        options[ALIASES.get(key.strip(), key.strip())] = _value(value)
    return name, options


def make_optimizer(
    spec: str, space: SearchSpace, *, seed: int, direction: str, n_init: int
) -> Optimizer:
    """A fresh optimizer for ``spec`` (validates the options by constructing it)."""
    name, options = parse_method(spec)
    if name in USES_N_INIT:
        options.setdefault("n_init", n_init)
    try:
        return METHODS[name](space, seed=seed, direction=direction, **options)
    except TypeError as err:
        raise ValueError(f"method {spec!r}: {err}") from err
