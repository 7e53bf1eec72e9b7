"""Milliseconds per joint posterior beside shared points: bodi's posterior against GPyTorch's.

Usage:
    python benchmarks/joint_posterior_speed.py              # 1 thread, the cases below
    python benchmarks/joint_posterior_speed.py --repeats 20 --threads 2

A suggestion made beside pending points scores ``b`` candidates at once, each a joint
posterior of ``q`` points: the candidate, and the pending points that every batch shares
(qUCB on binary and mixed spaces), with qLogNEI's baseline in front of them on all-categorical
spaces. A BODi is told 20 design points and 80 uniform ones of each problem and asked once;
its fitted model (``opt.model``) then computes the posterior of ``b x q x dim`` batches with
``q - 1`` shared points, by bodi (``FastSingleTaskGP.posterior``, the shared points measured
once) and by GPyTorch (``SingleTaskGP.posterior``), covariance made dense. Prints the median
milliseconds of each and the largest difference of their means and covariances.
Run it on an otherwise idle machine: the timings are wall-clock.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from functools import partial

import torch
from ask_speed import told_optimizer  # benchmarks/ is the script directory
from botorch.models import SingleTaskGP

from bodi.problems import get_problem, planted_binary

#: (problem, batches b, shared points): 3 pending points (qUCB); a baseline of 8 and 3 pending
CASES = [("planted-binary60", 200, 3), ("planted-binary60", 1000, 3), ("pest50", 1000, 11)]


def _model(name: str):
    problem = planted_binary(60, seed=0) if name == "planted-binary60" else get_problem(name)
    opt = told_optimizer(problem, 100, n_init=20)
    opt.ask()  # fits the model
    return problem.space, opt.model


def _milliseconds(posterior, X: torch.Tensor, repeats: int) -> tuple[float, torch.Tensor,
                                                                      torch.Tensor]:
    times = []
    for _ in range(repeats + 1):  # the first one warms up
        start = time.perf_counter()
        result = posterior(X)
        mean, covariance = result.mean, result.distribution.covariance_matrix
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times[1:]), mean, covariance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(args.threads)
    print("| problem | b | q (shared) | bodi ms | GPyTorch ms | max difference |\n"
          "|---|---|---|---|---|---|")
    for name, b, shared in CASES:
        space, model = _model(name)
        g = torch.Generator().manual_seed(3)
        points = space.sample(shared, generator=g).to(torch.float64)
        candidates = space.sample(b, generator=g).to(torch.float64).view(b, 1, -1)
        front, pending = points[:shared - 3], points[shared - 3:]
        X = torch.cat([front.expand(b, -1, -1), candidates, pending.expand(b, -1, -1)], -2)
        with torch.no_grad():
            ours, mean, covariance = _milliseconds(model.posterior, X, args.repeats)
            theirs, mean_ref, covariance_ref = _milliseconds(
                partial(SingleTaskGP.posterior, model), X, args.repeats)
        difference = max((mean - mean_ref).abs().max().item(),
                         (covariance - covariance_ref).abs().max().item())
        print(f"| {name} | {b} | {shared + 1} ({shared}) | {ours:.1f} | {theirs:.1f} | "
              f"{difference:.1e} |")


if __name__ == "__main__":
    main()
