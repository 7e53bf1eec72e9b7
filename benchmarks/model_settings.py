"""Model settings behind the defaults: lengthscale priors and the L-BFGS iteration cap.

Usage: python benchmarks/model_settings.py [--seeds 3] [--maxiters None,200,25] [--only-caps]

Fits the HED GP (m = 128, diverse dictionary) on 100 points of BODi's initial design and
predicts 200 uniform test points of a planted 60-bit problem and of LABS-50, reporting the test
RMSE (divided by the test std), Spearman correlation, negative log predictive density, fit
seconds and the number of embedding lengthscales below 10. Then repeats the default model with
the ``maxiter`` caps of ``--maxiters`` (``--only-caps``: those rows alone).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import torch
from botorch.models.transforms.outcome import Standardize
from botorch.test_functions.synthetic import Labs
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.priors import GammaPrior
from scipy.stats import spearmanr

from bodi import Binary, SearchSpace
from bodi.hed.dictionaries import make_dictionary
from bodi.hed.kernel import HammingEmbeddingKernel
from bodi.initial_design import initial_design
from bodi.models.gp import fit_model, lengthscales, make_hed_model
from bodi.models.single_task import FastSingleTaskGP
from bodi.problems import planted_binary

warnings.filterwarnings("ignore")


def problems():
    planted = planted_binary(60, seed=1)
    labs_space = SearchSpace([Binary(f"x{i}") for i in range(50)])
    labs = Labs(50)
    return {
        "planted-binary60": (planted.space, lambda X: -planted.evaluate_encoded(X)),
        "labs50": (labs_space, lambda X: labs(X)),
    }


def model(kind, X, Y, space, dictionary):
    if kind == "botorch-default (ours)":
        return make_hed_model(X, Y, space, dictionary)
    prior = None if kind == "authors (no ls prior)" else GammaPrior(3.0, 6.0)
    base = MaternKernel(nu=2.5, ard_num_dims=dictionary.m, lengthscale_prior=prior)
    covar = ScaleKernel(
        HammingEmbeddingKernel(dictionary, base), outputscale_prior=GammaPrior(2.0, 0.15)
    )
    return FastSingleTaskGP(X, Y, covar_module=covar, outcome_transform=Standardize(m=1))


def scores(fitted, Xt, Yt):
    with torch.no_grad():
        posterior = fitted.posterior(Xt.unsqueeze(-2))
        mu, var = posterior.mean.reshape(-1), posterior.variance.reshape(-1)
    rmse = ((mu - Yt) ** 2).mean().sqrt().item() / Yt.std().item()
    nlpd = (0.5 * torch.log(2 * math.pi * var) + 0.5 * (Yt - mu) ** 2 / var).mean().item()
    return rmse, spearmanr(mu, Yt).statistic, nlpd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--maxiters", default="None,200,25",
                        help="caps to compare with the default (100); None: no cap")
    parser.add_argument("--only-caps", action="store_true",
                        help="only the default model at each cap (skip the other priors)")
    args = parser.parse_args()
    torch.set_num_threads(min(2, torch.get_num_threads()))
    kinds = ["botorch-default (ours)", "authors (no ls prior)", "gamma(3,6) ls prior"]
    print("| problem | priors / maxiter | nRMSE | Spearman | NLPD | fit s | ls < 10 |")
    print("|---|---|---|---|---|---|---|")
    for name, (space, f) in problems().items():
        caps = [f"maxiter={cap}" for cap in args.maxiters.split(",")]
        rows = {k: [] for k in [*(kinds[:1] if args.only_caps else kinds), *caps]}
        for seed in range(args.seeds):
            X = initial_design(space, 100, seed)
            Y = f(X).unsqueeze(-1)
            Xt = space.sample(200, generator=torch.Generator().manual_seed(seed))
            Yt = f(Xt)
            dictionary = make_dictionary("diverse", 128, space.cardinalities, seed=seed)
            for kind in rows:
                maxiter = 100
                if kind.startswith("maxiter"):
                    value = kind.split("=")[1]
                    maxiter = None if value == "None" else int(value)
                    gp = model(kinds[0], X, Y, space, dictionary)
                else:
                    gp = model(kind, X, Y, space, dictionary)
                start = time.perf_counter()
                fitted = fit_model(gp, maxiter=maxiter)
                seconds = time.perf_counter() - start
                if isinstance(fitted.covar_module, ScaleKernel):
                    ls = fitted.covar_module.base_kernel.base_kernel.lengthscale.reshape(-1)
                else:
                    ls = lengthscales(fitted)["embedding"]
                rows[kind].append((*scores(fitted, Xt, Yt), seconds, int((ls < 10).sum())))
        for kind, values in rows.items():
            mean = torch.tensor(values).mean(0).tolist()
            label = kind if not kind.startswith("maxiter") else f"ours, {kind}"
            print(f"| {name} | {label} | {mean[0]:.3f} | {mean[1]:.3f} | {mean[2]:.3f} | "
                  f"{mean[3]:.2f} | {mean[4]:.0f} |", flush=True)


if __name__ == "__main__":
    main()
