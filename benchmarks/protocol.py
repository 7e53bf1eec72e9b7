"""The train/test protocol: every method on fresh instances of every problem family.

Usage:
    python benchmarks/protocol.py --split train              # instance seeds 0-9: choose here
    python benchmarks/protocol.py --split test               # instance seeds 1000-1009
    python benchmarks/protocol.py --split train --families rna40-i{seed} --methods bodi,sa
    python benchmarks/protocol.py --split train --report     # the table of what is stored

Protocol: each family is a problem name with ``{seed}`` (:func:`bodi.experiments.runner.
run_benchmark`): run seed ``s`` optimizes the family's instance ``s``, so a family's seeds are
fresh instances and every paired comparison pairs two methods on one instance. Anything may be
chosen on the training split (instance seeds below 1000); the test split (seeds from 1000) is
run once the default is frozen, every method on every seed. 200 evaluations; the shared
uniform design of 20 points for every method that takes one (Bounce samples its own 5 points
in its embedding; a family's known working configuration, such as an Ehrlich function's
feasible start, is evaluated first by every method). Every evaluation is stored at once in
``results/protocol-<split>/results.db`` (``--out``), so an interrupted run resumes with the
same command; each run records bodi's version, commit and settings. The table (mean ± s.e.
over instances, ranks over all seeds, paired one-sided tests of the leader):

    bodi report results/protocol-train
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from bodi.experiments.runner import expand_seeds, run_benchmark
from bodi.optimizers.registry import split_methods

ROOT = Path(__file__).resolve().parents[1]
#: the families: binary, categorical, mixed and sequence design, 25 to 200 variables
FAMILIES = [
    "labs60-shifted-i{seed}",  # binary, rugged: LABS with its bits flipped by a random mask
    "maxsat-random200-shifted-i{seed}",  # binary, weighted MaxSAT, 200 variables
    "planted-binary60-shifted-i{seed}",  # binary, an optimum at a hidden bit string
    "pest25-shifted-i{seed}",  # categorical chain, 5 choices
    "ackley-categorical50-shifted-i{seed}",  # categorical, 11 unordered values each
    "ackley53-shifted-i{seed}",  # mixed: 50 binary and 3 continuous parameters
    "rna40-i{seed}",  # RNA inverse folding (ViennaRNA), 4 letters, 40 bases
    "ehrlich32-i{seed}",  # Ehrlich function, 20 states, most sequences infeasible
]
#: in the order they run: the cheap ones first, so that a partial table covers many methods
METHODS = ["random", "sa", "ga", "tpe", "bounce", "bodi", "casmopolitan"]
SPLITS = {"train": "0-9", "test": "1000-1009"}
BUDGET, N_INIT = 200, 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=sorted(SPLITS), required=True)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seeds", help="a part of the split's seeds (default: all of them)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", help="default: results/protocol-<split>")
    parser.add_argument("--report", action="store_true", help="print the table and stop")
    args = parser.parse_args()
    out = Path(args.out or ROOT / "results" / f"protocol-{args.split}")
    if args.report:
        sys.exit(subprocess.call([sys.executable, "-m", "bodi", "report", str(out)]))
    seeds = expand_seeds(args.seeds or SPLITS[args.split])
    first, last = expand_seeds(SPLITS[args.split])[0], expand_seeds(SPLITS[args.split])[-1]
    if any(not first <= s <= last for s in seeds):
        parser.error(f"--seeds of the {args.split} split lie in {SPLITS[args.split]}")
    families = [f for f in args.families.split(",") if f]
    for method in split_methods(args.methods):
        for family in families:
            start = time.perf_counter()
            run_benchmark([family], [method], seeds, budget=BUDGET, n_init=N_INIT, out=out,
                          n_workers=args.workers, progress=False, design="uniform").close()
            print(f"{method} on {family}: done in {time.perf_counter() - start:.0f} s",
                  flush=True)


if __name__ == "__main__":
    main()
