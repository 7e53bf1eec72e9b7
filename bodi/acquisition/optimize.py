"""Acquisition optimization: BoTorch's mixed alternating local search, never repeating a point.

The discrete part is local search over 1-Hamming neighbours (a bit flip, a categorical changed to
another value, an integer moved one step) from random starts plus "spray" starts around the best
points (paper, Alg. 2 and appendix "Local search"). Mixed spaces use BoTorch's
``optimize_acqf_mixed_alternating``, which alternates that search with L-BFGS steps on the
continuous parameters. Fully discrete spaces use :func:`local_search`, a vectorised version of the
same search that scores all neighbours of all restarts in one call (``benchmarks/ask_speed.py``
compares both). In a fully discrete space, points already evaluated or pending are never
proposed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.optim.optimize_mixed import optimize_acqf_mixed_alternating
from torch import Tensor

from bodi.acquisition.local_search import NUM_SPRAY_CENTERS, local_search
from bodi.acquisition.trust_region import TrustRegion
from bodi.novelty import SearchSpaceExhaustedError, count_distinct, row_keys
from bodi.space import SearchSpace

#: the acquisition optimizers: ``"auto"`` resolves to ``"local"`` or ``"botorch"``
ACQUISITION_OPTIMIZERS = ("auto", "local", "botorch")


def check_acquisition_optimizer(method: str, *, trust_region: bool = False,
                                constrained: bool = False) -> None:
    """The one rule of which acquisition optimizer works with what: BoTorch's optimizer knows
    neither a trust region nor input constraints."""
    if method not in ACQUISITION_OPTIMIZERS:
        raise ValueError(f"unknown acquisition_optimizer {method!r}; choose one of "
                         f"{list(ACQUISITION_OPTIMIZERS)}")
    if method == "botorch" and trust_region:
        raise ValueError("a trust region needs acquisition_optimizer 'auto' or 'local'")
    if method == "botorch" and constrained:
        raise ValueError("a constrained search space needs acquisition_optimizer 'auto' or "
                         "'local'")


def resolve_acquisition_optimizer(method: str, space: SearchSpace,
                                  trust_region: bool = False) -> str:
    """``"local"`` or ``"botorch"`` for ``method`` on ``space`` (checked): ``"auto"``
    is the local search in fully discrete spaces, with a trust region or with constraints."""
    check_acquisition_optimizer(method, trust_region=trust_region,
                                constrained=bool(space.constraints))
    if method == "auto":
        local = space.is_discrete or trust_region or bool(space.constraints)
        return "local" if local else "botorch"
    return method


def _matches(space: SearchSpace, X: Tensor, avoid_keys: Tensor) -> Tensor:
    """``... x q x dim`` against the :func:`bodi.novelty.row_keys` of the avoided rows: mask
    ``...`` of batches with any row among them (memory ``O(... q + k)``, not
    ``O(... q k dim)``)."""
    if avoid_keys.numel() == 0:
        return torch.zeros(X.shape[:-2], dtype=torch.bool, device=X.device)
    return torch.isin(row_keys(space, X.cpu()), avoid_keys).any(-1).to(X.device)


class AvoidPoints(AcquisitionFunction):
    """Wrap an acquisition function so that given points (and pending ones) score lowest.

    ``forward`` returns the wrapped values, except that a batch containing a point of ``avoid``
    or of the current ``X_pending`` gets one less than the smallest other value of the same call
    (so BoTorch's start-point selection and local search rank it last without distorting the
    scale of the remaining values).

    Args:
        acq_function: the acquisition function to wrap.
        space: the search space the points encode.
        avoid: ``k x dim`` points never to propose.
        X_baseline: ``b x dim`` centres for BoTorch's spray starting points (the incumbents).
        X_pending: ``p x dim`` points under evaluation that ``acq_function`` accounts for
            (BoTorch's greedy batch loop adds each new point to them).
    """

    def __init__(self, acq_function: AcquisitionFunction, space: SearchSpace, avoid: Tensor,
                 X_baseline: Tensor, X_pending: Tensor | None = None):
        super().__init__(model=acq_function.model)
        self.acq_function = acq_function
        self.space = space
        self.avoid = avoid
        self._avoid_keys = row_keys(space, avoid.detach().cpu())  # fixed: hashed once
        self.X_baseline = X_baseline
        self.X_pending = X_pending

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        self.acq_function.set_X_pending(X_pending)
        self.X_pending = X_pending

    def forward(self, X: Tensor) -> Tensor:
        values = self.acq_function(X)
        keys = self._avoid_keys
        if self.X_pending is not None:
            keys = torch.cat([keys, row_keys(self.space, self.X_pending.detach().cpu())])
        bad = _matches(self.space, X.detach(), keys)
        if not bad.any():
            return values
        if bad.all():
            return values - 1e3
        floor = values.detach()[~bad].min() - 1.0
        return torch.where(bad, floor.expand_as(values), values)


class OnModelDevice(AcquisitionFunction):
    """Evaluate ``acq_function`` (whose model lives on another device or in another dtype) on
    inputs from the search, which works in CPU ``float64`` (see :mod:`bodi.device`).

    ``forward(X)`` moves ``X`` (``b x q x dim``) to the model's ``device`` and ``dtype`` and
    returns the ``b`` values in ``X``'s device and dtype; both moves are differentiable, so
    L-BFGS-B steps on continuous parameters work through it. ``set_X_pending`` passes pending
    points on in the model's precision.
    """

    def __init__(self, acq_function: AcquisitionFunction, device: torch.device,
                 dtype: torch.dtype):
        super().__init__(model=acq_function.model)
        self.acq_function = acq_function
        self.model_tensor_kwargs = {"device": device, "dtype": dtype}
        self.X_pending = None

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        self.acq_function.set_X_pending(
            None if X_pending is None else X_pending.to(**self.model_tensor_kwargs)
        )
        self.X_pending = X_pending

    def forward(self, X: Tensor) -> Tensor:
        return self.acq_function(X.to(**self.model_tensor_kwargs)).to(X)


def optimize_acquisition(
    acq_function: AcquisitionFunction,
    space: SearchSpace,
    *,
    q: int = 1,
    avoid: Tensor | None = None,
    incumbents: Tensor | None = None,
    num_restarts: int = 20,
    raw_samples: int = 1024,
    method: str = "auto",
    options: dict[str, Any] | None = None,
    region: TrustRegion | None = None,
    pending: Tensor | None = None,
) -> Tensor:
    """Maximize ``acq_function`` over ``space``; returns a ``q x dim`` tensor of new points.

    Args:
        acq_function: a BoTorch acquisition function on encoded inputs.
        space: the search space.
        q: batch size; points are chosen greedily, each one pending for the next.
        avoid: ``k x dim`` points never to propose in a fully discrete space (evaluated,
            failed and pending ones).
        incumbents: ``b x dim`` best points so far (best first), centres of the spray starts.
        num_restarts: local-search starts.
        raw_samples: the random pool the starts are chosen from.
        method: ``"local"`` (:func:`bodi.acquisition.local_search.local_search`; in mixed
            spaces interleaved with continuous L-BFGS-B steps), ``"botorch"``
            (``optimize_acqf_mixed_alternating``) or ``"auto"``: ``"local"`` for fully
            discrete spaces, with a trust region or with constraints, ``"botorch"`` otherwise.
        options: extra options for the chosen method.
        region: a trust region (``"local"``): nothing outside it is proposed.
        pending: ``p x dim`` points under evaluation that ``acq_function`` already accounts
            for. For ``q > 1`` each chosen point joins them (``set_X_pending``) before the next
            is chosen. (BoTorch's incremental ``qLogNoisyExpectedImprovement`` folds its pending
            points into its baseline and reports ``X_pending = None``, so they must be given.)
    """
    dim = space.dim
    avoid = torch.empty(0, dim, dtype=torch.float64) if avoid is None else avoid
    if space.is_discrete:
        left = int(space.cardinality - count_distinct(space, avoid))
        if left < q:
            raise SearchSpaceExhaustedError(
                f"only {left} of the {int(space.cardinality)} configurations are left; "
                f"cannot propose {q} new point(s)"
            )
    method = resolve_acquisition_optimizer(method, space, trust_region=region is not None)
    centres = incumbents if incumbents is not None else torch.empty(0, dim, dtype=torch.float64)
    if method == "local":
        search_options = {**(options or {}), "region": region, "num_restarts": num_restarts,
                          "raw_samples": raw_samples}
        return _optimize_sequentially(local_search, acq_function, space, q, avoid, centres,
                                      search_options, pending)
    return _optimize_botorch(
        acq_function, space, q, avoid, centres, num_restarts, raw_samples, options or {},
        pending,
    )


def _optimize_sequentially(
    search: Callable[..., tuple[Tensor, Tensor]],
    acq_function: AcquisitionFunction,
    space: SearchSpace,
    q: int,
    avoid: Tensor,
    centres: Tensor,
    options: dict[str, Any],
    base_pending: Tensor | None,
) -> Tensor:
    """``q`` points, one ``search`` (:func:`local_search`) each, every
    chosen point pending for the next and never chosen again."""
    chosen: list[Tensor] = []
    changed = False
    try:
        for _ in range(q):
            if chosen:
                changed = True
                new = torch.stack(chosen)
                acq_function.set_X_pending(
                    new if base_pending is None else torch.cat([base_pending, new])
                )
            x, _ = search(
                acq_function,
                space,
                avoid=torch.cat([avoid, *[c.unsqueeze(0) for c in chosen]]),
                incumbents=centres,
                **options,
            )
            chosen.append(x)
    finally:  # also when the search ran out of points half-way through the batch
        if changed:
            acq_function.set_X_pending(base_pending)
    return torch.stack(chosen)


def _optimize_botorch(
    acq_function: AcquisitionFunction,
    space: SearchSpace,
    q: int,
    avoid: Tensor,
    centres: Tensor,
    num_restarts: int,
    raw_samples: int,
    options: dict[str, Any],
    pending: Tensor | None,
) -> Tensor:
    wrapped = AvoidPoints(
        acq_function, space, avoid if space.is_discrete else avoid[:0],
        centres[:NUM_SPRAY_CENTERS], pending,
    )
    discrete_dims: dict[int, list[float]] = {i: [0.0, 1.0] for i in space.binary_dims}
    for i in space.integer_dims:
        discrete_dims[i] = space.parameters[i].grid()
    cat_dims = {
        i: [float(v) for v in range(space.parameters[i].cardinality)]
        for i in space.categorical_dims
    }
    opts: dict[str, Any] = {"num_spray_points": 20 if len(centres) else 0}
    if cat_dims or any(len(v) > 2 for v in discrete_dims.values()):
        # The continuous relaxation is meaningless for the HED embedding of categoricals.
        opts["initialization_strategy"] = "random"
    opts.update(options)
    candidates, _ = optimize_acqf_mixed_alternating(
        wrapped,
        bounds=space.bounds,
        discrete_dims=discrete_dims or None,
        cat_dims=cat_dims or None,
        q=q,
        num_restarts=num_restarts,
        raw_samples=raw_samples,
        options=opts,
    )
    candidates = space.round(candidates.detach())
    if space.is_discrete:
        candidates = _replace_repeats(wrapped, space, candidates, avoid)
    return candidates


def _replace_repeats(
    wrapped: AvoidPoints, space: SearchSpace, candidates: Tensor, avoid: Tensor
) -> Tensor:
    """Safety net: swap any candidate equal to an avoided or earlier candidate for the best
    fresh point among uniform samples (rarely needed: local search already ranks them last)."""
    out = []
    for x in candidates:
        taken = torch.cat([avoid, *[c.unsqueeze(0) for c in out]]) if out else avoid
        taken_keys = row_keys(space, taken)
        if _matches(space, x.view(1, 1, -1), taken_keys).item():
            pool = space.sample(4096)
            pool = pool[~_matches(space, pool.unsqueeze(-2), taken_keys)]
            if len(pool) == 0:
                raise SearchSpaceExhaustedError("no configuration left that was not evaluated")
            with torch.no_grad():
                scores = wrapped.acq_function(pool.unsqueeze(-2))
            x = pool[scores.argmax()]
        out.append(x)
    return torch.stack(out)
