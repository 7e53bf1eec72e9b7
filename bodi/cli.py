"""The ``bodi`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import torch

from bodi.benchmarks import planted_binary, planted_categorical, planted_mixed
from bodi.minimize import minimize

DEMO_PROBLEMS = {
    "binary": lambda seed: planted_binary(30, seed=seed),
    "categorical": lambda seed: planted_categorical(15, 4, seed=seed),
    "mixed": lambda seed: planted_mixed(10, 5, 2, seed=seed),
}


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _demo(args: argparse.Namespace) -> int:
    problem = DEMO_PROBLEMS[args.problem](args.problem_seed)
    print(
        f"BODi on {problem.name}: {problem.space.dim} parameters, budget {args.budget}, "
        f"seed {args.seed} (the optimum {problem.optimal_value} is planted at a random point)"
    )
    start = time.perf_counter()
    result = minimize(
        problem, problem.space, budget=args.budget, seed=args.seed, n_init=args.n_init,
        progress=not args.quiet,
    )
    elapsed = time.perf_counter() - start
    print(f"best value {result.best_value:.6g} after {args.budget} evaluations ({elapsed:.1f} s)")
    print("best point:", result.best_params)
    gap = result.best_value - problem.optimal_value
    print("found the planted optimum" if gap == 0 else f"gap to the planted optimum: {gap:.3g}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bodi",
        description="Bayesian optimization over binary, categorical and mixed spaces (BODi).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run BODi on a built-in planted problem")
    demo.add_argument("--problem", choices=sorted(DEMO_PROBLEMS), default="binary")
    demo.add_argument("--budget", type=_positive_int, default=60)
    demo.add_argument("--n-init", type=_positive_int, default=20)
    demo.add_argument("--seed", type=int, default=0, help="optimizer seed")
    demo.add_argument("--problem-seed", type=int, default=0, help="seed of the planted optimum")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(handler=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    torch.set_num_threads(max(1, min(torch.get_num_threads(), 2)))
    try:
        return args.handler(args)
    except (ValueError, RuntimeError) as err:
        print(f"bodi: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
