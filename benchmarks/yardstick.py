"""The yardstick: every method on the nine shifted problems, one protocol, resumable.

Usage:
    python benchmarks/yardstick.py                      # everything, in the order below
    python benchmarks/yardstick.py --methods bounce     # one part
    python benchmarks/yardstick.py --seeds 5-9 --methods bodi,bounce,sa

Protocol: 200 evaluations, seeds 0-4 (10 for the top three of each problem), the shared
shift-invariant initial design of 20 points (``design="uniform"``; Bounce samples its own
5 points in its embedding, see ``bodi/baselines/bounce.py``), the ``-shifted`` twins so that no
method profits from an optimum at a special point. The parts run one after another, cheapest
methods first, one problem after another (its seeds together), each through ``bodi bench``'s
runner; every finished evaluation is in
``results/yardstick/results.db`` (``--out``) at once, so an interrupted run resumes with the
same command and a later run adds seeds; the compact traces are written beside it. Tables and
figures (docs/results.md has the commands over the committed traces):

    bodi report results/yardstick
    bodi plot results/yardstick --out yardstick.png
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bodi.experiments.runner import expand_seeds, run_benchmark
from bodi.optimizers.registry import split_methods

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = [
    "labs50-shifted", "maxsat60-shifted", "pest-shifted", "ackley53-shifted", "svm53-shifted",
    "labs100-shifted", "maxsat-frb126-shifted", "ackley103-shifted", "pest50-shifted",
]
#: in the order they run: the cheap ones first, so a partial table covers many methods
#: (``bodi[kernel=hed]`` is bodi 0.1's default, kept as a baseline of bodi 0.2's)
METHODS = ["random", "sa", "ga", "ngopt", "bounce", "tpe", "bodi", "casmopolitan", "bodi-paper",
           "bodi[kernel=hed]"]
BUDGET, N_INIT = 200, 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "results" / "yardstick"))
    args = parser.parse_args()
    problems = [p for p in args.problems.split(",") if p]
    # one worker: one problem at a time, so an interrupted run leaves whole rows; several
    # workers: all problems of a method at once, so that no worker waits for a problem's last
    # seeds
    groups = [[p] for p in problems] if args.workers <= 1 else [problems]
    for method in split_methods(args.methods):
        for group in groups:
            start = time.perf_counter()
            run_benchmark(group, [method], expand_seeds(args.seeds), budget=BUDGET,
                          n_init=N_INIT, out=args.out, n_workers=args.workers, progress=False,
                          design="uniform").close()
            print(f"{method} on {', '.join(group)}: done in {time.perf_counter() - start:.0f} s",
                  flush=True)


if __name__ == "__main__":
    main()
