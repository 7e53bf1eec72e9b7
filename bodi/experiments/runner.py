"""The benchmark runner: (problem, method, seed) tasks on a Dask cluster (or in this process
with one worker), resumable.

Each task is advanced one *step* at a time. A step is a Dask task that rebuilds the problem and
a fresh optimizer from the task's history, tells it every past evaluation, asks one point and
evaluates it (the first step evaluates the whole initial design as one batch). The driver
persists each finished evaluation to SQLite before submitting the task's next step. Steps only
depend on the history, so a run that is interrupted and started again with the same command
continues exactly where it stopped and redoes no finished evaluation. Every method gets the same
initial design for a given (problem, seed): :func:`bodi.initial_design.initial_design`, by
default its shift-invariant ``"uniform"`` kind (methods that sample their own initial points,
``brings_own_design``, such as Bounce, skip it).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import warnings
from collections import deque
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import torch
from botorch.exceptions.warnings import OptimizationWarning

from bodi.directions import best_of
from bodi.experiments.results import Evaluation, ResultsStore, finite_or_none
from bodi.experiments.traces import write_traces
from bodi.initial_design import initial_design
from bodi.optimizers.registry import make_optimizer, optimizer_class, parse_method
from bodi.problems import Problem, get_problem
from bodi.progress import ProgressBars
from bodi.trials import History
from bodi.version import __version__


@dataclass(frozen=True)
class Task:
    """One optimization run of the benchmark."""

    problem: str
    method: str
    seed: int
    budget: int
    n_init: int
    wcnf: str | None = None
    csv: str | None = None
    #: where GP methods' models compute (not part of the results: a task resumes on any device)
    device: str | None = None
    #: the kind of the shared initial design (:data:`bodi.initial_design.DESIGNS`)
    design: str = "uniform"

    @property
    def instance(self) -> str:
        """The problem this task runs: :attr:`problem` with ``{seed}`` replaced by the seed,
        so that a family's name such as ``rna40-i{seed}`` runs a fresh instance per seed."""
        return instance_name(self.problem, self.seed)


def instance_name(problem: str, seed: int) -> str:
    """``problem`` with ``{seed}`` replaced by ``seed`` (a name without it, unchanged)."""
    return problem.replace("{seed}", str(seed))


@lru_cache(maxsize=16)
def _problem(name: str, wcnf: str | None, csv: str | None) -> Problem:
    return get_problem(name, wcnf=wcnf, csv=csv)


def _evaluate(problem: Problem, configs: list[dict[str, Any]]) -> tuple[list[Any], float]:
    """Values of ``configs`` (``None`` for failures) and the seconds per evaluation."""
    start = time.perf_counter()
    try:
        values = [finite_or_none(v) for v in problem.evaluate(configs).tolist()]
    except Exception:  # evaluate one by one so a single failure does not sink the batch
        values = []
        for config in configs:
            try:
                values.append(finite_or_none(problem(config)))
            except Exception:
                values.append(None)
    return values, (time.perf_counter() - start) / max(1, len(configs))


