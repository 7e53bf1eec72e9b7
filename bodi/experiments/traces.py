"""Compact benchmark results: the best-so-far trace of every run, what reports are made of.

A results directory's database (``results.db``, :mod:`bodi.experiments.results`) holds every
evaluated configuration; reports need less: per task its direction, known optimum, budget and
initial design, and per evaluation its best value so far, its state and the seconds its
suggestion took. :func:`write_traces` writes exactly that beside the database, as two files
that are small enough to keep in a repository:

- ``tasks.csv``: ``problem, method, seed, direction, optimal_value, budget, n_init, design,
  provenance`` (the JSON list of what made the run: bodi's version, the git commit, the
  resolved settings; empty for runs stored before it was recorded);
- ``traces.csv.gz``: ``problem, method, seed, number, best, state, suggest_seconds``, one row
  per evaluation in order (``best`` empty while no evaluation has succeeded, in its shortest
  exact form, so that the final values and ranks of a report from the traces are those from
  the database; the seconds to 6 significant digits).

Methods are written under the labels the database shows today. Both files are written
byte for byte the same from the same runs (gzip without a time stamp), so that rewriting an
unchanged directory changes no file. :class:`TraceTable` reads them with the read interface
of :class:`~bodi.experiments.results.ResultsStore` (``tasks()``, ``curves()``), and
:func:`open_results` opens whichever of the two a directory holds (the database first).
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path
from typing import Any

from bodi.experiments.results import DB_NAME, ResultsStore

TASKS_NAME = "tasks.csv"
TRACES_NAME = "traces.csv.gz"
TASK_COLUMNS = ("problem", "method", "seed", "direction", "optimal_value", "budget", "n_init",
                "design", "provenance")
#: traces written before runs recorded their provenance lack that column
OLDER_TASK_COLUMNS = TASK_COLUMNS[:-1]
TRACE_COLUMNS = ("problem", "method", "seed", "number", "best", "state", "suggest_seconds")

Runs = dict[tuple[str, str, int], list[dict[str, Any]]]


def _text(value: Any) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


def _float_or_none(text: str) -> float | None:
    return None if text == "" else float(text)


def write_traces(out: str | Path) -> tuple[Path, Path]:
    """Write ``tasks.csv`` and ``traces.csv.gz`` of the results database in ``out``; returns
    their paths."""
    out = Path(out)
    store = ResultsStore(out, read_only=True)
    try:
        tasks, runs = store.tasks(), store.curves()
    finally:
        store.close()
    tasks_text = io.StringIO()
    writer = csv.writer(tasks_text, lineterminator="\n")
    writer.writerow(TASK_COLUMNS)
    writer.writerows([_text(task.get(c)) for c in TASK_COLUMNS] for task in tasks)
    traces_text = io.StringIO()
    writer = csv.writer(traces_text, lineterminator="\n")
    writer.writerow(TRACE_COLUMNS)
    for (problem, method, seed), rows in runs.items():
        writer.writerows(
            (problem, method, seed, row["number"], _text(row["best"]), row["state"],
             f"{row['suggest_seconds']:.6g}")
            for row in rows)
    tasks_path, traces_path = out / TASKS_NAME, out / TRACES_NAME
    tasks_path.write_text(tasks_text.getvalue())
    with open(traces_path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                        filename="") as packed:
        packed.write(traces_text.getvalue().encode())
    return tasks_path, traces_path


class TraceTable:
    """The traces of a results directory, read as a :class:`ResultsStore` is read."""

    def __init__(self, out: str | Path):
        self.out = Path(out)
        try:
            with open(self.out / TASKS_NAME, newline="") as handle:
                self._tasks = list(csv.DictReader(handle))
            with gzip.open(self.out / TRACES_NAME, "rt", newline="") as handle:
                self._rows = list(csv.DictReader(handle))
        except (OSError, csv.Error, UnicodeDecodeError) as err:
            raise ValueError(f"{self.out}: unreadable benchmark traces ({err})") from err
        for name, rows, allowed in ((TASKS_NAME, self._tasks, (TASK_COLUMNS, OLDER_TASK_COLUMNS)),
                                    (TRACES_NAME, self._rows, (TRACE_COLUMNS,))):
            if rows and set(rows[0]) not in [set(columns) for columns in allowed]:
                raise ValueError(f"{self.out / name} has the columns {sorted(rows[0])}, "
                                 f"expected {list(allowed[0])}")

    def close(self) -> None:
        """Nothing to release (the files are read at once); here for :class:`ResultsStore`'s
        interface."""

    def tasks(self) -> list[dict[str, Any]]:
        return [{**task, "seed": int(task["seed"]),
                 "optimal_value": _float_or_none(task["optimal_value"]),
                 "budget": int(task["budget"]), "n_init": int(task["n_init"]),
                 "provenance": task.get("provenance") or None}
                for task in self._tasks]

    def curves(self) -> Runs:
        """Every task's evaluations in order: ``(problem, method, seed) -> rows`` with
        ``number``, ``best``, ``state`` and ``suggest_seconds``."""
        out: Runs = {}
        for row in self._rows:
            key = (row["problem"], row["method"], int(row["seed"]))
            out.setdefault(key, []).append({
                "number": int(row["number"]), "best": _float_or_none(row["best"]),
                "state": row["state"], "suggest_seconds": float(row["suggest_seconds"])})
        return out


def open_results(out: str | Path) -> ResultsStore | TraceTable:
    """The runs of a results directory: its database where present, else its traces."""
    out = Path(out)
    if (out / DB_NAME).exists():
        return ResultsStore(out, read_only=True)
    if (out / TRACES_NAME).exists():
        return TraceTable(out)
    raise ValueError(f"{out} holds no benchmark results ({DB_NAME} or {TRACES_NAME} not found)")
