"""The yardstick's losers under a 5-point initial design, the size Bounce samples for itself.

The yardstick gives every method the shared uniform design of 20 points, except Bounce, which
cannot model points outside its embedding and samples 5 of its own (then models from the 6th
evaluation on). This script runs methods with the shared design's first 5 points instead, so
that they start as Bounce does (or Bounce with more points of its own, ``bounce[n_init=20]``),
and prints each method's best after 20, 60, 100 and 200 evaluations under both designs (mean
± s.e. (seeds)), with the one-sided paired t-test p of the method being ahead of Bounce on the
seeds both ran. Runs go to ``data/design5/results.db`` (resumable):

    python benchmarks/design_size.py run --methods bodi,sa --problems labs100-shifted --seeds 0-9
    python benchmarks/design_size.py table --methods bodi,sa
    python benchmarks/design_size.py phases --methods bodi,bounce,sa   # gains per window
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from scipy import stats

from bodi.experiments.runner import expand_seeds, run_benchmark
from bodi.optimizers.registry import split_methods

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = "labs100-shifted,labs50-shifted,pest50-shifted"
BUDGET, SMALL_DESIGN = 200, 5
#: the runs with the yardstick's shared 20-point design: its database, and seeds 10-19 of bodi
#: and Bounce on labs100-shifted (``python benchmarks/yardstick.py --out data/seeds10to19
#: --methods bodi,bounce --problems labs100-shifted --seeds 10-19``)
SHARED_DESIGN_RUNS = ("yardstick", "seeds10to19")


def best_after(paths: list[Path], problem: str, method: str, evaluations: int
               ) -> dict[int, float]:
    """Seed -> best value after ``evaluations`` evaluations, from results databases."""
    found: dict[int, float] = {}
    for path in paths:
        if path.exists():
            with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as db:
                found.update(db.execute(
                    "SELECT seed, best FROM evaluations WHERE problem = ? AND method = ? "
                    "AND number = ?", (problem, method, evaluations - 1)).fetchall())
    return found


def cell(values: dict[int, float], bounce: dict[int, float], sign: float) -> str:
    """``mean ± s.e.`` and the paired p of being ahead of Bounce."""
    if not values:
        return "-"
    v = list(values.values())
    se = stats.sem(v) if len(v) > 1 else 0.0
    text = f"{sum(v) / len(v):.4g} ± {se:.2g} ({len(v)})"
    shared = sorted(set(values) & set(bounce))
    if len(shared) > 1 and values != bounce:
        p = stats.ttest_rel([sign * values[s] for s in shared],
                            [sign * bounce[s] for s in shared], alternative="greater").pvalue
        text += f" [{p:.2g}]"
    return text


def table(methods: list[str], problems: list[str], out: Path) -> None:
    shared = [ROOT / "data" / name / "results.db" for name in SHARED_DESIGN_RUNS]
    print("| problem | after | Bounce (own 5) | "
          + " | ".join(f"{m} (20) | {m} (5)" for m in methods) + " |")
    print("|---|---|---|" + "---|---|" * len(methods))
    for problem in problems:
        with sqlite3.connect(f"{shared[0].resolve().as_uri()}?mode=ro", uri=True) as db:
            (direction,) = db.execute("SELECT direction FROM tasks WHERE problem = ? LIMIT 1",
                                      (problem,)).fetchone()
        sign = 1.0 if direction == "maximize" else -1.0
        for evaluations in (20, 60, 100, BUDGET):
            bounce = best_after(shared, problem, "bounce", evaluations)
            cells = [cell(bounce, {}, sign)]
            for method in methods:
                cells += [cell(best_after(shared, problem, method, evaluations), bounce, sign),
                          cell(best_after([out], problem, method, evaluations), bounce, sign)]
            print(f"| {problem} ({'max' if sign > 0 else 'min'}) | {evaluations} | "
                  + " | ".join(cells) + " |")


WINDOWS = ((1, 20), (21, 40), (41, 70), (71, 100), (101, 150), (151, 200))


def phases(methods: list[str], problems: list[str]) -> None:
    """The mean gain of the best value per seed in windows of evaluations (the first window:
    the best after 20), from the yardstick's stored runs (seeds 0-9)."""
    shared = ROOT / "data" / "yardstick" / "results.db"
    print("| problem | method | " + " | ".join(f"{a}-{b}" for a, b in WINDOWS) + " |")
    print("|---|---|" + "---|" * len(WINDOWS))
    for problem in problems:
        for method in methods:
            best = {n: best_after([shared], problem, method, n) for _, n in WINDOWS}
            gains = [sum(best[b].values()) / len(best[b]) - (
                sum(best[a - 1].values()) / len(best[a - 1]) if a > 1 else 0.0)
                for a, b in WINDOWS]
            print(f"| {problem} | {method} | " + " | ".join(f"{g:.4g}" for g in gains) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("run", "table", "phases"))
    parser.add_argument("--methods", default="bodi,sa")
    parser.add_argument("--problems", default=PROBLEMS)
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--out", default=str(ROOT / "data" / "design5"))
    parser.add_argument("--n-init", type=int, default=SMALL_DESIGN,
                        help="the shared design's size (Bounce, which ignores it, takes "
                             "bounce[n_init=N] for its own)")
    args = parser.parse_args()
    methods, problems = split_methods(args.methods), args.problems.split(",")
    if args.action == "run":
        run_benchmark(problems, methods, expand_seeds(args.seeds), budget=BUDGET,
                      n_init=args.n_init, out=args.out, n_workers=1, progress=False).close()
    elif args.action == "phases":
        phases(methods, problems)
    else:
        table(methods, problems, Path(args.out) / "results.db")


if __name__ == "__main__":
    main()
