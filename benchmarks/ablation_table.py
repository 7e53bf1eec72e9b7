"""Markdown table of candidate methods against the yardstick's methods, problem by problem.

Usage:
    python benchmarks/ablation_table.py --names G10 --against "bodi[kernel=hed],bounce,sa" \\
      --candidates "bodi[kernel=hed,trust_region.schedule=geometric,trust_region.init_radius=10]"

The candidates' runs are in ``data/ablation/results.db`` (``python benchmarks/yardstick.py
--out data/ablation --methods SPEC ...``), the other methods' in ``data/yardstick``; both are
read. For each problem where the first candidate has a finished run: every method's final best
(mean ± s.e. over its own seeds, and how many), and the one-sided paired t-test p of the first
candidate being better than each other method on the seeds both ran (same seed, same initial
design). Candidates are separated by ``;`` (their options hold commas).
"""

from __future__ import annotations

import argparse
import math
import sqlite3
from pathlib import Path

from scipy import stats

from bodi.optimizers.registry import split_methods

ROOT = Path(__file__).resolve().parents[1]


def finals(db: sqlite3.Connection, problem: str, method: str, evaluations: int) -> dict[int, float]:
    """Seed -> best value after ``evaluations`` evaluations (finished runs only)."""
    return dict(db.execute(
        "SELECT seed, best FROM evaluations WHERE problem = ? AND method = ? AND number = ?",
        (problem, method, evaluations - 1)).fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", required=True)
    parser.add_argument("--against", default="bodi,bounce,sa")
    parser.add_argument("--names", default=None, help="short names of the candidates, e.g. G10,G5")
    parser.add_argument("--evaluations", type=int, default=200)
    parser.add_argument("--db", action="append", default=None,
                        help="results databases, combined (default: data/yardstick and "
                             "data/ablation, where the candidates' runs are)")
    args = parser.parse_args()
    candidates = [c for c in args.candidates.split(";") if c]
    methods = candidates + split_methods(args.against)
    paths = args.db or [str(ROOT / "data" / name / "results.db")
                        for name in ("yardstick", "ablation")]
    db = sqlite3.connect(":memory:")
    for i, path in enumerate(p for p in paths if Path(p).exists()):
        db.execute(f"ATTACH DATABASE '{Path(path).resolve().as_uri()}?mode=ro' AS db{i}")
        tables = ("tasks", "evaluations")
        for table in tables:
            if i == 0:
                db.execute(f"CREATE TEMP TABLE {table} AS SELECT * FROM db0.{table} WHERE 0")
            db.execute(f"INSERT INTO temp.{table} SELECT * FROM db{i}.{table}")
    problems = [p for (p,) in db.execute("SELECT DISTINCT problem FROM tasks ORDER BY problem")]
    short = args.names.split(",") if args.names else [f"C{i + 1}" for i in range(len(candidates))]
    names = {m: short[i] if i < len(candidates) else m for i, m in enumerate(methods)}
    print("| problem | " + " | ".join(names[m] for m in methods) + " |")
    print("|---|" + "---|" * len(methods))
    for problem in problems:
        lead = finals(db, problem, candidates[0], args.evaluations)
        if not lead:
            continue
        (direction,) = db.execute("SELECT direction FROM tasks WHERE problem = ? LIMIT 1",
                                  (problem,)).fetchone()
        sign = 1.0 if direction == "maximize" else -1.0
        cells = []
        for method in methods:
            values = finals(db, problem, method, args.evaluations)
            if not values:
                cells.append("-")
                continue
            v = list(values.values())
            se = (sum((x - sum(v) / len(v)) ** 2 for x in v) / (len(v) - 1)) ** 0.5 / len(
                v) ** 0.5 if len(v) > 1 else math.nan
            cell = f"{sum(v) / len(v):.4g} ± {se:.2g} ({len(v)})"
            shared = sorted(set(values) & set(lead))
            if method != candidates[0] and len(shared) > 1:
                a = [sign * lead[s] for s in shared]
                b = [sign * values[s] for s in shared]
                if a != b:
                    p = stats.ttest_rel(a, b, alternative="greater").pvalue
                    cell += f" [p={p:.2g}]"
                else:
                    cell += " [equal]"
            cells.append(cell)
        print(f"| {problem} ({'max' if sign > 0 else 'min'}) | " + " | ".join(cells) + " |")
    print()
    for method in candidates:
        print(f"* {names[method]}: `{method}`")


if __name__ == "__main__":
    main()
