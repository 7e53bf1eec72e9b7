"""Bounce's fidelity: the authors' code and bodi's ``bounce`` on the same functions and budget.

Usage:
    git -C /path/to/LeoIV-bounce.git worktree add /tmp/bounce-src   # or any checkout
    pip install gin-config                                         # the authors' config tool
    python benchmarks/bounce_fidelity.py --bounce-src /tmp/bounce-src --problems labs50,pest \\
        --seeds 0-2 --evaluations 200

The functions are the authors' own benchmark objects (``bounce/benchmarks.py`` of
github.com/LeoIV/bounce), as their ``configs/default.gin`` sets them up: ``Labs(dim=50)`` with
``Benchmark.flip = True`` (its signs from ``RandomState(43)``) and ``PestControl`` (25 stages,
5 choices, flipped with ``RandomState(0)``), both minimized. The authors' Bounce runs with the
rest of ``configs/default.gin`` (its GP priors, ``TrustRegion.length_init_discrete = 10``,
5 initial points, target dimension 5, input dimension reached after 100 evaluations) on the
CPU, its global RNGs seeded with the seed. Ours is :class:`bodi.baselines.bounce.Bounce`
(the registry's ``bounce``) with the same budget and seed, asked and told on a bodi space whose
points are handed to the same benchmark object (binary values as 0/1; a categorical as the
one-hot block the authors' code passes).

The authors' code imports ``xgboost`` for its SVM benchmark's data (``bounce/util/data_loading``);
without xgboost that import is given an empty module here, which LABS and Pest Control never
use. Nothing else of their code is changed. One line per (implementation, problem, seed) is
appended to ``benchmarks/results/bounce_fidelity.jsonl``: the best value after every
``--report`` evaluations; ``--table`` prints the table of that file.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import signal
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bounce_fidelity.jsonl"
#: problem -> (the authors' benchmark class and keyword arguments)
PROBLEMS = {"labs50": ("Labs", {"dim": 50}), "pest": ("PestControl", {})}


def _authors_benchmark(source: Path, problem: str):
    """The authors' benchmark object, configured as their default.gin does."""
    if str(source) not in sys.path:
        sys.path.insert(0, str(source))
    try:
        import xgboost  # noqa: F401
    except ImportError:  # only their SVM benchmark's data loader needs it
        sys.modules["xgboost"] = types.SimpleNamespace(XGBRegressor=None)
    import bounce.benchmarks as benchmarks
    import gin

    gin.clear_config()
    gin.parse_config_files_and_bindings(
        [str(source / "configs" / "default.gin")],
        ['DEVICE = "cpu"', f"Bounce.benchmark = @{PROBLEMS[problem][0]}()"])
    name, kwargs = PROBLEMS[problem]
    return getattr(benchmarks, name)(**kwargs)


class _Logged:
    """The benchmark object, recording every value it returns (so a run stopped early still
    reports what it evaluated)."""

    def __init__(self, benchmark, values: list[float]):
        self._benchmark, self._values = benchmark, values

    def __getattr__(self, name: str):
        return getattr(self._benchmark, name)

    def __call__(self, x):
        y = self._benchmark(x)
        self._values.extend(float(v) for v in y.reshape(-1))
        return y


def run_authors(source: Path, problem: str, seed: int, evaluations: int,
                values: list[float]) -> list[float]:
    """The values of the authors' Bounce run, in evaluation order (also appended to
    ``values`` as they come)."""
    benchmark = _Logged(_authors_benchmark(source, problem), values)
    from bounce.bounce import Bounce

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    with tempfile.TemporaryDirectory() as results:
        optimizer = Bounce(benchmark=benchmark, maximum_number_evaluations=evaluations,
                           maximum_number_evaluations_until_input_dim=min(100, evaluations),
                           results_dir=results, device="cpu")
        optimizer.run()
    return optimizer.fx_global.reshape(-1).tolist()[:evaluations]


