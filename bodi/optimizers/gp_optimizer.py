"""The GP loop shared by every GP method of bodi (:class:`GPOptimizer`).

Per suggestion, after the shared initial design: fit a GP (``make_model``), build the
acquisition function and maximize it by local search (optionally inside a Hamming trust
region). BODi (:mod:`bodi.optimizers.bo`), CASMOPOLITAN, COMBO and BoTorch's mixed GP
(:mod:`bodi.baselines`) differ only in the model (and CASMOPOLITAN in the trust region).
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

import torch
from botorch.models.model import Model, ModelList
from torch import Tensor

from bodi.acquisition import make_acquisition, optimize_acquisition
from bodi.acquisition.factory import check_acquisition
from bodi.acquisition.optimize import OnModelDevice, check_acquisition_optimizer
from bodi.acquisition.trust_region import (
    TrustRegion,
    TrustRegionSettings,
    complete_trust_region,
    discrete_moves,
    reaches_uniform_points,
    region_from_state,
    trust_region_state,
)
from bodi.checks import check_integer
from bodi.device import dtype_name, model_tensor_kwargs
from bodi.diagnostics import logger
from bodi.directions import check_directions
from bodi.models.gp import leave_one_out_log_densities, warm_started_fits
from bodi.models.known_objectives import check_known_objectives, known_objective_model
from bodi.novelty import SearchSpaceExhaustedError, exact_matches
from bodi.optimizers.model_based import ModelBasedOptimizer
from bodi.optimizers.training_data import nearest_rows, penalize_infeasible, squash_outcomes
from bodi.pareto import (
    chebyshev_utility,
    infer_reference_point,
    random_weights,
    running_hypervolume,
)
from bodi.seeding import derive_seed, seeded
from bodi.space import DTYPE, SearchSpace, Value
from bodi.trials import History

DEFAULT_MAX_MODEL_POINTS = 1000
#: where the model leaves most of the initial design out, it keeps this many of its points
#: (its first ones, as in a design of this size) and the design's best
DESIGN_FEW = 5
#: the model compares the fits with all and with a few of the design's points only while the
#: points it would leave out are at least this share of its rows (a design of 20: up to 340
#: rows); beyond, the two fits differ in too few rows to be worth the second fit
DESIGN_FEW_MIN_SHARE = 0.05
#: the values of ``failed_trials``: what the GP learns from a failed trial (one whose
#: objective raised or returned NaN or inf)
FAILED_TRIALS = ("ignore", "worst", "constraint")
#: the acquisition function of the GP optimizers unless one is asked for
DEFAULT_ACQUISITION = "logei"
#: ``beta`` of the upper confidence bound ``mu + sqrt(beta) sigma``
UCB_BETA = 2.0
#: with ``failed_trials="constraint"``, once a trial has failed, every suggestion uses this
#: acquisition, weighted by the failure constraint (the upper confidence bound has no form
#: weighted by a constraint's probability)
FAILURE_CONSTRAINT_ACQUISITION = "logei"
#: where the model leaves most of the initial design out, that fit starts from the fit on
#: every trial and runs at most this many L-BFGS-B iterations (a full fit: 100)
WARM_FIT_MAXITER = 25
#: the anchors' fits kept for the next suggestions (:attr:`GPOptimizer.fit_anchor_every`), by
#: optimizer and history; a suggestion that misses its anchor fits it again
ANCHOR_FITS: OrderedDict[tuple, ObjectiveFit] = OrderedDict()
MAX_ANCHOR_FITS = 8


class ObjectiveFit(NamedTuple):
    """The fitted objective model of a history's completed trials and what it came from."""

    #: the fitted model (:meth:`GPOptimizer.fit_model_on_rows`)
    model: Model
    #: the rows of ``history.X_completed`` it was fitted on
    rows: Tensor
    #: the trust region (``None``: none)
    region: TrustRegion | None
    #: ``n x (k + c)`` model outcomes of every completed trial (:meth:`model_outcomes`)
    Y: Tensor
    #: the completed trials, best utility first
    order: Tensor


