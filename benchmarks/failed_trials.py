"""BODi through Optuna on a small mixed objective with a region that always fails.

A user's objective often fails for some settings (an invalid combination raises). This script
runs Optuna studies with :class:`bodi.integrations.optuna.BODiSampler` (10 random startup
trials, then BODi; 30 trials) on an objective of 12 binary, one categorical (four values, one
of which, ``None``, always fails), one integer and one log-scale float parameter, additive
(minimum 0 at a hidden point), and prints, per BODi configuration, the best value found (mean
± s.e. over the seeds), how many of BODi's 20 suggestions failed, and the one-sided paired
t-test p of the first configuration being ahead (or behind) on the same seeds:

    python benchmarks/failed_trials.py --seeds 0-19 \\
        --configs "first_order=false" "first_order=auto-rescale" \\
        "first_order=false,failed_trials=worst" "first_order=auto-rescale,failed_trials=worst"
    python benchmarks/failed_trials.py --no-failures --configs ...   # None scores, not fails

Each configuration is BODi's options as in a ``bodi[...]`` spec, with the sampler's small
settings (``dictionary_size=32, num_restarts=4, raw_samples=256``); ``random`` is Optuna's
RandomSampler.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
import optuna
from scipy import stats

from bodi.experiments.runner import expand_seeds
from bodi.integrations.optuna import BODiSampler
from bodi.optimizers.registry import parse_method

HIDDEN = [True, False, True, True, False, False, True, False, True, False, False, True]
SMALL = {"dictionary_size": 32, "num_restarts": 4, "raw_samples": 256}
TRIALS, STARTUP = 30, 10


def objective(trial: optuna.Trial, failures: bool = True) -> float:
    """Distance to a hidden configuration (0 there), maximized as its negative; ``opt=None``
    raises when ``failures``."""
    bits = [trial.suggest_categorical(f"b{i}", [False, True]) for i in range(len(HIDDEN))]
    opt = trial.suggest_categorical("opt", ["adam", "sgd", "rmsprop", None])
    layers = trial.suggest_int("layers", 1, 16)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    if failures and opt is None:
        raise RuntimeError("no such optimizer")
    distance = sum(b != h for b, h in zip(bits, HIDDEN, strict=True)) + 2.0 * (
        opt != "rmsprop") + 0.25 * abs(layers - 11) + (math.log10(lr) + 3.3) ** 2
    return -distance


def run(config: str, seed: int, failures: bool) -> tuple[float, int]:
    """Best value and the number of failed trials after the startup ones, of one study."""
    if config == "random":
        sampler: optuna.samplers.BaseSampler = optuna.samplers.RandomSampler(seed=seed)
    else:
        sampler = BODiSampler(seed=seed, n_startup_trials=STARTUP, **SMALL,
                              **parse_method(f"bodi[{config}]")[1])
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(lambda t: objective(t, failures), n_trials=TRIALS, catch=(RuntimeError,))
    failed = sum(t.state == optuna.trial.TrialState.FAIL for t in study.trials[STARTUP:])
    return study.best_value, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["first_order=false"])
    parser.add_argument("--seeds", default="0-19")
    parser.add_argument("--no-failures", action="store_true",
                        help="opt=None scores like any other value instead of failing")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    seeds = expand_seeds(args.seeds)
    results = {}
    print("| configuration | best (mean ± s.e.) | failed suggestions | p against the first |")
    print("|---|---|---|---|")
    for config in args.configs:
        best, failed = zip(*(run(config, seed, not args.no_failures) for seed in seeds),
                           strict=True)
        results[config] = np.array(best)
        first = results[args.configs[0]]
        p = "" if config == args.configs[0] else "first ahead {:.3f}, behind {:.3f}".format(
            *(stats.ttest_rel(a, b, alternative="greater").pvalue
              for a, b in ((first, results[config]), (results[config], first))))
        se = np.std(best, ddof=1) / math.sqrt(len(best))
        print(f"| {config} | {np.mean(best):.3f} ± {se:.2f} | {sum(failed)} | {p} |", flush=True)


if __name__ == "__main__":
    main()
