"""Benchmark experiments: the Dask runner, storage, plots and reports."""

from bodi.experiments.analysis import best_curves, plot_results, report
from bodi.experiments.results import Evaluation, ResultsStore
from bodi.experiments.runner import Task, expand_seeds, run_benchmark, run_step

__all__ = [
    "Evaluation",
    "ResultsStore",
    "Task",
    "best_curves",
    "expand_seeds",
    "plot_results",
    "report",
    "run_benchmark",
    "run_step",
]