class GPOptimizer(ModelBasedOptimizer):
    """The GP loop shared by BODi and the GP baselines.

    Args:
        space, seed, direction, directions, outcome_constraints, allow_repeats:
            see :class:`bodi.optimizers.Optimizer`.
        n_init: size of the initial design (:func:`bodi.initial_design.initial_design`);
            ``0`` when the initial points come from elsewhere (until two values are known,
            points are then drawn uniformly).
        design: the initial design's kind, ``"uniform"`` (default, shift-invariant) or
            ``"sparsity"`` (the paper authors'); see :mod:`bodi.initial_design`.
        acquisition: ``"logei"`` (default) or ``"ucb"`` (``beta`` :data:`UCB_BETA`).
        num_restarts, raw_samples: local-search starts and the random pool they are chosen from.
        trust_region: ``False`` (search the whole space), ``True`` (the class's
            :attr:`default_trust_region`: CASMOPOLITAN's trust region with its default sizes,
            BODi's with its own rule for the box), a :class:`TrustRegionSettings` or a dict
            of its fields, set on top of :attr:`default_trust_region`
            (:func:`bodi.acquisition.trust_region.complete_trust_region`).
        device: where the model and the acquisition values are computed (``"cpu"``, the
            default, or ``"cuda"``/``"cuda:1"``). Not stored with the study: a study run on a
            GPU resumes on the CPU (:mod:`bodi.device`).
        dtype: the model's precision, ``"float64"`` (default) or ``"float32"``; stored with
            the study, since it changes the suggestions.
        directions: one direction per objective (see :class:`bodi.optimizers.Optimizer`).
            With ``k > 1`` objectives each is modelled by its own GP (``make_model``; a
            BoTorch ``ModelList``) and the acquisition function is qLogNEHVI
            (:func:`bodi.acquisition.make_acquisition`); the trust region grows and shrinks
            with the hypervolume instead of the best value, and is centred at the best point
            of a random augmented Chebyshev scalarization (a different part of the Pareto
            front each iteration, :func:`bodi.pareto.chebyshev_utility`).
        ref_point: the hypervolume's reference point, one value per objective in the
            objectives' own units and directions (the worst values still of interest, e.g.
            ``[1.0, 50]`` for "error at most 1, cost at most 50"); default: inferred from the
            observed Pareto front each iteration (BoTorch's ``infer_reference_point``).
        known_objectives: objectives that are known functions of the parameters (e.g. the
            summed cost of the selected features): ``{index: function(params) -> float}``, or
            ``{index: {binary parameter name: weight}}`` for a weighted sum of binary
            parameters (one matrix product for a whole batch of candidates; a function is
            called on each decoded candidate, which costs more). They are computed exactly
            instead of modelled (BoTorch's ``GenericDeterministicModel``); the objective
            function still returns all values. They are not stored with a study: pass them
            again to continue it.
        max_model_points: fit the GP on at most this many completed trials: the ones nearest
            the trust region's centre (the incumbent without a region; Hamming distance on
            the binary/categorical columns plus L1 on the others), as TuRBO and CASMOPOLITAN
            model locally. An exact GP costs ``O(n^3)`` to fit and ``O(n^2)`` per scored
            candidate; the cap bounds both (``None``: every trial; the default, 1000, leaves
            studies of up to 1000 evaluations unchanged; measured in docs/speed.md).
        outcome_constraints: the number of black-box constraint values per evaluation (see
            :class:`bodi.optimizers.Optimizer`). Each is modelled by its own GP, and the
            acquisition is constrained qLogNEI (qLogNEHVI with several objectives): each sample
            weighted by the smoothed probability that all constraints hold. Until a feasible
            trial is found the trust region follows the least violation.
        failed_trials: what the GP learns from a failed trial: ``"ignore"`` (default):
            nothing (the search only never proposes its point again); ``"worst"``: its point
            enters the model with the worst completed outcome in each column (the smallest
            model objective, the largest constraint value), as the baselines that minimize a
            loss of their own score a failure (:meth:`bodi.trials.History.finished_losses`),
            so that a region that fails is learned as bad; the acquisition's incumbent stays
            the best completed trial; ``"constraint"``: an unknown constraint, a GP of the
            indicator (+1 failed, -1 completed) on every trial beside the objective's model,
            which the acquisition weights by the probability that it holds (as an outcome
            constraint), so that the objective's fit never sees an imputed value; once a trial
            has failed, the suggestions use the constrained LogEI
            (:data:`FAILURE_CONSTRAINT_ACQUISITION`).

    Subclasses implement :meth:`make_model`, extend :meth:`settings` and may set
    :attr:`acquisition_optimizer` and :attr:`design_in_model`.
    """

    min_completed = 2  # a GP needs two values
    takes_device: ClassVar[bool] = True
    #: the acquisition optimizer (:func:`bodi.acquisition.optimize_acquisition`'s ``method``):
    #: ``"auto"``, the local search in fully discrete spaces, with a trust region or with
    #: constraints, BoTorch's ``optimize_acqf_mixed_alternating`` otherwise
    acquisition_optimizer: ClassVar[str] = "auto"
    #: options of the acquisition optimizer (e.g. the local search's ``max_steps``)
    acquisition_options: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: which of the initial design's completed trials the model is fitted on (with every
    #: later trial): ``"all"``, or ``"reach"``: all where the trust region at its largest
    #: reaches a typical uniform point from any centre (the expected Hamming distance
    #: ``sum_i (1 - 1 / C_i)`` at most ``max_radius``, 30 by default: up to 60 binary
    #: parameters; :func:`~bodi.acquisition.trust_region.reaches_uniform_points`), else for
    #: each suggestion the model on all of them or on the design's first :data:`DESIGN_FEW`
    #: points and its best, whichever predicts the trials both saw better (mean leave-one-out
    #: log density, :func:`bodi.models.gp.leave_one_out_log_densities`; the second fit starts
    #: from the first's hyperparameters and runs at most :data:`WARM_FIT_MAXITER` iterations),
    #: as long as the points left out are :data:`DESIGN_FEW_MIN_SHARE` of the rows or more
    design_in_model: ClassVar[str] = "all"
    #: every how many trials the objective model's fit starts from the default
    #: hyperparameters (``0``: at every suggestion); at the trials between two such *anchors*
    #: the fit starts from the anchor's fitted hyperparameters (an embedding's lengthscales from
    #: their median) and runs at most :data:`WARM_FIT_MAXITER` iterations, unless its loss
    #: starts worse there (:func:`bodi.models.gp.warm_started_fits`). The anchor's fit is a
    #: function of the history's first trials alone, so the suggestions are too; it is cached
    #: (:data:`ANCHOR_FITS`), and recomputed where the cache lacks it
    fit_anchor_every: ClassVar[int] = 0
    supports_multi_objective: ClassVar[bool] = True
    supports_outcome_constraints: ClassVar[bool] = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        seed: int = 0,
        direction: str = "minimize",
        n_init: int = 20,
        acquisition: str = DEFAULT_ACQUISITION,
        num_restarts: int = 10,
        raw_samples: int = 1024,
        trust_region: bool | TrustRegionSettings | dict[str, Any] = False,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype = "float64",
        ref_point: Sequence[float] | None = None,
        known_objectives: Mapping[int, Callable[[dict[str, Value]], float]] | None = None,
        max_model_points: int | None = DEFAULT_MAX_MODEL_POINTS,
        failed_trials: str = "ignore",
        **kwargs: Any,
    ) -> None:
        if not isinstance(space, SearchSpace):
            raise ValueError(f"space must be a bodi.SearchSpace, got {type(space).__name__}")
        directions = check_directions(direction, kwargs.get("directions"))
        check_acquisition(acquisition, len(directions), kwargs.get("outcome_constraints") or 0)
        self.ref_point, self.known_objectives = _check_multi_objective_options(
            space, directions, ref_point, known_objectives)
        trust_region = _check_gp_options(dict(
            acquisition=acquisition, num_restarts=num_restarts, raw_samples=raw_samples,
            trust_region=trust_region, max_model_points=max_model_points,
            device=device, dtype=dtype, failed_trials=failed_trials), space,
            self.default_trust_region, self.acquisition_optimizer)
        self.tensor_kwargs = model_tensor_kwargs(device, dtype)
        self.acquisition = acquisition
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        self.max_model_points = max_model_points
        self.failed_trials = failed_trials
        self.trust_region_settings: TrustRegionSettings | None = trust_region or None
        #: the model and trust region of the last suggestion, for inspection (no suggestion
        #: reads them: each fits its own from its history)
        self.model: Model | None = None
        self.region: TrustRegion | None = None
        super().__init__(space, seed=seed, direction=direction, n_init=n_init, **kwargs)

    @classmethod
    def _check_space_free_options(cls, options: dict[str, Any]) -> None:
        super()._check_space_free_options(options)
        _check_gp_options(options, None, cls.default_trust_region, cls.acquisition_optimizer)

    def settings(self) -> dict[str, Any]:
        """The keyword settings of this optimizer (what a stored study needs to rebuild it)."""
        tr = self.trust_region_settings
        return {
            **super().settings(),  # n_init
            "acquisition": self.acquisition,
            "num_restarts": self.num_restarts,
            "raw_samples": self.raw_samples,
            "trust_region": False if tr is None else dict(tr.__dict__),
            "dtype": dtype_name(self.dtype),
            "ref_point": self.ref_point,
            "max_model_points": self.max_model_points,
            "failed_trials": self.failed_trials,
            "acquisition_optimizer": self.acquisition_optimizer,
            "acquisition_options": dict(self.acquisition_options),
            "design_in_model": self.design_in_model,
        }

    #: the trust region that ``trust_region=True`` means and that a dict of fields completes
    default_trust_region: ClassVar[TrustRegionSettings] = TrustRegionSettings()

    # studies stored before the dtype (ref_point, max_model_points, coarse_steps,
    # local_model, design_in_model, outcome_warping, failed_trials, ucb_after, ucb_until)
    # option existed ran in float64 (one objective, every trial in the model, no group moves,
    # the values as they are, failed trials not in the model, UCB from the first suggestion
    # to the last)
    legacy_settings: ClassVar[dict[str, Any]] = {
        **ModelBasedOptimizer.legacy_settings, "dtype": "float64", "ref_point": None,
        "max_model_points": None, "coarse_steps": 0, "local_model": False,
        "design_in_model": "all", "outcome_warping": "none", "failed_trials": "ignore",
        "ucb_after": 0, "ucb_until": None,
    }

    @classmethod
    def retired_settings(cls, settings: Mapping[str, Any], space: SearchSpace
                         ) -> dict[str, Any]:
        return {**super().retired_settings(settings, space),
                "acquisition_optimizer": cls.acquisition_optimizer,
                "acquisition_options": dict(cls.acquisition_options), "ucb_beta": UCB_BETA,
                "ucb_after": 0, "ucb_until": None, "coarse_steps": 0, "local_model": False,
                "design_in_model": cls.design_in_model, "outcome_warping": "none"}

    @classmethod
    def complete_settings(cls, stored: dict[str, Any], space: SearchSpace) -> dict[str, Any]:
        """Stored settings completed, the trust region's with the fields an older study did
        not record."""
        settings = super().complete_settings(stored, space)
        if isinstance(settings.get("trust_region"), dict):
            settings["trust_region"] = dict(
                TrustRegionSettings(**settings["trust_region"]).__dict__)
        return settings

    @property
    def device(self) -> torch.device:
        """Where the model computes (see :mod:`bodi.device`)."""
        return self.tensor_kwargs["device"]

    @property
    def dtype(self) -> torch.dtype:
        """The model's precision."""
        return self.tensor_kwargs["dtype"]

    def make_model(self, train_X: Tensor, train_Y: Tensor, history: History) -> Model:
        """A fitted model of ``n x dim`` inputs and ``n x 1`` outcomes (larger is better), for
        a suggestion from ``history``."""
        raise NotImplementedError

    def reference_point(self, history: History) -> Tensor:
        """``k`` hypervolume reference point in the larger-is-better orientation: the given
        ``ref_point`` or one inferred from the completed trials."""
        if self.ref_point is not None:
            return torch.tensor(self.ref_point, dtype=DTYPE) * self.signs
        Y, feasible = history.Y_completed, history.feasible_completed
        return infer_reference_point(Y[feasible] if feasible.any() else Y)

    def utility(self, history: History) -> Tensor:
        """``n`` scalar utilities of the completed trials, larger is better: the value with one
        objective; with several, an augmented Chebyshev scalarization with weights drawn anew
        each iteration (seeded), whose best point is on the Pareto front."""
        Y = history.Y_completed
        if not self.is_multi_objective:
            utility = Y.squeeze(-1)
        else:
            g = torch.Generator().manual_seed(derive_seed(self.seed, len(history.trials), 0xC4EB))
            utility = chebyshev_utility(Y, random_weights(self.n_objectives, g))
        return penalize_infeasible(utility, history.C_completed)

    def trust_region(self, history: History) -> TrustRegion | None:
        """The current trust region (``None``: search the whole space). With several
        objectives its size follows the hypervolume of the trials so far (an improvement is a
        larger hypervolume)."""
        settings = self.trust_region_settings
        if settings is None:
            return None
        progress = self.progress(history)
        # which steps moved the discrete incumbent: only the box's own rule asks, and only a
        # space with a box (continuous/integer parameters) has a use for the answer
        moved = (discrete_moves(history.X_completed[:, self.space.discrete_dims], progress)
                 if settings.box_failure_tolerance is not None and self.space.ordinal_dims
                 else None)
        state = trust_region_state(progress, self.n_init, settings,
                                   len(self.space.discrete_dims), moved)
        return region_from_state(self.space, state, history.X_completed,
                                 self.utility(history).unsqueeze(-1))

    def progress(self, history: History) -> list[float]:
        """The completed trials' progress in order, larger is better, where a step improves
        when its entry exceeds every earlier one: the value with one objective (infeasible
        trials below every feasible one), the hypervolume so far with several."""
        Y = history.Y_completed
        if self.is_multi_objective:
            ref = self.reference_point(history)
            Y = torch.where(history.feasible_completed.unsqueeze(-1), Y, ref - 1)  # adds nothing
            return running_hypervolume(Y, ref)
        return penalize_infeasible(Y.squeeze(-1), history.C_completed).tolist()

    def make_objective_model(self, train_X: Tensor, train_Y: Tensor, history: History
                             ) -> Model:
        """The model of all ``k`` objectives (``train_Y``: ``n x k``): :meth:`make_model`
        for one; for several, a ``ModelList`` of one fitted model per objective, with the
        ``known_objectives`` computed exactly."""
        if train_Y.shape[-1] == 1:
            return self.make_model(train_X, train_Y, history)
        models = [
            known_objective_model(self.space, float(self.signs[i]), self.known_objectives[i])
            if i in self.known_objectives
            else self.make_model(train_X, train_Y[:, i : i + 1], history)
            for i in range(train_Y.shape[-1])
        ]
        return ModelList(*models)

    def model_rows(self, history: History, center: Tensor) -> Tensor:
        """Indices (ascending) of the completed trials the model is fitted on: all of them,
        or the ``max_model_points`` nearest ``center`` (:func:`nearest_rows`)."""
        X = history.X_completed
        if self.max_model_points is None or len(X) <= self.max_model_points:
            return torch.arange(len(X))
        return nearest_rows(self.space, X, center, self.max_model_points)

    def few_design_rows(self, history: History, rows: Tensor) -> Tensor:
        """Boolean mask over ``rows`` (indices of completed trials): what the model keeps when
        it leaves most of the initial design out, every trial that is not a point of the
        initial design, the design's first :data:`DESIGN_FEW` points and its best completed
        trial; every row until one trial beyond the design is complete."""
        X, design = history.X_completed[rows], self._design.to(DTYPE)
        keep = torch.ones(len(rows), dtype=torch.bool)
        if not len(design) or not len(rows):
            return keep
        match = exact_matches(X, design)  # r x n_init: which design point it is
        in_design = match.any(-1)
        if not in_design.any() or in_design.all():
            return keep
        keep = ~in_design | (match.to(torch.int8).argmax(-1) < DESIGN_FEW)
        utility = self.utility(history)[rows]
        keep[torch.where(in_design, utility, utility.min() - 1).argmax()] = True
        return keep

    def failed_outcomes(self, history: History, Y: Tensor) -> tuple[Tensor, Tensor]:
        """The failed trials' points and the outcomes the model sees for them, beside the
        completed trials' model outcomes ``Y`` (``n x (k + c)``, :meth:`model_outcomes`):
        with ``failed_trials="worst"`` each column's worst (the smallest of the ``k``
        objectives, larger being better; the largest of the ``c`` constraints, feasible
        ``<= 0``); otherwise (``"ignore"``, ``"constraint"``), or before a trial completes,
        none."""
        X_failed = history.X_failed
        if self.failed_trials != "worst" or not len(Y) or not len(X_failed):
            return X_failed[:0], Y[:0]
        k = self.n_objectives
        worst = torch.cat([Y[:, :k].min(0).values, Y[:, k:].max(0).values])
        return X_failed, worst.expand(len(X_failed), -1)

    def with_failure_constraint(self, history: History, model: Model, X: Tensor, Y: Tensor
                                ) -> tuple[ModelList, Tensor]:
        """``model`` (of the completed points ``X``, ``n x dim``, outcomes ``Y``,
        ``n x (k + c)``) with one more output, last: a GP (:meth:`make_model`) of the failure
        indicator, ``+1`` at the failed trials' points and ``-1`` at ``X``, an outcome
        constraint (feasible ``<= 0``); and ``Y`` with that constraint's column (``-1``)."""
        tkwargs = self.tensor_kwargs
        X_failed = history.X_failed
        indicator = torch.cat([-torch.ones(len(X)), torch.ones(len(X_failed))]).to(**tkwargs)
        failure = self.make_model(torch.cat([X, X_failed]).to(**tkwargs),
                                  indicator.unsqueeze(-1), history)
        models = list(model.models) if isinstance(model, ModelList) else [model]
        return ModelList(*models, failure), torch.cat([Y, indicator[:len(X), None]], -1)

    def fit_model_on_rows(self, history: History, X: Tensor, Y: Tensor, rows: Tensor
                          ) -> tuple[Model, Tensor]:
        """The fitted objective model (:meth:`make_objective_model`) on the completed trials
        ``rows`` of ``X`` and the squashed ``Y``, less of the initial design as
        :attr:`design_in_model` says, and on the failed trials as ``failed_trials`` says
        (:meth:`failed_outcomes`, after the completed rows); returns it and the completed
        rows it was fitted on."""
        tkwargs = self.tensor_kwargs
        X_failed, Y_failed = self.failed_outcomes(history, Y)

        def fit(rows: Tensor) -> Model:
            return self.make_objective_model(torch.cat([X[rows], X_failed]).to(**tkwargs),
                                             torch.cat([Y[rows], Y_failed]).to(**tkwargs),
                                             history)

        tr = self.trust_region_settings
        if (self.design_in_model == "all" or tr is None
                or reaches_uniform_points(tr, self.space)):
            return fit(rows), rows
        few = self.few_design_rows(history, rows)
        if few.sum() < 2 or (~few).sum() < DESIGN_FEW_MIN_SHARE * len(rows):
            return fit(rows), rows
        everything = fit(rows)
        with warm_started_fits(everything, WARM_FIT_MAXITER):
            fewer = fit(rows[few])
        try:
            # on the completed trials both saw (the failed ones, last, left out)
            shared = int(few.sum())
            scores = [float(leave_one_out_log_densities(everything)[:len(rows)][
                few.to(tkwargs["device"])].mean()),
                float(leave_one_out_log_densities(fewer)[:shared].mean())]
        except ValueError:  # every objective known: no GP to compare
            return everything, rows
        logger.debug("design in the model: all %.4g, few %.4g (leave-one-out log density)",
                     *scores)
        return (fewer, rows[few]) if scores[1] > scores[0] else (everything, rows)

    def model_outcomes(self, history: History) -> Tensor:
        """``n x (k + c)`` values the model is fitted on, one row per completed trial: the
        ``k`` objectives (larger is better) and the ``c`` outcome constraints (feasible:
        ``<= 0``), squashed if huge (:func:`squash_outcomes`)."""
        Y = torch.cat([history.Y_completed, history.C_completed], -1)
        return squash_outcomes(Y, self.dtype)

    def objective_model(self, history: History) -> ObjectiveFit:
        """The fitted objective model of ``history``'s completed trials, its fit started as
        :attr:`fit_anchor_every` says."""
        every, n = self.fit_anchor_every, len(history)
        if not every:
            return self._fit_objective(history)
        if n % every == 0:
            return self._anchor_fit(history)
        anchor = history.prefix(n - n % every)
        if len(anchor.rows("complete")) < 2:
            return self._fit_objective(history)
        with warm_started_fits(self._anchor_fit(anchor).model, WARM_FIT_MAXITER,
                               same_inputs=False):
            return self._fit_objective(history)

    def _fit_objective(self, history: History) -> ObjectiveFit:
        X, Y = history.X_completed, self.model_outcomes(history)
        order = self.utility(history).argsort(descending=True)
        region = self.trust_region(history)
        rows = self.model_rows(history, X[order[0]] if region is None else region.center)
        model, rows = self.fit_model_on_rows(history, X, Y, rows)
        return ObjectiveFit(model, rows, region, Y, order)

    def _anchor_fit(self, history: History) -> ObjectiveFit:
        """:meth:`_fit_objective` of ``history`` from the default start, with the global RNGs
        seeded by the history's length (from :data:`ANCHOR_FITS` if there)."""
        key = (type(self).__name__, json.dumps(self.settings(), sort_keys=True, default=str),
               self.seed, str(self.device), str(self.dtype), history.digest)
        if key not in ANCHOR_FITS:
            with seeded(derive_seed(self.seed, len(history), 0xA2C4)):
                ANCHOR_FITS[key] = self._fit_objective(history)
            while len(ANCHOR_FITS) > MAX_ANCHOR_FITS:
                ANCHOR_FITS.popitem(last=False)
        ANCHOR_FITS.move_to_end(key)
        return ANCHOR_FITS[key]

    def _model_points(self, history: History, q: int, design: Tensor, taken: Tensor) -> Tensor:
        X = history.X_completed
        pending = torch.cat([history.X_pending, design])
        model, rows, region, Y, order = self.objective_model(history)
        self.model, self.region = model, region  # for inspection; no suggestion reads them
        tkwargs = self.tensor_kwargs
        X_model, Y_model = X[rows].to(**tkwargs), Y[rows].to(**tkwargs)
        n_constraints = self.outcome_constraints
        acquisition = self.acquisition
        if self.failed_trials == "constraint" and len(history.X_failed):
            model, Y_model = self.with_failure_constraint(history, model, X[rows], Y_model)
            n_constraints += 1
            acquisition = FAILURE_CONSTRAINT_ACQUISITION  # the one weighed by the constraint
        acq = make_acquisition(
            acquisition, model, X_model, Y_model,
            X_pending=pending.to(**tkwargs) if len(pending) else None, q=q,
            ucb_beta=UCB_BETA,
            ref_point=(self.reference_point(history).to(**tkwargs) if self.is_multi_objective
                       else None),
            n_constraints=n_constraints,
        )
        if (self.device.type, self.dtype) != ("cpu", torch.float64):
            acq = OnModelDevice(acq, **tkwargs)  # the search stays in CPU float64
        kwargs = {
            "q": q,
            "avoid": torch.cat([X, history.X_failed, pending]),
            "num_restarts": self.num_restarts,
            "raw_samples": self.raw_samples,
            "method": self.acquisition_optimizer,
            "options": dict(self.acquisition_options),
            "pending": pending if len(pending) else None,
        }
        if region is not None:
            inside = region.contains(X[order])
            try:
                return optimize_acquisition(
                    acq, self.space, incumbents=X[order][inside], region=region, **kwargs
                )
            except SearchSpaceExhaustedError:  # every point of the region was evaluated
                pass
        return optimize_acquisition(acq, self.space, incumbents=X[order], **kwargs)


