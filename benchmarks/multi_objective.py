"""Two objectives on svm53: test error against feature cost, hypervolume by evaluation.

Usage:
    python benchmarks/multi_objective.py                          # 5 seeds, 100 evaluations
    python benchmarks/multi_objective.py --methods bodi --seeds 5-9
    python benchmarks/multi_objective.py --report-only \
        --methods "random,nsga2,tpe,bodi[trust_region.box_failure_tolerance=null],bodi"

Every method (BODi with qLogNEHVI and the feature cost as a known objective, Optuna's NSGA-II
and multi-objective TPE, random search) runs through one loop
(:func:`bodi.experiments.multi_objective_runner.run_multi_objective`) with the same seeds,
budget and shared initial design of 20 points; runs are stored studies in
``OUT/studies.db`` (``--out``, default ``results/multi_objective``), so an interrupted run
resumes with the same command and a later run adds seeds. The table (hypervolume above the
reference point (1, 1) at 25, 50 and 100 evaluations, mean ± standard error, paired test) is
printed and the figure written to ``--figure``; ``--report-only --out data/multi_objective``
reports the committed studies, read-only. As in ``bodi report``, ``A|B`` in ``--methods``
shows the studies of label ``B`` as method ``A`` (``"bodi 0.7|bodi[design_in_model=all]"``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bodi.experiments.analysis import shown_names
from bodi.experiments.multi_objective_runner import (
    hypervolume_curves,
    hypervolume_table,
    plot_hypervolume,
    run_multi_objective,
)
from bodi.experiments.runner import expand_seeds
from bodi.optimizers.registry import split_methods
from bodi.problems.multi_objective import MULTI_OBJECTIVE_PROBLEMS

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="svm53-cost", choices=sorted(MULTI_OBJECTIVE_PROBLEMS))
    parser.add_argument("--methods", default="random,nsga2,tpe,bodi")
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--n-init", type=int, default=20)
    parser.add_argument("--out", default=str(ROOT / "results" / "multi_objective"),
                        help="where the studies go (docs/results.md reports data/multi_objective)")
    parser.add_argument("--figure", default="multi-objective-svm53.png")
    parser.add_argument("--report-only", action="store_true", help="only the table and figure")
    parser.add_argument("--reference", default="bodi",
                        help="the method the table's paired tests compare the others with")
    args = parser.parse_args()
    problem = MULTI_OBJECTIVE_PROBLEMS[args.problem]()
    specs = split_methods(args.methods)
    methods = [m.split("|")[-1].strip() for m in specs]  # the studies' labels
    shown = dict(zip(methods, shown_names(specs), strict=True))
    seeds = expand_seeds(args.seeds)
    path = Path(args.out) / "studies.db"
    if not args.report_only:
        path = run_multi_objective(problem, methods, seeds, budget=args.budget,
                                   n_init=args.n_init, out=args.out)
    curves = {shown[label]: curve for label, curve in
              hypervolume_curves(path, problem, methods, seeds, args.budget).items()}
    checkpoints = [c for c in (25, 50, args.budget) if c <= args.budget]
    print(hypervolume_table(curves, sorted(set(checkpoints)), reference_method=args.reference))
    print(plot_hypervolume(curves, args.figure, f"{problem.name}: hypervolume (ref. point "
                           f"{problem.ref_point})", n_init=args.n_init))


if __name__ == "__main__":
    main()
