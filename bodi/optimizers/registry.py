"""Every optimizer by name: the one registry behind ``bodi bench``, stored studies and tests.

A method spec is a name with optional keyword options in brackets, e.g. ``bodi``,
``bodi[m=32]`` or ``bodi[dictionary=wavelet,m=64]``. Options are the keyword arguments of the
method's optimizer class (``m`` is short for ``dictionary_size``); values are parsed as int,
float, bool (``true``/``false``), ``None`` (``null``) or string; a dotted key sets one field of
a dict option (``bodi[trust_region.schedule=geometric]`` passes
``trust_region={"schedule": "geometric"}``).
A stored study names its optimizer by class name
(``"BODi"``, ``"CASMOPOLITAN"``, ...), which :func:`optimizer_class` resolves.

Classes are imported when first needed, so the registry costs nothing at ``import bodi`` and
the baselines' optional packages stay optional.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bodi.optimizers.base import Optimizer
    from bodi.space import SearchSpace


@dataclass(frozen=True)
class Method:
    """A named optimizer: its class (``"module:Class"``) and a line saying what it is."""

    name: str
    target: str
    summary: str

    @property
    def class_name(self) -> str:
        return self.target.partition(":")[2]

    def load(self) -> type[Optimizer]:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)


#: name -> method, in the order reports list them
METHODS: dict[str, Method] = {m.name: m for m in (
    Method("bodi", "bodi.optimizers.bo:BODi",
           "BODi with bodi's defaults (HED times a Hamming-distance kernel plus a first-order "
           "term, incumbent-relative dictionary, Hamming trust region, upper confidence "
           "bound, failed trials as an unknown constraint)"),
    Method("bodi-paper", "bodi.optimizers.bo:PaperBODi",
           "BODi as in the paper (HED kernel, no dictionary reference, no trust region)"),
    Method("random", "bodi.optimizers.random_search:RandomSearch",
           "uniform random search, never repeating a point"),
    Method("casmopolitan", "bodi.baselines.casmopolitan:CASMOPOLITAN",
           "overlap-kernel GP in a Hamming trust region (Wan et al., 2021)"),
    Method("combo", "bodi.baselines.combo:COMBO",
           "diffusion-kernel GP (Oh et al., 2019)"),
    Method("smac", "bodi.baselines.smac3:SMAC", "SMAC3's random forest (the smac package)"),
    Method("tpe", "bodi.baselines.tpe:TPE",
           "Optuna's multivariate TPE (MOTPE for several objectives)"),
    Method("nsga2", "bodi.baselines.tpe:NSGA2",
           "Optuna's NSGA-II genetic algorithm (one or several objectives)"),
    Method("botorch-mixed", "bodi.baselines.botorch_mixed:BoTorchMixed",
           "BoTorch's MixedSingleTaskGP with optimize_acqf_mixed_alternating"),
    Method("ngopt", "bodi.baselines.ngopt:NGOpt",
           "Nevergrad's NGOpt algorithm selector (the nevergrad package)"),
    Method("sa", "bodi.baselines.annealing:SimulatedAnnealing",
           "simulated annealing with MCBO's settings (Dreczkowski et al., 2023)"),
    Method("bounce", "bodi.baselines.bounce:Bounce",
           "Bounce: nested embeddings in a trust region (Papenmeier et al., 2023)"),
    Method("ga", "bodi.baselines.genetic:GeneticAlgorithm",
           "pymoo's mixed-variable genetic algorithm with MCBO's settings"),
)}
ALIASES = {"m": "dictionary_size"}
_SPEC = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*(?:\[(.*)\])?\s*$")


def optimizer_class(name: str) -> type[Optimizer]:
    """The optimizer class for a method name (``"bodi"``) or a class name (``"BODi"``)."""
    if name in METHODS:
        return METHODS[name].load()
    for method in METHODS.values():
        if method.class_name == name:
            return method.load()
    known = sorted({m.class_name for m in METHODS.values()})
    raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(known)}")


def _value(text: str) -> Any:
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.lower() == "null":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def multi_objective_method_names() -> list[str]:
    """The methods whose optimizer accepts several objectives."""
    return [name for name, method in METHODS.items()
            if getattr(method.load(), "supports_multi_objective", False)]


def split_methods(text: str) -> list[str]:
    """Method specs from a comma-separated list, split on commas outside brackets:
    ``"bodi[m=32,dictionary=wavelet],random"`` -> ``["bodi[m=32,dictionary=wavelet]",
    "random"]``."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "[") - (char == "]")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p.strip() for p in [*parts, current] if p.strip()]


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
        key, dot, field_name = key.strip().partition(".")
        key = ALIASES.get(key, key)
        if not dot:
            options[key] = _value(value)
        elif not isinstance(options.setdefault(key, {}), dict) or not field_name.strip():
            raise ValueError(f"method {spec!r}: option {item!r} sets a field of {key!r}, "
                             "which is not a dict of fields")
        else:
            options[key][field_name.strip()] = _value(value)
    return name, options


