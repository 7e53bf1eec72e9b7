"""How far each step moves from the incumbent, and what the model believes at each distance.

Usage:
    python benchmarks/step_diagnosis.py steps --problem pest50-shifted --method bodi
    python benchmarks/step_diagnosis.py model --problem pest50-shifted --method bodi --seed 0 \\
        --after 70
    python benchmarks/step_diagnosis.py rank --problem pest50-shifted --method bodi \\
        --seeds 0,1 --afters 100,170
    python benchmarks/step_diagnosis.py next --problem labs100-shifted --method bounce \\
        --seeds 0,1 --afters 60,100 --candidates "bodi;bodi[kernel=hamming]"

``steps``: for every evaluation after the initial design of a stored run (the results
databases of ``--databases``, folders under ``data/``; default ``yardstick,ablation``), its
Hamming distance to the incumbent of that moment: the mean and median over the seeds, how
often a step improved the incumbent, and the distance of the improving steps, with a
histogram of the distances; for a method with a trust region, the share of steps on its
boundary and the evaluations at which the region restarted, per seed.

``model``: rebuilds the method from the run's first ``--after`` evaluations (a
:class:`bodi.History`, no replay), makes its next suggestion, and then compares the fitted
model with the true function at random points at Hamming distance ``r`` from the incumbent
(``r = 1, 2, 4, 8, 16``): the posterior mean and standard deviation, the largest
``mean + 2 sd`` (what an optimistic acquisition chases), the true values (signed so that larger
is better) and the correlation of mean and truth. It prints the trust region and the distance
of the suggestion.

``rank``: how well each of several GPs ranks the points near the incumbent, fitted on the first
``N`` evaluations of stored runs (each of ``--afters``, each of ``--seeds``): at ``r = 1, 2, 4``
flips from the incumbent, 80 random points, the Spearman correlation of the posterior mean
with the truth and the gain of the mean's top 5 (their true mean above the mean of all 80, as
a fraction of the best's). The models: ``hed`` (bodi's, ``m = 128`` ARD lengthscales),
``hed-iso`` (the same embedding, one lengthscale), ``hamming`` (bodi's ``kernel="hamming"``:
a Matérn of the exact Hamming distance, one lengthscale), ``bounce`` (Bounce's discrete
kernel: the same distance with Bounce's Gamma priors and an outputscale), ``bounce-noise``
(that kernel with Bounce's likelihood too: a Gamma(1.1, 0.05) noise prior, so the GP may
smooth), ``overlap``
(CASMOPOLITAN's, one lengthscale per variable).

``next``: one step of each of several methods (``--candidates``, ``;``-separated specs) from
the same histories: the first ``N`` evaluations of stored runs of ``--method`` (each of
``--afters``, each of ``--seeds``). Each candidate is rebuilt on the history (the run's seed)
and makes one suggestion, which is evaluated: how often it improves on the history's best,
the mean gain over the best (signed so that larger is better; a loss counts as 0), the mean
signed difference, and the median distance to the incumbent. The same histories for every
candidate take the trajectory's luck out of the comparison of what each would do next.
``--n-init`` is the candidates' initial design (its points not in the history are suggested
first): 20 for histories of bodi's runs, 0 for others (e.g. Bounce's, which has its own).

``basins``: for a shifted problem (``--problem NAME-shifted``), each stored run's best point
with the shift undone (the original problem's coordinates), its most frequent value and on how
many variables, and the first evaluation from which the incumbent's most frequent value is
the final one (when the run chose its basin); then how many runs end with each value. On Pest
Control the value is the pesticide used at (almost) every stage.

``cleanup``: the steps after evaluation ``--after`` (to 200) against a reference point, the best
point of all the runs read: how many variables of the incumbent differ from it ("wrong"), the
share of steps that change one variable, that change only variables already equal to it
("only right ones"), that set a variable to its value ("a fix"), and that improve.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import warnings
from collections import Counter
from pathlib import Path

import torch

from bodi.directions import sign as direction_sign

ROOT = Path(__file__).resolve().parents[1]
DATABASES = ("yardstick", "ablation")


def _runs(problem: str, method: str,
          databases: tuple[str, ...] = DATABASES) -> dict[int, list[tuple[dict, float | None]]]:
    """Seed -> the (params, value) of every stored evaluation, in order (``databases``:
    folders under ``data/``)."""
    runs: dict[int, list] = {}
    for path in (ROOT / "data" / name / "results.db" for name in databases):
        if not path.exists():
            continue
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        for seed, params, value in db.execute(
                "SELECT seed, params, value FROM evaluations WHERE problem = ? AND method = ? "
                "ORDER BY seed, number", (problem, method)):
            runs.setdefault(seed, []).append((json.loads(params), value))
    return runs


def steps(problem: str, method: str, n_init: int, sign: float, settings=None,
          n_discrete: int = 0, databases: tuple[str, ...] = DATABASES) -> None:
    """``settings``: the method's trust region settings, to count the steps that end on the
    region's boundary (distance to the region's centre equal to its radius) and to find the
    evaluations at which the region restarted."""
    from bodi.acquisition.trust_region import trust_region_state

    distances, improving, on_boundary, in_region = [], [], 0, 0
    restarts: dict[int, list[int]] = {}
    runs = _runs(problem, method, databases)
    for seed, run in runs.items():
        best, incumbent = None, None
        restarts[seed] = []
        done = []  # (params, signed value) of the finished evaluations so far
        for i, (params, value) in enumerate(run):
            if value is None:
                continue
            if i >= n_init and incumbent is not None:
                d = sum(params[k] != incumbent[k] for k in params)
                distances.append(d)
                if sign * value > sign * best:
                    improving.append(d)
                if settings is not None:
                    state = trust_region_state([v for _, v in done], n_init, settings,
                                               n_discrete)
                    if state.restarts > len(restarts[seed]):  # restarted at this step
                        restarts[seed].append(i + 1)
                    if state.start is not None:  # not a restart
                        region = done[state.start:]
                        centre = max(region, key=lambda pair: pair[1])[0]
                        in_region += 1
                        on_boundary += sum(params[k] != centre[k] for k in params) == int(
                            state.radius)
            done.append((params, sign * value))
            if best is None or sign * value > sign * best:
                best, incumbent = value, params
    if not distances:
        raise SystemExit(f"no stored run of {method} on {problem}")
    print(f"{problem} {method}: {len(runs)} seeds; distance to the incumbent mean "
          f"{statistics.mean(distances):.1f} (median {statistics.median(distances):g}); "
          f"improvements per seed {len(improving) / len(runs):.1f}, their distance mean "
          f"{statistics.mean(improving or [0]):.1f} (median "
          f"{statistics.median(improving or [0]):g})")
    print("histogram (distance: steps):", dict(sorted(Counter(distances).items())))
    if in_region:
        print(f"steps on the trust region's boundary: {on_boundary} of {in_region} "
              f"({100 * on_boundary / in_region:.0f}%; restarts aside)")
        print("region restarts (the number of each new region's first evaluation, per seed):",
              restarts)


def basins(problem_name: str, method: str, databases: tuple[str, ...] = DATABASES,
           budget: int = 200) -> None:
    from bodi.problems import get_problem
    from bodi.problems.shifted import SUFFIX, Shift

    if not problem_name.endswith(SUFFIX):
        raise SystemExit(f"basins needs a shifted problem (NAME{SUFFIX}), got {problem_name}")
    problem = get_problem(problem_name)
    space, sign = problem.space, direction_sign(problem.direction)
    shift = Shift.draw(space)

    def original(params: dict) -> list[int]:
        return [int(v) for v in shift.invert(space.encode([params]))[0].tolist()]

    runs = _runs(problem_name, method, databases)
    if not runs:
        raise SystemExit(f"no stored run of {method} on {problem_name}")
    ends: Counter = Counter()
    for seed, run in sorted(runs.items()):
        # values: the incumbent's most frequent value after each evaluation
        best, frequent, values = None, None, []
        for params, value in run[:budget]:
            if value is not None and (best is None or sign * value > sign * best[1]):
                best = (params, value)
                frequent = Counter(original(params)).most_common(1)[0][0]
            values.append(frequent)
        point = original(best[0])
        value, count = Counter(point).most_common(1)[0]
        chosen = len(values) - next(
            (i for i, v in enumerate(reversed(values)) if v != value), len(values))
        ends[value] += 1
        print(f"seed {seed}: best {best[1]:.4f} at {''.join(map(str, point))}: "
              f"{value} on {count} of {len(point)} variables, since evaluation {chosen + 1}")
    print(f"{problem_name} {method}: {len(runs)} runs end with the most frequent value",
          dict(sorted(ends.items())))


def cleanup(problem_name: str, method: str, after: int, databases: tuple[str, ...] = DATABASES,
            budget: int = 200) -> None:
    from bodi.problems import get_problem

    sign = direction_sign(get_problem(problem_name).direction)
    runs = _runs(problem_name, method, databases)
    if not runs:
        raise SystemExit(f"no stored run of {method} on {problem_name}")
    done = [(p, v) for run in runs.values() for p, v in run[:budget] if v is not None]
    reference = max(done, key=lambda pair: sign * pair[1])[0]
    counts: Counter = Counter()
    for run in runs.values():
        best = None
        for i, (params, value) in enumerate(run[:budget]):
            if value is None:
                continue
            if best is not None and i >= after:
                incumbent = best[0]
                changed = [k for k in params if params[k] != incumbent[k]]
                right = {k for k in params if incumbent[k] == reference[k]}
                counts["steps"] += 1
                counts["wrong"] += len(params) - len(right)
                counts["one variable"] += len(changed) == 1
                counts["only right ones"] += all(k in right for k in changed)
                counts["a fix"] += any(params[k] == reference[k] for k in changed)
                counts["improve"] += sign * value > sign * best[1]
            if best is None or sign * value > sign * best[1]:
                best = (params, value)
    steps = counts.pop("steps")
    print(f"{problem_name} {method}: {len(runs)} runs, {steps} steps after evaluation {after}; "
          f"wrong variables per step {counts.pop('wrong') / steps:.1f}; "
          + ", ".join(f"{name} {100 * n / steps:.0f}%" for name, n in counts.items()))


def model(problem_name: str, method: str, seed: int, after: int) -> None:
    from bodi.acquisition.trust_region import TrustRegion
    from bodi.optimizers import make_optimizer
    from bodi.problems import get_problem
    from bodi.trials import History

    problem = get_problem(problem_name)
    run = _runs(problem_name, method).get(seed, [])[:after]
    if len(run) < after:
        raise SystemExit(f"the stored run has {len(run)} evaluations, fewer than {after}")
    history = History.from_observations(problem.space, [problem.direction], completed=run)
    optimizer = make_optimizer(method, problem.space, seed=seed, direction=problem.direction)
    X = optimizer.suggest(history, 1)
    Y = history.Y_completed.squeeze(-1)
    incumbent = history.X_completed[Y.argmax()]
    print(f"{getattr(optimizer, 'region', None)}; the suggestion is at distance "
          f"{int((X[0] != incumbent).sum())}; best so far {float(Y.max()):.4g} (signed)")
    g = torch.Generator().manual_seed(seed)
    sign = direction_sign(problem.direction)
    print("| r | mean | sd | max(mean + 2 sd) | true mean | true max | corr(mean, true) |")
    print("|---|---|---|---|---|---|---|")
    for r in (1, 2, 4, 8, 16):
        S = TrustRegion(problem.space, incumbent, r, 1.0).sample(400, g)
        S = S[(incumbent != S).sum(-1) == r][:60]
        with torch.no_grad():
            posterior = optimizer.model.posterior(S)
            mean = posterior.mean.squeeze(-1)
            sd = posterior.variance.clamp_min(0).sqrt().squeeze(-1)
        true = sign * torch.tensor([problem(c) for c in problem.space.decode(S)],
                                   dtype=mean.dtype)
        corr = torch.corrcoef(torch.stack([mean, true]))[0, 1]
        print(f"| {r} | {mean.mean():.3f} | {sd.mean():.3f} | {(mean + 2 * sd).max():.3f} | "
              f"{true.mean():.3f} | {true.max():.3f} | {corr:.2f} |")


RANK_MODELS = ("hed", "hed-iso", "hamming", "bounce", "bounce-noise", "overlap")


def _rank_model(name: str, X: torch.Tensor, Y: torch.Tensor, space, seed: int):
    """An unfitted GP of :data:`RANK_MODELS` on encoded ``X`` and larger-is-better ``Y``."""
    from gpytorch.kernels import MaternKernel, ScaleKernel
    from gpytorch.priors import GammaPrior

    from bodi.hed.dictionaries import make_dictionary
    from bodi.hed.kernel import HammingDistanceKernel, HammingEmbeddingKernel
    from bodi.models.gp import make_gp, make_hamming_kernel, matern_with_dim_scaled_prior
    from bodi.models.surrogates import make_surrogate

    if name == "hed":
        return make_surrogate("hed-diverse", X, Y, space, seed=seed)
    if name == "hed-iso":
        dictionary = make_dictionary("diverse", 128, space.cardinalities, seed=seed)
        base = matern_with_dim_scaled_prior(None, 128)
        return make_gp(X, Y, HammingEmbeddingKernel(dictionary, base))
    if name == "hamming":
        return make_gp(X, Y, make_hamming_kernel(space))
    if name in ("bounce", "bounce-noise"):
        base = MaternKernel(nu=2.5, lengthscale_prior=GammaPrior(1.5, 0.1))
        kernel = HammingDistanceKernel(space.cardinalities, base)
        covar = ScaleKernel(kernel, outputscale_prior=GammaPrior(1.5, 0.5))
        if name == "bounce":
            return make_gp(X, Y, covar)
        from botorch.models.transforms.outcome import Standardize
        from gpytorch.likelihoods import GaussianLikelihood

        from bodi.models.single_task import FastSingleTaskGP

        likelihood = GaussianLikelihood(noise_prior=GammaPrior(1.1, 0.05))  # Bounce's
        return FastSingleTaskGP(X, Y, covar_module=covar, likelihood=likelihood,
                                outcome_transform=Standardize(m=1))
    return make_surrogate("overlap", X, Y, space, seed=seed)


def rank(problem_name: str, method: str, seeds: list[int], afters: list[int],
         models: list[str]) -> None:
    from scipy.stats import spearmanr

    from bodi.acquisition.trust_region import TrustRegion
    from bodi.device import DTYPE
    from bodi.models.gp import fit_model
    from bodi.problems import get_problem

    problem = get_problem(problem_name)
    if problem.space.ordinal_dims:
        raise SystemExit("rank compares models of binary/categorical spaces only")
    sign = direction_sign(problem.direction)
    runs = _runs(problem_name, method)
    scores: dict[str, list[list[float]]] = {name: [] for name in models}
    for seed in seeds:
        for after in afters:
            run = runs.get(seed, [])[:after]
            if len(run) < after:
                raise SystemExit(f"seed {seed}: the stored run has {len(run)} evaluations")
            space = problem.space
            X = space.encode([params for params, _ in run])
            Y = torch.tensor([sign * value for _, value in run], dtype=DTYPE).unsqueeze(-1)
            incumbent = X[Y.squeeze(-1).argmax()]
            g = torch.Generator().manual_seed(seed)
            tests = []
            for r in (1, 2, 4):
                S = TrustRegion(space, incumbent, r, 1.0).sample(600, g)
                S = S[(incumbent != S).sum(-1) == r][:80]
                true = torch.tensor([sign * problem(c) for c in space.decode(S)], dtype=DTYPE)
                tests.append((S, true))
            for name in models:
                torch.manual_seed(seed)
                model = fit_model(_rank_model(name, X, Y, space, seed))
                row = []
                for S, true in tests:
                    with torch.no_grad():
                        mean = model.posterior(S).mean.squeeze(-1)
                    top = true[mean.argsort(descending=True)[:5]].mean()
                    row += [spearmanr(mean.numpy(), true.numpy()).statistic,
                            float((top - true.mean()) / (true.max() - true.mean()))]
                scores[name].append(row)
    print(f"{problem_name}, runs of {method}, seeds {seeds}, after {afters} evaluations")
    print("| model | r=1 Spearman | r=1 top-5 gain | r=2 Spearman | r=2 top-5 gain | "
          "r=4 Spearman | r=4 top-5 gain |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in scores.items():
        means = torch.tensor(rows).mean(0).tolist()
        print(f"| {name} | " + " | ".join(f"{v:.2f}" for v in means) + " |")


def next_step(problem_name: str, method: str, seeds: list[int], afters: list[int],
              candidates: list[str], n_init: int) -> None:
    import time

    from bodi.optimizers import make_optimizer
    from bodi.problems import get_problem
    from bodi.trials import History

    problem = get_problem(problem_name)
    sign = direction_sign(problem.direction)
    runs = _runs(problem_name, method)
    rows: dict[str, list[tuple[float, int, float]]] = {spec: [] for spec in candidates}
    for seed in seeds:
        for after in afters:
            run = runs.get(seed, [])[:after]
            if len(run) < after:
                raise SystemExit(f"seed {seed}: the stored run has {len(run)} evaluations")
            history = History.from_observations(problem.space, [problem.direction],
                                                completed=run)
            Y = history.Y_completed.squeeze(-1)
            best, incumbent = float(Y.max()), history.X_completed[Y.argmax()]
            for spec in candidates:
                optimizer = make_optimizer(spec, problem.space, seed=seed, n_init=n_init,
                                           direction=problem.direction)
                start = time.perf_counter()
                X = optimizer.suggest(history, 1)
                seconds = time.perf_counter() - start
                value = sign * problem(problem.space.decode(X)[0])
                rows[spec].append((value - best, int((X[0] != incumbent).sum()), seconds))
    print(f"{problem_name}, histories of {method}, seeds {seeds}, after {afters} evaluations")
    print("| candidate | improves | mean gain | mean difference | median distance | s |")
    print("|---|---|---|---|---|---|")
    for spec, results in rows.items():
        gains = [r[0] for r in results]
        print(f"| {spec} | {sum(g > 0 for g in gains)}/{len(gains)} | "
              f"{statistics.mean(max(g, 0.0) for g in gains):.4g} | "
              f"{statistics.mean(gains):.4g} | "
              f"{statistics.median(r[1] for r in results)} | "
              f"{statistics.mean(r[2] for r in results):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["steps", "model", "rank", "next", "basins", "cleanup"])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--method", default="bodi")
    parser.add_argument("--n-init", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--after", type=int, default=100)
    parser.add_argument("--seeds", default="0,1,2", help="rank: the stored runs' seeds")
    parser.add_argument("--afters", default="100,170", help="rank: the numbers of evaluations")
    parser.add_argument("--models", default=",".join(RANK_MODELS), help="rank: the GPs")
    parser.add_argument("--candidates", default="bodi", help="next: ';'-separated specs")
    parser.add_argument("--databases", default=",".join(DATABASES),
                        help="steps, basins, cleanup: results folders under data/")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.what == "steps":
        from bodi.optimizers import make_optimizer
        from bodi.problems import get_problem

        problem = get_problem(args.problem)
        sign = direction_sign(problem.direction)
        optimizer = make_optimizer(args.method, problem.space, seed=0,
                                   direction=problem.direction)
        steps(args.problem, args.method, args.n_init, sign,
              getattr(optimizer, "trust_region_settings", None),
              len(problem.space.discrete_dims), tuple(args.databases.split(",")))
    elif args.what == "model":
        model(args.problem, args.method, args.seed, args.after)
    elif args.what == "basins":
        basins(args.problem, args.method, tuple(args.databases.split(",")))
    elif args.what == "cleanup":
        cleanup(args.problem, args.method, args.after, tuple(args.databases.split(",")))
    elif args.what == "next":
        next_step(args.problem, args.method, [int(s) for s in args.seeds.split(",")],
                  [int(a) for a in args.afters.split(",")], args.candidates.split(";"),
                  args.n_init)
    else:
        rank(args.problem, args.method, [int(s) for s in args.seeds.split(",")],
             [int(a) for a in args.afters.split(",")], args.models.split(","))


if __name__ == "__main__":
    main()
