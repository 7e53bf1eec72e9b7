"""``BODiSampler``: BODi as an Optuna sampler.

Example:
    >>> import optuna
    >>> from bodi.integrations.optuna import BODiSampler
    >>> study = optuna.create_study(sampler=BODiSampler(seed=0, n_startup_trials=10))
    >>> study.optimize(objective, n_trials=60)

How a suggestion is made (``sample_relative``):

* The relative search space is the intersection of the distributions of all COMPLETE trials
  (:func:`optuna.search_space.intersection_search_space`), less single-valued distributions.
  Parameters outside it (conditional or dynamic ones) are sampled independently.
* Before any trial is COMPLETE the relative search space is unknown (Optuna defines it by
  running), so the sampler returns ``{}`` and every parameter comes from the independent
  sampler (random sampling); trials started concurrently at that moment may repeat each other
  in a small finite space.
* Until ``n_startup_trials`` trials are COMPLETE the configuration is drawn uniformly at random
  (:class:`~bodi.optimizers.random_search.RandomSearch`): in a discrete space, none of the
  COMPLETE, failed, RUNNING or WAITING trials' configurations. The system attribute
  ``bodi:proposer`` says who proposed a trial (``"random"`` or ``"bodi"``).
* Otherwise a fresh :class:`~bodi.optimizers.bo.BODi` (without its own initial design) is built
  on the mapped space (see :mod:`bodi.integrations.spaces.codecs` for the mapping of each
  distribution) and told the whole study, read from the storage at every call:

  - COMPLETE trials with their value;
  - FAIL trials as failures;
  - PRUNED trials as failures, or, with ``use_pruned_intermediate_values=True``, as completed
    with their last reported intermediate value (failures if they reported none);
  - RUNNING trials other than the current one, and WAITING (enqueued) ones, as *pending* points
    (qLogNEI pending points; in a discrete space they are never proposed again). Their values
    come from their parameters, their enqueued parameters, or the proposal this sampler stored in
    the trial's system attributes before the objective suggested them;
  - trials lacking a parameter of the space, or whose value is outside its distribution, are
    skipped.

  BODi's seed is derived from ``(seed, trial.number)``; ``trial.number`` is the number of trials
  created before the current one.
* With ``constraints_func`` (as Optuna's TPE, GP and NSGA-II samplers take it), its values are
  stored with each COMPLETE or PRUNED trial (Optuna's ``"constraints"`` system attribute, so
  that ``study.best_trials`` honours them too) and BODi models them as outcome constraints
  (feasible when every value is ``<= 0``; constrained qLogNEI). Trials without stored values
  (e.g. added with ``study.add_trial``) are left out of the model.
* A finite space whose every configuration is evaluated or pending has nothing new to propose:
  the sampler then proposes the best COMPLETE configuration again (a repeat is unavoidable;
  re-measuring the best is the most useful one when the objective is noisy).
* The proposal is written to the trial's system attributes (``bodi:params:<chunk>`` and
  ``bodi:params:chunks``), so that concurrent workers (threads, or processes sharing an RDB
  storage) see it as a pending point at once. After storing it, the sampler checks that no other
  trial holds the same parameters; if one does (two processes proposed at the same moment), it
  proposes again with that trial pending, with the seed derived from
  ``(seed, trial.number, attempt)``. Since each process checks after storing, two concurrent
  proposals cannot both keep the same parameters. After ``MAX_ATTEMPTS`` (3) colliding
  proposals in a row, the sampler proposes random configurations that no trial holds (up to
  ``RANDOM_ATTEMPTS``, 10, each checked the same way).

The sampler holds no state about the study, so it works with ``n_jobs > 1`` and with several
processes sharing one storage. In one process a lock serializes suggestions, so a thread always
sees the other threads' proposals. ``reseed_rng`` (which Optuna calls in each thread of
``n_jobs > 1``) draws a new seed, as Optuna's samplers do; such a study is not reproducible
anyway, since its threads race.

``sample_independent`` uses a :class:`optuna.samplers.RandomSampler` seeded from
``(seed, trial.number, parameter name)``: reproducible, and different in every trial, even for
processes that share ``seed``. A multi-objective study (``optuna.create_study(directions=
[...])``) gets BODi with one GP per objective and qLogNEHVI (:class:`bodi.BODi` with
``directions``).
"""

from __future__ import annotations

from bodi.extras import require

require("optuna", "bodi.integrations.optuna", "optuna")  # before the imports it checks

import json
import threading
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from optuna.distributions import (
    BaseDistribution,
)
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import intersection_search_space
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from bodi.checks import check_integer
from bodi.integrations._common import check_bodi_options, propose
from bodi.integrations.spaces.codecs import Codec, to_bodi
from bodi.integrations.spaces.optuna import codec_for
from bodi.seeding import derive_seed

