"""The ``bodi`` command line.

torch, BoTorch and the problems are imported by the commands that compute, so that
``bodi --version`` and the commands that only read a study (``show``, ``studies``) answer at
once."""

from __future__ import annotations

import argparse
import logging
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from bodi.directions import DIRECTIONS
from bodi.extras import MissingExtraError, available, require
from bodi.objective import load_objective
from bodi.storage.urls import mask
from bodi.storage.urls import parse as parse_storage

#: the planted problems of ``bodi demo``: kind -> (problem function, its arguments)
DEMO_PROBLEMS = {
    "binary": ("planted_binary", (30,)),
    "categorical": ("planted_categorical", (15, 4)),
    "mixed": ("planted_mixed", (10, 5, 2)),
}
#: the commands that compute (and so use torch)
COMPUTING = ("demo", "bench", "run", "modelfit")


def _design(text: str) -> str:
    """``--design``: a kind of initial design (:data:`bodi.initial_design.DESIGNS`)."""
    from bodi.initial_design import check_design

    try:
        return check_design(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _split_methods(text: str) -> list[str]:
    from bodi.optimizers.registry import split_methods

    return split_methods(text)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _demo(args: argparse.Namespace) -> int:
    import bodi.problems
    from bodi.optimize import minimize

    function, arguments = DEMO_PROBLEMS[args.problem]
    problem = getattr(bodi.problems, function)(*arguments, seed=args.problem_seed)
    print(
        f"BODi on {problem.name}: {problem.space.dim} parameters, budget {args.budget}, "
        f"seed {args.seed} (the optimum {problem.optimal_value} is planted at a random point)"
    )
    start = time.perf_counter()
    result = minimize(
        problem, problem.space, budget=args.budget, seed=args.seed, n_init=args.n_init,
        progress=not args.quiet,
    )
    elapsed = time.perf_counter() - start
    print(f"best value {result.best_value:.6g} after {args.budget} evaluations ({elapsed:.1f} s)")
    print("best point:", result.best_params)
    gap = result.best_value - problem.optimal_value
    print("found the planted optimum" if gap == 0 else f"gap to the planted optimum: {gap:.3g}")
    return 0


DEFAULT_PROBLEMS = "labs50,maxsat60-shifted"


def _bench_extra(what: str) -> None:
    """``bodi bench`` and ``bodi modelfit`` need the ``bench`` extra: one line if it is missing."""
    for module in ("distributed", "matplotlib", "rich"):
        require(module, what, "bench")


def _bench(args: argparse.Namespace) -> int:
    _bench_extra("bodi bench")
    from bodi.experiments.analysis import plot_results, report
    from bodi.experiments.runner import expand_seeds, run_benchmark

    problems = args.problems or DEFAULT_PROBLEMS
    start = time.perf_counter()
    store = run_benchmark(
        [p.strip() for p in problems.split(",") if p.strip()],
        [m.strip() for m in _split_methods(args.methods)],
        expand_seeds(args.seeds),
        budget=args.budget, n_init=args.n_init, out=args.out, scheduler=args.scheduler,
        n_workers=args.workers, wcnf=args.wcnf, csv=args.csv, progress=not args.quiet,
        device=args.device, design=args.design,
    )
    store.close()
    print(f"finished in {time.perf_counter() - start:.0f} s; results in "
          f"{Path(args.out) / 'results.db'}")
    if not args.no_plot:
        print(f"figure: {plot_results(args.out)}")
        table = report(args.out)
        (Path(args.out) / "report.md").write_text(table + "\n")
        print(table)
    return 0


def _names(text: str | None, methods: bool = False) -> list[str] | None:
    if not text:
        return None
    return _split_methods(text) if methods else [p.strip() for p in text.split(",")
                                                 if p.strip()]


def _plot(args: argparse.Namespace) -> int:
    require("matplotlib", "bodi plot")
    from bodi.experiments.analysis import plot_ranks, plot_results

    selection = (_names(args.problems), _names(args.methods, methods=True), args.evaluations)
    path = plot_results(args.results, args.out, *selection, regret=args.regret)
    print(f"figure: {path}")
    if args.ranks:
        print(f"rank figure: {plot_ranks(args.results, args.ranks, *selection)}")
    return 0


def _report(args: argparse.Namespace) -> int:
    _bench_extra("bodi report")
    from bodi.experiments.analysis import against_report, report, shift_report

    selection = (_names(args.problems), _names(args.methods, methods=True), args.evaluations)
    if args.against:
        print(against_report(args.results, args.against, *selection))
        return 0
    table = shift_report if args.shifted else report
    print(table(args.results, *selection))
    return 0


def _modelfit(args: argparse.Namespace) -> int:
    _bench_extra("bodi modelfit")
    from bodi.experiments.modelfit import run_modelfit, summary_table, write_outputs
    from bodi.experiments.runner import expand_seeds

    seeds = expand_seeds(args.seeds)
    models = None if args.models is None else [m.strip() for m in args.models.split(",")
                                                if m.strip()]
    command = (
        f"bodi modelfit --problem {args.problem} --train {args.train} --test {args.test} "
        f"--seeds {args.seeds} --out {args.out} --m {args.m}"
        + (f" --models {','.join(models)}" if models is not None else "")
        + (f" --wcnf {args.wcnf}" if args.wcnf else "")
    )
    study = run_modelfit(
        args.problem, n_train=args.train, n_test=args.test, seeds=seeds, models=models,
        dictionary_size=args.m, wcnf=args.wcnf, log=None if args.quiet else print,
    )
    paths = write_outputs(study, args.out, command)
    print(summary_table(study.rows))
    print(f"finished in {study.seconds:.0f} s; " + ", ".join(str(p) for p in paths.values()))
    return 0


def _stored_design(record) -> str:
    """The initial design of a stored study's ``record`` (``"uniform"`` for a new study:
    ``None``)."""
    from bodi.optimizers.registry import optimizer_class

    if record is None:
        return "uniform"
    return {**optimizer_class(record.optimizer).legacy_settings, **record.settings}.get(
        "design", "uniform")


def _run(args: argparse.Namespace) -> int:
    from bodi.space import SearchSpace
    from bodi.storage import open_storage

    space = SearchSpace.from_json(args.space)
    catch = _catch_option(args.catch)
    # nothing is created or written (study file, tables, cluster connection) before the run
    # can start: the storage is first only read (the study's record once), then opened for
    # the run
    reader = open_storage(args.storage, read_only=True) if _is_file_or_url(
        args.storage) else None
    record = reader.get_study(args.study_name) if reader is not None else None
    existing = record is not None
    before = len(reader.trials(args.study_name)) if existing else 0
    if reader is not None:
        reader.close()
    if args.join and args.resume:
        raise ValueError("pass --join or --resume, not both (--join also resumes)")
    if existing and not (args.resume or args.join):
        raise ValueError(
            f"{args.storage} already holds study {args.study_name!r}; pass --resume to continue "
            "it (or --join, which starts it or continues it)"
        )
    if args.resume and not existing:
        raise ValueError(f"--resume: {args.storage} holds no study {args.study_name!r} to "
                         "resume; leave out --resume to start it")
    if args.retry_failed and not existing:
        raise ValueError(f"--retry-failed: {args.storage} holds no study {args.study_name!r} "
                         "to retry")
    objective = load_objective(args.objective)
    executor = "process" if args.isolate else None
    if args.scheduler:
        Client = require("distributed", "bodi run --scheduler").Client

        # the client's own reconnection errors are tracebacks in its logs (its client and its
        # batched sends); a lost scheduler is reported once, by the run
        # (bodi.executors.ClusterLostError)
        for logger_name in ("distributed.client", "distributed.batched"):
            logging.getLogger(logger_name).setLevel(logging.CRITICAL)
        try:
            executor = Client(args.scheduler, timeout=10)
        except (OSError, TimeoutError) as err:
            raise ValueError(f"cannot reach the Dask scheduler at {args.scheduler} "
                             f"({type(err).__name__}); start it or check --scheduler") from err
    storage = open_storage(args.storage)
    if args.retry_failed:
        from bodi.loading import load_study

        retried = load_study(storage, args.study_name).retry_failed()
        print(f"{len(retried)} failed trial(s) put back to be evaluated again")
    try:
        result = _minimize_or_objective_traceback(
            objective, space, budget=args.budget, seed=args.seed, direction=args.direction,
            directions=_directions(args.directions),
            outcome_constraints=args.outcome_constraints,
            n_workers=args.workers, executor=executor, storage=storage,
            evaluation_timeout=args.evaluation_timeout, time_limit=args.time_limit,
            study_name=args.study_name, n_init=args.n_init, progress=not args.quiet,
            max_consecutive_failures=args.max_failures, max_attempts=args.max_attempts,
            device=args.device, dtype=args.dtype,
            design=args.design or _stored_design(record),
            catch=catch, start_from=args.start_from,
        )
    finally:
        if executor is not None and not isinstance(executor, str):
            executor.close()
    states = [t.state for t in result.trials]
    if existing and len(states) >= args.budget and before >= args.budget:
        print(f"the study already holds {before} trials, --budget {args.budget}: nothing to "
              "evaluate (raise --budget to continue it)")
    print(f"{states.count('complete')} complete, {states.count('failed')} failed trials in "
          f"{args.storage} (study {args.study_name!r})")
    if result.study.is_multi_objective:
        print(f"{len(result.pareto_front)} Pareto-optimal trials:")
        _print_front(result.pareto_front)
    elif result.best_value is None:
        print("no evaluation completed; `bodi show` lists the failures")
        return 1
    else:
        print(f"best value {result.best_value:.6g} at {result.best_params}")
    return 0


class _ObjectiveRaisedError(Exception):
    """The objective raised an exception that ``--catch`` does not name (already printed)."""


def _minimize_or_objective_traceback(*args, **kwargs):
    """:func:`bodi.minimize`; an exception of the objective is printed with its traceback
    (the user's code, and bodi's note of the failed trial it was stored as) and ends the
    command with exit code 1."""
    import traceback

    from bodi.optimize import minimize

    try:
        return minimize(*args, **kwargs)
    except Exception as err:
        if getattr(err, "bodi_trial_number", None) is None:
            raise
        traceback.print_exception(err)
        raise _ObjectiveRaisedError from None


def _catch_option(text: str | None) -> tuple[type[Exception], ...]:
    """``--catch KeyError,mymodule.SimulatorError`` as exception classes (built-in names, or
    ``module.Class`` imported)."""
    import builtins
    import importlib

    classes = []
    for name in filter(None, (n.strip() for n in (text or "").split(","))):
        module, _, attribute = name.rpartition(".")
        try:
            found = getattr(importlib.import_module(module) if module else builtins, attribute)
        except (ImportError, AttributeError):
            found = None
        if not (isinstance(found, type) and issubclass(found, Exception)):
            raise ValueError(f"--catch {name}: not an exception class (a built-in name such as "
                             "KeyError, or module.Class)")
        classes.append(found)
    return tuple(classes)


def _is_file_or_url(storage: str) -> bool:
    """Whether ``storage`` names an existing, non-empty study file (or a database URL)."""
    name = parse_storage(storage)
    return name.is_url or (name.path.is_file() and name.path.stat().st_size > 0)


def _directions(text: str | None) -> list[str] | None:
    """``--directions minimize,maximize`` as a list (``None`` when not given)."""
    if text is None:
        return None
    directions = [d.strip() for d in text.split(",")]
    bad = [d for d in directions if d not in DIRECTIONS]
    if bad or len(directions) < 2:
        raise ValueError(f"--directions takes two or more of minimize/maximize separated by "
                         f"commas, got {text!r}")
    return directions


def _print_front(front: list) -> None:
    from bodi.stored_studies import objective_values

    for trial in front:
        values = ", ".join(f"{v:.6g}" for v in objective_values(trial))
        print(f"  #{trial.number}: ({values})")


def _show(args: argparse.Namespace) -> int:
    import json

    from bodi.plots import plot_study
    from bodi.stored_studies import StoredStudy, trial_as_dict

    study = StoredStudy.read(args.storage, args.study_name)  # no torch: read at once
    if args.csv:
        from bodi.export import write_csv

        if args.csv == "-":  # the table alone, on standard output
            write_csv(study, sys.stdout)
            return 0
        study_file = parse_storage(args.storage).path
        if study_file is not None and Path(args.csv).resolve() == study_file.resolve():
            raise ValueError(f"--csv {args.csv} is the study file itself; name another file")
        print(f"trials table: {write_csv(study, args.csv)}")
    if args.json:
        print(json.dumps({"study": study.study_name, "direction": study.direction,
                          "trials": [trial_as_dict(t) for t in study.trials]}, indent=2))
        return 0
    states = [t.state for t in study.trials]
    print(f"study {study.study_name!r}: {len(states)} trials ({states.count('complete')} "
          f"complete, {states.count('failed')} failed, {states.count('pending')} pending), "
          f"{study.direction}")
    plot = plot_path(args.storage, args.plot, study.study_name)
    can_plot = available("matplotlib")
    no_plot = ("(no plot: matplotlib is not installed; pip install 'bodi[plot]' or "
               "'matplotlib')")
    if study.is_multi_objective:
        front = study.pareto_front
        print(f"{len(front)} Pareto-optimal trials" + (":" if front else ""))
        _print_front(front)
        if front:
            print(f"Pareto-front plot: {plot_study(study, plot)}" if can_plot else no_plot)
        return 0
    best = study.best
    if best is None:
        print("no completed trial yet")
    else:
        number = best[2]
        print(f"best trial #{number}: value {best[1]:.6g}")
        for name, value in best[0].items():
            print(f"  {name} = {value!r}")
        print(f"convergence plot: {plot_study(study, plot)}" if can_plot else no_plot)
    return 0


def _studies(args: argparse.Namespace) -> int:
    from bodi.stored_studies import copy_study, delete_study, study_summaries

    if args.delete and args.copy:
        raise ValueError("pass --delete or --copy, not both")
    if args.delete:
        delete_study(args.storage, args.delete)
        print(f"deleted study {args.delete!r} from {args.storage}")
        return 0
    if args.copy:
        target = args.to or args.storage
        name = copy_study(args.storage, args.copy, target, args.new_name)
        print(f"copied study {args.copy!r} to {target} as {name!r}")
        return 0
    if args.to or args.new_name:
        raise ValueError("--to and --as go with --copy NAME")
    summaries = study_summaries(args.storage)
    if not summaries:
        print(f"{args.storage} holds no study")
    for line in summaries:
        print(line)
    return 0


def _export(args: argparse.Namespace) -> int:
    from bodi.export import export_to_optuna
    from bodi.stored_studies import StoredStudy

    study = StoredStudy.read(args.storage, args.study_name)
    try:  # the export's own line says what happened; Optuna's INFO lines would repeat it
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
    except ImportError:
        pass  # export_to_optuna names the extra to install
    name = export_to_optuna(study, args.optuna, args.optuna_study_name, replace=args.replace)
    print(f"exported {len(study.trials)} trials to Optuna study {name!r} in {args.optuna} "
          f"(optuna-dashboard {args.optuna} shows it)")
    return 0


def plot_path(storage: str, plot: str | None, study_name: str = "study") -> Path:
    """Where ``bodi show`` draws: ``plot``, or the study file with ``.png`` as its suffix
    (for a database URL, ``STUDY_NAME.png`` in the working directory); never the study file
    itself (``study.png`` plots to ``study.plot.png``)."""
    name = parse_storage(storage)
    if name.is_url:
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in study_name).lstrip(".")
        return Path(plot) if plot else Path(f"{stem or 'study'}.png")
    study = name.path
    path = Path(plot) if plot else study.with_suffix(".png")
    if path.resolve() == study.resolve():
        if plot:
            raise ValueError(f"--plot {plot} is the study file itself; name another file")
        path = study.with_suffix(".plot.png")
    return path


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--problems", default=None,
                        help="comma-separated problems to show, in this order (default: all)")
    parser.add_argument("--methods", default=None,
                        help="comma-separated methods to show, in this order (default: all); "
                        "'A|B' shows the runs of label B as A's (one method, two labels); "
                        "a run also shows under each method that builds the same BODi on its "
                        "problem")
    parser.add_argument("--evaluations", type=int, default=None,
                        help="count only the first N evaluations of every run (compare methods "
                             "at an equal budget; default: all)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bodi",
        description="Bayesian optimization over binary, categorical and mixed spaces (BODi).",
    )
    from bodi import __version__

    parser.add_argument("--version", action="version", version=f"bodi {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run BODi on a built-in planted problem")
    demo.add_argument("--problem", choices=sorted(DEMO_PROBLEMS), default="binary",
                      help="the planted problem (default %(default)s)")
    demo.add_argument("--budget", type=_positive_int, default=60,
                      help="evaluations in all, the initial design included (default %(default)s)")
    demo.add_argument("--n-init", type=_positive_int, default=20,
                      help="size of the initial design (default %(default)s)")
    demo.add_argument("--seed", type=int, default=0, help="optimizer seed")
    demo.add_argument("--problem-seed", type=int, default=0, help="seed of the planted optimum")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(handler=_demo)

    bench = sub.add_parser(
        "bench", help="run methods on benchmark problems (parallel on Dask, resumable)"
    )
    bench.add_argument("--problems", default=None,
                       help="comma-separated problem names; {seed} in a name runs the "
                            "instance of each seed (rna40-i{seed}) (default "
                            f"{DEFAULT_PROBLEMS})")
    bench.add_argument("--methods", default="bodi,random",
                       help="comma-separated methods, e.g. bodi,random,bodi[m=32]")
    bench.add_argument("--seeds", default="0-2", help="e.g. 0-9 or 0,3,5")
    bench.add_argument("--budget", type=_positive_int, default=100,
                       help="evaluations per run, the initial design included "
                            "(default %(default)s)")
    bench.add_argument("--n-init", type=_positive_int, default=20,
                       help="size of the initial design shared by every method "
                            "(default %(default)s)")
    bench.add_argument("--out", default="results",
                       help="results directory (default %(default)s); a rerun continues it")
    bench.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    bench.add_argument("--workers", type=_positive_int, default=None,
                       help="LocalCluster workers (default: one per core; 1: in this process, "
                            "without Dask)")
    bench.add_argument("--wcnf", default=None, help="path of frb10-6-4.wcnf for maxsat60")
    bench.add_argument("--csv", default=None, help="slice localization CSV for svm53")
    bench.add_argument("--no-plot", action="store_true", help="skip the figure and the table")
    bench.add_argument("--quiet", action="store_true", help="no progress bars")
    bench.add_argument("--device", default=None,
                       help="where the GP methods' models compute: cpu (default) or cuda")
    bench.add_argument("--design", type=_design, default="uniform",
                       help="the shared initial design: uniform (default, shift-invariant) or "
                            "sparsity (the BODi authors')")
    bench.set_defaults(handler=_bench)

    plot = sub.add_parser("plot", help="convergence figure of results directories")
    plot.add_argument("results", nargs="+", help="one or more results directories (combined)")
    plot.add_argument("--out", default=None, help="PNG path (default RESULTS/figure.png)")
    plot.add_argument("--regret", action="store_true",
                      help="plot the regret (distance to the known optimum), log scale")
    plot.add_argument("--ranks", default=None, metavar="PNG",
                      help="also draw the mean-rank figure (MCBO's kind) to this path")
    _add_selection(plot)
    plot.set_defaults(handler=_plot)

    run = sub.add_parser("run", help="optimize your own objective; the study is stored in SQLite "
                                     "or PostgreSQL")
    run.add_argument("--objective", required=True,
                     help="module:function or file.py:function (takes a dict, returns a float)")
    run.add_argument("--space", required=True, help="search space JSON file")
    run.add_argument("--budget", type=_positive_int, required=True,
                     help="finished trials the study should have, the initial design included")
    run.add_argument("--storage", required=True,
                     help="the study: a SQLite file (study.db) or a PostgreSQL URL "
                          "(postgresql://user@host:5432/db, the postgres extra)")
    run.add_argument("--study-name", default="default",
                     help="the study within the storage (default: %(default)s)")
    run.add_argument("--seed", type=int, default=0,
                     help="seed of every random choice of the optimizer (default %(default)s)")
    run.add_argument("--direction", choices=["minimize", "maximize"], default="minimize",
                     help="of the one objective (default %(default)s)")
    run.add_argument("--directions", default=None,
                     help="several objectives, e.g. minimize,minimize: the objective returns "
                          "one value per objective; the result is a Pareto front")
    run.add_argument("--outcome-constraints", type=int, default=0, metavar="C",
                     help="the objective returns bodi.Outcome(value, constraints=[C numbers]); "
                          "a trial is feasible when all are <= 0")
    run.add_argument("--workers", type=_positive_int, default=1,
                     help="evaluations running at once (threads, or Dask with --scheduler)")
    run.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    run.add_argument("--evaluation-timeout", "--timeout", type=_positive_float, default=None,
                     dest="evaluation_timeout", metavar="SECONDS",
                     help="an evaluation running longer fails (--timeout: its old name)")
    run.add_argument("--time-limit", type=_positive_float, default=None, metavar="SECONDS",
                     help="start no evaluation after this many seconds of the run")
    run.add_argument("--n-init", type=_positive_int, default=20,
                     help="size of the initial design (default %(default)s)")
    run.add_argument("--design", type=_design, default=None,
                     help="initial design: uniform (shift-invariant; the default for a new "
                          "study) or sparsity (the BODi authors'); a resumed study keeps its own")
    run.add_argument("--catch", default=None, metavar="EXCEPTIONS",
                     help="exceptions of the objective that are expected failures, e.g. "
                          "RuntimeError,mysim.CrashError (Exception: all); any other stops the "
                          "run at once, stored as a failed trial, with its traceback")
    run.add_argument("--max-failures", type=_positive_int, default=10,
                     help="stop after this many failures in a row")
    run.add_argument("--isolate", action="store_true",
                     help="evaluate each configuration in its own process: one that crashes "
                          "or kills its process is recorded as a failed trial")
    run.add_argument("--max-attempts", type=_positive_int, default=2,
                     help="a configuration whose evaluation was lost (its process died) this "
                          "many times is marked failed instead of re-issued (default %(default)s)")
    run.add_argument("--resume", action="store_true",
                     help="continue an existing study (also: join other workers running it)")
    run.add_argument("--join", action="store_true",
                     help="start the study, or continue it if it exists: what N identical "
                          "workers started at once pass (Optuna's load_if_exists)")
    run.add_argument("--start-from", default=None, metavar="STORAGE",
                     help="copy the finished trials of an earlier study (a study file or URL "
                          "with one study, or one of --study-name) in first; the space may be "
                          "wider (more choices, wider bounds)")
    run.add_argument("--retry-failed", action="store_true",
                     help="with --resume: evaluate the study's failed trials again first")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--device", default=None,
                     help="where the model computes: cpu (default) or cuda; not part of the "
                          "study, so a study may resume on another device")
    run.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                     help="the model's precision (stored with the study)")
    run.set_defaults(handler=_run)

    show = sub.add_parser("show", help="best trial and convergence plot of a stored study "
                                       "(several objectives: Pareto front and its plot)")
    show.add_argument("storage", help="the study file (study.db) or PostgreSQL URL")
    show.add_argument("--study-name", default=None,
                      help="the study (default: the storage's only one)")
    show.add_argument("--json", action="store_true", help="print every trial as JSON")
    show.add_argument("--plot", default=None,
                      help="PNG path (default: STORAGE with .png; STUDY_NAME.png for a URL)")
    show.add_argument("--csv", default=None, metavar="PATH",
                      help="also write every trial as a CSV table (columns as Optuna's "
                           "trials_dataframe); '-': the table alone, on standard output")
    show.set_defaults(handler=_show)

    studies = sub.add_parser("studies", help="list, delete or copy the studies of a study file")
    studies.add_argument("storage", help="the study file (study.db) or PostgreSQL URL")
    studies.add_argument("--delete", default=None, metavar="NAME", help="delete study NAME")
    studies.add_argument("--copy", default=None, metavar="NAME", help="copy study NAME ...")
    studies.add_argument("--to", default=None, metavar="STORAGE",
                         help="... into this study file (default: the same file)")
    studies.add_argument("--as", dest="new_name", default=None, metavar="NEW",
                         help="... under this name (default: its own)")
    studies.set_defaults(handler=_studies)

    export = sub.add_parser("export", help="write a study into an Optuna storage (e.g. for "
                                           "optuna-dashboard)")
    export.add_argument("storage", help="the study file (study.db) or PostgreSQL URL")
    export.add_argument("--study-name", default=None,
                        help="the study (default: the storage's only one)")
    export.add_argument("--optuna", required=True, metavar="URL",
                        help="Optuna RDB storage: a URL (sqlite:///optuna.db, "
                             "postgresql://...) or an SQLite file's path")
    export.add_argument("--replace", action="store_true",
                        help="replace an Optuna study of the same name (default: refuse)")
    export.add_argument("--optuna-study-name", default=None,
                        help="the Optuna study's name (default: the bodi study's)")
    export.set_defaults(handler=_export)

    fit = sub.add_parser(
        "modelfit",
        help="predictive accuracy of the surrogates (HED dictionaries, overlap, diffusion) "
        "on random train/test points of a problem",
    )
    fit.add_argument("--problem", default="maxsat60", help="benchmark problem name")
    fit.add_argument("--wcnf", default=None, help="path of frb10-6-4.wcnf for maxsat60")
    fit.add_argument("--train", type=_positive_int, default=50, help="training points per seed")
    fit.add_argument("--test", type=_positive_int, default=50, help="test points per seed")
    fit.add_argument("--seeds", default="0-9", help="e.g. 0-9 or 0,3,5")
    fit.add_argument("--out", default="modelfit", help="output directory")
    fit.add_argument("--models", default=None,
                     help="comma-separated subset of hed-diverse,hed-naive,hed-wavelet,"
                     "hed-gaussian,overlap,diffusion (default: all defined on the problem)")
    fit.add_argument("--m", type=_positive_int, default=128, help="HED dictionary size")
    fit.add_argument("--quiet", action="store_true", help="no per-seed progress lines")
    fit.set_defaults(handler=_modelfit)

    rep = sub.add_parser("report", help="Markdown table of results directories")
    rep.add_argument("results", nargs="+", help="one or more results directories (combined)")
    rep.add_argument("--shifted", action="store_true",
                     help="compare each problem with its -shifted twin, method by method")
    rep.add_argument("--against", metavar="RESULTS",
                     help="compare each method with the same method in RESULTS (e.g. an "
                          "earlier version's runs), paired by seed, with a one-sided test")
    _add_selection(rep)
    rep.set_defaults(handler=_report)
    return parser


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``finally`` runs."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated


