"""Seconds per suggestion of every benchmark method on an idle machine.

Usage:
    python benchmarks/method_speed.py [--problems labs50,pest,ackley53] [--n 60] [--repeats 3]

For each problem and method (the runner's names, ``bodi.optimizers.registry``), a fresh optimizer
is told the shared initial design (20 points) plus random points up to ``n`` observations, then
``repeats`` consecutive asks are timed (each followed by its tell). One torch thread, as on the
runner's workers. Prints a Markdown table of the median and the range.
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import torch
from ask_speed import timed_asks  # benchmarks/ is the script directory

from bodi.initial_design import initial_design
from bodi.optimizers.registry import METHODS, make_optimizer
from bodi.problems import get_problem
from bodi.study import create_study

warnings.filterwarnings("ignore")


def suggest_seconds(problem_name: str, method: str, n: int, repeats: int) -> list[float]:
    problem = get_problem(problem_name)
    space = problem.space
    X = torch.cat([initial_design(space, 20, 0),
                   space.sample(max(0, n - 20), generator=torch.Generator().manual_seed(1))])
    configs = space.decode(X)
    opt = create_study(
        make_optimizer(method, space, seed=0, direction=problem.direction, n_init=20)
    )
    opt.tell(configs, problem.evaluate(configs).tolist())
    return timed_asks(opt, problem, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="labs50,pest,ackley53")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--n", type=int, default=60, help="observations before timing")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"seconds per suggestion after {args.n} observations, median of {args.repeats} "
          "(min-max)\n")
    problems = args.problems.split(",")
    print("| method | " + " | ".join(problems) + " |")
    print("|---|" + "---|" * len(problems))
    for method in args.methods.split(","):
        cells = []
        for name in problems:
            s = suggest_seconds(name, method, args.n, args.repeats)
            cells.append(f"{statistics.median(s):.2f} ({min(s):.2f}-{max(s):.2f})")
        print(f"| {method} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