__all__ = ["BODiSampler"]

PARAMS_KEY = "bodi:params"
#: the system attribute that says who proposed a trial's stored parameters ("bodi" or "random")
PROPOSER_KEY = "bodi:proposer"
_CHUNK = 2045  # RDB storages keep at most 2045 characters per system attribute value
MAX_ATTEMPTS = 3  # proposals per trial when a concurrent process stored the same one
RANDOM_ATTEMPTS = 10  # then random untaken configurations, until one is not stored twice


def _direction(study: Study) -> str:
    """The study's direction(s) as bodi stores them (several joined by commas)."""
    return ",".join("maximize" if d == StudyDirection.MAXIMIZE else "minimize"
                    for d in study.directions)


def _stored_proposal(trial: FrozenTrial) -> dict[str, Any]:
    """The proposal :meth:`BODiSampler.sample_relative` stored for ``trial`` (``{}`` if none)."""
    count = trial.system_attrs.get(f"{PARAMS_KEY}:chunks")
    if not isinstance(count, int):
        return {}
    try:
        return json.loads("".join(trial.system_attrs[f"{PARAMS_KEY}:{i}"] for i in range(count)))
    except (KeyError, ValueError):  # being rewritten by another process right now
        return {}


def _store_proposal(study: Study, trial: FrozenTrial, params: dict[str, Any],
                    proposer: str) -> None:
    text = json.dumps(params)
    chunks = [text[i : i + _CHUNK] for i in range(0, len(text), _CHUNK)] or [""]
    for i, chunk in enumerate(chunks):
        study._storage.set_trial_system_attr(trial._trial_id, f"{PARAMS_KEY}:{i}", chunk)
    study._storage.set_trial_system_attr(trial._trial_id, f"{PARAMS_KEY}:chunks", len(chunks))
    study._storage.set_trial_system_attr(trial._trial_id, PROPOSER_KEY, proposer)


def _known_params(trial: FrozenTrial) -> dict[str, Any]:
    """A trial's parameters, completed (while it runs or waits) by its enqueued parameters and
    the proposal stored for it."""
    if trial.state.is_finished():
        return trial.params
    fixed = trial.system_attrs.get("fixed_params", {})  # from study.enqueue_trial
    return {**_stored_proposal(trial), **fixed, **trial.params}


