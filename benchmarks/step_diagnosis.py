"""How far each step moves from the incumbent, and what the model believes at each distance.

Usage:
    python benchmarks/step_diagnosis.py steps --problem pest50-shifted --method bodi
    python benchmarks/step_diagnosis.py model --problem pest50-shifted --method bodi --seed 0 \\
        --after 70

``steps``: for every evaluation after the initial design of a stored run (``data/yardstick``
and ``data/ablation`` results databases), its Hamming distance to the incumbent of that
moment: the mean and median over the seeds, how often a step improved the incumbent, and the
distance of the improving steps, with a histogram of the distances.

``model``: rebuilds the method from the run's first ``--after`` evaluations (a
:class:`bodi.History`, no replay), makes its next suggestion, and then compares the fitted
model with the true function at random points at Hamming distance ``r`` from the incumbent
(``r = 1, 2, 4, 8, 16``): the posterior mean and standard deviation, the largest
``mean + 2 sd`` (what an optimistic acquisition chases), the true values (signed so that larger
is better) and the correlation of mean and truth. It prints the trust region and the distance
of the suggestion.
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

ROOT = Path(__file__).resolve().parents[1]
DATABASES = [ROOT / "data" / name / "results.db" for name in ("yardstick", "ablation")]


def _runs(problem: str, method: str) -> dict[int, list[tuple[dict, float | None]]]:
    """Seed -> the (params, value) of every stored evaluation, in order."""
    runs: dict[int, list] = {}
    for path in DATABASES:
        if not path.exists():
            continue
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        for seed, params, value in db.execute(
                "SELECT seed, params, value FROM evaluations WHERE problem = ? AND method = ? "
                "ORDER BY seed, number", (problem, method)):
            runs.setdefault(seed, []).append((json.loads(params), value))
    return runs


def steps(problem: str, method: str, n_init: int, sign: float, settings=None,
          n_discrete: int = 0) -> None:
    """``settings``: the method's trust region settings, to count the steps that end on the
    region's boundary (distance to the region's centre equal to its radius)."""
    from bodi.acquisition.trust_region import trust_region_state

    distances, improving, on_boundary, in_region = [], [], 0, 0
    runs = _runs(problem, method)
    for run in runs.values():
        best, incumbent = None, None
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


def model(problem_name: str, method: str, seed: int, after: int) -> None:
    from bodi.acquisition.trust_region import TrustRegion
    from bodi.benchmarks import get_problem
    from bodi.optimizers import make_optimizer
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
    sign = 1.0 if problem.direction == "maximize" else -1.0
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["steps", "model"])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--method", default="bodi")
    parser.add_argument("--n-init", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--after", type=int, default=100)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.what == "steps":
        from bodi.benchmarks import get_problem
        from bodi.optimizers import make_optimizer

        problem = get_problem(args.problem)
        sign = 1.0 if problem.direction == "maximize" else -1.0
        optimizer = make_optimizer(args.method, problem.space, seed=0,
                                   direction=problem.direction)
        steps(args.problem, args.method, args.n_init, sign,
              getattr(optimizer, "trust_region_settings", None),
              len(problem.space.discrete_dims))
    else:
        model(args.problem, args.method, args.seed, args.after)


if __name__ == "__main__":
    main()
