"""BODi (Algorithm 2): :class:`GPOptimizer` with the GP on the Hamming embedding via
dictionaries, and BODi's defaults (kernel, first-order term, acquisition), each chosen by the
yardstick (docs/results.md)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from botorch.models.model import Model
from torch import Tensor

from bodi.acquisition.factory import only_logei
from bodi.acquisition.trust_region import TrustRegionSettings
from bodi.checks import UnusedOptionWarning, check_integer
from bodi.diagnostics import logger
from bodi.directions import check_directions
from bodi.hed.dictionaries import (
    UNRELABELLABLE_DICTIONARIES,
    Dictionary,
    check_dictionary,
    make_dictionary,
)
from bodi.models.gp import (
    check_noise_prior,
    first_order_share,
    fit_model,
    leave_one_out_log_likelihood,
    make_gp,
    make_hamming_kernel,
    make_hed_hamming_kernel,
    make_hed_kernel,
    make_hed_plus_hamming_kernel,
    with_first_order,
    without_first_order,
)
from bodi.models.noise import exact_matches
from bodi.models.portfolio import portfolio_arms
from bodi.optimizers.gp_optimizer import DEFAULT_ACQUISITION, WEIGHED_BY_FAILURES, GPOptimizer
from bodi.seeding import derive_seed
from bodi.space import SearchSpace

#: BODi's ``design_in_model``: the whole initial design where the trust region at its largest
#: reaches a typical uniform point, else for each suggestion the model with the whole design
#: or with only a few of its points, whichever predicts the later trials better (the GP
#: baselines keep ``"all"``)
BODI_DESIGN_IN_MODEL = "reach"
#: BODi's default ``first_order`` on a space with binary, integer or continuous parameters:
#: the first-order term where its fit keeps it, the sum's kernel rescaled where it does not
#: (:func:`default_first_order`)
BODI_FIRST_ORDER = "auto-rescale"
#: BODi's acquisition for one objective without outcome constraints on a space with binary,
#: integer or continuous parameters: the upper confidence bound (:func:`default_acquisition`)
BODI_ACQUISITION = "ucb"


def _check_model_options(options: Mapping[str, Any], space: SearchSpace | None) -> str:
    """Check :class:`BODi`'s model options: dictionary, kernel and noise prior (against
    ``space``, if given, too); returns the dictionary reference (its default filled in)."""
    dictionary_size, dictionary = options["dictionary_size"], options["dictionary"]
    dictionary_reference = options["dictionary_reference"]
    if options["kernel"] is not None and options["kernel"] not in KERNELS:
        raise ValueError(f"unknown kernel {options['kernel']!r}; choose one of {list(KERNELS)}")
    check_noise_prior(options["noise_prior"])
    if not isinstance(options["design_noise"], bool):
        raise ValueError(f"design_noise must be True or False, got {options['design_noise']!r}")
    if options["first_order"] is not None and options["first_order"] not in FIRST_ORDER:
        raise ValueError(f"first_order must be True, False, 'auto' or 'auto-rescale', got "
                         f"{options['first_order']!r}")
    check_integer("dictionary_size", dictionary_size)
    if dictionary_reference is None:
        dictionary_reference = default_dictionary_reference(dictionary)
    if dictionary_reference not in DICTIONARY_REFERENCES:
        raise ValueError(f"unknown dictionary_reference {dictionary_reference!r}; choose one "
                         f"of {list(DICTIONARY_REFERENCES)}")
    check_dictionary(dictionary, None if space is None else space.cardinalities,
                     relabelled=dictionary_reference != "none")
    return dictionary_reference


def default_dictionary_reference(dictionary: str) -> str:
    """BODi's default ``dictionary_reference`` for a ``dictionary`` kind: relative to the
    incumbent (``"incumbent"``) where the kind can be relabelled, else ``"none"``."""
    return "none" if dictionary in UNRELABELLABLE_DICTIONARIES else "incumbent"


#: BODi's default dictionary: ``m`` rows (the paper's size) of the diverse construction
DICTIONARY_SIZE = 128
DICTIONARY = "diverse"


def draws_dictionary(kernel: str, space: SearchSpace) -> bool:
    """Whether BODi with ``kernel`` on ``space`` draws a dictionary: not for the Hamming
    distance alone (``kernel="hamming"``), nor without binary or categorical parameters."""
    return kernel != "hamming" and bool(space.discrete_dims)


def unused_dictionary_options(kernel: str, space: SearchSpace,
                              options: Mapping[str, Any]) -> list[str]:
    """The dictionary options in ``options`` set to other than their defaults that BODi with
    ``kernel`` on ``space`` never uses: all of them when it draws no dictionary
    (:func:`draws_dictionary`)."""
    if draws_dictionary(kernel, space):
        return []
    defaults = {"dictionary_size": DICTIONARY_SIZE, "dictionary": DICTIONARY,
                "new_dictionary_every_iteration": True,
                "dictionary_reference": default_dictionary_reference(options["dictionary"])}
    return [name for name, default in defaults.items() if options[name] != default]


#: where BODi's dictionary rows are relabelled around (see ``BODi(dictionary_reference=...)``)
DICTIONARY_REFERENCES = ("none", "random", "incumbent")
#: :class:`BODi`'s models of the discrete parameters: the HED kernel with its dictionary,
#: the Matérn of the exact Hamming distance with one lengthscale (HED's many-row limit),
#: their product or sum, for each suggestion the one of :data:`AUTO_KERNELS` that predicts
#: the data better (``"auto"``), or the kernels of :data:`AUTO_KERNELS` in turn, one per
#: suggestion (``"alternate"``), or chosen by their record of improvements (``"portfolio"``)
KERNELS = ("hed", "hamming", "hed*hamming", "hed+hamming", "auto", "alternate", "portfolio")
#: the kernels of :data:`KERNELS` built on a dictionary: their makers ``(space, dictionary)``
_DICTIONARY_KERNELS = {"hed": make_hed_kernel, "hed*hamming": make_hed_hamming_kernel,
                       "hed+hamming": make_hed_plus_hamming_kernel}
#: the values of BODi's ``first_order``
FIRST_ORDER = (False, True, "auto", "auto-rescale")
#: with ``first_order="auto"`` (``"auto-rescale"``), the first-order term's share of the prior
#: variance, ``s_1 / (s_0 + s_1)``, below which the model is refitted (rescaled) without it
FIRST_ORDER_SHARE = 0.01
#: consecutive failures after which BODi's box of continuous/integer parameters shrinks
#: (:class:`TrustRegionSettings`' ``box_failure_tolerance``; TuRBO's rule, not tuned)
BOX_FAILURE_TOLERANCE = 4
#: consecutive failures after which BODi's Hamming radius shrinks (CASMOPOLITAN's 40 kept the
#: region at its initial size for most of a few hundred evaluations)
FAILURE_TOLERANCE = 10
#: BODi's default model of a space with binary, integer or continuous parameters
PRODUCT_KERNEL = "hed*hamming"
#: BODi's default model of an all-categorical space
CATEGORICAL_KERNEL = "hamming"


def default_kernel(space: SearchSpace) -> str:
    """BODi's default ``kernel`` for ``space``: :data:`CATEGORICAL_KERNEL` (the exact Hamming
    distance alone) when every parameter is categorical with three or more values
    (:attr:`SearchSpace.is_categorical`), else :data:`PRODUCT_KERNEL`."""
    return CATEGORICAL_KERNEL if space.is_categorical else PRODUCT_KERNEL


def default_first_order(space: SearchSpace) -> bool | str:
    """BODi's default ``first_order`` for ``space``: ``False`` (no first-order term) when every
    parameter is categorical with three or more values (:attr:`SearchSpace.is_categorical`:
    beside the exact Hamming distance alone the term took most of the prior variance and
    predicted held-out trials worse), else
    :data:`BODI_FIRST_ORDER`."""
    return False if space.is_categorical else BODI_FIRST_ORDER


def bodi_failed_trials(acquisition: str) -> str:
    """BODi's default ``failed_trials``: a failed trial is an unknown constraint
    (``"constraint"``) under the acquisitions that go with it
    (:data:`~bodi.optimizers.gp_optimizer.WEIGHED_BY_FAILURES`), else ``"ignore"``."""
    return "constraint" if acquisition in WEIGHED_BY_FAILURES else "ignore"


def default_acquisition(space: SearchSpace, n_objectives: int = 1,
                        outcome_constraints: int = 0) -> str:
    """BODi's default ``acquisition``: :data:`BODI_ACQUISITION` (the upper confidence bound)
    for one objective without outcome constraints on a space with binary, integer or
    continuous parameters; ``"logei"`` (the expected improvement) on an all-categorical space
    (:attr:`SearchSpace.is_categorical`: there the upper confidence bound lost) and wherever
    only it is defined (several objectives,
    outcome constraints: :func:`bodi.acquisition.factory.only_logei`)."""
    if space.is_categorical or only_logei(n_objectives, outcome_constraints):
        return DEFAULT_ACQUISITION
    return BODI_ACQUISITION


#: the kernels that ``kernel="auto"`` chooses between, by leave-one-out predictive density,
#: that ``kernel="alternate"`` takes in turn and that ``kernel="portfolio"`` chooses from
AUTO_KERNELS = ("hamming", "hed*hamming")


class BODi(GPOptimizer):
    """Ask/tell BODi for binary, categorical and mixed spaces.

    Each suggestion (Algorithm 2): draw a new dictionary ``A`` (``m`` rows), fit a GP with the
    HED kernel on all completed trials, and maximize the acquisition function by local search
    with continuous steps. The first ``n_init`` points come from :func:`initial_design`.

    The defaults differ from the paper's BoDi, each by measurement (docs/results.md; the
    changelog gives the release and the numbers that chose it):

    * the dictionary rows are relabelled around the incumbent
      (``dictionary_reference="incumbent"``), so no fixed point is special to the model, and
      the acquisition search stays in CASMOPOLITAN's Hamming trust region around the
      incumbent (``trust_region``), whose radius shrinks after :data:`FAILURE_TOLERANCE`
      failures in a row and whose box of continuous/integer parameters has its own rule
      (:data:`BOX_FAILURE_TOLERANCE`; :attr:`default_trust_region`);
    * the kernel is HED times a Matérn-5/2 of the exact Hamming distance
      (``kernel="hed*hamming"``), or that distance alone on an all-categorical space
      (:func:`default_kernel`), fitted together with a first-order term kept where the fit
      gives it a share of the prior variance (``first_order="auto-rescale"``; none on an
      all-categorical space, :func:`default_first_order`);
    * the model sees the whole initial design where the region at its largest reaches a
      typical uniform point (about 60 binary parameters or fewer), else per suggestion the
      design or a few of its points, whichever predicts the later trials better
      (``design_in_model="reach"``);
    * a failed trial is learned as an unknown constraint (``failed_trials="constraint"``);
    * the acquisition is the upper confidence bound for one objective on a space with binary,
      integer or continuous parameters, else the (log) expected improvement
      (:func:`default_acquisition`).

    ``BODi(space, dictionary_reference="none", trust_region=False, kernel="hed",
    design_in_model="all", first_order=False, failed_trials="ignore", acquisition="logei")``
    is the paper's BODi
    (the ``bodi-paper`` method of ``bodi bench``).

    ``seed`` (every random choice: design, dictionaries, acquisition starts, derives from it),
    ``direction`` and the persistence options ``storage``, ``study_name`` and ``on_pending`` are
    those of :class:`bodi.optimizers.Optimizer`. ``n_init``, ``acquisition``, ``num_restarts``,
    ``raw_samples``, ``acquisition_optimizer``, ``acquisition_options``, ``ucb_beta``,
    ``ucb_after``, ``budget`` and ``ucb_until`` are those of :class:`GPOptimizer` (the authors
    used 20 restarts; 10 gave the same results at a fraction of the time in our measurement,
    see the documentation's "Design choices").

    Args:
        space: the search space.
        dictionary_size: ``m``, the number of dictionary rows (paper default 128).
        dictionary: ``"diverse"`` (default), ``"anchored"``, ``"wavelet"``, ``"naive"`` or
            ``"gaussian"`` (:mod:`bodi.hed.dictionaries`).
        new_dictionary_every_iteration: draw a fresh dictionary per suggestion (paper default);
            ``False`` keeps the first one.
        dictionary_reference: the point the dictionary's rows are relabelled around
            (:func:`bodi.hed.dictionaries.make_dictionary`): ``"incumbent"`` (the best point so far;
            the default, except for the Gaussian dictionary, which cannot be relabelled),
            ``"random"`` (a uniform random point, new each iteration) or ``"none"`` (the paper:
            the all-zeros point).
        trust_region: CASMOPOLITAN's Hamming-ball (and continuous box) trust region around the
            incumbent for the acquisition search: ``True`` (default, unless
            ``acquisition_optimizer="botorch"``: :attr:`default_trust_region`, CASMOPOLITAN's
            sizes with ``failure_tolerance=10`` and ``box_failure_tolerance=4``), ``False``, a
            :class:`TrustRegionSettings` or a dict of its fields (set on top of
            :attr:`default_trust_region`; ``{"failure_tolerance": 40}`` is CASMOPOLITAN's
            rule); see :class:`GPOptimizer`.
        kernel: the model of the binary/categorical parameters: ``None`` (default:
            :func:`default_kernel`, ``"hamming"`` when every parameter is categorical with three
            or more values, else ``"hed*hamming"``), ``"hed*hamming"`` (the product of the HED
            kernel with the dictionary above and a Matérn-5/2 of the exact Hamming distance),
            ``"hed"`` (the HED kernel alone, the paper's model), ``"hamming"`` (the Matérn-5/2
            of the exact Hamming distance with one lengthscale, HED's limit of many random
            rows; the dictionary options are then unused, and a warning names any set),
            ``"hed+hamming"`` (the sum of the two, each with an output scale) or ``"auto"``:
            for each suggestion both ``"hamming"`` and ``"hed*hamming"`` are fitted and the one with
            the larger leave-one-out log predictive density of the completed trials is used
            (:func:`bodi.models.gp.leave_one_out_log_likelihood`), or ``"alternate"``:
            ``"hed*hamming"`` and ``"hamming"`` in turn, one per suggestion (by the number of
            trials so far, so a resumed study continues the same turn): a portfolio of the
            product model, which learns structure from far points, and the exact-distance
            model, whose expected improvement steps close to the incumbent; or
            ``"portfolio"``: one of the two per suggestion, by Thompson sampling of each one's
            record of improving the best value with its own suggestions
            (:func:`bodi.models.portfolio.portfolio_arms`).
        noise_prior: the GP likelihood's noise prior: ``"lognormal"`` (default, BoTorch's
            LogNormal(-4, 1)) or ``"gamma"`` (Gamma(1.1, 0.05), BoTorch's earlier default
            and Bounce's, which lets the GP explain more of the data as noise).
        design_noise: give the initial design's trials an extra observation noise variance,
            fitted with the other hyperparameters (:mod:`bodi.models.noise`), so that the
            marginal likelihood decides how far the random, far-apart design points are
            trusted beside the later trials; ``False`` (default): one noise for all.
        first_order: add to the kernel the first-order kernel of the binary/categorical
            parameters with its own output scale (:func:`bodi.models.gp.with_first_order`):
            the model ``g(x) + sum_i w_i(x_i)``, which learns each variable's own effect;
            ``"auto-rescale"`` (:data:`BODI_FIRST_ORDER`): the sum,
            unless its fit gives the first-order term less than :data:`FIRST_ORDER_SHARE` of
            the prior variance (:func:`bodi.models.gp.first_order_share`), then the sum's
            kernel with the sum's hyperparameters at unit prior variance, not refitted
            (:func:`bodi.models.gp.without_first_order`; one fit per suggestion); ``"auto"``:
            as ``"auto-rescale"``, but the kernel alone refitted (two fits); ``False``: the
            kernel alone; ``True``: always the sum. ``None`` (default):
            :func:`default_first_order` of the space, ``"auto-rescale"`` except in
            all-categorical spaces (``False``).
        design_in_model: see :class:`GPOptimizer`; BODi's default is
            :data:`BODI_DESIGN_IN_MODEL` (``"reach"``).
        failed_trials: see :class:`GPOptimizer`; BODi's default (``None``) is
            :func:`bodi_failed_trials` of the acquisition: ``"constraint"`` with
            ``"logei"`` and ``"ucb"``, ``"ignore"`` otherwise.
        acquisition: see :class:`GPOptimizer`; BODi's default (``None``) is
            :func:`default_acquisition`: ``"ucb"`` (with ``ucb_beta=2``)
            for one objective without outcome constraints unless every parameter is
            categorical, else ``"logei"``.

    Examples:
        >>> opt = BODi(space, seed=0)
        >>> x = opt.ask()
        >>> opt.tell(x, f(x))
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        dictionary_size: int = DICTIONARY_SIZE,
        dictionary: str = DICTIONARY,
        new_dictionary_every_iteration: bool = True,
        dictionary_reference: str | None = None,
        trust_region: bool | TrustRegionSettings | dict[str, Any] | None = None,
        kernel: str | None = None,
        noise_prior: str = "lognormal",
        design_noise: bool = False,
        first_order: bool | str | None = None,
        design_in_model: str = BODI_DESIGN_IN_MODEL,
        failed_trials: str | None = None,
        acquisition: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(space, SearchSpace):
            raise ValueError(f"space must be a bodi.SearchSpace, got {type(space).__name__}")
        dictionary_reference = _check_model_options(dict(
            dictionary_size=dictionary_size, dictionary=dictionary,
            dictionary_reference=dictionary_reference, kernel=kernel,
            noise_prior=noise_prior, design_noise=design_noise, first_order=first_order), space)
        self.kernel = default_kernel(space) if kernel is None else kernel
        self.noise_prior = noise_prior
        self.design_noise = design_noise
        self.first_order = default_first_order(space) if first_order is None else first_order
        self.dictionary_reference = dictionary_reference
        self.dictionary_size = dictionary_size
        self.dictionary_kind = dictionary
        self.new_dictionary_every_iteration = new_dictionary_every_iteration
        unused = unused_dictionary_options(self.kernel, space, dict(
            dictionary_size=dictionary_size, dictionary=dictionary,
            new_dictionary_every_iteration=new_dictionary_every_iteration,
            dictionary_reference=dictionary_reference))
        if unused:
            warnings.warn(f"{', '.join(unused)} unused: BODi with kernel {self.kernel!r} on this "
                          "space draws no dictionary", UnusedOptionWarning, stacklevel=2)
        if trust_region is None:  # the default: on, unless BoTorch's optimizer was asked for
            trust_region = kwargs.get("acquisition_optimizer", "auto") != "botorch"
        if acquisition is None:  # the default: see default_acquisition
            directions = check_directions(kwargs.get("direction", "minimize"),
                                          kwargs.get("directions"))
            acquisition = default_acquisition(space, len(directions),
                                              kwargs.get("outcome_constraints") or 0)
        if failed_trials is None:  # the default: see bodi_failed_trials
            failed_trials = bodi_failed_trials(acquisition)
        super().__init__(space, trust_region=trust_region, design_in_model=design_in_model,
                         failed_trials=failed_trials, acquisition=acquisition, **kwargs)

    @classmethod
    def _check_space_free_options(cls, options: dict[str, Any]) -> None:
        _check_model_options(options, None)
        if options["trust_region"] is None:  # BODi's default (see __init__)
            options = {**options,
                       "trust_region": options["acquisition_optimizer"] != "botorch"}
        if options["acquisition"] is None:  # BODi's default for a space not known here
            options = {**options, "acquisition": BODI_ACQUISITION}
        if options["failed_trials"] is None:
            options = {**options, "failed_trials": bodi_failed_trials(options["acquisition"])}
        super()._check_space_free_options(options)

    #: every option that changes BODi's suggestions is in :meth:`settings` (but the
    #: ``budget``, which ``bodi bench`` and :func:`bodi.minimize` pass: see ``ucb_until``)
    settings_define_behaviour: ClassVar[bool] = True
    takes_budget: ClassVar[bool] = True

    #: CASMOPOLITAN's region with the box's own rule that shrinks after
    #: :data:`FAILURE_TOLERANCE` failures in a row
    default_trust_region: ClassVar[TrustRegionSettings] = TrustRegionSettings(
        failure_tolerance=FAILURE_TOLERANCE, box_failure_tolerance=BOX_FAILURE_TOLERANCE)

    # studies stored before these options existed ran the paper's configuration
    legacy_settings: ClassVar[dict[str, Any]] = {
        **GPOptimizer.legacy_settings, "dictionary_reference": "none", "trust_region": False,
        "kernel": "hed", "noise_prior": "lognormal", "design_noise": False,
        "first_order": False,
    }

    def settings(self) -> dict[str, Any]:
        settings = {
            "dictionary_size": self.dictionary_size,
            "dictionary": self.dictionary_kind,
            "new_dictionary_every_iteration": self.new_dictionary_every_iteration,
            **super().settings(),
        }
        settings["dictionary_reference"] = self.dictionary_reference
        settings["kernel"] = self.kernel
        settings["noise_prior"] = self.noise_prior
        settings["design_noise"] = self.design_noise
        settings["first_order"] = self.first_order
        return settings

    def make_dictionary(self) -> Dictionary | None:
        """The dictionary for the next suggestion (``None`` without binary/categorical params)."""
        if not self.space.discrete_dims:
            return None
        iteration = len(self.trials) if self.new_dictionary_every_iteration else 0
        return make_dictionary(
            self.dictionary_kind,
            self.dictionary_size,
            self.space.cardinalities,
            seed=derive_seed(self.seed, iteration, 0xD1C7),
            reference=self._dictionary_reference(iteration),
        )

    def _dictionary_reference(self, iteration: int) -> Tensor | None:
        """The discrete values the dictionary is relabelled around (``None``: all zeros)."""
        discrete = self.space.discrete_dims
        if self.dictionary_reference == "random":
            g = torch.Generator().manual_seed(derive_seed(self.seed, iteration, 0x4EF))
            return self.space.sample(1, generator=g)[0, discrete]
        if self.dictionary_reference == "incumbent" and len(self._rows("complete")):
            return self.X_completed[self.utility().argmax(), discrete]
        return None

    def make_model(self, train_X: Tensor, train_Y: Tensor) -> Model:
        """The GP of ``self.kernel`` (see the class's ``kernel`` argument), fitted."""
        if self.kernel == "auto":
            fits = self.auto_kernel_fits(train_X, train_Y)
            kernel, model, _ = max(fits, key=lambda fit: fit[2])
            logger.debug("kernel='auto': %s (leave-one-out log density %s)", kernel,
                         ", ".join(f"{k} {density:.4g}" for k, _, density in fits))
            return model
        return self.make_model_with_kernel(self.kernel_for_next_suggestion(), train_X, train_Y)

    def kernel_for_next_suggestion(self) -> str:
        """The kernel the next suggestion's model uses: ``self.kernel``, or one of
        :data:`AUTO_KERNELS`: with ``kernel="alternate"`` by turn (``"hed*hamming"`` when the
        number of trials so far is even), with ``kernel="portfolio"`` by Thompson sampling of
        their records."""
        if self.kernel == "alternate":
            return AUTO_KERNELS[(len(self.trials) + 1) % len(AUTO_KERNELS)]
        if self.kernel == "portfolio":
            arms = portfolio_arms(self.progress(), self.n_init, len(AUTO_KERNELS), self.seed)
            return AUTO_KERNELS[arms[-1]]
        return self.kernel

    def auto_kernel_fits(self, train_X: Tensor, train_Y: Tensor) -> list[tuple[str, Model, float]]:
        """``(kernel, fitted GP, leave-one-out log density)`` for each of :data:`AUTO_KERNELS`,
        in that order: what ``kernel="auto"`` chooses from (the largest density)."""
        fits = []
        for kernel in AUTO_KERNELS:
            model = self.make_model_with_kernel(kernel, train_X, train_Y)
            fits.append((kernel, model, float(leave_one_out_log_likelihood(model))))
        return fits

    def make_model_with_kernel(self, kernel: str, train_X: Tensor, train_Y: Tensor) -> Model:
        """The GP with the discrete model ``kernel`` (one of :data:`KERNELS` but ``"auto"``,
        ``"alternate"`` and ``"portfolio"``), fitted."""
        dictionary = self.make_dictionary() if draws_dictionary(kernel, self.space) else None
        noisier = self.noisier_inputs(train_X)

        def fitted(first_order: bool) -> Model:
            if dictionary is None:  # the Hamming kernel needs none
                covar = make_hamming_kernel(self.space)
            else:
                covar = _DICTIONARY_KERNELS[kernel](self.space, dictionary)
            if first_order:
                covar = with_first_order(self.space, covar)
            return fit_model(make_gp(train_X, train_Y, covar, self.noise_prior, noisier))

        if self.first_order is False or not self.space.discrete_dims:  # no term to add
            return fitted(False)
        model = fitted(True)
        if self.first_order is True or first_order_share(model) >= FIRST_ORDER_SHARE:
            return model
        if self.first_order == "auto-rescale":  # the sum's kernel at unit variance, one fit
            return without_first_order(model, train_X, train_Y, self.noise_prior, noisier)
        return fitted(False)  # the fit rejects the first-order term: the kernel alone

    def noisier_inputs(self, train_X: Tensor) -> Tensor | None:
        """With ``design_noise``, the initial design's points, once ``train_X`` holds a trial
        beyond them (the model then fits how far to trust them); ``None`` otherwise."""
        if not self.design_noise or not len(self._design):
            return None
        design = self._design.to(train_X)
        in_design = exact_matches(train_X, design).any(-1)
        return design if in_design.any() and not in_design.all() else None