def _interrupted(args: argparse.Namespace, err: KeyboardInterrupt) -> int:
    what = "terminated" if isinstance(err, _Terminated) else "interrupted"
    storage = getattr(args, "storage", None)
    if args.command == "run":
        hint = (f"every finished evaluation is stored in {storage}; continue with the same "
                "command and --resume")
    elif args.command == "bench":
        hint = (f"finished runs are stored in {Path(args.out) / 'results.db'}; the same "
                "command resumes")
    else:
        hint = "nothing was lost"
    print(f"bodi: {what}; {hint}", file=sys.stderr)
    return 143 if isinstance(err, _Terminated) else 130


def _database_hint(err: sqlite3.Error) -> str:
    """A database error as one line with what to do about it."""
    text = str(err)
    if "locked" in text or "busy" in text:
        hint = ("another process has held the study file's lock for over 60 s; run again "
                "(with --resume) when it is done")
    elif "full" in text or "I/O" in text:
        hint = "the disk is full or failing; free space, then run again with --resume"
    elif "readonly" in text or "read-only" in text:
        hint = "the study file cannot be written here; copy it somewhere writable"
    else:
        hint = "the study file is damaged or not a bodi study file"
    return f"study database: {text} ({hint})"


class _MaskedStream:
    """A text stream that writes through :func:`bodi.storage.urls.mask`: no password of a
    database URL reaches the terminal, whichever message carries it."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(mask(text))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _MaskedStream(sys.stdout), _MaskedStream(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in COMPUTING:
        import torch

        torch.set_num_threads(max(1, min(torch.get_num_threads(), 2)))
    previous = signal.getsignal(signal.SIGTERM)
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return args.handler(args)
    except KeyboardInterrupt as err:
        return _interrupted(args, err)
    except _ObjectiveRaisedError:
        return 1
    except BrokenPipeError:  # e.g. `bodi show study.db | head`
        sys.stderr.close()
        return 0
    except (ValueError, RuntimeError, FileNotFoundError, MissingExtraError) as err:
        print(f"bodi: error: {err}", file=sys.stderr)
        return 2
    except sqlite3.Error as err:  # one line that says what to do
        print(f"bodi: error: {_database_hint(err)}", file=sys.stderr)
        return 2
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
