"""Convergence plots and Markdown tables from one or more benchmark output directories.

Every function takes ``out``: a results directory or a list of them (runs made separately, e.g.
on different machines, are combined; a (problem, method, seed) found twice is an error), and
optional ``problems`` / ``methods`` lists that select what to show, and ``evaluations``: only
the first that many evaluations of every run count (methods compared at an equal budget).

A ``methods`` item ``"A|B"`` shows the runs stored as ``B`` under ``A`` too: one method that
carries two labels, such as bodi 0.1's runs, stored as ``bodi[kernel=hed]`` on all-discrete
problems and as ``bodi[kernel=hed,trust_region.box_failure_tolerance=null]`` where bodi 0.3's
trust region differs (:mod:`bodi.experiments.results`). A stored run also shows under each
asked label that is its configuration on the run's problem, whatever its stored label: asked
for ``bodi``, a bodi 0.7 run stored as ``bodi[design_in_model=reach,first_order=false]``
shows as ``bodi`` on an all-categorical problem, where that is today's default.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bodi.directions import loss_sign
from bodi.experiments.results import registry_space
from bodi.experiments.traces import open_results

Outs = str | Path | Sequence[str | Path]


def _dirs(out: Outs) -> list[Path]:
    return [Path(out)] if isinstance(out, str | Path) else [Path(o) for o in out]


def shown_names(methods: Sequence[str] | None) -> list[str] | None:
    """The names that ``methods`` show, in order (``"A|B"`` shows as ``A``)."""
    return None if methods is None else [m.split("|")[0].strip() for m in methods]


def _load(
    out: Outs,
    problems: Sequence[str] | None,
    methods: Sequence[str] | None,
    evaluations: int | None = None,
) -> tuple[dict[tuple[str, str, int], list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """The selected runs ``(problem, method, seed) -> rows`` (each cut to its first
    ``evaluations`` rows; ``method`` as :func:`_names` shows it) and ``problem -> task
    info``."""
    if evaluations is not None and (isinstance(evaluations, bool) or evaluations < 1):
        raise ValueError(f"evaluations must be a positive integer, got {evaluations!r}")
    shown = {label.strip(): name for item, name in zip(methods or [], shown_names(methods) or [],
                                                       strict=True)
             for label in item.split("|")}
    names_of = _ShownNames(shown)
    runs: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    tasks: dict[str, dict[str, Any]] = {}
    for directory in _dirs(out):
        store = open_results(directory)
        try:
            stored_tasks = {(t["problem"], t["method"], t["seed"]): t for t in store.tasks()}
            curves = store.curves()
        finally:
            store.close()
        for task in stored_tasks.values():
            tasks.setdefault(task["problem"], task)
        for key, rows in curves.items():
            problem, method, seed = key
            if problems and problem not in problems:
                continue
            for name in names_of(stored_tasks[key]) if methods else [method]:
                if (problem, name, seed) in runs:
                    raise ValueError(f"{(problem, name, seed)} is in more than one of the "
                                     "results directories, or under two labels of one method")
                runs[problem, name, seed] = rows[:evaluations]
    if not runs:
        raise ValueError("no evaluations of the selected problems and methods")
    return runs, tasks


class _ShownNames:
    """The names a stored run shows under: its label's (``A`` for a label of ``"A|B"``) and
    those of the asked labels that are its configuration on the run's problem
    (:func:`bodi.optimizers.registry.configuration`; e.g. a bodi 0.7 run stored as
    ``bodi[design_in_model=reach,first_order=false]`` shows as ``bodi`` on an all-categorical
    problem, where today's default is that configuration); a problem the registry does not
    know matches labels only."""

    def __init__(self, shown: dict[str, str]):
        self.shown = shown
        self.configurations: dict[tuple[str, str, int, str], Any] = {}  # one build each

    def configuration(self, spec: str, task: dict[str, Any]) -> Any:
        from bodi.optimizers.registry import configuration

        key = (task["problem"], spec, task["n_init"], task["design"])
        if key not in self.configurations:
            space = registry_space(task["problem"])
            self.configurations[key] = None if space is None else configuration(
                spec, space, n_init=task["n_init"], design=task["design"])
        return self.configurations[key]

    def __call__(self, task: dict[str, Any]) -> list[str]:
        names = [self.shown[task["method"]]] if task["method"] in self.shown else []
        if (stored := self.configuration(task["method"], task)) is not None:
            names += [name for label, name in self.shown.items()
                      if self.configuration(label, task) == stored]
        return list(dict.fromkeys(names))


def best_curves(
    out: Outs,
    problems: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    evaluations: int | None = None,
) -> dict[str, dict[str, np.ndarray]]:
    """``problem -> method -> seeds x evaluations`` array of the best value so far.

    Runs of different lengths are cut to the shortest; a prefix of failures is NaN.
    """
    return _best_curves(_load(out, problems, methods, evaluations)[0])


def _best_curves(
    runs: dict[tuple[str, str, int], list[dict[str, Any]]],
) -> dict[str, dict[str, np.ndarray]]:
    curves: dict[str, dict[str, list[list[float]]]] = defaultdict(lambda: defaultdict(list))
    for (problem, method, _seed), rows in runs.items():
        curves[problem][method].append([math.nan if r["best"] is None else r["best"] for r in rows])
    out_curves: dict[str, dict[str, np.ndarray]] = {}
    for problem, methods in curves.items():
        out_curves[problem] = {}
        for method, runs in methods.items():
            length = min(len(r) for r in runs)
            out_curves[problem][method] = np.array([r[:length] for r in runs], dtype=float)
    return out_curves


def _summary(per_seed: dict[int, float]) -> tuple[float, float]:
    """Mean and standard error over seeds of one method's final values."""
    mean, se = _mean_se(np.array(list(per_seed.values()), dtype=float)[:, None])
    return float(mean[0]), float(se[0])


def _mean_se(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = np.nanmean(values, axis=0)
    n = np.sum(~np.isnan(values), axis=0)
    sd = np.nanstd(values, axis=0, ddof=1) if values.shape[0] > 1 else np.zeros_like(mean)
    return mean, np.where(n > 1, sd / np.sqrt(np.maximum(n, 1)), 0.0)


def plot_results(
    out: Outs,
    path: str | Path | None = None,
    problems: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    evaluations: int | None = None,
    regret: bool = False,
) -> Path:
    """The paper's kind of figure: best value so far (mean +- 1 s.e. over seeds) against
    evaluations, one panel per problem, one line per method, the known optimum dashed
    (default path: ``figure.png`` in the first directory). ``regret=True``: the distance to the
    known optimum instead, on a log scale (problems without a known optimum keep values)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs, tasks = _load(out, problems, methods, evaluations)
    methods = shown_names(methods)
    curves = _best_curves(runs)
    problems = [p for p in problems if p in curves] if problems else sorted(curves)
    cols = min(3, len(problems))
    rows = math.ceil(len(problems) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.8 * rows), squeeze=False)
    for ax, problem in zip(axes.flat, problems, strict=False):
        order = [m for m in methods if m in curves[problem]] if methods else sorted(
            curves[problem])
        optimum = tasks.get(problem, {}).get("optimal_value")
        show_regret = regret and optimum is not None
        for method in order:
            values = curves[problem][method]
            if show_regret:
                values = np.abs(optimum - values)
            mean, se = _mean_se(values)
            x = np.arange(1, len(mean) + 1)
            (line,) = ax.plot(x, mean, label=f"{method} ({_count(values.shape[0], 'seed')})")
            ax.fill_between(x, mean - se, mean + se, color=line.get_color(), alpha=0.2)
        direction = tasks.get(problem, {}).get("direction", "minimize")
        if show_regret:
            ax.set_yscale("symlog", linthresh=1e-3)
            ax.set_ylabel("regret of the best so far")
            ax.set_title(f"{problem} (optimum {optimum:.4g})")
        else:
            if optimum is not None:
                ax.axhline(optimum, color="black", linestyle="--", linewidth=1, label="optimum")
            ax.set_ylabel("best value so far")
            ax.set_title(f"{problem} ({direction})")
        ax.set_xlabel("evaluations")
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(problems) :]:
        ax.axis("off")
    fig.tight_layout()
    path = Path(path) if path is not None else _dirs(out)[0] / "figure.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _partial(runs: dict[tuple[str, str, int], list[dict[str, Any]]]) -> set[tuple[str, str]]:
    """``(problem, method)`` pairs with a run shorter than the problem's longest run.

    Their final values come from fewer evaluations than the others', so they are not ranked
    against them (compare them at an equal budget with ``evaluations``).
    """
    longest: dict[str, int] = defaultdict(int)
    for (problem, _method, _seed), rows in runs.items():
        longest[problem] = max(longest[problem], len(rows))
    return {(p, m) for (p, m, _s), rows in runs.items() if len(rows) < longest[p]}


def _ranked(
    finals: dict[str, dict[str, dict[int, float]]], partial: set[tuple[str, str]],
) -> dict[str, dict[str, dict[int, float]]]:
    """``finals`` without the ``partial`` ``(problem, method)`` pairs (and without the problems
    left with no method)."""
    kept = {p: {m: v for m, v in by_method.items() if (p, m) not in partial}
            for p, by_method in finals.items()}
    return {p: by_method for p, by_method in kept.items() if by_method}


def report(
    out: Outs,
    problems: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    evaluations: int | None = None,
) -> str:
    """Markdown table: per problem and method, final best (mean +- s.e.), mean rank over seeds,
    median seconds per suggestion (model fit + acquisition; initial design excluded).

    A method whose runs on a problem are shorter than the problem's longest run (an unfinished
    benchmark) is shown but marked ``partial`` instead of ranked, and left out of the ranks and
    tests across problems: its final values come from fewer evaluations.
    """
    runs, tasks = _load(out, problems, methods, evaluations)
    methods = shown_names(methods)
    directions = {p: t["direction"] for p, t in tasks.items()}
    finals = _finals(runs)
    partial = _partial(runs)
    ranked = _ranked(finals, partial)
    suggest: dict[tuple[str, str], list[float]] = defaultdict(list)
    lengths: dict[tuple[str, str], list[int]] = defaultdict(list)
    for (problem, method, _seed), rows in runs.items():
        suggest[problem, method] += [r["suggest_seconds"] for r in rows if r["suggest_seconds"]]
        lengths[problem, method].append(len(rows))
    lines = [
        "| problem | method | seeds | evaluations | final best (mean ± s.e.) | mean rank "
        "| median s / suggestion |",
        "|---|---|---|---|---|---|---|",
    ]
    for problem in [p for p in problems if p in finals] if problems else sorted(finals):
        sign = loss_sign(directions.get(problem, "minimize"))
        ranks = _mean_ranks(ranked[problem], sign) if problem in ranked else {}
        order = [m for m in methods if m in finals[problem]] if methods else sorted(
            finals[problem])
        for method in order:
            mean, se = _summary(finals[problem][method])
            seeds = len(finals[problem][method])
            seconds = suggest[problem, method]
            median = f"{statistics.median(seconds):.2f}" if seconds else "-"
            lines.append(
                f"| {problem} ({'min' if sign > 0 else 'max'}) | {method} | {seeds} | "
                f"{min(lengths[problem, method])} | "
                f"{mean:.4g} ± {se:.2g} | "
                f"{f'{ranks[method]:.2f}' if method in ranks else 'partial'} | {median} |"
            )
    if partial:
        lines += ["", "partial (not ranked; compare at an equal budget with `--evaluations`): "
                  + ", ".join(f"{m} on {p}" for p, m in sorted(partial))]
    if len(ranked) > 1 or any(len(v) > 1 for v in ranked.values()):
        lines += ["", _across_problems(ranked, directions, problems, methods)]
    return "\n".join(lines)


def _across_problems(
    finals: dict[str, dict[str, dict[int, float]]],
    directions: dict[str, str],
    problems: Sequence[str] | None,
    methods: Sequence[str] | None,
) -> str:
    """Mean rank over problems, and per problem whether the winner's lead beats the noise.

    A problem's ranks are the mean ranks over its seeds (the table above); the mean over the
    problems a method ran on is its overall rank. The lead of the winner (best mean) over the
    runner-up is tested on the seeds both ran, paired (same seed, same initial design): a
    one-sided paired t-test, the lead counting as larger than the noise when ``p < 0.05``.
    Equal best means (for instance, two methods at the optimum on every seed) are a tie: no
    one wins that problem. Nor does it have a winner when the two ran different seeds and the
    best mean is level with or behind the runner-up on the seeds they share.
    """
    from scipy import stats

    order = [p for p in problems if p in finals] if problems else sorted(finals)
    ranks: dict[str, list[float]] = defaultdict(list)
    wins: dict[str, int] = defaultdict(int)
    rows = []
    for problem in order:
        sign = loss_sign(directions.get(problem, "minimize"))
        for method, rank in _mean_ranks(finals[problem], sign).items():
            ranks[method].append(rank)
        means = {m: _summary(v)[0] for m, v in finals[problem].items()}
        ranked = sorted((m for m in means if not math.isnan(means[m])),
                        key=lambda m: sign * means[m])
        if len(ranked) < 2:
            continue
        winner, second = ranked[0], ranked[1]
        seeds = sorted(set(finals[problem][winner]) & set(finals[problem][second]))
        if means[winner] == means[second]:  # e.g. both at the optimum on every seed
            rows.append(f"| {problem} | {winner} = {second} (tie) | - | 0 | {len(seeds)} "
                        "| - | no |")
            continue
        lead = np.array([sign * (finals[problem][second][s] - finals[problem][winner][s])
                         for s in seeds])
        if len(lead) and lead.mean() <= 0:  # ahead on its own seeds, not on the shared ones
            p_text, verdict = "-", "no: level or behind on the shared seeds"
        else:
            wins[winner] += 1
            if len(lead) >= 2 and np.ptp(lead) > 0:
                p = float(stats.ttest_1samp(lead, 0.0, alternative="greater").pvalue)
            else:
                p = 0.0 if len(lead) >= 2 and lead.mean() > 0 else math.nan
            p_text, verdict = f"{p:.3g}", "yes" if p < 0.05 else "no"
        rows.append(f"| {problem} | {winner} | {second} | {lead.mean():.4g} | {len(seeds)} "
                    f"| {p_text} | {verdict} |")
    method_order = [m for m in methods if m in ranks] if methods else sorted(
        ranks, key=lambda m: statistics.mean(ranks[m]))
    out = ["| method | mean rank over problems | problems | problems won |", "|---|---|---|---|"]
    out += [f"| {m} | {statistics.mean(ranks[m]):.2f} | {len(ranks[m])} | {wins[m]} |"
            for m in method_order]
    beyond = sum(r.endswith("| yes |") for r in rows)
    out += ["", f"The winner's lead is larger than the noise (one-sided paired t-test over "
            f"seeds, p < 0.05) on {beyond} of {len(rows)} problems:", "",
            "| problem | winner | runner-up | lead (mean) | paired seeds | p | beyond noise |",
            "|---|---|---|---|---|---|---|", *rows]
    return "\n".join(out)


def _finals(
    runs: dict[tuple[str, str, int], list[dict[str, Any]]],
) -> dict[str, dict[str, dict[int, float]]]:
    """``problem -> method -> seed ->`` best value of the run (NaN if nothing succeeded), to
    12 significant digits: two optima whose sums ran in another order (e.g. two assignments
    that satisfy the same clauses of a MaxSAT instance) differ in the last bits, and count as
    equal in ranks and ties."""
    finals: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for (problem, method, seed), rows in runs.items():
        best = rows[-1]["best"]
        finals[problem][method][seed] = math.nan if best is None else float(f"{best:.12g}")
    return finals


def shift_report(
    out: Outs,
    problems: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    evaluations: int | None = None,
) -> str:
    """Markdown table: each method's final best on every problem ``P`` against its shifted twin
    ``P-shifted`` (mean +- s.e. over seeds). ``worse by`` is how much worse the shifted result
    is (negative: better); ``within 1 s.e.`` says whether that difference is at most the
    original's standard error. A method without a bias toward special points scores the same
    on both (``specs/benchmarks.md``)."""
    selected = [*problems, *(f"{p}-shifted" for p in problems)] if problems else None
    runs, tasks = _load(out, selected, methods, evaluations)
    methods = shown_names(methods)
    finals = _finals(runs)
    lines = [
        "| problem | method | original (mean ± s.e.) | shifted (mean ± s.e.) | worse by "
        "| within 1 s.e. |",
        "|---|---|---|---|---|---|",
    ]
    originals = [p for p in problems or sorted(finals) if f"{p}-shifted" in finals]
    if not originals:
        raise ValueError("no problem has both itself and its -shifted twin among the results")
    for problem in originals:
        sign = loss_sign(tasks[problem]["direction"])
        shifted = finals[f"{problem}-shifted"]
        order = [m for m in methods if m in finals[problem]] if methods else sorted(
            finals[problem])
        for method in [m for m in order if m in shifted]:
            (m0, s0), (m1, s1) = _summary(finals[problem][method]), _summary(shifted[method])
            worse = sign * (m1 - m0)
            lines.append(
                f"| {problem} ({'min' if sign > 0 else 'max'}) | {method} | {m0:.4g} ± {s0:.2g} "
                f"| {m1:.4g} ± {s1:.2g} | {worse:.3g} | {'yes' if worse <= s0 else 'no'} |"
            )
    return "\n".join(lines)


def against_report(
    out: Outs,
    baseline: Outs,
    problems: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    evaluations: int | None = None,
) -> str:
    """Markdown table: each method's final best on each problem against the same method's in
    the ``baseline`` results (e.g. the runs of an earlier version), paired by seed: mean +-
    s.e. of both, on how many seeds it is better and worse, and the one-sided Wilcoxon
    signed-rank p-value of "worse than the baseline" (1 where every pair is equal). Runs of
    unequal lengths (an unfinished benchmark) are left out; ``evaluations`` cuts them all."""
    from scipy import stats

    runs, tasks = _load(out, problems, methods, evaluations)
    baseline_runs = _load(baseline, problems, methods, evaluations)[0]
    finals, before = _finals(runs), _finals(baseline_runs)
    lengths: dict[tuple[str, str], set[int]] = defaultdict(set)
    for (problem, method, _), rows in [*runs.items(), *baseline_runs.items()]:
        lengths[problem, method].add(len(rows))
    methods = shown_names(methods)
    lines = [
        "| problem | method | seeds | baseline (mean ± s.e.) | this (mean ± s.e.) | better on "
        "| worse on | p (worse) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for problem in [p for p in problems if p in finals] if problems else sorted(finals):
        sign = loss_sign(tasks[problem]["direction"])
        order = [m for m in methods if m in finals[problem]] if methods else sorted(
            finals[problem])
        for method in [m for m in order if m in before.get(problem, {})]:
            seeds = sorted(set(finals[problem][method]) & set(before[problem][method]))
            if not seeds or len(lengths[problem, method]) > 1:  # none paired, or unfinished
                continue
            new = np.array([finals[problem][method][s] for s in seeds])
            old = np.array([before[problem][method][s] for s in seeds])
            worse = sign * (new - old)  # > 0: this run is worse on that seed
            p = (float(stats.wilcoxon(worse, alternative="greater").pvalue)
                 if np.any(worse != 0) else 1.0)
            (m0, s0), (m1, s1) = (_summary(dict(enumerate(v))) for v in (old, new))
            lines.append(
                f"| {problem} ({'min' if sign > 0 else 'max'}) | {method} | {len(seeds)} | "
                f"{m0:.4g} ± {s0:.2g} | {m1:.4g} ± {s1:.2g} | {int((worse < 0).sum())} | "
                f"{int((worse > 0).sum())} | {p:.3g} |")
    return "\n".join(lines)


def _mean_ranks(finals: dict[str, dict[int, float]], sign: float) -> dict[str, float]:
    """Rank methods per seed (1 = best, ties share the mean rank), averaged over seeds."""
    seeds = set.intersection(*(set(v) for v in finals.values()))
    totals = dict.fromkeys(finals, 0.0)
    for seed in seeds:
        scores = {m: sign * finals[m][seed] for m in finals}
        for method, score in scores.items():
            better = sum(1 for s in scores.values() if s < score)
            ties = sum(1 for s in scores.values() if s == score)
            totals[method] += better + (ties + 1) / 2
    return {m: totals[m] / len(seeds) if seeds else math.nan for m in finals}


def plot_ranks(
    out: Outs,
    path: str | Path,
    problems: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    evaluations: int | None = None,
) -> Path:
    """MCBO's kind of rank figure: per method, its mean rank on each problem (dots) and the
    mean over problems (bar), best first; ranks as in :func:`report` (partial runs left out)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs, tasks = _load(out, problems, methods, evaluations)
    methods = shown_names(methods)
    finals = _ranked(_finals(runs), _partial(runs))
    per_method: dict[str, dict[str, float]] = defaultdict(dict)
    for problem, by_method in finals.items():
        sign = loss_sign(tasks[problem]["direction"])
        for method, rank in _mean_ranks(by_method, sign).items():
            per_method[method][problem] = rank
    order = sorted(per_method, key=lambda m: statistics.mean(per_method[m].values()))
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(order) + 1.5))
    y = np.arange(len(order))
    ax.barh(y, [statistics.mean(per_method[m].values()) for m in order], color="#9ecae1",
            label="mean over problems")
    markers = "osD^v<>phX*"
    for i, problem in enumerate(sorted(finals)):
        xs = [per_method[m].get(problem, math.nan) for m in order]
        ax.scatter(xs, y, s=18, marker=markers[i % len(markers)], label=problem, zorder=3)
    ax.set_yticks(y, order)
    ax.invert_yaxis()
    ax.set_xlabel("mean rank over seeds (1 = best)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _count(n: int, noun: str) -> str:
    """``1 seed``, ``3 seeds``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
