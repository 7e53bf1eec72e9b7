"""Mean per-seed rank of several methods over the yardstick's problems.

Usage:
    python benchmarks/seed_ranks.py --methods "bodi[kernel=hed*hamming],bodi,bounce,casmopolitan,sa"

For each problem and each seed that every method has finished (``--evaluations``), the methods
are ranked by their best value after that many evaluations (ties share the mean rank); a
method's rank on a problem is its mean over those seeds, and the last line is the mean over the
problems where every method has at least one such seed. Runs are read from the yardstick's and
the ablations' databases (a method's seed from the first that has it whole).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
from pathlib import Path

from scipy.stats import rankdata

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ("labs50-shifted,maxsat60-shifted,pest-shifted,ackley53-shifted,svm53-shifted,"
            "labs100-shifted,maxsat-frb126-shifted,ackley103-shifted,pest50-shifted")


def final_value(cons: list[sqlite3.Connection], problem: str, method: str, seed: int,
                evaluations: int) -> float | None:
    """The best value after ``evaluations`` evaluations, larger is better (``None``: not run
    that far)."""
    for con in cons:
        row = con.execute(
            "SELECT t.direction, COUNT(e.number), MAX(e.best), MIN(e.best) FROM tasks t "
            "JOIN evaluations e USING (problem, method, seed) WHERE problem = ? AND method = ? "
            "AND seed = ? AND e.number < ?", (problem, method, seed, evaluations)).fetchone()
        if row and row[1] == evaluations:
            return row[2] if row[0] == "maximize" else -row[3]
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", required=True)
    parser.add_argument("--problems", default=PROBLEMS)
    parser.add_argument("--seeds", default="0-4", help="a range, e.g. 0-9")
    parser.add_argument("--evaluations", type=int, default=200)
    parser.add_argument("--db", default="data/yardstick,data/ablation")
    args = parser.parse_args()
    methods = args.methods.split(",")
    first, _, last = args.seeds.partition("-")
    seeds = range(int(first), int(last or first) + 1)
    cons = [sqlite3.connect(f"file:{ROOT / d / 'results.db'}?mode=ro", uri=True)
            for d in args.db.split(",")]
    print("| problem | seeds | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    ranks_by_problem = []
    for problem in args.problems.split(","):
        ranks: list[list[float]] = []
        for seed in seeds:
            values = [final_value(cons, problem, m, seed, args.evaluations) for m in methods]
            if None not in values:  # round: equal optima stored with different last bits
                ranks.append(list(rankdata([-round(v, 6) for v in values])))
        if not ranks:
            continue
        mean = [statistics.mean(r[i] for r in ranks) for i in range(len(methods))]
        ranks_by_problem.append(mean)
        print(f"| {problem} | {len(ranks)} | " + " | ".join(f"{r:.2f}" for r in mean) + " |")
    if ranks_by_problem:
        overall = [statistics.mean(r[i] for r in ranks_by_problem) for i in range(len(methods))]
        print(f"| mean over {len(ranks_by_problem)} problems | | "
              + " | ".join(f"{r:.2f}" for r in overall) + " |")


if __name__ == "__main__":
    main()