class BODiSampler(BaseSampler):
    """An Optuna sampler that proposes the relative search space with BODi.

    Args:
        seed: seeds BODi (with the trial number) and the independent random sampler. ``None``
            draws one at construction.
        n_startup_trials: number of COMPLETE trials sampled at random before BODi takes over.
        use_pruned_intermediate_values: tell a PRUNED trial's last intermediate value as its
            value (default: PRUNED trials are failures, excluded from the model).
        constraints_func: ``f(trial) -> sequence of floats``, outcome constraints that hold
            when every value is ``<= 0`` (Optuna's convention), called after each COMPLETE or
            PRUNED trial.
        **bodi_options: keyword options of :class:`bodi.BODi` (``dictionary_size``,
            ``dictionary``, ``acquisition``, ``num_restarts``, ``raw_samples``, ...; not
            ``n_init``: the start-up trials are the initial design).
    """

    def __init__(
        self,
        seed: int | None = None,
        n_startup_trials: int = 10,
        *,
        use_pruned_intermediate_values: bool = False,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        **bodi_options: Any,
    ) -> None:
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        check_integer("n_startup_trials", n_startup_trials, 0)
        self._seed = int(seed)
        self._n_startup_trials = n_startup_trials
        self._use_pruned = bool(use_pruned_intermediate_values)
        if constraints_func is not None and not callable(constraints_func):
            raise ValueError(f"constraints_func must be callable, got {constraints_func!r}")
        self._constraints_func = constraints_func
        self._bodi_options = check_bodi_options(bodi_options, "BODiSampler")
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def reseed_rng(self) -> None:
        """A new seed from the operating system's entropy (Optuna calls this in each thread of
        ``n_jobs > 1``). Every draw derives from ``(seed, trial.number)``, so without a reseed
        the threads would still differ; the new seed is Optuna's documented contract."""
        self._seed = int(np.random.SeedSequence().generate_state(1)[0])

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        """Store ``constraints_func``'s values with a COMPLETE or PRUNED trial."""
        if self._constraints_func is not None:
            from optuna.samplers._base import _process_constraints_after_trial

            _process_constraints_after_trial(self._constraints_func, study, trial, state)

    # ------------------------------------------------------------- relative sampling
    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        return {
            name: distribution
            for name, distribution in intersection_search_space(complete).items()
            if codec_for(name, distribution) is not None
        }

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        codecs = [codec_for(name, d) for name, d in sorted(search_space.items())]
        codecs = [c for c in codecs if c is not None]
        with self._lock:
            trials = study.get_trials(deepcopy=False)
            at_random = sum(t.state == TrialState.COMPLETE for t in trials) < (
                self._n_startup_trials)
            direction = _direction(study)
            for attempt in range(MAX_ATTEMPTS + RANDOM_ATTEMPTS):
                if attempt:
                    trials = study.get_trials(deepcopy=False)
                completed, constraints, failed, pending = self._observations(
                    codecs, trials, trial.number)
                keys = (self._seed, trial.number, attempt) if attempt else (
                    self._seed, trial.number)
                params = propose(
                    codecs,
                    seed=derive_seed(*keys),
                    direction=direction,
                    options=self._bodi_options,
                    completed=completed,
                    failed=failed,
                    pending=pending,
                    constraints=constraints,
                    at_random=at_random or attempt >= MAX_ATTEMPTS,
                )
                if params is None:  # a finite space with every configuration used
                    return self._best_complete(study, search_space)
                _store_proposal(study, trial, params, "random" if at_random else "bodi")
                # Another process may have stored the same proposal meanwhile: then ask again,
                # with that one pending. (Each checks after storing, so two concurrent proposals
                # cannot both pass with the same parameters.)
                if not self._taken(study, trial.number, params):
                    break
        return params

    @staticmethod
    def _taken(study: Study, current: int, params: dict[str, Any]) -> bool:
        for t in study.get_trials(deepcopy=False):
            if t.number != current:
                known = _known_params(t)
                if all(name in known and known[name] == value for name, value in params.items()):
                    return True
        return False

    @staticmethod
    def _best_complete(study: Study, search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """The parameters (of ``search_space``) of the best COMPLETE trial that has them all
        (with several objectives, the first of the Pareto front); ``{}`` if none."""
        complete = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                    if all(name in t.params for name in search_space)]
        if not complete:
            return {}
        if study._is_multi_objective():
            front = {t.number for t in study.best_trials}
            best = next((t for t in complete if t.number in front), complete[0])
        else:
            pick = max if study.direction == StudyDirection.MAXIMIZE else min
            best = pick(complete, key=lambda t: t.value)
        return {name: best.params[name] for name in search_space}

    def _constraints(self, trial: FrozenTrial) -> list[float] | None:
        """A trial's stored constraint values (``None``: none stored)."""
        from optuna.study._constrained_optimization import _CONSTRAINTS_KEY

        values = trial.system_attrs.get(_CONSTRAINTS_KEY)
        return None if values is None else [float(v) for v in values]

    def _observations(
        self, codecs: Sequence[Codec], trials: Sequence[FrozenTrial], current: int
    ) -> tuple[list[tuple[dict, float]], list[list[float]] | None, list[dict], list[dict]]:
        """The study as bodi-valued observations: completed ``(params, value)`` pairs, their
        constraint values (``None`` without ``constraints_func``), failed and pending
        configurations."""
        completed, constraints, failed, pending = [], [], [], []
        constrained = self._constraints_func is not None
        for t in trials:
            if t.number == current:
                continue
            if t.state in (TrialState.RUNNING, TrialState.WAITING):
                params = to_bodi(codecs, _known_params(t))
                if params is not None:
                    pending.append(params)
                continue
            params = to_bodi(codecs, t.params)
            if params is None:
                continue
            value = None
            if t.state == TrialState.COMPLETE:
                value = float(t.value) if len(t.values) == 1 else [float(v) for v in t.values]
            elif t.state == TrialState.PRUNED and self._use_pruned and t.intermediate_values:
                value = float(t.intermediate_values[max(t.intermediate_values)])
            if value is None:
                if t.state in (TrialState.FAIL, TrialState.PRUNED):
                    failed.append(params)
                continue
            limits = self._constraints(t) if constrained else None
            if constrained and (limits is None or (constraints and len(limits) != len(
                    constraints[0]))):
                continue  # no constraint values stored (or another number of them)
            completed.append((params, value))
            constraints.append(limits)
        return completed, constraints if constrained and constraints else None, failed, pending

    # ---------------------------------------------------------- independent sampling
    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        key = zlib.crc32(param_name.encode())
        sampler = RandomSampler(seed=derive_seed(self._seed, trial.number, key) % 2**32)
        return sampler.sample_independent(study, trial, param_name, param_distribution)
