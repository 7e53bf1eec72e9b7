"""A digest of the values a method finds, to check that a change leaves its suggestions unchanged.

Usage (the same command at two commits, e.g. in a ``git worktree`` of the older one):
    python benchmarks/suggestion_digest.py --problems labs50,pest,ackley53-shifted --asks 25
    PYTHONPATH=/path/to/old/worktree python benchmarks/suggestion_digest.py ...

For each problem, a fresh optimizer (``--method``, seed 0, the shared design of 20 points) is
run for ``20 + asks`` sequential evaluations in this process, one torch thread. Prints the
commit of the imported ``bodi``, an MD5 digest of the evaluated values (in order) and the best
value: equal digests mean the same suggestions, bit for bit.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import warnings
from pathlib import Path

import torch

import bodi
from bodi.optimizers.registry import make_optimizer
from bodi.problems import get_problem

warnings.filterwarnings("ignore")


def digest(problem_name: str, method: str, asks: int) -> tuple[str, float]:
    """(MD5 of the ``20 + asks`` evaluated values, the best of them)."""
    problem = get_problem(problem_name)
    opt = bodi.create_study(
        make_optimizer(method, problem.space, seed=0, direction=problem.direction, n_init=20)
    )
    values = []
    for _ in range(20 + asks):
        x = opt.ask()
        value = float(problem(x))
        values.append(value)
        opt.tell(x, value)
    best = min(values) if problem.direction == "minimize" else max(values)
    return hashlib.md5(repr(values).encode()).hexdigest()[:12], best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="labs50,pest,ackley53-shifted")
    parser.add_argument("--method", default="bodi")
    parser.add_argument("--asks", type=int, default=25)
    args = parser.parse_args()
    torch.set_num_threads(1)
    source = Path(bodi.__file__).resolve().parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=source,
                            capture_output=True, text=True).stdout.strip() or "?"
    print("| bodi at | problem | method | evaluations | digest | best |")
    print("|---|---|---|---|---|---|")
    for name in args.problems.split(","):
        value_digest, best = digest(name, args.method, args.asks)
        print(f"| {commit} ({source}) | {name} | {args.method} | {20 + args.asks} "
              f"| {value_digest} | {best:.6g} |", flush=True)


if __name__ == "__main__":
    main()