def run_ours(source: Path, problem: str, seed: int, evaluations: int,
             values: list[float]) -> list[float]:
    """The values of bodi's ``bounce`` on the same benchmark object."""
    import bodi
    from bodi.optimizers import make_optimizer

    benchmark = _authors_benchmark(source, problem)
    if problem == "pest":
        space = bodi.SearchSpace([bodi.Categorical(f"x{i}", list(range(5)))
                                  for i in range(benchmark.dim)])
    else:
        space = bodi.SearchSpace([bodi.Binary(f"x{i}") for i in range(benchmark.dim)])

    def evaluate(params: dict) -> float:
        if problem == "pest":
            x = torch.zeros(benchmark.dim, 5, dtype=torch.double)
            x[torch.arange(benchmark.dim), [params[f"x{i}"] for i in range(benchmark.dim)]] = 1
            x = x.reshape(-1)
        else:
            x = torch.tensor([float(params[f"x{i}"]) for i in range(benchmark.dim)],
                             dtype=torch.double)
        return float(benchmark(x).reshape(-1)[0])

    optimizer = bodi.create_study(
        make_optimizer(
            "bounce",
            space,
            seed=seed,
            direction="minimize",
            budget=evaluations,
            evaluations_until_input_dim=min(100, evaluations),
        )
    )
    for _ in range(evaluations):
        params = optimizer.ask()
        values.append(evaluate(params))
        optimizer.tell(params, values[-1])
    return values


def _bests(values: list[float], report: list[int]) -> dict[str, float]:
    return {str(n): min(values[:n]) for n in report if len(values) >= n}


def table(path: Path = RESULTS) -> str:
    """Mean ± standard error of the best value (minimized) per problem, implementation and
    number of evaluations, from the results file."""
    runs: dict[tuple, dict] = {}  # the longest record of each run (one cut short counts
    for line in path.read_text().splitlines():  # at the budgets it reached)
        record = json.loads(line)
        key = (record["implementation"], record["problem"], record["seed"])
        if key not in runs or record["evaluations"] > runs[key]["evaluations"]:
            runs[key] = record
    rows: dict[tuple[str, str, str], list[float]] = {}
    for record in runs.values():
        for n, best in record["best"].items():
            rows.setdefault((record["problem"], n, record["implementation"]), []).append(best)
    from scipy.stats import ttest_ind

    out = ["| problem | evaluations | authors' Bounce | bodi's bounce | Welch p (two-sided) |",
           "|---|---|---|---|---|"]
    for problem, n in sorted({(p, n) for p, n, _ in rows}, key=lambda k: (k[0], int(k[1]))):
        cells = []
        for implementation in ("authors", "bodi"):
            values = rows.get((problem, n, implementation), [])
            if not values:
                cells.append("-")
                continue
            se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
            cells.append(f"{statistics.mean(values):.3f} ± {se:.3f} ({len(values)} seeds)")
        a, b = (rows.get((problem, n, i), []) for i in ("authors", "bodi"))
        p = "-"
        if len(a) > 1 and len(b) > 1:
            same = len(set(a) | set(b)) == 1
            p = "equal" if same else f"{ttest_ind(a, b, equal_var=False).pvalue:.2g}"
        out.append(f"| {problem} | {n} | {cells[0]} | {cells[1]} | {p} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bounce-src", type=Path, help="a checkout of LeoIV/bounce")
    parser.add_argument("--problems", default="labs50,pest")
    parser.add_argument("--seeds", default="0-2")
    parser.add_argument("--evaluations", type=int, default=200)
    parser.add_argument("--report", default="100,200", help="report the best after these")
    parser.add_argument("--implementations", default="authors,bodi")
    parser.add_argument("--table", action="store_true", help="only print the results table")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="the JSON-lines file the runs are appended to")
    args = parser.parse_args()
    if args.table:
        print(table(args.results))
        return
    if args.bounce_src is None or not (args.bounce_src / "bounce" / "bounce.py").exists():
        parser.error("--bounce-src must be a checkout of github.com/LeoIV/bounce")
    from bodi.experiments.runner import expand_seeds

    report = [int(n) for n in args.report.split(",")]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    runners = {"authors": run_authors, "bodi": run_ours}
    current: dict = {}

    def save(complete: bool) -> None:
        values = current["values"][: args.evaluations]
        record = {"implementation": current["implementation"], "problem": current["problem"],
                  "seed": current["seed"], "evaluations": len(values),
                  "best": _bests(values, report),
                  "seconds": round(time.time() - current["start"], 1)}
        if not complete:
            record["stopped"] = True  # a run cut short: its best values up to where it got
        with args.results.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)

    def stop(signum, frame) -> None:
        if current:
            save(complete=False)
        raise SystemExit(1)

    signal.signal(signal.SIGTERM, stop)
    for problem in args.problems.split(","):
        for seed in expand_seeds(args.seeds):
            for implementation in args.implementations.split(","):
                current.update(implementation=implementation, problem=problem, seed=seed,
                               values=[], start=time.time())
                runners[implementation](args.bounce_src.resolve(), problem, seed,
                                        args.evaluations, current["values"])
                save(complete=True)
                current.clear()
    print(table(args.results))


if __name__ == "__main__":
    main()