def _check_gp_options(options: Mapping[str, Any], space: SearchSpace | None,
                      default_region: TrustRegionSettings,
                      acquisition_optimizer: str) -> TrustRegionSettings | bool:
    """Check :class:`GPOptimizer`'s options (those of ``space``, if given, too) for a class
    with ``acquisition_optimizer``; returns the trust region as ``False`` or
    :class:`TrustRegionSettings` (``True`` and a dict of fields completed with
    ``default_region``)."""
    trust_region = options["trust_region"]
    for name in ("num_restarts", "raw_samples"):
        check_integer(name, options[name])
    check_integer("max_model_points", options["max_model_points"], 2, optional=True)
    if options["failed_trials"] not in FAILED_TRIALS:
        raise ValueError(f"failed_trials must be one of {', '.join(FAILED_TRIALS)}, got "
                         f"{options['failed_trials']!r}")
    check_acquisition(options["acquisition"])
    if isinstance(trust_region, dict):  # as stored with a study, or from a method spec
        trust_region = complete_trust_region(trust_region, default_region)
    if not isinstance(trust_region, bool | TrustRegionSettings):
        raise ValueError(f"trust_region must be a bool or TrustRegionSettings, got "
                         f"{trust_region!r}")
    check_acquisition_optimizer(acquisition_optimizer, trust_region=trust_region is not False,
                                constrained=space is not None and bool(space.constraints))
    model_tensor_kwargs(options["device"], options["dtype"])
    return default_region if trust_region is True else trust_region


def _check_multi_objective_options(
    space: SearchSpace, directions: Sequence[str],
    ref_point: Sequence[float] | None, known_objectives: Mapping[int, Any] | None,
) -> tuple[list[float] | None, dict[int, Any]]:
    """``ref_point`` as a list and ``known_objectives`` as a dict
    (:func:`bodi.models.known_objectives.check_known_objectives`), checked against the
    number of objectives."""
    k = len(directions)
    if ref_point is not None:
        if k == 1:
            raise ValueError("ref_point is for several objectives (directions=[...])")
        if isinstance(ref_point, str) or not isinstance(ref_point, Sequence | Tensor) or len(
            ref_point
        ) != k or not all(isinstance(v, int | float) and math.isfinite(v)
                          for v in list(ref_point)):
            raise ValueError(f"ref_point must be {k} finite numbers (one per objective), got "
                             f"{ref_point!r}")
        ref_point = [float(v) for v in ref_point]
    return ref_point, check_known_objectives(space, k, known_objectives)
