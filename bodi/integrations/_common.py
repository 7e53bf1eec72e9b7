"""What the Optuna and Ax integrations share: option checks and one stateless BODi proposal."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from bodi.checks import UnusedOptionWarning
from bodi.integrations.spaces.codecs import Codec, from_bodi
from bodi.novelty import SearchSpaceExhaustedError
from bodi.optimizers.bo import BODi
from bodi.optimizers.random_search import RandomSearch
from bodi.space import SearchSpace
from bodi.trials import History


def bodi_option_names() -> list[str]:
    """The keyword options the adapters pass through to BODi: all of BODi's but ``n_init``
    (the host framework's start-up trials are the initial design)."""
    return [k for k in BODi.option_defaults() if k != "n_init"]


def check_bodi_options(options: Mapping[str, Any], who: str) -> dict[str, Any]:
    """Reject unknown keywords and values that no space accepts now, rather than at the first
    model-based suggestion (after the start-up trials were paid for)."""
    allowed = bodi_option_names()
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        hint = " (the start-up trials replace BODi's n_init)" if "n_init" in unknown else ""
        raise TypeError(f"{who} got unexpected BODi option(s) {unknown}{hint}; allowed: {allowed}")
    BODi.check_options(**options)
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
    at_random: bool = False,
) -> dict[str, Any] | None:
    """One configuration (host values) that BODi suggests from bodi-valued observations.

    ``completed`` holds ``(params, value)`` pairs; a non-finite value counts as a failure.
    ``direction`` is ``"minimize"``/``"maximize"``, or several joined by commas (then each value
    is a sequence with one number per objective).
    ``pending`` configurations are qLogNEI pending points (and, in a discrete space,
    configurations never proposed). Returns ``None`` when a finite space has no configuration
    left. ``constraints``, if given, holds each completed configuration's outcome-constraint
    values (``c`` numbers, feasible when all are ``<= 0``): BODi then models them
    (``outcome_constraints=c``). The observations become a :class:`bodi.trials.History` that
    BODi suggests from directly: no study, nothing replayed. ``at_random=True`` draws the
    configuration uniformly at random instead (:class:`~bodi.optimizers.random_search.
    RandomSearch`: in a discrete space, none of the observed or pending ones).
    """
    space = SearchSpace([codec.parameter for codec in codecs])
    directions = direction.split(",")
    n_constraints = len(constraints[0]) if constraints else 0
    # n_init=0: the host framework's start-up trials are the initial design
    if at_random:
        opt = RandomSearch(space, seed=seed, directions=directions,
                           outcome_constraints=n_constraints)
    else:
        with warnings.catch_warnings():  # the options are for every space the host derives
            warnings.simplefilter("ignore", UnusedOptionWarning)
            opt = BODi(space, seed=seed, directions=directions, n_init=0,
                       outcome_constraints=n_constraints, **options)
    history = History.from_observations(space, directions, completed=completed,
                                        constraints=constraints or None, failed=failed,
                                        pending=pending)
    try:
        X = opt.suggest(history, 1)
    except SearchSpaceExhaustedError:
        return None
    return from_bodi(codecs, space.decode(X)[0])
