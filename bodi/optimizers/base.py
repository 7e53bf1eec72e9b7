"""The optimizer interface shared by BODi and every baseline: a suggestion from a history.

An optimizer is its settings, a seed, and :meth:`Optimizer.suggest`: new points from an
immutable :class:`~bodi.trials.History` of complete, failed and pending trials (whatever it
keeps between suggestions, e.g. a fitted model, is a cache that the same history would rebuild).
The trials themselves live in a :class:`~bodi.study.Study` (storage, workers' claims,
heartbeats, value checks); ``ask``/``tell`` and the views below are the study's, offered here so
that ``BODi(space, storage="study.db")`` is a whole ask/tell study in one object. Values are
stored as the user gave them; the model always maximizes ``sign * value`` (``sign = -1`` when
minimizing).

A study may have several objectives (``directions=["minimize", "minimize"]``): each trial then
has a value per objective (``Trial.values``), and the result is the Pareto front
(:attr:`Optimizer.pareto_front`) instead of one best trial.

A study may also have black-box *outcome constraints* (``outcome_constraints=c``): each
evaluation then reports ``c`` constraint values besides its value(s), and a trial is feasible when
every one is ``<= 0`` (e.g. ``latency - 10`` for "latency at most 10 ms"). Only feasible trials
can be best or on the Pareto front.
"""

from __future__ import annotations

import inspect
import json
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.diagnostics import numerical_warnings
from bodi.directions import check_directions
from bodi.directions import sign as direction_sign
from bodi.directions import signs as direction_signs
from bodi.neighbours import nearby_new_point
from bodi.novelty import SeenConfigurations, row_keys
from bodi.seeding import derive_seed, seeded
from bodi.space import DTYPE, SearchSpace, Value
from bodi.storage import Storage, StudyRecord
from bodi.study import Study
from bodi.trials import History, Outcome, Trial

__all__ = ["STUDY_OPTIONS", "Optimizer", "Outcome", "Trial"]

#: the constructor's options that belong to the study, not to the algorithm
STUDY_OPTIONS = ("seed", "direction", "directions", "outcome_constraints", "storage",
                 "study_name", "on_pending", "max_attempts", "allow_repeats")


