"""Seconds of one BODi ``ask()`` after replaying a stored run, for several kernels.

Usage:
    python benchmarks/replay_speed.py --problem maxsat-frb1002-shifted \\
        --method "bodi[kernel=hed*hamming]" --after 91 --kernels "hed,hed*hamming"

The first ``--after`` trials of the stored run (``--db``, seed ``--seed``) are told to a fresh
``BODi(kernel=K)`` per kernel, then one ask is timed; the kernels alternate ``--repeats``
times, so a changing load hits them alike. A suggestion in the middle of a real run, where
``benchmarks/ask_speed.py`` times a planted problem after a random design.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import time
import warnings
from pathlib import Path

import torch

import bodi
from bodi.problems.registry import get_problem

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--method", required=True, help="the stored run's method")
    parser.add_argument("--db", default=str(ROOT / "data" / "ablation" / "results.db"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--after", type=int, required=True, help="trials told before the ask")
    parser.add_argument("--kernels", default="hed,hed*hamming")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(args.threads)
    problem = get_problem(args.problem)
    with sqlite3.connect(f"file:{args.db}?mode=ro", uri=True) as con:
        direction, = con.execute("SELECT direction FROM tasks WHERE problem = ? AND method = ? "
                                 "AND seed = ?", (args.problem, args.method, args.seed)).fetchone()
        rows = con.execute("SELECT params, value FROM evaluations WHERE problem = ? AND "
                           "method = ? AND seed = ? AND number < ? AND state = 'complete' "
                           "ORDER BY number",
                           (args.problem, args.method, args.seed, args.after)).fetchall()
    seconds: dict[str, list[float]] = {k: [] for k in args.kernels.split(",")}
    for _ in range(args.repeats):
        for kernel, times in seconds.items():
            opt = bodi.BODi(problem.space, seed=args.seed, n_init=20, kernel=kernel,
                            direction=direction)
            for params, value in rows:
                opt.tell(json.loads(params), value)
            start = time.perf_counter()
            opt.ask()
            times.append(time.perf_counter() - start)
    print("| kernel | trials told | median s per ask | all |\n|---|---|---|---|")
    for kernel, times in seconds.items():
        print(f"| {kernel} | {len(rows)} | {statistics.median(times):.2f} | "
              f"{', '.join(f'{t:.2f}' for t in times)} |")


if __name__ == "__main__":
    main()
