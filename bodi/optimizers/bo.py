"""BODi (Algorithm 2): :class:`GPOptimizer` with the GP on the Hamming embedding via
dictionaries, and BODi's defaults (kernel, first-order term, acquisition), each chosen by the
yardstick (docs/results.md); :class:`PaperBODi` is the paper's configuration."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

from botorch.models.model import Model
from torch import Tensor

from bodi.acquisition.factory import only_logei
from bodi.acquisition.trust_region import TrustRegionSettings
from bodi.checks import UnusedOptionWarning, check_integer
from bodi.directions import check_directions
from bodi.hed.dictionaries import (
    UNRELABELLABLE_DICTIONARIES,
    Dictionary,
    check_dictionary,
    make_dictionary,
)
from bodi.models.gp import (
    first_order_share,
    fit_model,
    make_gp,
    with_first_order,
    without_first_order,
)
from bodi.models.registry import check_kernel, make_kernel, uses_dictionary
from bodi.optimizers.gp_optimizer import DEFAULT_ACQUISITION, GPOptimizer
from bodi.seeding import derive_seed
from bodi.space import SearchSpace
from bodi.trials import History

#: BODi's default ``first_order`` on a space with binary, integer or continuous parameters:
#: the first-order term where its fit keeps it, the sum's kernel rescaled where it does not
#: (:func:`default_first_order`)
BODI_FIRST_ORDER = "auto-rescale"
#: BODi's acquisition for one objective without outcome constraints on a space with binary,
#: integer or continuous parameters: the upper confidence bound (:func:`default_acquisition`)
BODI_ACQUISITION = "ucb"
#: the GP likelihood's noise prior (BoTorch's LogNormal(-4, 1))
NOISE_PRIOR = "lognormal"
#: BODi's default dictionary: ``m`` rows (the paper's size) of the diverse construction
DICTIONARY_SIZE = 128
DICTIONARY = "diverse"
#: the values of BODi's first-order rule (:attr:`BODi.first_order_rule`)
FIRST_ORDER = (False, True, "auto-rescale")
#: with ``first_order="auto-rescale"``, the first-order term's share of the prior variance,
#: ``s_1 / (s_0 + s_1)``, below which the model is rescaled without it
FIRST_ORDER_SHARE = 0.01
#: consecutive failures after which BODi's box of continuous/integer parameters shrinks
#: (:class:`TrustRegionSettings`' ``box_failure_tolerance``; TuRBO's rule, not tuned)
BOX_FAILURE_TOLERANCE = 4
#: consecutive failures after which BODi's Hamming radius shrinks (CASMOPOLITAN's 40 kept the
#: region at its initial size for most of a few hundred evaluations)
FAILURE_TOLERANCE = 10
#: BODi's default model of a space with binary, integer or continuous parameters
PRODUCT_KERNEL = "hed*hamming"
#: BODi's :attr:`GPOptimizer.fit_anchor_every` on a space of binary and categorical parameters:
#: the fit starts from its defaults every 10 trials, from the last such fit's hyperparameters
#: in between (with continuous or integer parameters every fit starts from the defaults)
FIT_ANCHOR_EVERY = 10
#: BODi's default model of an all-categorical space
CATEGORICAL_KERNEL = "hamming"


def _check_model_options(options: Mapping[str, Any], space: SearchSpace | None) -> None:
    """Check :class:`BODi`'s model options, dictionary and kernel (against ``space``, if
    given, too)."""
    if options["kernel"] is not None:
        check_kernel(options["kernel"])
    check_integer("dictionary_size", options["dictionary_size"])
    dictionary = options["dictionary"]
    check_dictionary(dictionary, None if space is None else space.cardinalities,
                     relabelled=default_dictionary_reference(dictionary) != "none")


def default_dictionary_reference(dictionary: str) -> str:
    """Where BODi relabels a ``dictionary`` kind's rows: around the incumbent
    (``"incumbent"``) where the kind can be relabelled, else nowhere (``"none"``)."""
    return "none" if dictionary in UNRELABELLABLE_DICTIONARIES else "incumbent"


def draws_dictionary(kernel: str, space: SearchSpace) -> bool:
    """Whether BODi with ``kernel`` on ``space`` draws a dictionary: where the kernel uses one
    (:func:`bodi.models.registry.uses_dictionary`) and the space has binary or categorical
    parameters."""
    return uses_dictionary(kernel) and bool(space.discrete_dims)


def unused_dictionary_options(kernel: str, space: SearchSpace,
                              options: Mapping[str, Any]) -> list[str]:
    """The dictionary options in ``options`` set to other than their defaults that BODi with
    ``kernel`` on ``space`` never uses: all of them when it draws no dictionary
    (:func:`draws_dictionary`)."""
    if draws_dictionary(kernel, space):
        return []
    defaults = {"dictionary_size": DICTIONARY_SIZE, "dictionary": DICTIONARY}
    return [name for name, default in defaults.items() if options[name] != default]


def default_kernel(space: SearchSpace) -> str:
    """BODi's default ``kernel`` for ``space``: :data:`CATEGORICAL_KERNEL` (the exact Hamming
    distance alone) when every parameter is categorical with three or more values
    (:attr:`SearchSpace.is_categorical`), else :data:`PRODUCT_KERNEL`."""
    return CATEGORICAL_KERNEL if space.is_categorical else PRODUCT_KERNEL


def default_first_order(space: SearchSpace) -> bool | str:
    """BODi's first-order term for ``space``: none (``False``) when every parameter is
    categorical with three or more values (:attr:`SearchSpace.is_categorical`: beside the
    exact Hamming distance alone the term took most of the prior variance and predicted
    held-out trials worse), else :data:`BODI_FIRST_ORDER`."""
    return False if space.is_categorical else BODI_FIRST_ORDER


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


class BODi(GPOptimizer):
    """BODi for binary, categorical and mixed spaces.

    Each suggestion (Algorithm 2): draw a new dictionary ``A`` (``m`` rows), fit a GP with the
    HED kernel on all completed trials, and maximize the acquisition function by local search
    with continuous steps. The first ``n_init`` points come from :func:`initial_design`.

    The defaults differ from the paper's BoDi (:class:`PaperBODi`), each by measurement
    (docs/results.md; CHANGELOG.md gives the release and the numbers that chose it):

    * the dictionary rows are relabelled around the incumbent
      (:func:`default_dictionary_reference`), so no fixed point is special to the model, and
      the acquisition search stays in CASMOPOLITAN's Hamming trust region around the
      incumbent (``trust_region``), whose radius shrinks after :data:`FAILURE_TOLERANCE`
      failures in a row and whose box of continuous/integer parameters has its own rule
      (:data:`BOX_FAILURE_TOLERANCE`; :attr:`default_trust_region`);
    * the kernel is HED times a Matérn-5/2 of the exact Hamming distance
      (``kernel="hed*hamming"``), or that distance alone on an all-categorical space
      (:func:`default_kernel`), fitted together with a first-order term
      ``g(x) + sum_i w_i(x_i)`` (:func:`bodi.models.gp.with_first_order`) where the fit gives
      it at least :data:`FIRST_ORDER_SHARE` of the prior variance, else the sum's kernel at
      unit prior variance without it (:func:`bodi.models.gp.without_first_order`; none on an
      all-categorical space, :func:`default_first_order`);
    * the model sees the whole initial design where the region at its largest reaches a
      typical uniform point (about 60 binary parameters or fewer), else per suggestion the
      design or a few of its points, whichever predicts the later trials better
      (:attr:`GPOptimizer.design_in_model` ``"reach"``);
    * a failed trial is learned as an unknown constraint (``failed_trials="constraint"``);
    * while every completed trial has the same value (a plateau, such as a known working start
      among failures and its equally good neighbours), each suggestion is a new neighbour of
      the latest of them (one parameter changed) instead of the model's
      (:attr:`~bodi.optimizers.model_based.ModelBasedOptimizer.walks_plateaus`);
    * on a space of binary and categorical parameters the fit starts from the default
      hyperparameters every :data:`FIT_ANCHOR_EVERY` trials and from the last such fit's values
      in between (:attr:`fit_anchor_every`);
    * the acquisition is the upper confidence bound for one objective on a space with binary,
      integer or continuous parameters, else the (log) expected improvement
      (:func:`default_acquisition`).

    ``seed`` (every random choice: design, dictionaries, acquisition starts, derives from it),
    ``direction``, ``directions``, ``outcome_constraints`` and ``allow_repeats`` are those of
    :class:`bodi.optimizers.Optimizer`. ``n_init``, ``design``, ``num_restarts``,
    ``raw_samples``, ``device``, ``dtype``, ``ref_point``, ``known_objectives`` and
    ``max_model_points`` are those of :class:`GPOptimizer` (the authors used 20 restarts; 10
    gave the same results at a fraction of the time in our measurement, and 5 lost pest50;
    see the documentation's "Design choices").

    Args:
        space: the search space.
        dictionary_size: ``m``, the number of dictionary rows (paper default 128).
        dictionary: ``"diverse"`` (default), ``"anchored"``, ``"wavelet"``, ``"naive"`` or
            ``"gaussian"`` (:mod:`bodi.hed.dictionaries`).
        trust_region: CASMOPOLITAN's Hamming-ball (and continuous box) trust region around the
            incumbent for the acquisition search: ``True`` (default,
            :attr:`default_trust_region`, CASMOPOLITAN's sizes with ``failure_tolerance=10``
            and ``box_failure_tolerance=4``), ``False``, a :class:`TrustRegionSettings` or a
            dict of its fields (set on top of :attr:`default_trust_region`;
            ``{"failure_tolerance": 40}`` is CASMOPOLITAN's rule); see :class:`GPOptimizer`.
        kernel: the model of the binary/categorical parameters, a kernel of
            :data:`bodi.models.registry.KERNELS`: ``None`` (default: :func:`default_kernel`,
            ``"hamming"`` when every parameter is categorical with three or more values, else
            ``"hed*hamming"``), ``"hed*hamming"`` (the product of the HED kernel with the
            dictionary above and a Matérn-5/2 of the exact Hamming distance), ``"hed"`` (the
            HED kernel alone, the paper's model), ``"hamming"`` (the Matérn-5/2 of the exact
            Hamming distance with one lengthscale, HED's limit of many random rows; the
            dictionary options are then unused, and a warning names any set), ``"overlap"``
            (CASMOPOLITAN's) or ``"diffusion"`` (COMBO's).
        failed_trials: see :class:`GPOptimizer`; BODi's default is ``"constraint"``.
        acquisition: see :class:`GPOptimizer`; BODi's default (``None``) is
            :func:`default_acquisition`: ``"ucb"`` for one objective without outcome
            constraints unless every parameter is categorical, else ``"logei"``.

    Examples:
        >>> study = bodi.create_study(BODi(space, seed=0))
        >>> x = study.ask()
        >>> study.tell(x, f(x))
    """

    #: where the dictionary's rows are relabelled around: ``None`` (the incumbent where the
    #: dictionary kind can be relabelled, :func:`default_dictionary_reference`) or ``"none"``
    #: (the all-zeros point, as in the paper)
    dictionary_reference_rule: ClassVar[str | None] = None
    #: the first-order term (one of :data:`FIRST_ORDER`; ``None``: :func:`default_first_order`)
    first_order_rule: ClassVar[bool | str | None] = None
    design_in_model: ClassVar[str] = "reach"
    walks_plateaus: ClassVar[bool] = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        dictionary_size: int = DICTIONARY_SIZE,
        dictionary: str = DICTIONARY,
        trust_region: bool | TrustRegionSettings | dict[str, Any] = True,
        kernel: str | None = None,
        failed_trials: str = "constraint",
        acquisition: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(space, SearchSpace):
            raise ValueError(f"space must be a bodi.SearchSpace, got {type(space).__name__}")
        _check_model_options(dict(dictionary_size=dictionary_size, dictionary=dictionary,
                                  kernel=kernel), space)
        self.kernel = default_kernel(space) if kernel is None else kernel
        rule = self.first_order_rule
        self.first_order = default_first_order(space) if rule is None else rule
        self.dictionary_reference = (default_dictionary_reference(dictionary)
                                     if self.dictionary_reference_rule is None
                                     else self.dictionary_reference_rule)
        self.dictionary_size = dictionary_size
        self.dictionary_kind = dictionary
        unused = unused_dictionary_options(self.kernel, space, dict(
            dictionary_size=dictionary_size, dictionary=dictionary))
        if unused:
            warnings.warn(f"{', '.join(unused)} unused: BODi with kernel {self.kernel!r} on this "
                          "space draws no dictionary", UnusedOptionWarning, stacklevel=2)
        if acquisition is None:  # the default: see default_acquisition
            directions = check_directions(kwargs.get("direction", "minimize"),
                                          kwargs.get("directions"))
            acquisition = default_acquisition(space, len(directions),
                                              kwargs.get("outcome_constraints") or 0)
        super().__init__(space, trust_region=trust_region, failed_trials=failed_trials,
                         acquisition=acquisition, **kwargs)

    @classmethod
    def _check_space_free_options(cls, options: dict[str, Any]) -> None:
        _check_model_options(options, None)
        if options["acquisition"] is None:  # BODi's default for a space not known here
            options = {**options, "acquisition": BODI_ACQUISITION}
        super()._check_space_free_options(options)

    #: every option that changes BODi's suggestions is in :meth:`settings`
    settings_define_behaviour: ClassVar[bool] = True

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

    @classmethod
    def retired_settings(cls, settings: Mapping[str, Any], space: SearchSpace
                         ) -> dict[str, Any]:
        dictionary = settings.get("dictionary", DICTIONARY)
        reference = cls.dictionary_reference_rule
        first_order = cls.first_order_rule
        return {**super().retired_settings(settings, space),
                "dictionary_reference": (default_dictionary_reference(dictionary)
                                         if reference is None else reference),
                "first_order": default_first_order(space) if first_order is None else first_order,
                "noise_prior": NOISE_PRIOR, "design_noise": False,
                "new_dictionary_every_iteration": True}

    def settings(self) -> dict[str, Any]:
        return {
            "dictionary_size": self.dictionary_size,
            "dictionary": self.dictionary_kind,
            **super().settings(),
            "kernel": self.kernel,
            "dictionary_reference": self.dictionary_reference,
            "first_order": self.first_order,
        }

    def make_dictionary(self, history: History) -> Dictionary | None:
        """The dictionary for a suggestion from ``history`` (``None`` without
        binary/categorical parameters): a new one per suggestion, its seed derived from the
        number of trials, relabelled around the incumbent (:attr:`dictionary_reference`)."""
        if not self.space.discrete_dims:
            return None
        return make_dictionary(
            self.dictionary_kind,
            self.dictionary_size,
            self.space.cardinalities,
            seed=derive_seed(self.seed, len(history.trials), 0xD1C7),
            reference=self._dictionary_reference(history),
        )

    def _dictionary_reference(self, history: History) -> Tensor | None:
        """The discrete values the dictionary is relabelled around (``None``: all zeros)."""
        if self.dictionary_reference == "incumbent" and len(history.rows("complete")):
            return history.X_completed[self.utility(history).argmax(), self.space.discrete_dims]
        return None

    @property
    def fit_anchor_every(self) -> int:  # type: ignore[override]
        """:data:`FIT_ANCHOR_EVERY` on a space of binary and categorical parameters, else ``0``:
        with continuous parameters (ackley53-shifted, 10 seeds, 200 evaluations) warm-started
        fits ended worse on 7 of 10 seeds (mean 0.060 against 0.0040; one-sided paired
        Wilcoxon p = 0.053), and integer ones were not measured."""
        return 0 if self.space.ordinal_dims else FIT_ANCHOR_EVERY

    def make_model(self, train_X: Tensor, train_Y: Tensor, history: History) -> Model:
        """The GP of ``self.kernel`` (see the class's ``kernel`` argument), with the first-order
        term as :attr:`first_order` says, fitted."""
        dictionary = (self.make_dictionary(history) if draws_dictionary(self.kernel, self.space)
                      else None)

        def fitted(first_order: bool) -> Model:
            covar = make_kernel(self.kernel, self.space, dictionary)
            if first_order:
                covar = with_first_order(self.space, covar)
            return fit_model(make_gp(train_X, train_Y, covar))

        if self.first_order is False or not self.space.discrete_dims:  # no term to add
            return fitted(False)
        model = fitted(True)
        if self.first_order is True or first_order_share(model) >= FIRST_ORDER_SHARE:
            return model
        return without_first_order(model, train_X, train_Y)


class PaperBODi(BODi):
    """BODi as in the paper (Deshwal et al., AISTATS 2023): the HED kernel alone
    (``kernel="hed"``) on a dictionary of the all-zeros point, no trust region, no
    first-order term, the whole initial design in the model, failed trials ignored, the
    expected improvement, every fit from the default hyperparameters and the model asked on a
    plateau too. Options as
    :class:`BODi`, with these defaults."""

    dictionary_reference_rule: ClassVar[str | None] = "none"
    first_order_rule: ClassVar[bool | str | None] = False
    design_in_model: ClassVar[str] = "all"
    fit_anchor_every: ClassVar[int] = 0
    walks_plateaus: ClassVar[bool] = False

    def __init__(
        self,
        space: SearchSpace,
        *,
        trust_region: bool | TrustRegionSettings | dict[str, Any] = False,
        kernel: str | None = "hed",
        failed_trials: str = "ignore",
        acquisition: str | None = DEFAULT_ACQUISITION,
        **kwargs: Any,
    ) -> None:
        super().__init__(space, trust_region=trust_region, kernel=kernel,
                         failed_trials=failed_trials, acquisition=acquisition, **kwargs)


__all__ = ["BODi", "PaperBODi"]
