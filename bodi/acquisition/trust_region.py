"""Trust regions for the acquisition search: a Hamming ball times a box (CASMOPOLITAN).

A :class:`TrustRegion` around a centre ``c`` holds the points ``x`` with

    #{i in discrete dims : x_i != c_i} <= radius          (binary and categorical columns)
    |x_j - c_j| <= length / 2                              (continuous and integer columns,
                                                            encoded in [0, 1])

(Wan et al., ICML 2021, Sec. 3; the box is not reweighted by the lengthscales here).

Its size follows the success/failure rule of TuRBO/CASMOPOLITAN: after ``success_tolerance``
consecutive improvements both the radius and the box grow by ``multiplier``; after
``failure_tolerance`` consecutive non-improvements they shrink by it; when the radius falls below
``min_radius`` (or the box below ``min_length``) the region *restarts*: the next point is chosen
by the acquisition function over the whole space (a guided restart) and a new region grows around
it. :func:`trust_region_state` replays that rule over a study's values, so the state is a pure
function of the history (a resumed or rebuilt optimizer continues identically).

``schedule="geometric"`` is Bounce's rule instead (Papenmeier et al., NeurIPS 2023): every
non-improving step shrinks the radius ``r`` (a real number; the region's radius is
``floor(r)``) and the box by ``gamma = (min_radius / r) ** (1 / left)``, every improving step
grows them by ``1 / gamma``, where ``left = horizon - (steps since the region began)`` (at least
1). With only failures the region shrinks to ``min_radius`` in ``horizon`` steps; a failure
that leaves it there restarts it (Bounce's region terminates at length 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from bodi.neighbours import NeighbourMoves
from bodi.space import DTYPE, SearchSpace

#: the size rules of :class:`TrustRegionSettings`
TRUST_REGION_SCHEDULES = ("tolerance", "geometric")


@dataclass(frozen=True)
class TrustRegionSettings:
    """CASMOPOLITAN's defaults (its reference implementation); radii are capped at the number
    of binary/categorical parameters."""

    init_radius: int = 20
    min_radius: int = 1
    max_radius: int = 30
    init_length: float = 0.8
    min_length: float = 0.5**7
    max_length: float = 1.6
    success_tolerance: int = 3
    failure_tolerance: int = 40
    multiplier: float = 1.5
    #: an improvement must exceed ``relative_improvement * |best|``
    relative_improvement: float = 1e-3
    #: ``"tolerance"`` (CASMOPOLITAN's rule above) or ``"geometric"`` (Bounce's rule)
    schedule: str = "tolerance"
    #: the geometric schedule's steps from ``init_radius`` to ``min_radius`` with no success
    horizon: int = 100
    #: ``None``: the box shrinks with the radius. An integer gives the box its own rule (the
    #: ``"tolerance"`` schedule only): it shrinks by ``multiplier`` after this many consecutive
    #: failures, grows with the radius, and widens again to ``init_length`` when it would
    #: fall below ``min_length`` (a restart of the box alone, so that a narrow box does not
    #: hold the search in a local optimum of the continuous parameters) or when an
    #: improvement changes the incumbent's binary/categorical values; the radius alone then
    #: decides the region's restarts. A box of continuous parameters then narrows
    #: around the incumbent while the radius stays wide (TuRBO's tolerance is about the
    #: number of continuous parameters).
    box_failure_tolerance: int | None = None
    #: ``None``: the region restarts only when it collapses. An integer restarts it (the
    #: ``"tolerance"`` schedule only) after this many consecutive steps that do not improve
    #: the region's best, however large the region still is (a stalled search moves on)
    stall_tolerance: int | None = None

    def __post_init__(self) -> None:
        if self.schedule not in TRUST_REGION_SCHEDULES:
            raise ValueError(f"unknown trust region schedule {self.schedule!r}; choose one of "
                             f"{list(TRUST_REGION_SCHEDULES)}")
        if isinstance(self.horizon, bool) or not isinstance(self.horizon, int) or (
                self.horizon < 1):
            raise ValueError(f"the trust region horizon must be a positive integer, got "
                             f"{self.horizon!r}")
        if not 1 <= self.min_radius <= self.init_radius <= self.max_radius:
            raise ValueError("trust region radii must satisfy 1 <= min <= init <= max")
        if not 0 < self.min_length <= self.init_length <= self.max_length:
            raise ValueError("trust region lengths must satisfy 0 < min <= init <= max")
        if self.success_tolerance < 1 or self.failure_tolerance < 1:
            raise ValueError("trust region tolerances must be >= 1")
        # the "tolerance" schedule's optional rules: None or a positive integer
        for name in ("box_failure_tolerance", "stall_tolerance"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
            if self.schedule != "tolerance":
                raise ValueError(f"{name} needs the 'tolerance' schedule")
        if self.multiplier <= 1:
            raise ValueError("the trust region multiplier must be > 1")


def reaches_uniform_points(settings: TrustRegionSettings, space: SearchSpace) -> bool:
    """Whether the region at its largest reaches a typical uniform point of ``space`` from
    any centre: the expected Hamming distance of a uniform point to a fixed one,
    ``sum_i (1 - 1 / C_i)`` over the binary/categorical parameters (``C_i`` values each),
    is at most ``max_radius``. Continuous and integer columns are not counted (the largest
    box, ``max_length = 1.6`` by default, spans most of their range from any centre). A
    space without discrete parameters is always reached."""
    expected = sum(1.0 - 1.0 / c for c in space.cardinalities)
    return expected <= settings.max_radius


def complete_trust_region(fields: Mapping[str, Any],
                          default: TrustRegionSettings) -> TrustRegionSettings:
    """The settings with ``fields`` (a dict of :class:`TrustRegionSettings`' fields, e.g. from a
    method spec or a stored study) set on top of an optimizer's ``default`` region; a schedule
    other than ``"tolerance"`` drops the default's box rule unless ``fields`` set one, since
    only that schedule has it. Unknown fields or bad values raise ``ValueError``."""
    values = {**default.__dict__, **fields}
    if values["schedule"] != "tolerance" and "box_failure_tolerance" not in fields:
        values["box_failure_tolerance"] = None
    try:
        return TrustRegionSettings(**values)
    except TypeError as err:
        raise ValueError(f"trust_region: {err}") from err


@dataclass
class TrustRegionState:
    """Where the success/failure rule stands after some observations.

    ``start`` is the index (into the replayed values) where the current region began; ``None``
    means the region has just restarted and the next point is chosen globally.
    """

    radius: float
    length: float
    successes: int = 0
    failures: int = 0
    best: float | None = None
    start: int | None = 0
    restarts: int = 0
    box_failures: int = 0
    #: consecutive steps since the region's best last improved
    stalls: int = 0


def trust_region_state(
    values: Sequence[float], n_init: int, settings: TrustRegionSettings, n_discrete: int,
    discrete_moved: Sequence[bool] | None = None,
) -> TrustRegionState:
    """Replay the size rule over ``values`` (completed values in order, larger is better).

    The first ``n_init`` values form the first region's data; every later value is one step.
    ``discrete_moved[i]``: whether point ``i``'s binary/categorical values differ from those
    of the best point before it; with ``box_failure_tolerance``, an improvement that moves
    them resets the box to ``init_length`` (the continuous landscape around a new discrete
    incumbent is a new one). ``None``: no step moves them.
    """
    cap = max(1, n_discrete)
    init_radius = min(settings.init_radius, cap)
    max_radius = min(settings.max_radius, cap)
    own_box = settings.box_failure_tolerance is not None
    state = TrustRegionState(init_radius, settings.init_length)
    for index, value in enumerate(values):
        if state.start is None:  # the first point of a region after a restart
            state.start, state.best = index, value
            continue
        if index < n_init or state.best is None:
            state.best = value if state.best is None else max(state.best, value)
            continue
        improved = value > state.best + settings.relative_improvement * abs(state.best)
        state.best = max(state.best, value)
        if settings.schedule == "geometric":
            left = max(1, settings.horizon - (index - max(state.start, n_init)))
            gamma = (settings.min_radius / max(state.radius, settings.min_radius)) ** (1 / left)
            factor = 1 / gamma if improved else gamma
            state.radius = min(state.radius * factor, max_radius)
            state.length = min(state.length * factor, settings.max_length)
            if state.radius < settings.min_radius or (
                    not improved and state.radius <= settings.min_radius + 1e-9
            ) or state.length < settings.min_length:  # Bounce: terminated at length 1
                state = TrustRegionState(init_radius, settings.init_length, start=None,
                                         restarts=state.restarts + 1)
            continue
        if improved:
            state.successes, state.failures, state.stalls = state.successes + 1, 0, 0
        else:
            state.successes, state.failures = 0, state.failures + 1
            state.stalls += 1
        if state.stalls == settings.stall_tolerance:
            state = TrustRegionState(init_radius, settings.init_length, start=None,
                                     restarts=state.restarts + 1)
            continue
        if own_box:
            _step_own_box(state, settings, improved,
                          discrete_moved is not None and discrete_moved[index])
        if state.successes == settings.success_tolerance:
            state.radius = min(int(state.radius * settings.multiplier), max_radius)
            state.length = min(state.length * settings.multiplier, settings.max_length)
            state.successes = 0
        elif state.failures == settings.failure_tolerance:
            state.radius = int(state.radius / settings.multiplier)
            if not own_box:
                state.length = state.length / settings.multiplier
            state.failures = 0
            if state.radius < settings.min_radius or state.length < settings.min_length:
                state = TrustRegionState(init_radius, settings.init_length, start=None,
                                         restarts=state.restarts + 1)
    return state


class TrustRegion:
    """The region ``{x : hamming(x, center) <= radius, |x - center|_inf <= length / 2}``.

    Args:
        space: the search space.
        center: ``dim`` encoded centre (the incumbent of the current region).
        radius: Hamming radius over the binary/categorical columns.
        length: edge length of the box over the continuous/integer columns.
    """

    def __init__(self, space: SearchSpace, center: Tensor, radius: int, length: float):
        if radius < 0 or length <= 0:
            raise ValueError(f"invalid trust region radius {radius} / length {length}")
        self.space = space
        self.center = center.to(DTYPE)
        self.radius = int(radius)
        self.length = float(length)
        self._discrete = torch.tensor(space.discrete_dims, dtype=torch.long)
        self._is_discrete = torch.zeros(space.dim, dtype=torch.bool)
        self._is_discrete[self._discrete] = True
        self._ordinal = torch.tensor(space.ordinal_dims, dtype=torch.long)
        self._all_discrete = len(self._ordinal) == 0  # no column subset to copy out

    def __repr__(self) -> str:
        return f"TrustRegion(radius={self.radius}, length={self.length:.4g})"

    @property
    def bounds(self) -> Tensor:
        """``2 x dim`` bounds: the box on ordinal columns, the space's bounds elsewhere."""
        bounds = self.space.bounds.clone()
        if len(self._ordinal):
            c = self.center[self._ordinal]
            bounds[0, self._ordinal] = (c - self.length / 2).clamp(0.0, 1.0)
            bounds[1, self._ordinal] = (c + self.length / 2).clamp(0.0, 1.0)
        return bounds

    def hamming(self, X: Tensor) -> Tensor:
        """``...`` Hamming distances of ``... x dim`` points to the centre."""
        if self._all_discrete:
            return (self.center != X).sum(-1)
        return (X[..., self._discrete] != self.center[self._discrete]).sum(-1)

    def contains(self, X: Tensor) -> Tensor:
        """``...`` mask of the ``... x dim`` points inside the region."""
        inside = self.hamming(X) <= self.radius
        if len(self._ordinal):
            bounds = self.bounds[:, self._ordinal]
            tol = 1e-9
            ordinal = X[..., self._ordinal]
            inside &= ((ordinal >= bounds[0] - tol) & (ordinal <= bounds[1] + tol)).all(-1)
        return inside

    def contains_neighbours(self, X: Tensor, moves: NeighbourMoves) -> Tensor:
        """``b x K`` mask: which one-parameter neighbours (``moves.apply(X)``) of the ``b x
        dim`` points ``X`` lie in the region, from the parents' distances in ``O(b (K + dim))``
        (where checking the neighbours themselves costs ``O(b K dim)``)."""
        current, new = moves.moved_values(X)  # b x K
        column = moves.column
        moved_discrete = self._is_discrete[column]
        center = self.center[column]
        hamming = (self.hamming(X).unsqueeze(-1) + (moved_discrete & (new != center)).long()
                   - (moved_discrete & (current != center)).long())
        inside = hamming <= self.radius
        if len(self._ordinal):
            low, high = self.bounds[0] - 1e-9, self.bounds[1] + 1e-9
            ordinal = X[:, self._ordinal]
            outside = ((ordinal < low[self._ordinal]) | (ordinal > high[self._ordinal])).sum(-1)
            moved_ordinal = ~moved_discrete

            def out(values: Tensor) -> Tensor:
                return moved_ordinal & ((values < low[column]) | (values > high[column]))

            inside &= (outside.unsqueeze(-1) + out(new).long() - out(current).long()) == 0
        return inside

    def project(self, X: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """``n x dim`` points of the region near ``X`` (``n x dim``): ordinal columns clamped
        to the box; in a row more than ``radius`` discrete columns away from the centre, a
        uniform subset of its differing columns is set back to the centre's values so that
        exactly ``radius`` differ. Rows inside the region are returned unchanged."""
        X = X.clone()
        if len(self._ordinal):
            low, high = self.bounds[:, self._ordinal]
            X[:, self._ordinal] = torch.maximum(torch.minimum(X[:, self._ordinal], high), low)
        d = len(self._discrete)
        if d:
            center = self.center[self._discrete]
            differs = X[:, self._discrete] != center  # n x d
            # keep the `radius` differing columns with the smallest uniform keys
            keys = torch.rand(len(X), d, generator=generator, dtype=DTYPE)
            keys = keys.masked_fill(~differs, torch.inf)
            rank = keys.argsort(-1).argsort(-1)
            keep = differs & (rank < self.radius)
            X[:, self._discrete] = torch.where(keep, X[:, self._discrete], center)
        return X

    def sample(self, n: int, generator: torch.Generator | None = None) -> Tensor:
        """``n x dim`` points of the region: a uniform number ``1..radius`` of discrete columns
        changed to other random values, ordinal columns uniform in the box."""
        X = self.center.expand(n, -1).clone()
        d = len(self._discrete)
        if d and self.radius > 0:
            radius = min(self.radius, d)
            changes = torch.randint(1, radius + 1, (n,), generator=generator)
            # the `changes` columns with the smallest uniform keys: a uniform subset per row
            # (top-k is O(n d) for a small radius, where ranking all d columns is O(n d log d))
            order = torch.rand(n, d, generator=generator).topk(radius, largest=False).indices
            take = torch.arange(radius) < changes.unsqueeze(-1)  # n x radius
            chosen = torch.zeros(n, d, dtype=torch.bool).scatter_(1, order, take)
            moved = self.space.other_discrete_values(X[:, self._discrete], generator)
            X[:, self._discrete] = torch.where(chosen, moved, X[:, self._discrete])
        if len(self._ordinal):
            low, high = self.bounds[:, self._ordinal]
            u = torch.rand(n, len(self._ordinal), generator=generator, dtype=DTYPE)
            X[:, self._ordinal] = low + u * (high - low)
        return self.space.round(X)


def _step_own_box(state: TrustRegionState, settings: TrustRegionSettings, improved: bool,
                  discrete_moved: bool) -> None:
    """One step of the box's own rule (``box_failure_tolerance``, see
    :class:`TrustRegionSettings`), before the shared rule grows box and radius on success."""
    if improved:
        state.box_failures = 0
        if discrete_moved:  # a new discrete incumbent: a new continuous landscape
            state.length = max(state.length, settings.init_length)
        return
    state.box_failures += 1
    if state.box_failures == settings.box_failure_tolerance:
        state.length = state.length / settings.multiplier
        if state.length < settings.min_length:  # the box restarts, the region does not
            state.length = settings.init_length
        state.box_failures = 0


def discrete_moves(X_discrete: Tensor, progress: Sequence[float]) -> list[bool]:
    """For each of ``n`` points (``X_discrete``: their ``n x d`` binary/categorical values, in
    the order of ``progress``, larger is better), whether its values differ from those of the
    best point before it (the first to reach the best value so far; ``False`` for the first
    point). One vectorised pass: it runs at every suggestion."""
    n = len(progress)
    if n < 2:
        return [False] * n
    values = torch.as_tensor(progress, dtype=torch.float64)
    before = torch.cat([values.new_full((1,), -math.inf), values.cummax(0).values[:-1]])
    index = torch.arange(n)
    # the index of the best point so far: the latest strict improvement
    best = torch.where(values > before, index, 0).cummax(0).values
    moved = (X_discrete[1:] != X_discrete[best[:-1]]).any(-1)
    return [False, *moved.tolist()]


def region_from_state(
    space: SearchSpace, state: TrustRegionState, X: Tensor, Y: Tensor
) -> TrustRegion | None:
    """The region of ``state`` centred at the best of its points (``X``/``Y`` are the replayed
    inputs and values, ``n x dim`` and ``n x 1``); ``None`` right after a restart."""
    if state.start is None:
        return None
    Y_region = Y[state.start :].squeeze(-1)
    center = X[state.start :][Y_region.argmax()]
    return TrustRegion(space, center, state.radius, max(state.length, math.ldexp(1.0, -30)))
