"""Median seconds of one BODi ``ask()`` (model fit + acquisition optimization).

Usage:
    python benchmarks/ask_speed.py            # docs/speed.md table (d=60/n=100, d=500/n=300)
    python benchmarks/ask_speed.py --compare  # also: our local search vs BoTorch's optimizer
    python benchmarks/ask_speed.py --kernel hed --cases 60x100 --repeats 7   # the paper's kernel
    python benchmarks/ask_speed.py --m 512 --cases 60x100
    python benchmarks/ask_speed.py --n-init 20 --cases 60x100   # the default's second fit
    python benchmarks/ask_speed.py --n-init 20 --problem "labs{d}" --cases 60x100  # on LABS
    python benchmarks/ask_speed.py --n-init 20 --problem linear --cases 60x100  # linear weights
    python benchmarks/ask_speed.py --n-init 20 --failed 10 --cases 60x100 \
        --spec "bodi[failed_trials=constraint]"   # 10 of the 100 failed: a second GP
    python benchmarks/ask_speed.py --n-init 20 --pending 3 --cases 60x100  # 3 points pending
    python benchmarks/ask_speed.py --n-init 20 --breakdown --cases 60x100  # time per stage
    python benchmarks/ask_speed.py --n-init 20 --choices 20 --cases 32x100  # 20 letters each
    python benchmarks/ask_speed.py --studies 40,100 --repeats 3  # the README's study, end to end
    python benchmarks/ask_speed.py --search-sizes 5x1024,3x1024 --problem labs50-shifted

With ``--breakdown`` the timed asks run under cProfile and each stage's share of an ask is
printed (the trust region, the dictionary, building the GP, fitting it, building the
acquisition function, its search, the rest of the suggestion, and the study's bookkeeping
outside the suggestion); cProfile slows
Python code more than the numerical kernels, so the shares, not the seconds, are the result.

``--studies`` times whole ``bodi.minimize`` runs of the README's example (30 feature flags, a
model choice and a log-scaled ``alpha``; a cheap objective, no storage, seed 0) at each budget.

``--search-sizes`` measures what smaller acquisition searches change: BODi runs on the problem
(seeds 0-2, 120 evaluations); every 15 trials from 30 on, the suggestion is made again with each
``restarts x raw samples`` size, and the table counts the states where it chose BODi's point,
a point of higher acquisition value, or one of lower value.

Each case tells ``n`` random observations of a planted binary problem (or of ``--problem``:
a registered one, or ``linear``, the sum of the bits weighted by integers from -6 to 6)
to a fresh optimizer (``--m`` rows, 128 by default, diverse dictionaries), then times
``repeats`` consecutive asks (each followed by its tell). Run on an otherwise idle machine;
torch uses at most 2 threads.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch

import bodi
import bodi.seeding
from bodi.acquisition import make_acquisition, optimize_acquisition
from bodi.optimizers.registry import parse_method
from bodi.problems import Problem, get_problem, planted_binary, planted_categorical

warnings.filterwarnings("ignore")


def ask_seconds(d: int, n: int, repeats: int, n_init: int | None = None,
                problem: str | None = None, failed: int = 0, pending: int = 0,
                choices: int = 0, **options) -> list[float]:
    """Seconds per ask after ``n`` observations: the ``n_init`` (default ``n``) of BODi's
    initial design, then uniform random points, the last ``failed`` of them told as failed
    trials; on the problem of :func:`make_problem`. With ``pending`` points asked and not
    told (other workers' evaluations), each timed ask is a joint suggestion beside them."""
    problem = make_problem(d, problem, choices)
    opt = told_optimizer(problem, n, n_init, failed, **options)
    if pending:
        opt.ask(pending)  # left pending for the timed asks
    return timed_asks(opt, problem, repeats)


def readme_space() -> bodi.SearchSpace:
    """The README example's space: 30 binary flags, a categorical model and a log-scaled
    continuous ``alpha``."""
    return bodi.SearchSpace(
        [bodi.Binary(f"feature{i}") for i in range(30)]
        + [bodi.Categorical("model", ["ridge", "lasso", "tree"]),
           bodi.Continuous("alpha", 1e-4, 1.0, log=True)])


def readme_loss(params: dict) -> float:
    """The README example's objective."""
    chosen = sum(params[f"feature{i}"] for i in range(30))
    return abs(chosen - 7) + (params["model"] != "lasso") + abs(params["alpha"] - 0.01)


def study_seconds(budget: int) -> float:
    """Seconds of ``bodi.minimize`` of the README example with ``budget`` evaluations."""
    start = time.perf_counter()
    bodi.minimize(readme_loss, readme_space(), budget=budget, seed=0)
    return time.perf_counter() - start


def search_size_changes(problem, sizes: list[tuple[int, int]], seeds: int = 3,
                        budget: int = 120) -> dict[tuple[int, int], list[int]]:
    """For each ``(num_restarts, raw_samples)`` of ``sizes``: at how many states of BODi's runs
    on ``problem`` (see the module's docstring) it chose BODi's own point, a point of higher
    acquisition value and one of lower value."""
    import bodi.acquisition.optimize as search_module

    found: list[tuple[torch.Tensor, float]] = []
    local_search = search_module.local_search

    def recording(*args, **kwargs):
        x, value = local_search(*args, **kwargs)
        found.append((x.clone(), float(value)))
        return x, value

    counts = {size: [0, 0, 0] for size in sizes}
    search_module.local_search = recording
    try:
        for seed in range(seeds):
            study = bodi.create_study(bodi.BODi(problem.space, seed=seed, n_init=20))
            optimizer = study.optimizer
            default = optimizer.num_restarts, optimizer.raw_samples
            for n in range(1, budget + 1):
                x = study.ask()
                study.tell(x, float(problem(x)))
                if n < 30 or n % 15:
                    continue
                chosen = {}
                for size in [default, *sizes]:
                    optimizer.num_restarts, optimizer.raw_samples = size
                    optimizer.suggest(study.history, 1)
                    chosen[size] = found[-1]
                optimizer.num_restarts, optimizer.raw_samples = default
                for size in sizes:
                    same = torch.equal(chosen[size][0], chosen[default][0])
                    gain = chosen[size][1] - chosen[default][1]
                    counts[size][0 if same else 1 if gain > 0 else 2] += 1
    finally:
        search_module.local_search = local_search
    return counts


def make_problem(d: int, name: str | None = None, choices: int = 0):
    """The planted binary problem of ``d`` variables, the registered problem ``name`` with
    ``{d}`` replaced by ``d``, the linear problem (``name="linear"``: :func:`linear_binary`),
    or (``choices``) the planted problem of ``d`` categorical variables with ``choices``
    values each."""
    if choices:
        return planted_categorical(d, choices, seed=0)
    if name == "linear":
        return linear_binary(d)
    return planted_binary(d, seed=0) if name is None else get_problem(name.format(d=d))


def linear_binary(d: int, seed: int = 0) -> Problem:
    """``d`` bits, minimize ``sum_j w_j x_j`` with integer weights ``w_j`` drawn uniformly from
    -6..6 (seeded): the optimum sets exactly the bits of negative weight."""
    weights = torch.randint(-6, 7, (d,), generator=torch.Generator().manual_seed(seed),
                            dtype=torch.float64)
    space = bodi.SearchSpace([bodi.Binary(f"x{i}") for i in range(d)])
    return Problem(f"linear{d}", space, lambda X: X.to(weights) @ weights, "minimize",
                   float(weights.clamp(max=0).sum()))


def told_optimizer(problem, n: int, n_init: int | None = None, failed: int = 0,
                   **options) -> bodi.BODi:
    """A BODi (seed 0) on ``problem`` told ``n`` observations: the ``n_init`` (default ``n``)
    of its initial design, then uniform random points (seed 1), the last ``failed`` of them
    told as failed trials."""
    n_init = n if n_init is None else min(n_init, n)
    opt = bodi.create_study(bodi.BODi(problem.space, seed=0, n_init=n_init, **options))
    design = opt.ask(n_init)
    opt.tell(design, problem.evaluate(design).tolist())
    if n > n_init:
        later = problem.space.decode(
            problem.space.sample(n - n_init, generator=torch.Generator().manual_seed(1)))
        values = problem.evaluate(later).tolist()
        opt.tell(later, values[:len(values) - failed] + [None] * failed)
    return opt


#: the stages of an ask: (name, module file, function), each counted by its cumulative time
STAGES = [
    ("trust region", "bodi/optimizers/gp_optimizer.py", "trust_region"),
    ("dictionary", "bodi/optimizers/bo.py", "make_dictionary"),
    ("GP and kernel built", "bodi/models/gp.py", "make_gp"),
    ("model fit", "bodi/models/gp.py", "fit_model"),
    ("acquisition function", "bodi/acquisition/factory.py", "make_acquisition"),
    ("acquisition search", "bodi/acquisition/optimize.py", "optimize_acquisition"),
]


def stage_shares(opt, problem, repeats: int) -> dict[str, float]:
    """Each stage's share of ``repeats`` asks (cProfile's cumulative times; see the module's
    docstring), the rest of the suggestion and the bookkeeping outside it."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    timed_asks(opt, problem, repeats)
    profile.disable()
    stats = pstats.Stats(profile).stats

    def cumulative(path: str, function: str) -> float:
        return sum(entry[3] for (file, _, name), entry in stats.items()
                   if name == function and file.endswith(path))

    ask = cumulative("bodi/study.py", "ask")
    suggest = cumulative("bodi/optimizers/base.py", "suggest")
    shares = {name: cumulative(path, function) / ask for name, path, function in STAGES}
    shares["rest of the suggestion"] = suggest / ask - sum(shares.values())
    shares["bookkeeping (study, claims)"] = 1 - suggest / ask
    return shares


def timed_asks(opt, problem, repeats: int) -> list[float]:
    """Seconds of ``repeats`` consecutive ``opt.ask()`` calls, each followed by its tell."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        x = opt.ask()
        seconds.append(time.perf_counter() - start)
        opt.tell(x, float(problem(x)))
    return seconds


def compare_optimizers(d: int, n: int, repeats: int) -> None:
    """Same fitted model and acquisition: time and best LogEI value of both optimizers."""
    problem = planted_binary(d, seed=0)
    opt = bodi.create_study(bodi.BODi(problem.space, seed=0, n_init=n))
    design = opt.ask(n)
    opt.tell(design, problem.evaluate(design).tolist())
    X, Y = opt.history.X_completed, opt.history.Y_completed
    print(f"\nacquisition optimizers, binary d={d}, n={n} (same model and LogEI per row)")
    print("| method | median seconds | median best log-EI |\n|---|---|---|")
    results = {"local": ([], []), "botorch": ([], [])}
    for rep in range(repeats):
        model = opt.optimizer.make_model(X, Y, opt.history)  # BODi's default model
        acq = make_acquisition("logei", model, X, Y)
        for method, (times, values) in results.items():
            with bodi.seeding.seeded(rep):
                start = time.perf_counter()
                x = optimize_acquisition(acq, problem.space, avoid=X, incumbents=X,
                                         method=method)
                times.append(time.perf_counter() - start)
            with torch.no_grad():
                values.append(acq(x.unsqueeze(0)).item())
    for method, (times, values) in results.items():
        print(f"| {method} | {statistics.median(times):.2f} | {statistics.median(values):.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--kernel", default=None, help="BODi's kernel (default: BODi's for "
                        "the space: hed*hamming, or hamming on an all-categorical one; e.g. hed)")
    parser.add_argument("--cases", default="60x100,500x300", help="d x n, comma-separated")
    parser.add_argument("--m", type=int, default=128, help="BODi's dictionary size")
    parser.add_argument("--n-init", type=int, help="of the n observations, this many from "
                        "the initial design, the rest random (default: all n)")
    parser.add_argument("--failed", type=int, default=0, help="of the random points after "
                        "the design, this many are told as failed trials")
    parser.add_argument("--pending", type=int, default=0, help="this many points asked and "
                        "not told before the timed asks (parallel workers' evaluations)")
    parser.add_argument("--spec", default="bodi", help="a bodi[...] method spec whose options "
                        "are added (e.g. bodi[acquisition=logei])")
    parser.add_argument("--problem", help="a registered binary problem, {d} for its size "
                        "(e.g. labs{d}), or linear (integer weights -6..6); default: the "
                        "planted binary problem")
    parser.add_argument("--choices", type=int, default=0, help="the planted problem of d "
                        "categorical variables with this many values each instead")
    parser.add_argument("--breakdown", action="store_true",
                        help="print each stage's share of an ask instead of the seconds")
    parser.add_argument("--studies", help="comma-separated budgets: time whole studies of the "
                        "README example instead (--repeats runs each)")
    parser.add_argument("--search-sizes", help="comma-separated restarts x raw samples (e.g. "
                        "5x1024): count where they change BODi's suggestion on --problem")
    args = parser.parse_args()
    if args.search_sizes:
        sizes = [tuple(int(v) for v in size.split("x")) for size in args.search_sizes.split(",")]
        problem = make_problem(60, args.problem, args.choices)
        counts = search_size_changes(problem, sizes)
        print("| restarts x raw samples | same point | higher value | lower value |")
        print("|---|---|---|---|")
        for (restarts, raw), (same, higher, lower) in counts.items():
            print(f"| {restarts}x{raw} | {same} | {higher} | {lower} |")
        return
    if args.studies:
        torch.set_num_threads(min(2, torch.get_num_threads()))
        print("| evaluations | median seconds per study | min | max |\n|---|---|---|---|")
        for budget in (int(b) for b in args.studies.split(",")):
            s = [study_seconds(budget) for _ in range(args.repeats)]
            print(f"| {budget} | {statistics.median(s):.1f} | {min(s):.1f} | {max(s):.1f} |",
                  flush=True)
        return
    if args.breakdown:
        torch.set_num_threads(min(2, torch.get_num_threads()))
        for case in args.cases.split(","):
            d, n = (int(v) for v in case.split("x"))
            problem = make_problem(d, args.problem, args.choices)
            opt = told_optimizer(problem, n, args.n_init, args.failed, kernel=args.kernel,
                                 dictionary_size=args.m, **parse_method(args.spec)[1])
            shares = stage_shares(opt, problem, args.repeats)
            print(f"\nd = {d}, n = {n}: share of an ask ({args.repeats} asks, cProfile)")
            print("| stage | share |\n|---|---|")
            for stage, share in shares.items():
                print(f"| {stage} | {share:.0%} |")
        return
    torch.set_num_threads(min(2, torch.get_num_threads()))
    print("| d | observations n | m | median seconds per ask | min | max |")
    print("|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        d, n = (int(v) for v in case.split("x"))
        s = ask_seconds(d, n, args.repeats, args.n_init, args.problem, args.failed,
                        args.pending, args.choices,
                        kernel=args.kernel,
                        dictionary_size=args.m,
                        **parse_method(args.spec)[1])
        print(f"| {d} | {n} | {args.m} | {statistics.median(s):.2f} | {min(s):.2f} | "
              f"{max(s):.2f} |", flush=True)
    if args.compare:
        compare_optimizers(60, 100, args.repeats)


if __name__ == "__main__":
    main()
