"""The optimizer interface shared by BODi and every baseline: a suggestion from a history.

An optimizer is its settings, a seed, and :meth:`Optimizer.suggest`: new points from an
immutable :class:`~bodi.trials.History` of complete, failed and pending trials (whatever it
keeps between suggestions, e.g. a fitted model, is a cache that the same history would rebuild).
It stores nothing: a :class:`~bodi.study.Study` (``bodi.create_study(optimizer, storage)``)
holds the trials, their storage and the workers' claims, and asks the optimizer for points.
The model always maximizes ``sign * value`` (``sign = -1`` when minimizing).

A study may have several objectives (``directions=["minimize", "minimize"]``): each trial then
has a value per objective (``Trial.values``), and the result is the Pareto front instead of one
best trial. It may also have black-box *outcome constraints* (``outcome_constraints=c``): each
evaluation then reports ``c`` constraint values besides its value(s), and a trial is feasible
when every one is ``<= 0`` (e.g. ``latency - 10`` for "latency at most 10 ms").
"""

from __future__ import annotations

import inspect
import json
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import torch
from torch import Tensor

from bodi.diagnostics import numerical_warnings
from bodi.directions import check_directions
from bodi.directions import sign as direction_sign
from bodi.directions import signs as direction_signs
from bodi.neighbours import nearby_new_point
from bodi.novelty import SeenConfigurations, row_keys
from bodi.seeding import derive_seed, seeded
from bodi.space import DTYPE, SearchSpace
from bodi.trials import History

__all__ = ["PROBLEM_OPTIONS", "Optimizer"]

#: the constructor's options that every optimizer takes: the seed and the problem's definition
PROBLEM_OPTIONS = ("seed", "direction", "directions", "outcome_constraints", "allow_repeats")


class Optimizer(ABC):
    """Base class of every optimizer in bodi: new points from a history.

    Args:
        space: the search space.
        seed: every random choice of the optimizer derives from it.
        direction: ``"minimize"`` or ``"maximize"``.
        directions: one direction per objective, for a multi-objective study (e.g.
            ``["minimize", "minimize"]``; replaces ``direction``). Only optimizers with
            :attr:`supports_multi_objective` accept more than one.
        outcome_constraints: how many black-box constraint values each evaluation reports
            (``study.tell(x, value, constraints=[...])``, or an :class:`~bodi.trials.Outcome`
            from the objective); feasible when all are ``<= 0``. Only optimizers with
            :attr:`supports_outcome_constraints` accept them.
        allow_repeats: propose configurations equal to earlier trials (for noisy objectives);
            by default a suggestion never equals a finished, failed or pending trial.

    Subclasses implement :meth:`_suggest`, which reads the trials from the history it is
    given, and :meth:`settings`, which a stored study compares with the settings it was
    created with.
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
        self.space = space
        self.seed = int(seed)
        self.allow_repeats = bool(allow_repeats)
        #: how many numerical warnings (e.g. of the GP fit) the suggestions raised
        self.numerical_warnings = 0

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
        """The optimizer's keyword options (its constructor's, less the space and
        :data:`PROBLEM_OPTIONS`) and their defaults."""
        defaults: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):  # a subclass's default replaces its base's
            init = klass.__dict__.get("__init__")
            if init is None or klass is object:
                continue
            for parameter in inspect.signature(init).parameters.values():
                if parameter.kind is parameter.KEYWORD_ONLY:
                    defaults[parameter.name] = parameter.default
        return {k: v for k, v in defaults.items() if k not in PROBLEM_OPTIONS}

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

    # ------------------------------------------------------------------ directions
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

    def unused_design_points(self, history: History, design: Tensor) -> Tensor:
        """The rows of the ``k x dim`` initial ``design`` not yet among the trials of
        ``history`` (compared by :func:`bodi.novelty.row_keys`, ``O((k + n) dim)`` for ``n``
        trials)."""
        if not len(history) or len(design) == 0:
            return design
        seen = row_keys(self.space, history.X)
        return design[~torch.isin(row_keys(self.space, design), seen)]


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
