"""Multi-objective benchmarks: every method through one loop, hypervolume tables and figures.

Each run (problem, method, seed) is a stored study ``"<problem>/<method>/seed<seed>"`` in
``<out>/studies.db``, driven by :func:`bodi.minimize` with the method's optimizer from the
registry (:func:`bodi.optimizers.registry.make_optimizer`): the same budget, seeds and shared
initial design (``n_init`` points of the uniform design, for the model-based methods) for every
method. A run that was interrupted resumes where it stopped (the study continues).

A run's quality after ``t`` evaluations is the hypervolume
(:func:`bodi.pareto.hypervolume`) of its first ``t`` trials above the problem's fixed
reference point.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bodi.optimize import minimize
from bodi.optimizers.registry import make_optimizer, optimizer_class, parse_method
from bodi.pareto import oriented, running_hypervolume
from bodi.problems.multi_objective import MultiObjectiveProblem
from bodi.storage import SQLiteStorage
from bodi.study import Study

STUDIES = "studies.db"


def study_name(problem: str, method: str, seed: int) -> str:
    return f"{problem}/{method}/seed{seed}"


def run_multi_objective(
    problem: MultiObjectiveProblem, methods: Sequence[str], seeds: Sequence[int], *,
    budget: int, n_init: int, out: str | Path, log: bool = True,
) -> Path:
    """Run (or resume) every method on ``problem`` for every seed; returns the studies file.

    GP methods get the problem's reference point and its known objectives (what a user who
    knows them would pass); the other methods have no use for either."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / STUDIES
    storage = SQLiteStorage(path)
    try:
        for method in methods:
            gp = optimizer_class(parse_method(method)[0]).takes_device
            extra = {"ref_point": list(problem.ref_point),
                     "known_objectives": problem.known_objectives} if gp else {}
            for seed in seeds:
                optimizer = make_optimizer(
                    method, problem.space, seed=seed, direction=",".join(problem.directions),
                    n_init=n_init, design="uniform", **extra,
                )
                with Study(optimizer, storage,
                           study_name=study_name(problem.name, method, seed)) as study:
                    if study.n_finished < budget:
                        minimize(problem, problem.space, budget, study=study)
                if log:
                    print(f"{method} seed {seed}: {study.n_finished} evaluations", flush=True)
    finally:
        storage.close()
    return path


def hypervolume_curves(
    path: str | Path, problem: MultiObjectiveProblem, methods: Sequence[str],
    seeds: Sequence[int], budget: int,
) -> dict[str, np.ndarray]:
    """``method -> seeds x budget`` hypervolume after each evaluation (failed evaluations add
    nothing; NaN past the end of an unfinished run). Runs not started are left out."""
    storage = SQLiteStorage(path, read_only=True)  # a report never writes
    ref = oriented([problem.ref_point], problem.directions)[0]
    curves: dict[str, np.ndarray] = {}
    try:
        for method in methods:
            rows = []
            for seed in seeds:
                name = study_name(problem.name, method, seed)
                if storage.get_study(name) is None:
                    continue
                trials = [t for t in storage.trials(name) if t.state != "pending"][:budget]
                values = [t.values if t.state == "complete" else None for t in trials]
                curve = np.full(budget, np.nan)
                done = [v for v in values if v is not None]
                hv = running_hypervolume(oriented(done, problem.directions), ref) if done else []
                k, current = 0, 0.0
                for i, v in enumerate(values):
                    if v is not None:
                        current, k = hv[k], k + 1
                    curve[i] = current
                rows.append(curve)
            if rows:
                curves[method] = np.stack(rows)
    finally:
        storage.close()
    return curves


def hypervolume_table(curves: dict[str, np.ndarray], checkpoints: Sequence[int],
                      reference_method: str = "bodi") -> str:
    """Markdown: the mean ± standard error of the hypervolume at each checkpoint, and a
    one-sided paired t-test (same seeds) of ``reference_method`` against each other method
    at the last checkpoint."""
    from scipy import stats

    last = checkpoints[-1]
    head = "| method | seeds | " + " | ".join(f"HV at {c}" for c in checkpoints)
    head += f" | {reference_method} ahead at {last}: p |"
    lines = [head, "|" + "---|" * (len(checkpoints) + 3)]
    ref = curves.get(reference_method)
    for method, curve in curves.items():
        cells = []
        for c in checkpoints:
            values = curve[:, c - 1]
            values = values[~np.isnan(values)]
            if len(values) == 0:
                cells.append("—")
                continue
            se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
            cells.append(f"{values.mean():.4f} ± {se:.4f} ({len(values)})"
                         if len(values) != len(curve) else f"{values.mean():.4f} ± {se:.4f}")
        p = "—"
        if ref is not None and method != reference_method:
            n = min(len(ref), len(curve))
            a, b = ref[:n, last - 1], curve[:n, last - 1]
            keep = ~(np.isnan(a) | np.isnan(b))
            if keep.sum() > 1 and np.any(a[keep] != b[keep]):
                p = f"{stats.ttest_rel(a[keep], b[keep], alternative='greater').pvalue:.3g}"
        lines.append(f"| {method} | {len(curve)} | " + " | ".join(cells) + f" | {p} |")
    return "\n".join(lines)


def plot_hypervolume(curves: dict[str, np.ndarray], path: str | Path, title: str,
                     n_init: int | None = None) -> Path:
    """Mean hypervolume against evaluations (± one standard error) for each method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for method, curve in curves.items():
        mean = np.nanmean(curve, axis=0)
        n = np.sum(~np.isnan(curve), axis=0)
        sd = np.nanstd(curve, axis=0, ddof=1) if len(curve) > 1 else np.zeros_like(mean)
        se = np.where(n > 1, sd / np.sqrt(np.maximum(n, 1)), 0.0)
        x = np.arange(1, len(mean) + 1)
        ax.plot(x, mean, label=f"{method} ({len(curve)} seeds)")
        ax.fill_between(x, mean - se, mean + se, alpha=0.2)
    if n_init:
        ax.axvline(n_init, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("hypervolume (larger is better)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