def run_step(task: Task, history: Sequence[Evaluation]) -> list[Evaluation]:
    """Advance ``task`` by one step given its ``history`` (runs on a worker)."""
    torch.set_num_threads(1)
    problem = _problem(task.instance, task.wcnf, task.csv)
    space = problem.space
    method = optimizer_class(parse_method(task.method)[0])
    start = [problem.initial_params] if problem.initial_params is not None else []
    if len(history) < len(start):  # the known working configuration, told first
        values, seconds = _evaluate(problem, start)
        return [Evaluation(start[0], values[0], 0.0, seconds)]
    if len(history) < len(start) + task.n_init and not method.brings_own_design:
        design = initial_design(space, task.n_init, task.seed,
                                task.design)[len(history) - len(start) :]
        configs = space.decode(design)
        values, seconds = _evaluate(problem, configs)
        return [Evaluation(c, v, 0.0, seconds) for c, v in zip(configs, values, strict=True)]
    seen = tuple(json.dumps(h.params, sort_keys=True) for h in history)
    optimizer, before = _LIVE.pop(task, (None, ()))
    if optimizer is None or seen[: len(before)] != before:  # not a continuation of its steps
        optimizer = make_optimizer(
            task.method, space, seed=task.seed, direction=problem.direction,
            n_init=task.n_init, device=task.device, budget=task.budget, design=task.design,
        )
    observed = History.from_observations(
        space, [problem.direction], completed=[(h.params, h.value) for h in history])
    start = time.perf_counter()
    with warnings.catch_warnings():
        # numerical notes of the acquisition optimizers (e.g. an L-BFGS-B line search that
        # stopped early) would scroll over the progress bars; they do not change the result
        warnings.simplefilter("ignore", OptimizationWarning)
        warnings.filterwarnings("ignore", message="Optimization failed", category=RuntimeWarning)
        config = space.decode(optimizer.suggest(observed, 1))[0]
    suggest_seconds = time.perf_counter() - start
    values, seconds = _evaluate(problem, [config])
    message = None if values[0] is not None else "evaluation failed or was not finite"
    if optimizer.keeps_state:
        _LIVE[task] = optimizer, seen
        while len(_LIVE) > MAX_LIVE_OPTIMIZERS:
            _LIVE.pop(next(iter(_LIVE)))
    return [Evaluation(config, values[0], suggest_seconds, seconds, message)]


#: optimizers that keep state (``keeps_state``, e.g. NGOpt's live Nevergrad optimizer) are kept
#: in the worker process between the steps of their task, with the configurations of the
#: history they have seen, so that their cache continues; a step on another worker, or after a
#: restart, starts a new optimizer from the history instead, with the same result
_LIVE: dict[Task, tuple[Any, tuple[str, ...]]] = {}
MAX_LIVE_OPTIMIZERS = 16


def expand_seeds(text: str) -> list[int]:
    """``"0-9"`` -> 0..9, ``"0,3,5-6"`` -> [0, 3, 5, 6]."""
    seeds: list[int] = []
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        low, sep, high = part.partition("-")
        try:
            seeds += list(range(int(low), int(high) + 1)) if sep else [int(part)]
        except ValueError:
            raise ValueError(f"cannot parse seeds {text!r}; use e.g. '0-9' or '0,2,4'") from None
    if not seeds:
        raise ValueError("no seeds given")
    return sorted(set(seeds))


def run_benchmark(
    problems: Sequence[str],
    methods: Sequence[str],
    seeds: Sequence[int],
    *,
    budget: int,
    n_init: int,
    out: str | Path,
    scheduler: str | None = None,
    n_workers: int | None = None,
    wcnf: str | None = None,
    csv: str | None = None,
    progress: bool = True,
    device: str | None = None,
    design: str = "uniform",
) -> ResultsStore:
    """Run every (problem, method, seed) task to ``budget`` evaluations; returns the store.

    A problem name with ``{seed}`` is a family: each seed runs the family's instance of that
    seed (``rna40-i{seed}``, ``labs50-shifted-i{seed}``), stored under the family's name, so
    that a report's seeds are fresh instances and its paired comparisons pair by instance.

    Args:
        scheduler: address of an existing Dask scheduler; by default a ``LocalCluster`` with
            one single-threaded worker per core (``n_workers`` to override; ``n_workers=1``
            runs the steps in this process instead, the tasks' steps in turn, without Dask,
            with the same results).
        device: where the GP methods' models compute (e.g. ``"cuda"``; default the CPU).
        design: the kind of the shared initial design (``"uniform"`` or ``"sparsity"``); the
            results store records it, and resuming a task with another kind is an error.
    """
    if budget < 1 or n_init < 1 or n_init > budget:
        raise ValueError(f"need 1 <= n_init <= budget, got n_init={n_init}, budget={budget}")
    tasks = []
    provenance = {}
    for name in problems:  # fail early, in the driver, on unknown names and missing files
        problem = _problem(instance_name(name, min(seeds, default=0)), wcnf, csv)
        for method in methods:
            optimizer = make_optimizer(method, problem.space, seed=0,
                                       direction=problem.direction, n_init=n_init,
                                       device=device, budget=budget, design=design)
            provenance[name, method] = made_by(optimizer)
            tasks += [Task(name, method, int(s), budget, n_init, wcnf, csv, device, design)
                      for s in seeds]
    store = ResultsStore(out)
    try:
        _run_tasks(store, tasks, provenance, budget=budget, wcnf=wcnf, csv=csv,
                   scheduler=scheduler, n_workers=n_workers, progress=progress)
    finally:
        write_traces(out)
    return store


