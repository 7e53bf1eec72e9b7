"""What the Optuna and Ax integrations share: option checks and one stateless BODi proposal."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bodi.acquisition import SearchSpaceExhaustedError
from bodi.adapters.codecs import Codec, from_bodi
from bodi.optimizers.bo import BODi
from bodi.space import Binary, SearchSpace


def bodi_option_names() -> list[str]:
    """The keyword options the adapters pass through to BODi: all of ``BODi.settings()`` but
    ``n_init`` (the host framework's start-up trials are the initial design)."""
    return [k for k in BODi(SearchSpace([Binary("x")]), n_init=0).settings() if k != "n_init"]


def check_bodi_options(options: Mapping[str, Any], who: str) -> dict[str, Any]:
    """Reject unknown keywords now rather than at the first model-based suggestion."""
    allowed = bodi_option_names()
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        hint = " (the start-up trials replace BODi's n_init)" if "n_init" in unknown else ""
        raise TypeError(f"{who} got unexpected BODi option(s) {unknown}{hint}; allowed: {allowed}")
    BODi(SearchSpace([Binary("x")]), n_init=0, **options)  # validates the values
    return dict(options)


def propose(
    codecs: Sequence[Codec],
    *,
    seed: int,
    direction: str,
    options: Mapping[str, Any],
    completed: Sequence[tuple[Mapping[str, Any], float | Sequence[float]]],
    failed: Sequence[Mapping[str, Any]],
    pending: Sequence[Mapping[str, Any]],
    constraints: Sequence[Sequence[float]] | None = None,
) -> dict[str, Any] | None:
    """Rebuild BODi from bodi-valued observations and ask one configuration (host values).

    ``completed`` holds ``(params, value)`` pairs; a non-finite value counts as a failure.
    ``direction`` is ``"minimize"``/``"maximize"``, or several joined by commas (then each value
    is a sequence with one number per objective).
    ``pending`` configurations become pending trials, i.e. qLogNEI pending points (and, in a
    discrete space, configurations never proposed again). Returns ``None`` when a finite space
    has no configuration left. ``constraints``, if given, holds each completed configuration's
    outcome-constraint values (``c`` numbers, feasible when all are ``<= 0``): BODi then models
    them (``outcome_constraints=c``).
    """
    space = SearchSpace([codec.parameter for codec in codecs])
    n_constraints = len(constraints[0]) if constraints else 0
    # n_init=0: the host framework's start-up trials are the initial design
    opt = BODi(space, seed=seed, direction=direction, n_init=0,
               outcome_constraints=n_constraints, **options)
    rows = [(p, v, constraints[i] if constraints else None)
            for i, (p, v) in enumerate(completed) if _finite(v)]
    if rows:
        opt.tell([p for p, _, _ in rows], [v for _, v, _ in rows],
                 constraints=[c for _, _, c in rows] if n_constraints else None)
    for params, value in completed:
        if not _finite(value):
            opt.tell_failure(params, f"value {value}")
    for params in failed:
        opt.tell_failure(params, "failed in the host framework")
    for params in pending:
        opt.add_pending(params)
    try:
        params = opt.ask()
    except SearchSpaceExhaustedError:
        return None
    return from_bodi(codecs, params)


def _finite(value: float | Sequence[float]) -> bool:
    values = value if isinstance(value, Sequence) else [value]
    return all(math.isfinite(v) for v in values)
