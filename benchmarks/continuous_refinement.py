"""How a method's runs refine the continuous parameters once the discrete ones are right.

For a problem with a known optimum (``optimal_params``, e.g. the Ackley family) and each
method's stored runs (200 evaluations or more), prints per method: from which evaluation on
the binary/categorical values of a suggestion first equal the optimum's, the share of the later
suggestions that change them again, the improvements of the best value after that point, the
largest distance of the best point's continuous values from the optimum's (median over seeds),
and the final best value (mean over seeds).

Usage:
    python benchmarks/continuous_refinement.py --problem ackley53-shifted \
        --methods "bodi[design_noise=false],bounce" data/rerun data/yardstick
"""

from __future__ import annotations

import argparse

import numpy as np

from bodi.directions import sign
from bodi.experiments.results import Evaluation, ResultsStore
from bodi.optimizers.registry import split_methods
from bodi.problems import get_problem


def runs(dirs: list[str], problem: str, method: str) -> list[list[Evaluation]]:
    """The method's runs of ``problem`` in the results directories, each its evaluations in
    order."""
    found = []
    for directory in dirs:
        store = ResultsStore(directory, read_only=True)
        found += [store.history(problem, method, task["seed"]) for task in store.tasks()
                  if (task["problem"], task["method"]) == (problem, method)]
        store.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", help="results directories")
    parser.add_argument("--problem", required=True)
    parser.add_argument("--methods", required=True)
    args = parser.parse_args()
    problem = get_problem(args.problem)
    optimum = problem.optimal_params
    if optimum is None:
        raise SystemExit(f"{args.problem} has no known optimum")
    space = problem.space
    discrete = [space.parameters[i].name for i in space.discrete_dims]
    ordinal = [space.parameters[i] for i in space.ordinal_dims]
    orientation = sign(problem.direction)
    for method in split_methods(args.methods):
        hits, shares, gains, errors, finals = [], [], [], [], []
        for history in runs(args.dirs, args.problem, method):
            complete = [e for e in history if e.value is not None]
            if len(complete) < 200:
                continue
            hit, moved, later, improved, best = None, 0, 0, 0, None
            for number, evaluation in enumerate(complete):
                right = all(evaluation.params[name] == optimum[name] for name in discrete)
                if hit is not None:
                    later += 1
                    moved += not right
                    improved += orientation * evaluation.value > orientation * best
                if hit is None and right:
                    hit = number + 1
                if best is None or orientation * evaluation.value > orientation * best:
                    best = evaluation.value
            params = max(complete, key=lambda e: orientation * e.value).params
            errors.append(max((abs(params[p.name] - optimum[p.name]) / (p.high - p.low)
                               for p in ordinal), default=0.0))
            hits.append(hit or len(complete) + 1)
            shares.append(moved / max(later, 1))
            gains.append(improved)
            finals.append(best)
        if not hits:
            print(f"{method}: no run of 200 evaluations")
            continue
        print(f"{method}: {len(hits)} seeds; discrete values right from evaluation "
              f"{min(hits)}-{max(hits)} (median {int(np.median(hits))}); then "
              f"{100 * np.mean(shares):.0f}% of the suggestions change them, "
              f"{np.mean(gains):.1f} improvements per run; continuous error of the best "
              f"(median) {np.median(errors):.3f}; final {np.mean(finals):.4g}")


if __name__ == "__main__":
    main()
