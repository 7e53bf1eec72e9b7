"""Which trials bodi's GP should see: the whole history, or less of the random initial design.

Runs bodi (the default, P) in an ask/tell loop with the yardstick's protocol (the uniform
design of 20 points, then 180 suggestions) and one of these model-data variants, printing one
JSON line per seed with the best value after each evaluation:

* ``plain``: every trial (bodi's default);
* ``region``: ``BODi(local_model=True)``, the trials inside the trust region and the 20
  nearest its centre;
* ``design-in-region``: every suggested trial, but of the 20 design points only those inside
  the trust region;
* ``first-five``: every suggested trial, the design's first 5 points and its best one (what
  the model would see after a 5-point design, with the 20-point design's incumbent):
  ``BODi(design_in_model="few")``;
* ``loo-design``: per suggestion, ``plain`` or ``first-five``, whichever fit (each from
  scratch) predicts first-five's trials better: ``BODi(design_in_model="auto-refit")``;
* ``holdout``: per suggestion, ``plain`` or ``first-five``, whichever fit predicts the last 5
  suggested trials better when fitted without them (an out-of-sample score; a prototype).

    python benchmarks/model_data.py --variant first-five --seeds 0-9 > a.jsonl
    python benchmarks/model_data.py --variant plain --seeds 0-9 > plain.jsonl
    python benchmarks/model_data.py --compare a.jsonl plain.jsonl   # --problem as run

The loop gives the same runs as ``benchmarks/yardstick.py`` (``plain`` reproduces the
yardstick's stored labs100-shifted seeds 5-9 exactly on the machine that ran them).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from scipy import stats
from torch import Tensor

from bodi.experiments.runner import expand_seeds
from bodi.optimizers.bo import BODi
from bodi.problems import get_problem

N_INIT, BUDGET = 20, 200


class DesignInRegion(BODi):
    """bodi whose model drops the initial design's trials outside the trust region."""

    def model_rows(self, center: Tensor) -> Tensor:
        rows = super().model_rows(center)
        if self.region is None or len(self.X_completed) <= self.n_init:
            return rows
        keep = self.region.contains(self.X_completed)
        keep[self.n_init :] = True
        return rows[keep[rows]]


class HoldoutDesign(BODi):
    """``design_in_model`` chosen on the last :data:`HOLDOUT` later trials held out: both fits
    (every trial, or ``few``) without them, scored by their predictive log density of them,
    then the better one fitted on its rows with them (three fits per suggestion)."""

    def fit_model_on_rows(self, X: Tensor, Y: Tensor, rows: Tensor):
        few = self.few_design_rows(rows)

        def fit(rows: Tensor):
            return self.make_objective_model(X[rows], Y[rows])

        later = torch.nonzero(rows >= self.n_init).flatten()  # the loop's design comes first
        if few.all() or len(later) < 2 * HOLDOUT:
            return fit(rows), rows
        held = torch.zeros(len(rows), dtype=torch.bool)
        held[later[-HOLDOUT:]] = True
        scores = []
        for mask in (~held, few & ~held):
            model = fit(rows[mask])
            with torch.no_grad():
                post = model.posterior(X[rows[held]], observation_noise=True)
                mean, var = post.mean.squeeze(-1), post.variance.squeeze(-1)
            y = Y[rows[held], 0]
            scores.append(float(torch.distributions.Normal(mean, var.sqrt()).log_prob(y).mean()))
        return (fit(rows[few]), rows[few]) if scores[1] > scores[0] else (fit(rows), rows)


HOLDOUT = 5

#: the variants that are options of BODi
OPTIONS = {"plain": {}, "region": {"local_model": True}, "first-five": {"design_in_model": "few"},
           "loo-design": {"design_in_model": "auto-refit"}}


def run(variant: str, problem_name: str, seed: int) -> list[float]:
    problem = get_problem(problem_name)
    cls = {"design-in-region": DesignInRegion, "holdout": HoldoutDesign}.get(variant, BODi)
    opt = cls(problem.space, seed=seed, direction=problem.direction, n_init=N_INIT,
              **OPTIONS.get(variant, {}))
    better = max if problem.direction == "maximize" else min
    curve: list[float] = []
    for _ in range(BUDGET):
        x = opt.ask()
        value = float(problem(x))
        opt.tell(x, value)
        curve.append(value if not curve else better(curve[-1], value))
    return curve


def compare(path_a: str, path_b: str, maximize: bool) -> None:
    """Mean ± s.e. of two files' runs after 60, 100 and 200, and the paired p of a ahead."""
    runs = [{d["seed"]: d["curve"] for d in map(json.loads, Path(p).read_text().splitlines())}
            for p in (path_a, path_b)]
    seeds = sorted(set(runs[0]) & set(runs[1]))
    sign = 1.0 if maximize else -1.0
    for n in (60, 100, BUDGET):
        a, b = ([r[s][n - 1] for s in seeds] for r in runs)
        cells = [f"{sum(v) / len(v):.4g} ± {stats.sem(v):.2g}" for v in (a, b)]
        p = stats.ttest_rel([sign * x for x in a], [sign * y for y in b],
                            alternative="greater").pvalue
        print(f"after {n}: a {cells[0]}, b {cells[1]}, {len(seeds)} seeds, p(a ahead) = {p:.2g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="plain",
                        choices=(*OPTIONS, "design-in-region", "holdout"))
    parser.add_argument("--problem", default="labs100-shifted")
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--compare", nargs=2, metavar=("A.jsonl", "B.jsonl"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare, get_problem(args.problem).direction == "maximize")
        return
    torch.set_num_threads(1)
    for seed in expand_seeds(args.seeds):
        print(json.dumps({"seed": seed, "curve": run(args.variant, args.problem, seed)}),
              flush=True)


if __name__ == "__main__":
    main()