def configuration(spec: str, space: SearchSpace, *, n_init: int | None = None,
                  design: str | None = None) -> tuple[type, dict[str, Any]] | None:
    """The class and settings of the optimizer that ``spec`` builds on ``space`` (each option
    and the defaults for ``space`` filled in), where its class's settings define its behaviour
    (:attr:`bodi.Optimizer.settings_define_behaviour`); ``None`` otherwise, or where ``spec``
    does not parse or build. A spec of an older bodi that names an option this one no longer
    has (:meth:`bodi.Optimizer.retired_settings`) is today's optimizer's configuration where
    the option's value is what that optimizer does, and that configuration with the option's
    value otherwise (the configuration the older bodi ran; equal to what another spec of the
    same older configuration gives)."""
    try:
        name, options = parse_method(spec)
        cls = METHODS[name].load()
        if not cls.settings_define_behaviour:
            return None
        known = cls.option_defaults()
        retired = {key: options.pop(key) for key in list(options) if key not in known}
        settings = _build(cls, spec, options, space, seed=0, direction="minimize",
                          n_init=n_init, design=design).settings()
    except ValueError:
        return None
    today = cls.retired_settings(settings, space)
    return cls, {**settings, **{key: value for key, value in retired.items()
                                if key not in today or value != today[key]}}


def make_optimizer(
    spec: str, space: SearchSpace, *, seed: int, direction: str, n_init: int | None = None,
    device: str | None = None, budget: int | None = None, design: str | None = None,
    **kwargs: Any,
) -> Optimizer:
    """A fresh optimizer for ``spec`` (validates the options by constructing it).

    ``n_init`` and ``design`` are the initial design's size and kind for model-based methods
    (a spec that names another design is an error: the design is shared), ``device`` the model
    device of GP methods and ``budget`` the evaluations planned, for methods that plan with it;
    each is given by the class's capabilities (:class:`bodi.Optimizer`'s ``uses_initial_design``,
    ``takes_device``, ``takes_budget``) and ignored by the other methods. ``kwargs`` (e.g.
    ``outcome_constraints=``) go to the class as they are.
    """
    name, options = parse_method(spec)
    return _build(METHODS[name].load(), spec, options, space, seed=seed, direction=direction,
                  n_init=n_init, device=device, budget=budget, design=design, **kwargs)


def _build(cls: type[Optimizer], spec: str, options: dict[str, Any], space: SearchSpace, *,
           seed: int, direction: str, n_init: int | None = None, device: str | None = None,
           budget: int | None = None, design: str | None = None, **kwargs: Any) -> Optimizer:
    """``cls`` with ``options`` (those of ``spec``) and the shared ones (see
    :func:`make_optimizer`)."""
    if n_init is not None and cls.uses_initial_design:
        options.setdefault("n_init", n_init)
    if (design is not None and cls.uses_initial_design
            and options.setdefault("design", design) != design):
        raise ValueError(f"method {spec!r} names design {options['design']!r}, but the "
                         f"shared initial design is {design!r}")
    if device is not None and cls.takes_device:
        options.setdefault("device", device)
    if budget is not None and cls.takes_budget:
        options.setdefault("budget", budget)
    try:
        return cls(space, seed=seed, direction=direction, **options, **kwargs)
    except TypeError as err:
        raise ValueError(f"method {spec!r}: {err}") from err