class Optimizer(ABC):
    """Base class of every ask/tell optimizer in bodi.

    Args:
        space: the search space.
        seed: every random choice of the optimizer derives from it.
        direction: ``"minimize"`` or ``"maximize"``.
        directions: one direction per objective, for a multi-objective study (e.g.
            ``["minimize", "minimize"]``; replaces ``direction``). Only optimizers with
            :attr:`supports_multi_objective` accept more than one.
        outcome_constraints: how many black-box constraint values each evaluation reports
            (``tell(x, value, constraints=[...])``, or an :class:`Outcome` from the objective);
            feasible when all are ``<= 0``. Stored with the study. Only optimizers with
            :attr:`supports_outcome_constraints` accept them.
        storage: where the study lives: ``None`` (memory), a path (SQLite file), a URL
            (``sqlite:///path``, ``postgresql://...``) or a :class:`bodi.storage.Storage`. An
            existing study of the same name is resumed; its space and settings must match.
        study_name: the study's name in the storage (default ``"default"``).
        on_pending: what to do with pending trials whose worker is gone (its process ended,
            or it sent no heartbeat for :func:`bodi.workers.stale_after` seconds):
            ``"reissue"`` (default; ``ask`` returns them again first) or ``"fail"``. Pending
            trials of live workers (other processes on the same study) are left to them.
        max_attempts: a trial is handed out at most this many times: when its evaluation was
            lost that often (the process evaluating it died, e.g. killed by the configuration
            itself), it is marked failed instead of being re-issued again.
        allow_repeats: propose configurations equal to earlier trials (for noisy objectives);
            by default a suggestion never equals a finished, failed or pending trial.

    Several optimizers (processes or machines) may work on one stored study at once (see
    :class:`bodi.study.Study`). The study in memory is created at the first ``ask``/``tell``;
    a stored one is opened at once (a mismatch is an error here). :meth:`suggest` needs no
    study.

    Subclasses set their own settings before calling ``super().__init__`` (the stored settings
    are compared with :meth:`settings`) and implement :meth:`_suggest`, which reads the trials
    from the history it is given.
    """

    #: whether the optimizer accepts several objectives (``directions=``)
    supports_multi_objective: ClassVar[bool] = False
    #: whether the optimizer accepts black-box outcome constraints (``outcome_constraints=``)
    supports_outcome_constraints: ClassVar[bool] = False

    #: capabilities, read by ``bodi bench``, stored studies and the CLI (each declared here, set
    #: by the classes that have it):
    #: whether the class takes ``device=`` (a model that can compute on a GPU)
    takes_device: ClassVar[bool] = False
    #: whether it starts from the shared ``n_init`` initial design (``n_init=``, ``design=``)
    uses_initial_design: ClassVar[bool] = False
    #: whether it samples its own initial points instead (e.g. Bounce, whose model lives in an
    #: embedding that the shared design's points are not in)
    brings_own_design: ClassVar[bool] = False
    #: whether it plans with the number of evaluations (``budget=``)
    takes_budget: ClassVar[bool] = False
    #: whether it keeps a live state between suggestions that ``bodi bench`` should keep in
    #: the worker (e.g. NGOpt's Nevergrad optimizer) rather than rebuild from the history
    keeps_state: ClassVar[bool] = False
    #: whether :meth:`settings` records every option that changes the suggestions, so that two
    #: specs whose optimizers have equal settings are one configuration (reports show a run
    #: stored under either label as both; :func:`bodi.optimizers.registry.configuration`)
    settings_define_behaviour: ClassVar[bool] = False

    #: settings that studies stored by older versions of bodi lack, with the value they ran with
    legacy_settings: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        space: SearchSpace,
        *,
        seed: int = 0,
        direction: str = "minimize",
        directions: Sequence[str] | None = None,
        outcome_constraints: int = 0,
        storage: str | Path | Storage | None = None,
        study_name: str | None = None,
        on_pending: str = "reissue",
        max_attempts: int = 2,
        allow_repeats: bool = False,
    ):
        if not isinstance(space, SearchSpace):
            raise ValueError(f"space must be a bodi.SearchSpace, got {type(space).__name__}")
        self.directions = check_directions(direction, directions)
        if len(self.directions) > 1 and not self.supports_multi_objective:
            raise ValueError(
                f"{type(self).__name__} optimizes one objective; for several objectives use an "
                "optimizer that takes them (BODi, RandomSearch, the GP baselines, TPE, NSGA2; "
                "bodi.optimizers.registry.multi_objective_method_names() lists them all)"
            )
        if isinstance(outcome_constraints, bool) or not isinstance(
            outcome_constraints, numbers.Integral
        ) or outcome_constraints < 0:
            raise ValueError(f"outcome_constraints must be a number of constraints (an integer "
                             f">= 0), got {outcome_constraints!r}")
        if outcome_constraints and not self.supports_outcome_constraints:
            raise ValueError(f"{type(self).__name__} does not take outcome constraints; use "
                             "bodi, a GP baseline, tpe, nsga2 or random")
        self.outcome_constraints = int(outcome_constraints)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        if on_pending not in ("reissue", "fail"):
            raise ValueError(f"on_pending must be 'reissue' or 'fail', got {on_pending!r}")
        check_integer("max_attempts", max_attempts)
        self.space = space
        self.seed = int(seed)
        self.on_pending = on_pending
        self.max_attempts = int(max_attempts)
        self.allow_repeats = bool(allow_repeats)
        #: how many numerical warnings (e.g. of the GP fit) the suggestions raised
        self.numerical_warnings = 0
        self._storage, self._study_name = storage, study_name or "default"
        self._study: Study | None = None
        if storage is not None or study_name is not None:
            self._study = self._open_study()

    # ------------------------------------------------------------------ the algorithm
    def settings(self) -> dict[str, Any]:
        """The settings that define the optimizer's behaviour (stored with the study): its
        options, and what its class fixes (:meth:`retired_settings`)."""
        return {}

    @classmethod
    def retired_settings(cls, settings: Mapping[str, Any], space: SearchSpace
                         ) -> dict[str, Any]:
        """Settings that are not options (any more): those that stored studies name and that
        this version of bodi fixes (:meth:`settings` records some of them), each with the
        value that it behaves as for a study of ``settings`` on ``space``."""
        return {}

    @classmethod
    def complete_settings(cls, stored: dict[str, Any], space: SearchSpace) -> dict[str, Any]:
        """Stored ``settings`` of a study on ``space`` with the :attr:`legacy_settings` an
        older study did not record, less the :meth:`retired_settings` it ran with; a retired
        setting that ran with another value than this version's is a ``ValueError``
        (:func:`check_retired_settings`)."""
        settings = {**cls.legacy_settings, **stored}
        retired = cls.retired_settings(settings, space)
        check_retired_settings(cls.__name__, settings, retired)
        return {name: value for name, value in settings.items() if name not in retired}

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        """The optimizer's keyword options (its constructor's, less the space and the study's:
        :data:`STUDY_OPTIONS`) and their defaults."""
        defaults: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):  # a subclass's default replaces its base's
            init = klass.__dict__.get("__init__")
            if init is None or klass is object:
                continue
            for parameter in inspect.signature(init).parameters.values():
                if parameter.kind is parameter.KEYWORD_ONLY:
                    defaults[parameter.name] = parameter.default
        return {k: v for k, v in defaults.items() if k not in STUDY_OPTIONS}

    @classmethod
    def check_options(cls, **options: Any) -> None:
        """Check keyword options before there is a space (e.g. when a host framework's sampler
        is made): an unknown name is a ``TypeError``, a value that no space accepts a
        ``ValueError``. The constructor checks the rest against its space."""
        defaults = cls.option_defaults()
        unknown = sorted(set(options) - set(defaults))
        if unknown:
            raise TypeError(f"{cls.__name__} got unexpected option(s) {unknown}; allowed: "
                            f"{sorted(defaults)}")
        cls._check_space_free_options({**defaults, **options})

    @classmethod
    def _check_space_free_options(cls, options: dict[str, Any]) -> None:
        """Raise ``ValueError`` for ``options`` (every option, defaults filled in) that need no
        space to be refused; subclasses extend it (the base class's options are the study's,
        checked by the constructor)."""
        return None

    def suggest(self, history: History, n: int = 1, *, salt: tuple[int, ...] = ()) -> Tensor:
        """``n x dim`` new encoded points (canonical: as ``space.encode`` of their decoding)
        from ``history``; the same history, seed and ``salt`` give the same points.

        Every point satisfies the space's constraints and, unless ``allow_repeats``, equals no
        trial of the history nor another of the points (a suggestion that does is replaced by a
        new configuration near it, :func:`bodi.neighbours.nearby_new_point`): the guarantee
        holds for every optimizer, a baseline that knows nothing of constraints included.
        """
        if history.space.dim != self.space.dim or tuple(history.directions) != self.directions:
            raise ValueError("the history's space or directions are not the optimizer's")
        seed = derive_seed(self.seed, len(history), 0xA5, *salt)
        with seeded(seed), numerical_warnings() as seen:
            X = self._suggest(history, n)
        self.numerical_warnings += len(seen)
        if X.shape != (n, self.space.dim):
            raise RuntimeError(f"{type(self).__name__} suggested shape {tuple(X.shape)}")
        X = self.space.canonicalize(X)  # exactly what tell() will encode
        return self._replace_unusable(X, history, salt)

    @abstractmethod
    def _suggest(self, history: History, n: int) -> Tensor:
        """Return ``n x dim`` encoded new points from ``history``; global RNGs are seeded by
        the caller. It reads the trials from ``history`` alone and keeps nothing that a later
        suggestion reads (what it records, such as the last fitted model, is for inspection)."""

    def _replace_unusable(self, X: Tensor, history: History, salt: tuple[int, ...]) -> Tensor:
        """Swap each row of canonical ``X`` that violates the space's constraints, or (unless
        ``allow_repeats``) equals a trial of ``history`` or an earlier row, for a new feasible
        configuration near it."""
        feasible = self.space.feasible(X).tolist()
        if self.allow_repeats and all(feasible):
            return X
        taken = SeenConfigurations(self.space, None if self.allow_repeats else history.X)
        out = []
        for i, x in enumerate(X):
            if not (feasible[i] and (self.allow_repeats or taken.add(x))):
                g = torch.Generator().manual_seed(derive_seed(self.seed, len(history), i, *salt))
                x = nearby_new_point(self.space, x, taken.keys, g)
                if not self.allow_repeats:
                    taken.add(x)
            out.append(x)
        return torch.stack(out)

    # ------------------------------------------------------------------ the study
    def _open_study(self) -> Study:
        settings = self.settings()
        if self.outcome_constraints:  # (absent otherwise, as in studies stored before them)
            settings = {**settings, "outcome_constraints": self.outcome_constraints}
        record = StudyRecord(self._study_name, type(self).__name__, self.space.to_dict(),
                             json.loads(json.dumps(settings)), self.seed,
                             ",".join(self.directions))
        return Study(self.space, record, self._storage,
                     outcome_constraints=self.outcome_constraints, on_pending=self.on_pending,
                     max_attempts=self.max_attempts, allow_repeats=self.allow_repeats,
                     complete_settings=lambda stored: self.complete_settings(stored, self.space))

    @property
    def study(self) -> Study:
        """The study this optimizer asks and tells for (in memory unless a storage was given)."""
        if self._study is None:
            self._study = self._open_study()
        return self._study

    @property
    def storage(self) -> Storage:
        return self.study.storage

    @property
    def study_name(self) -> str:
        return self._study_name

    @property
    def worker(self) -> str:
        """This optimizer's worker name in its study (``host:pid:token``)."""
        return self.study.worker

    def close(self) -> None:
        """End this worker of the study: its pending trials are handed back at once (see
        :meth:`bodi.study.Study.close`). Also happens when it is garbage collected."""
        if self._study is not None:
            self._study.close()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> None:
        """Read the trials that other workers (or other optimizers) added or changed."""
        self.study.refresh()

    # ------------------------------------------------------------------ views
    @property
    def history(self) -> History:
        """The study's trials as they are now."""
        return self.study.history()

    @property
    def trials(self) -> list[Trial]:
        return list(self.history.trials)

    @property
    def n_objectives(self) -> int:
        return len(self.directions)

    @property
    def is_multi_objective(self) -> bool:
        return len(self.directions) > 1

    @property
    def direction(self) -> str:
        """``"minimize"`` or ``"maximize"``: the one objective's direction (with several
        objectives a ``ValueError``; see :attr:`directions`)."""
        if self.is_multi_objective:
            raise ValueError("this study has several objectives; see directions")
        return self.directions[0]

    @property
    def sign(self) -> float:
        """``-1`` when minimizing, ``+1`` when maximizing (the one objective)."""
        return direction_sign(self.direction)

    @property
    def signs(self) -> Tensor:
        """``k`` signs, one per objective: ``-1`` where minimizing."""
        return direction_signs(self.directions, DTYPE)

    def finished_losses(self) -> dict[int, float | None]:
        """See :meth:`bodi.trials.History.finished_losses`."""
        return self.history.finished_losses()

    @property
    def X_completed(self) -> Tensor:
        """``n x dim`` encoded inputs of completed trials."""
        return self.history.X_completed

    @property
    def Y_completed(self) -> Tensor:
        """``n x k`` values of completed trials, oriented so that larger is better."""
        return self.history.Y_completed

    @property
    def C_completed(self) -> Tensor:
        """``n x c`` outcome-constraint values of completed trials (feasible: ``<= 0``)."""
        return self.history.C_completed

    @property
    def feasible_completed(self) -> Tensor:
        """``n`` mask: which completed trials satisfy every outcome constraint."""
        return self.history.feasible_completed

    @property
    def X_pending(self) -> Tensor:
        return self.history.X_pending

    @property
    def X_failed(self) -> Tensor:
        return self.history.X_failed

    def _rows(self, state: str) -> list[Trial]:
        return self.history.rows(state)

    def _stack(self, rows: Sequence[Tensor]) -> Tensor:
        """``len(rows) x dim``: the encoded points ``rows`` stacked."""
        if not rows:
            return torch.empty(0, self.space.dim, dtype=DTYPE)
        return torch.stack(list(rows))

    @property
    def best(self) -> tuple[dict[str, Value], float] | None:
        """``(params, value)`` of the best feasible completed trial, or ``None`` before any."""
        return self.history.best

    @property
    def pareto_front(self) -> list[Trial]:
        """The feasible complete trials no other one dominates, in number order."""
        return self.history.pareto_front

    @property
    def n_finished(self) -> int:
        """Number of complete and failed trials."""
        return self.history.n_finished

    def unused_design_points(self, history: History, design: Tensor) -> Tensor:
        """The rows of the ``k x dim`` initial ``design`` not yet among the trials of
        ``history`` (compared by :func:`bodi.novelty.row_keys`, ``O((k + n) dim)`` for ``n``
        trials)."""
        if not len(history) or len(design) == 0:
            return design
        seen = row_keys(self.space, history.X)
        return design[~torch.isin(row_keys(self.space, design), seen)]

    # ------------------------------------------------------------------ ask/tell
    def ask(self, n: int | None = None) -> dict[str, Value] | list[dict[str, Value]]:
        """Propose one configuration (``n=None``) or a list of ``n`` configurations.

        Pending trials whose worker is gone are re-issued first; the others are new trials,
        never equal to an earlier trial (unless ``allow_repeats``).
        """
        count = 1 if n is None else n
        check_integer("n", count)
        configs = self.ask_within(int(count), limit=None)
        return configs[0] if n is None else configs

    def ask_within(self, count: int, *, limit: int | None) -> list[dict[str, Value]]:
        """Up to ``count`` configurations such that the study holds at most ``limit`` trials
        (``None``: no limit); an empty list when the study is full."""
        trials = self.study.ask(count, self._suggest_for_study, limit=limit)
        return [dict(t.params) for t in trials]

    def _suggest_for_study(self, history: History, n: int, salt: tuple[int, ...]) -> Tensor:
        return self.suggest(history, n, salt=salt)

    def tell(
        self,
        params: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        value: Any,
        constraints: Sequence[float] | Sequence[Sequence[float]] | None = None,
        user_attrs: Mapping[str, Any] | None = None,
    ) -> Trial | list[Trial]:
        """Record the value of one configuration, or of a list of them; returns the trial(s).

        A value of ``None``, NaN or +-inf marks the trial as failed: it is excluded from the
        model and never proposed again. A value of any other non-numeric type is an error.
        With several objectives a value is a sequence of one number per objective (a ``None``,
        NaN or inf among them marks the trial as failed). With outcome constraints,
        ``constraints`` gives each configuration's constraint values (one sequence of ``c``
        numbers per configuration); a non-finite one marks the trial as failed. ``user_attrs``
        (JSON values by name) are stored with each told trial.
        """
        return self.study.tell(params, value, constraints, user_attrs)

    def tell_failure(self, params: Mapping[str, Any], message: str) -> Trial:
        """Record that evaluating ``params`` failed (the message is kept with the trial)."""
        return self.study.tell_failure(params, message)

    def add_trials_from(self, source: Any, study_name: str | None = None) -> list[int]:
        """Start from an earlier study: copy its finished trials (a study file, a URL or a
        storage; ``study_name``: its only study, or this study's name) into this one, in a
        space that is the same or wider. Copying twice adds nothing. Returns the numbers of
        the new trials (see :meth:`bodi.study.Study.add_trials_from`)."""
        return self.study.add_trials_from(source, study_name)

    def add_pending(self, params: Mapping[str, Any]) -> Trial:
        """Record a configuration that is being evaluated elsewhere (e.g. by another worker of
        a host framework): it becomes a pending point of the next suggestions and is never
        proposed. ``tell`` it later like an asked one."""
        return self.study.add_pending(params)

    def enqueue(self, params: Mapping[str, Any]) -> Trial:
        """Store ``params`` as a trial to evaluate next: the next ``ask`` (of any worker of the
        study) returns it before proposing anything new. It counts toward a budget like any
        trial. A configuration equal to an earlier trial is refused (unless ``allow_repeats``)."""
        return self.study.enqueue(params)

    def retry_failed(self) -> list[int]:
        """Put every failed trial back to be evaluated again (the next ``ask`` returns them
        first, as for :meth:`enqueue`); returns their numbers. Their earlier messages are kept
        as the user attribute ``"failed_before"``."""
        return self.study.retry_failed()

    def set_user_attr(self, number: int, key: str, value: Any) -> Trial:
        """Store ``value`` (JSON) as the user attribute ``key`` of trial ``number``."""
        return self.study.set_user_attr(number, key, value)

    def trials_dataframe(self) -> Any:
        """The trials as a ``pandas.DataFrame`` (columns as Optuna's ``trials_dataframe``:
        ``number``, ``state``, ``value``, ``params_<name>``, ``user_attrs_<key>``, ...;
        :mod:`bodi.export`)."""
        from bodi.export import trials_dataframe

        return trials_dataframe(self)


def check_retired_settings(optimizer: str, settings: Mapping[str, Any],
                           retired: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` (one line) where ``settings`` give a retired option another value
    than the one this version of bodi behaves as: such a study cannot continue here."""
    different = [f"{name}={settings[name]!r}" for name, value in retired.items()
                 if name in settings and _json(settings[name]) != _json(value)]
    if different:
        raise ValueError(
            f"this study ran {optimizer} with {', '.join(different)}, an option this version "
            "of bodi no longer has (CHANGELOG.md says why); continue it with the version that "
            "created it, or start a new study")


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))
