"""Convergence plot of a single study, or its Pareto front (``bodi show``).

Each function takes an open study (:class:`bodi.Study`) or a
:class:`bodi.stored_studies.StoredStudy` (what ``bodi show`` reads, without torch): both have
``trials`` (with ``number``, ``state``, ``value``, ``values``), ``direction(s)``,
``is_multi_objective``, ``pareto_front`` and ``study_name``.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

from bodi.directions import best_of
from bodi.stored_studies import objective_values as _objective_values

#: values beyond this magnitude are drawn on a symmetric log axis
HUGE = 1e100


def study_title(study: Any) -> str:
    """``study 'name': k parameters, n trials, <optimizer>`` for a plot's title."""
    parameters = (study.n_parameters if hasattr(study, "n_parameters")
                  else len(study.space.parameters))
    optimizer = (study.optimizer_name if hasattr(study, "optimizer_name")
                 else type(study.optimizer).__name__)
    return (f"study {study.study_name!r}: {parameters} parameters, {len(study.trials)} trials, "
            f"{optimizer}")





def plot_study(optimizer: Any, path: str | Path, title: str | None = None) -> Path:
    """Each completed value (dots), failed trials (crosses) and the best so far (a staircase:
    it changes only at an improvement), saved to ``path``; with several objectives,
    :func:`plot_pareto_front`."""
    if optimizer.is_multi_objective:
        return plot_pareto_front(optimizer, path, title)
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():  # a symmetric log axis over huge values overflows quietly
        warnings.simplefilter("ignore", RuntimeWarning)
        fig = convergence_figure(optimizer, title)
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def convergence_figure(optimizer: Any, title: str | None = None):
    """The matplotlib figure of :func:`plot_study` (one objective)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def better(a: float, b: float) -> float:
        return best_of((a, b), optimizer.direction)

    numbers, values, best, failed = [], [], [], []
    current = math.nan
    for trial in optimizer.trials:
        if trial.state == "complete":
            current = trial.value if math.isnan(current) else better(current, trial.value)
            numbers.append(trial.number)
            values.append(trial.value)
        elif trial.state == "failed":
            failed.append(trial.number)
        best.append(current)
    fig, ax = plt.subplots(figsize=(6, 4))
    if values and max(abs(v) for v in values) > HUGE:  # a linear axis cannot span them
        ax.set_yscale("symlog")
    ax.plot(numbers, values, "o", alpha=0.4, label="value")
    ax.step(range(len(best)), best, where="post", label="best so far")
    if failed:
        high = ax.get_ylim()[1]
        ax.plot(failed, [high] * len(failed), "x", color="red", label="failed")
    ax.set_xlabel("trial")
    ax.set_ylabel(f"objective ({optimizer.direction})")
    ax.set_title(title or study_title(optimizer), parse_math=False)  # a name may hold "$"
    ax.legend()
    fig.tight_layout()
    return fig


def plot_pareto_front(optimizer: Any, path: str | Path, title: str | None = None,
                      objectives: tuple[int, int] = (0, 1)) -> Path:
    """Objective ``objectives[0]`` against ``objectives[1]`` of every completed trial (dots,
    coloured by trial number) and the Pareto front (a staircase through its trials)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    i, j = objectives
    done = [t for t in optimizer.trials if t.state == "complete"]
    front = sorted(optimizer.pareto_front, key=lambda t: _objective_values(t)[i])
    fig, ax = plt.subplots(figsize=(6, 4.5))
    points = ax.scatter([_objective_values(t)[i] for t in done],
                        [_objective_values(t)[j] for t in done],
                        c=[t.number for t in done], cmap="viridis", s=14, alpha=0.7)
    fig.colorbar(points, ax=ax, label="trial")
    ax.step([_objective_values(t)[i] for t in front], [_objective_values(t)[j] for t in front],
            where="post", color="crimson", marker="o", label=f"Pareto front ({len(front)})")
    directions = optimizer.directions
    ax.set_xlabel(f"objective {i} ({directions[i]})")
    ax.set_ylabel(f"objective {j} ({directions[j]})")
    ax.set_title(title or study_title(optimizer), parse_math=False)  # a name may hold "$"
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
