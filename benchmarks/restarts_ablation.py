"""Does BODi need 20 local-search restarts (the authors' setting) or do 10 suffice?

Usage: python benchmarks/restarts_ablation.py [--seeds 3]

Runs BODi with ``num_restarts`` in {10, 20} on two planted problems (60 evaluations) and on
LABS with 30 bits (80 evaluations, merit factor maximized), and prints the final best value per
seed and the wall time of all seeds.
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch
from botorch.test_functions.synthetic import Labs

import bodi
from bodi.problems import planted_binary, planted_categorical

warnings.filterwarnings("ignore")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    labs_space = bodi.SearchSpace([bodi.Binary(f"x{i}") for i in range(30)])
    labs = Labs(30)
    problems = {
        "planted-binary40": (planted_binary(40, seed=3), 60, "minimize"),
        "planted-categorical20": (planted_categorical(20, 4, seed=3), 60, "minimize"),
        "labs30": (labs_space, 80, "maximize"),
    }
    print("| problem | restarts | final best per seed | seconds (all seeds) |\n|---|---|---|---|")
    for name, (problem, budget, direction) in problems.items():
        if name == "labs30":
            space, f = labs_space, lambda c: float(labs(labs_space.encode(c))[0])
        else:
            space, f = problem.space, problem
        for restarts in (10, 20):
            start, finals = time.perf_counter(), []
            for seed in range(args.seeds):
                result = bodi.minimize(f, space, budget=budget, seed=seed, direction=direction,
                                       num_restarts=restarts)
                finals.append(round(result.best_value, 3))
            print(f"| {name} | {restarts} | {finals} | {time.perf_counter() - start:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
