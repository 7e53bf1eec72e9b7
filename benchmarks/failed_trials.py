"""BODi through Optuna on small mixed objectives with a region that always fails.

A user's objective often fails for some settings (an invalid combination raises). This script
runs Optuna studies with :class:`bodi.integrations.optuna.BODiSampler` (10 random startup
COMPLETE trials, then BODi; 30 trials) on one of two objectives, both maximized, 0 at the optimum:

- ``optimizer``: 12 binary, one categorical (four values, one of which, ``None``, always
  fails), one integer and one log-scale float parameter, additive (the negative distance to a
  hidden point);
- ``flags``: 16 binary flags and two more settings of a made-up compiler; a run fails where two
  conflicting flags are both on (two pairs) or ``level="O3"`` meets ``unroll > 12`` (about
  half of uniform points fail), and the optimum lies on the failing region's edge; 50 trials;

and prints, per BODi configuration, the best value found (mean ± s.e. over the seeds), how
many of BODi's suggestions (the trials after the tenth COMPLETE one) failed, and the one-sided
paired t-test p of the first configuration being ahead (or behind) on the same seeds:

    python benchmarks/failed_trials.py --seeds 0-19 \\
        --configs "first_order=false" "first_order=auto-rescale" \\
        "first_order=false,failed_trials=worst" "first_order=auto-rescale,failed_trials=worst"
    python benchmarks/failed_trials.py --no-failures --configs ...   # None scores, not fails
    python benchmarks/failed_trials.py --objective flags --seeds 0-19 --configs ...
    python benchmarks/failed_trials.py --no-failures --per-seed --configs acquisition=ucb \
        acquisition=logei   # also each seed's best, one row per seed

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
STARTUP = 10


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


#: ``flags``: each flag's effect, the pairs that conflict, the levels' effects
FLAG_EFFECTS = [0.9, 0.6, -0.4, 0.8, 0.5, 0.7, 0.3, -0.2, 0.6, -0.5, 0.4, 0.2, -0.3, 0.5,
                0.1, -0.6]
CONFLICTS = [(0, 1), (5, 8)]
LEVELS = {"O1": 0.0, "O2": 1.0, "O3": 2.0}
UNROLL_EFFECT, UNROLL_SAFE = 0.1, 12


def flags_objective(trial: optuna.Trial, failures: bool = True) -> float:
    """A made-up compiler's speed-up, 0 at the best run that does not fail; conflicting
    flags, or ``O3`` with ``unroll > 12``, raise when ``failures`` (else they score as any
    other setting)."""
    flags = [trial.suggest_categorical(f"f{i}", [False, True]) for i in range(len(FLAG_EFFECTS))]
    level = trial.suggest_categorical("level", list(LEVELS))
    unroll = trial.suggest_int("unroll", 1, 16)
    if failures and (any(flags[a] and flags[b] for a, b in CONFLICTS)
                     or (level == "O3" and unroll > UNROLL_SAFE)):
        raise RuntimeError("the compiler crashed")
    value = sum(w for w, on in zip(FLAG_EFFECTS, flags, strict=True) if on) + LEVELS[level]
    return value + UNROLL_EFFECT * unroll - best_flags_value()


def best_flags_value() -> float:
    """The largest value of ``flags`` over the settings that do not fail."""
    free = [w for i, w in enumerate(FLAG_EFFECTS) if not any(i in pair for pair in CONFLICTS)]
    pairs = sum(max(0.0, FLAG_EFFECTS[a], FLAG_EFFECTS[b]) for a, b in CONFLICTS)
    levels = max(LEVELS["O3"] + UNROLL_EFFECT * UNROLL_SAFE, LEVELS["O2"] + UNROLL_EFFECT * 16)
    return sum(max(0.0, w) for w in free) + pairs + levels


OBJECTIVES = {"optimizer": objective, "flags": flags_objective}
#: trials per study, per objective
TRIALS = {"optimizer": 30, "flags": 50}


def run(config: str, seed: int, failures: bool, name: str = "optimizer"
        ) -> tuple[float, int, int]:
    """Best value, and the number of trials after the ``STARTUP``-th COMPLETE one (the random
    startup phase; the same trials for every BODi configuration of a seed) and of those that
    failed, of one study."""
    if config == "random":
        sampler: optuna.samplers.BaseSampler = optuna.samplers.RandomSampler(seed=seed)
    else:
        sampler = BODiSampler(seed=seed, n_startup_trials=STARTUP, **SMALL,
                              **parse_method(f"bodi[{config}]")[1])
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(lambda t: OBJECTIVES[name](t, failures), n_trials=TRIALS[name],
                   catch=(RuntimeError,))
    states = [t.state for t in study.trials]
    complete = [i for i, state in enumerate(states) if state == optuna.trial.TrialState.COMPLETE]
    after = complete[STARTUP - 1] + 1 if len(complete) >= STARTUP else len(states)
    failed = sum(state == optuna.trial.TrialState.FAIL for state in states[after:])
    return study.best_value, len(states) - after, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["first_order=false"])
    parser.add_argument("--seeds", default="0-19")
    parser.add_argument("--no-failures", action="store_true",
                        help="the failing settings score like any other instead of failing")
    parser.add_argument("--objective", choices=list(OBJECTIVES), default="optimizer")
    parser.add_argument("--per-seed", action="store_true",
                        help="also print each seed's best value per configuration")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    seeds = expand_seeds(args.seeds)
    results = {}
    print("| configuration | best (mean ± s.e.) | failed of the suggestions "
          "| p against the first |")
    print("|---|---|---|---|")
    for config in args.configs:
        best, suggested, failed = zip(*(run(config, seed, not args.no_failures, args.objective)
                                        for seed in seeds), strict=True)
        results[config] = np.array(best)
        first = results[args.configs[0]]
        p = "" if config == args.configs[0] else "first ahead {:.3f}, behind {:.3f}".format(
            *(stats.ttest_rel(a, b, alternative="greater").pvalue
              for a, b in ((first, results[config]), (results[config], first))))
        se = np.std(best, ddof=1) / math.sqrt(len(best))
        print(f"| {config} | {np.mean(best):.3f} ± {se:.2f} | {sum(failed)} of {sum(suggested)} | "
              f"{p} |", flush=True)
    if args.per_seed:
        print("\n| seed | " + " | ".join(args.configs) + " |")
        print("|---|" + "---|" * len(args.configs))
        for k, seed in enumerate(seeds):
            print(f"| {seed} | " + " | ".join(f"{results[c][k]:.3f}" for c in args.configs) + " |")


if __name__ == "__main__":
    main()
