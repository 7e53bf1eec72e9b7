"""One-call optimization: ``bodi.minimize(f, space, budget)`` (like ``skopt.gp_minimize``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bodi.optimizers.base import Optimizer, Trial
from bodi.optimizers.bo import BODi
from bodi.space import SearchSpace, Value

Objective = Callable[[dict[str, Value]], float]


@dataclass
class OptimizeResult:
    """Outcome of :func:`minimize`.

    Attributes:
        best_params: the best configuration found.
        best_value: its value.
        history: every trial in order (``Trial.params``, ``.value``, ``.state``, ...).
        optimizer: the optimizer, ready to continue with ``ask``/``tell``.
    """

    best_params: dict[str, Value]
    best_value: float
    history: list[Trial]
    optimizer: Optimizer

    @property
    def values(self) -> list[float | None]:
        return [t.value for t in self.history]


def minimize(
    func: Objective,
    space: SearchSpace,
    budget: int = 100,
    *,
    seed: int = 0,
    direction: str = "minimize",
    batch_size: int = 1,
    optimizer: Optimizer | None = None,
    progress: bool = False,
    callback: Callable[[Trial], Any] | None = None,
    max_consecutive_failures: int = 10,
    **bodi_options: Any,
) -> OptimizeResult:
    """Optimize ``func`` over ``space`` with ``budget`` evaluations.

    Args:
        func: takes a dict of parameter values, returns a float. An exception, NaN or inf
            marks that evaluation as failed (it still counts toward the budget).
        space: the search space.
        budget: number of evaluations.
        seed: seed of the optimizer (ignored when ``optimizer`` is given).
        direction: ``"minimize"`` (default) or ``"maximize"``.
        batch_size: points proposed per ``ask``.
        optimizer: an ask/tell optimizer to use instead of a new :class:`BODi`.
        progress: show a progress bar with the best value so far.
        callback: called with each finished trial.
        max_consecutive_failures: stop with an error after this many failures in a row.
        **bodi_options: keywords for :class:`BODi` (``dictionary_size``, ``n_init``, ...).
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    if not callable(func):
        raise ValueError("func must be callable")
    if optimizer is None:
        optimizer = BODi(space, seed=seed, direction=direction, **bodi_options)
    elif bodi_options:
        raise ValueError("BODi options cannot be combined with an explicit optimizer")
    failures_in_a_row = 0
    with _Progress(progress, budget) as advance:
        done = 0
        while done < budget:
            batch = optimizer.ask(min(batch_size, budget - done))
            for params in batch:
                trial = _evaluate(optimizer, func, params)
                done += 1
                failures_in_a_row = failures_in_a_row + 1 if trial.state == "failed" else 0
                advance(optimizer)
                if callback is not None:
                    callback(trial)
            if failures_in_a_row >= max_consecutive_failures:
                raise RuntimeError(
                    f"{failures_in_a_row} evaluations failed in a row; last error: "
                    f"{trial.message}"
                )
    best = optimizer.best
    if best is None:
        raise RuntimeError("every evaluation failed; see result history for the messages")
    return OptimizeResult(best[0], best[1], optimizer.history, optimizer)


def _evaluate(optimizer: Optimizer, func: Objective, params: dict[str, Value]) -> Trial:
    try:
        value = func(dict(params))
    except Exception as err:  # the user's objective failed: record it, keep going
        return optimizer.tell_failure(params, f"{type(err).__name__}: {err}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            return optimizer.tell(params, value)
        except ValueError as err:
            return optimizer.tell_failure(params, f"invalid objective value: {err}")


class _Progress:
    """A rich progress bar showing the best value so far (a no-op when disabled)."""

    def __init__(self, enabled: bool, total: int):
        self.enabled, self.total = enabled, total

    def __enter__(self) -> Callable[[Optimizer], None]:
        if not self.enabled:
            return lambda optimizer: None
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bar = Progress(
            TextColumn("[bold]bodi"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("best {task.fields[best]}"),
        )
        self._bar.__enter__()
        task = self._bar.add_task("evaluations", total=self.total, best="-")

        def advance(optimizer: Optimizer) -> None:
            best = optimizer.best
            self._bar.update(task, advance=1, best="-" if best is None else f"{best[1]:.6g}")

        return advance

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._bar.__exit__(*exc)
