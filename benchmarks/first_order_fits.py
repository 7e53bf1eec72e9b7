"""Model checks behind ``first_order``'s variants (docs/results.md §5): on the first ``k``
points of a stored run, where does each way of fitting bodi's kernel plus the first-order
term end?

Usage:
    python benchmarks/first_order_fits.py --problem maxsat-frb1002-shifted --prefixes 60,120
    python benchmarks/first_order_fits.py --problem labs100-shifted --prefixes 60,120,180

For each seed and prefix ``k`` (bodi 0.7's runs, ``--method``, in ``--database``) it fits, on
the same dictionary (that of BODi's next suggestion):

- ``joint``: ``s_0 K + s_1 K_1`` from BoTorch's initial values, every hyperparameter free
  (``first_order=True``, and ``"auto"`` before its choice);
- ``scales``: the kernel alone fitted first, then only ``s_0``, ``s_1``, the noise and the mean
  (the kernel's lengthscales fixed at the kernel alone's optimum);
- ``warm``: the sum fitted from the kernel alone's optimum (``s_0 = 1``), every
  hyperparameter free, at most 25 iterations;
- ``anchored``: the joint fit with a LogNormal(0, 0.5) prior on ``s_0``;

and prints each fit's ``s_0`` and ``s_1``. ``refit`` compares the kernel alone fitted from
BoTorch's initial values (bodi 0.7's model, what ``"auto"`` refits) with the kernel alone
fitted for 25 iterations from the joint fit's values: their marginal log likelihoods (per
point, with the priors) and the correlation of their posterior means at 500 uniform points.
"""

from __future__ import annotations

import argparse
import copy
import warnings

import torch
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import LogNormalPrior

import bodi
from bodi.experiments.results import ResultsStore
from bodi.models.gp import (
    copy_hyperparameters,
    fit_model,
    make_gp,
    make_hed_hamming_kernel,
    with_first_order,
)
from bodi.problems import get_problem

warnings.filterwarnings("ignore")
#: iterations of the warm-started fits
WARM_ITERATIONS = 25


def scales(model) -> str:
    """``s_0`` and ``s_1`` of a fitted sum."""
    main, first_order = (float(k.outputscale.detach()) for k in model.covar_module.kernels)
    return f"s0={main:.3f} s1={first_order:.3f}"


def log_likelihood(model) -> float:
    """The fitted GP's marginal log likelihood per point, with the priors."""
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with torch.no_grad():
        value = float(mll(model(*model.train_inputs), model.train_targets))
    model.eval()
    return value


def fits(problem, params: list, values: list, k: int) -> dict[str, str]:
    """The checks' results on the first ``k`` points of one stored run."""
    opt = bodi.BODi(problem.space, seed=0, n_init=20, direction=problem.direction)
    opt.tell(params[:k], values[:k])
    X, Y, space = opt.X_completed, opt.Y_completed, problem.space
    dictionary = opt.make_dictionary()

    def kernel():
        return make_hed_hamming_kernel(space, dictionary)

    def gp(covar, source=None, maxiter=None):
        model = make_gp(X, Y, covar)
        if source is not None:
            copy_hyperparameters(source, model)  # the noise and the mean
        return fit_model(model, **({} if maxiter is None else {"maxiter": maxiter}))

    joint = gp(with_first_order(space, kernel()))
    alone = gp(kernel())
    fixed = alone.covar_module
    only_scales = gp(with_first_order(space, copy.deepcopy(fixed).requires_grad_(False)),
                     source=alone)
    warm_sum = with_first_order(space, kernel())
    warm_sum.kernels[0].base_kernel.load_state_dict(fixed.state_dict())
    warm_sum.kernels[0].outputscale = 1.0
    warm = gp(warm_sum, source=alone, maxiter=WARM_ITERATIONS)
    anchored_sum = with_first_order(space, kernel())
    anchored_sum.kernels[0].register_prior(
        "outputscale_prior", LogNormalPrior(0.0, 0.5), lambda m: m.outputscale,
        lambda m, v: m._set_outputscale(v))
    anchored = gp(anchored_sum)
    refit_kernel = kernel()
    refit_kernel.load_state_dict(joint.covar_module.kernels[0].base_kernel.state_dict())
    refit = gp(refit_kernel, source=joint, maxiter=WARM_ITERATIONS)
    points = space.sample(500, generator=torch.Generator().manual_seed(k)).unsqueeze(1)
    with torch.no_grad():
        means = torch.stack([alone.posterior(points).mean.flatten(),
                             refit.posterior(points).mean.flatten()])
    return {"joint": scales(joint), "scales": scales(only_scales), "warm": scales(warm),
            "anchored": scales(anchored),
            "refit": f"log L {log_likelihood(alone):.3f} vs {log_likelihood(refit):.3f}, "
                     f"corr {float(torch.corrcoef(means)[0, 1]):.2f}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--prefixes", default="60,120", help="k, comma-separated")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--method", default="bodi[design_in_model=reach]")
    parser.add_argument("--database", default="data/ablation6")
    args = parser.parse_args()
    torch.set_num_threads(1)
    store = ResultsStore(args.database, read_only=True)
    problem = get_problem(args.problem)
    print("| seed | k | joint | scales | warm | anchored | refit: cold vs warm |")
    print("|---|---|---|---|---|---|---|")
    for seed in (int(s) for s in args.seeds.split(",")):
        history = store.history(args.problem, args.method, seed)
        params, values = [e.params for e in history], [e.value for e in history]
        for k in (int(v) for v in args.prefixes.split(",")):
            row = fits(problem, params, values, k)
            print(f"| {seed} | {k} | " + " | ".join(row.values()) + " |", flush=True)


if __name__ == "__main__":
    main()