def made_by(optimizer: Any) -> dict[str, Any]:
    """What makes a run: bodi's version, the git commit of its source tree (``None`` outside
    a git checkout; ``-dirty`` with uncommitted changes) and the optimizer's class and
    resolved settings."""
    return {"version": __version__, "commit": source_commit(),
            "optimizer": type(optimizer).__name__, "settings": optimizer.settings()}


@cache
def source_commit() -> str | None:
    """``git describe --always --dirty`` of the tree bodi is imported from, if it is one."""
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=40"],
                              cwd=Path(__file__).resolve().parent, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _run_tasks(store: ResultsStore, tasks: list[Task],
               provenance: dict[tuple[str, str], dict[str, Any]], *, budget: int,
               wcnf: str | None, csv: str | None, scheduler: str | None,
               n_workers: int | None, progress: bool) -> None:
    """Register ``tasks`` in ``store`` (with what makes each run) and run those with budget
    left, storing each evaluation as it completes."""
    for task in tasks:
        problem = _problem(task.instance, wcnf, csv)
        store.register(task.problem, task.method, task.seed, problem.direction,
                       problem.optimal_value, budget, task.n_init, task.design,
                       made_by=provenance[task.problem, task.method])
    histories = {t: store.history(t.problem, t.method, t.seed) for t in tasks}
    todo = [t for t in tasks if len(histories[t]) < budget]
    if not todo:
        return
    with ExitStack() as stack:
        bars = stack.enter_context(ProgressBars(progress, what="bodi bench's progress bars"))
        overall = bars.add("[bold]all tasks", total=budget * len(tasks),
                           completed=sum(len(h) for h in histories.values()))
        bar = {t: bars.add(f"{t.problem} {t.method} seed {t.seed}", total=budget,
                           completed=len(histories[t])) for t in tasks}

        def record(task: Task, evaluations: list[Evaluation]) -> bool:
            """Store a step's evaluations; whether ``task`` has budget left."""
            direction = _problem(task.instance, wcnf, csv).direction
            for evaluation in evaluations[: budget - len(histories[task])]:
                store.append(task.problem, task.method, task.seed, direction, evaluation)
                histories[task].append(evaluation)
                values = [e.value for e in histories[task] if e.value is not None]
                bars.advance(bar[task], best_of(values, direction) if values else None)
                bars.advance(overall)
            return len(histories[task]) < budget

        if scheduler is None and n_workers == 1:  # in this process, one step per task in turn
            stack.callback(torch.set_num_threads, torch.get_num_threads())
            queue = deque(todo)
            while queue:
                task = queue.popleft()
                if record(task, run_step(task, tuple(histories[task]))):
                    queue.append(task)
            return
        from distributed import Client, LocalCluster, as_completed

        if scheduler:
            client = stack.enter_context(Client(scheduler))
        else:
            workers = n_workers or min(len(todo), os.cpu_count() or 1)
            cluster = stack.enter_context(
                LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                             dashboard_address=None)
            )
            client = stack.enter_context(Client(cluster))
        futures = {client.submit(run_step, task, tuple(histories[task]), pure=False): task
                   for task in todo}
        pending = as_completed(list(futures))
        for future in pending:
            task = futures.pop(future)
            if record(task, future.result()):
                nxt = client.submit(run_step, task, tuple(histories[task]), pure=False)
                futures[nxt] = task
                pending.add(nxt)
