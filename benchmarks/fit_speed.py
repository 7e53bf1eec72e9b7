"""Seconds per GP fit: bodi's closed-form fit loss against GPyTorch's kernel and likelihood.

Usage:
    python benchmarks/fit_speed.py                          # d = 60, n = 100, 2 threads
    python benchmarks/fit_speed.py --d 1000 --n 1000 --fits 2

A BODi on a binary planted problem is told ``n`` points of its design and asked once; the
training data of its model are then fitted (``bodi.models.gp.fit_model``, m = 128, a new
dictionary per fit) three times per dictionary, in the same process and on the same data:

* ``one step``: bodi's code, the whole loss and its gradient in
  :class:`bodi.models.fit_loss.MaternGPLoss`;
* ``covariance``: the training covariance from :class:`bodi.models.fit_loss.Matern52Covariance`,
  the Gaussian density from :class:`bodi.models.fit_loss.GaussianLogDensity` and the priors
  through GPyTorch, joined by autograd (bodi's code before the one-step loss);
* ``gpytorch``: as ``covariance``, but the covariance from GPyTorch's ``MaternKernel`` (the
  reference, ``kernel(X).to_dense()``).

It prints the median seconds of each and the final loss per point, ``-mll / n`` by GPyTorch,
of each minus the reference (they differ in rounding only, so L-BFGS-B may end elsewhere along
the likelihood's flat directions).
Run it on an otherwise idle machine: the timings are wall-clock.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch
from gpytorch.mlls import ExactMarginalLogLikelihood

import bodi
import bodi.models.gp as gp
import bodi.models.single_task as single_task
from bodi.hed.dictionaries import make_dictionary
from bodi.problems import planted_binary


def _final_loss(model) -> float:
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with torch.no_grad():
        return (-mll(model(*model.train_inputs), model.train_targets)).item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=60)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--fits", type=int, default=6, help="dictionaries (paired fits)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(args.threads)
    problem = planted_binary(args.d, seed=0)
    opt = bodi.BODi(problem.space, seed=0, n_init=args.n)
    design = opt.ask(args.n)
    opt.tell(design, problem.evaluate(design).tolist())
    opt.ask()  # fits the model once: its training data are the fits' data
    X, Y = opt.model.train_inputs[0], opt.model.train_targets.unsqueeze(-1)
    closed_form = single_task.dense_train_covariance
    plan = single_task.FastSingleTaskGP._matern_loss_plan
    paths = {"one step": (closed_form, plan),
             "covariance": (closed_form, lambda model: None),
             "gpytorch": (lambda kernel, inputs: kernel(inputs).to_dense(), lambda model: None)}
    seconds: dict[str, list[float]] = {name: [] for name in paths}
    differences: dict[str, list[float]] = {name: [] for name in paths}
    for seed in range(args.fits):
        dictionary = make_dictionary("diverse", 128, opt.space.cardinalities, seed=seed)
        loss = {}
        for name, (covariance, loss_plan) in paths.items():
            single_task.dense_train_covariance = covariance  # the fit loss's training covariance
            single_task.FastSingleTaskGP._matern_loss_plan = loss_plan  # None: not in one step
            try:
                start = time.perf_counter()
                model = gp.fit_model(gp.make_hed_model(X, Y, opt.space, dictionary))
                seconds[name].append(time.perf_counter() - start)
            finally:
                single_task.dense_train_covariance = closed_form
                single_task.FastSingleTaskGP._matern_loss_plan = plan
            loss[name] = _final_loss(model)
        for name in paths:
            differences[name].append(loss[name] - loss["gpytorch"])
    print(f"d = {args.d}, n = {args.n}, {args.threads} threads, {args.fits} fits each")
    for name in paths:
        diff = differences[name]
        print(f"  {name:10s} median s per fit {statistics.median(seconds[name]):.3f} "
              f"(min {min(seconds[name]):.3f}); final loss per point minus gpytorch's: "
              f"mean {statistics.mean(diff):+.5f} (min {min(diff):+.5f}, max {max(diff):+.5f})")


if __name__ == "__main__":
    main()
