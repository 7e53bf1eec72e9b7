"""Convergence plot of a single study (``bodi show``)."""

from __future__ import annotations

import math
from pathlib import Path

from bodi.optimizers import Optimizer


def plot_study(optimizer: Optimizer, path: str | Path, title: str | None = None) -> Path:
    """Each completed value (dots), failed trials (crosses) and the best so far (line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    better = min if optimizer.direction == "minimize" else max
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
    ax.plot(numbers, values, "o", alpha=0.4, label="value")
    ax.plot(range(len(best)), best, "-", label="best so far")
    if failed:
        high = ax.get_ylim()[1]
        ax.plot(failed, [high] * len(failed), "x", color="red", label="failed")
    ax.set_xlabel("trial")
    ax.set_ylabel(f"objective ({optimizer.direction})")
    ax.set_title(title or optimizer.study_name)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
