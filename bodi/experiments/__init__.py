"""Benchmark experiments: methods by name, the Dask runner, storage, plots and reports."""

from bodi.experiments.analysis import best_curves, plot_results, report
from bodi.experiments.methods import METHODS, make_optimizer, parse_method
from bodi.experiments.runner import Task, expand_seeds, run_benchmark, run_step
from bodi.experiments.storage import Evaluation, ResultsStore

__all__ = [
    "METHODS",
    "Evaluation",
    "ResultsStore",
    "Task",
    "best_curves",
    "expand_seeds",
    "make_optimizer",
    "parse_method",
    "plot_results",
    "report",
    "run_benchmark",
    "run_step",
]
