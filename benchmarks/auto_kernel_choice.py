"""Which GP ``BODi(kernel="auto")`` would pick at points of stored runs.

Usage:
    python benchmarks/auto_kernel_choice.py --problem labs100-shifted \\
        --method "bodi[kernel=auto]" --afters 40,80,120,160,199 --seeds 0-4

For each seed of the stored run (``data/yardstick`` and ``data/ablation``) and each ``N`` of
``--afters``: the run's first ``N`` evaluations, both of :data:`bodi.optimizers.bo.AUTO_KERNELS`
fitted as the optimizer fits them, and their leave-one-out log predictive densities
(``BODi.auto_kernel_fits``); prints the pick and both densities per
point, then how often each kernel was picked.
"""

from __future__ import annotations

import argparse
import warnings

import torch
from step_diagnosis import _runs

from bodi.experiments.runner import expand_seeds
from bodi.optimizers import make_optimizer
from bodi.optimizers.bo import AUTO_KERNELS
from bodi.problems import get_problem
from bodi.trials import History

warnings.filterwarnings("ignore")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--method", default="bodi[kernel=auto]", help="the stored runs")
    parser.add_argument("--afters", default="60,120,180")
    parser.add_argument("--seeds", default="0-4")
    args = parser.parse_args()
    torch.set_num_threads(1)
    problem = get_problem(args.problem)
    runs = _runs(args.problem, args.method)
    counts = dict.fromkeys(AUTO_KERNELS, 0)
    print(f"{args.problem}, runs of {args.method}: N: pick (density of "
          f"{' / '.join(AUTO_KERNELS)})")
    for seed in expand_seeds(args.seeds):
        cells = []
        for after in (int(a) for a in args.afters.split(",")):
            run = runs.get(seed, [])[:after]
            if len(run) < after:
                continue
            history = History.from_observations(problem.space, [problem.direction],
                                                completed=run)
            optimizer = make_optimizer("bodi[kernel=auto]", problem.space, seed=seed,
                                       direction=problem.direction)
            X, Y = history.X_completed, history.Y_completed
            Y = Y if problem.direction == "maximize" else -Y
            fits = optimizer.auto_kernel_fits(X, Y)
            pick = max(fits, key=lambda fit: fit[2])[0]
            densities = [density for _, _, density in fits]
            counts[pick] += 1
            cells.append(f"{after}: {pick} ({' / '.join(f'{d:.3f}' for d in densities)})")
        print(f"seed {seed}: " + "; ".join(cells), flush=True)
    print("picked:", ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
