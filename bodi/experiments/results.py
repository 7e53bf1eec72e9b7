"""Benchmark results in SQLite: one row per evaluation, written by the driver as it completes.

Why this is not a :mod:`bodi.storage` study file: a study stores the state of one optimizer
that workers share (pending trials claimed in transactions, heartbeats, attempts, the
settings needed to rebuild it). A benchmark run has none of that: one driver writes finished
evaluations of many (problem, method, seed) tasks, each step rebuilds a fresh optimizer from
the task's history, and what it must keep is what reports need (the best value so far, the
seconds of suggestion and of evaluation, the budget and the known optimum). The two share the
rules that matter (SQLite, WAL, one transaction per finished evaluation, nothing lost at a
kill) but not the schema; the results databases committed under ``results/`` and ``docs/``
are in this format.

Schema (``<out>/results.db``, WAL mode, one transaction per evaluation):

- ``tasks(problem, method, seed, direction, optimal_value, budget, n_init, design,
  provenance)``; read from a database written before ``design`` existed, its tasks have
  ``"sparsity"`` (the design those runs used)
- ``evaluations(problem, method, seed, number, params, value, best, state, message,
  suggest_seconds, eval_seconds, finished_at)`` with ``(problem, method, seed, number)`` unique.

A method spec means its options on top of the defaults of the bodi that ran it; every task
records that bodi's version, commit and resolved settings (``provenance``). Databases written
before the labels meant today's defaults (``PRAGMA user_version`` below
:data:`FORMAT_VERSION`) are read as they are and refused for writing: a resumed run would mix
two behaviours under one label.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bodi.directions import sign

if TYPE_CHECKING:
    from bodi.space import SearchSpace

DB_NAME = "results.db"
SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    problem TEXT NOT NULL, method TEXT NOT NULL, seed INTEGER NOT NULL,
    direction TEXT NOT NULL, optimal_value REAL, budget INTEGER NOT NULL, n_init INTEGER NOT NULL,
    design TEXT NOT NULL DEFAULT 'uniform', provenance TEXT,
    PRIMARY KEY (problem, method, seed)
);
CREATE TABLE IF NOT EXISTS evaluations (
    problem TEXT NOT NULL, method TEXT NOT NULL, seed INTEGER NOT NULL, number INTEGER NOT NULL,
    params TEXT NOT NULL, value REAL, best REAL, state TEXT NOT NULL, message TEXT,
    suggest_seconds REAL NOT NULL, eval_seconds REAL NOT NULL, finished_at REAL NOT NULL,
    PRIMARY KEY (problem, method, seed, number)
);
"""


#: ``PRAGMA user_version`` of a database whose runs record their provenance
FORMAT_VERSION = 9


@cache
def registry_space(problem: str) -> SearchSpace | None:
    """The space of ``problem`` if the registry knows the name, else ``None`` (built once per
    name: reports ask per stored run)."""
    from bodi.problems.registry import get_problem

    try:
        return get_problem(problem).space
    except (ValueError, OSError):
        return None


def _check_is_current(db: sqlite3.Connection, path: Path) -> None:
    """Refuse to write into a database whose method labels meant older defaults."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tasks = db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    if version >= FORMAT_VERSION or not tasks:
        if version < FORMAT_VERSION:
            db.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
        return
    raise ValueError(f"{path} was written by an older bodi, whose method labels meant other "
                     "defaults; write new runs into another output directory (--out)")


def _check_is_results_database(path: Path) -> None:
    """Refuse an existing file at ``path`` that is not a results database (another
    application's ``results.db``) before anything writes to it."""
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60.0)
        try:
            tables = {r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            db.close()
    except sqlite3.DatabaseError as err:
        raise ValueError(f"{path} is not a bodi results database ({err}); choose another "
                         "output directory") from None
    if tables and not tables & {"tasks", "evaluations"}:
        raise ValueError(f"{path} is another application's database (tables: "
                         f"{', '.join(sorted(tables)[:5]) or 'none'}); bodi leaves it as it is: "
                         "choose another output directory")


@dataclass(frozen=True)
class Evaluation:
    """One finished evaluation of a benchmark task."""

    params: dict[str, Any]
    value: float | None  # None: failed
    suggest_seconds: float
    eval_seconds: float
    message: str | None = None


class ResultsStore:
    """The results database of a benchmark output directory.

    ``read_only`` (reports) leaves the file as it is; a database of older labels is read, not
    written (:data:`FORMAT_VERSION`).
    """

    def __init__(self, out: str | Path, *, read_only: bool = False):
        self.out = Path(out)
        self.path = self.out / DB_NAME
        if self.out.exists() and not self.out.is_dir():
            raise ValueError(f"output path {self.out} exists and is not a directory")
        if read_only:  # reports: no lock, no schema change, and only bodi's own tables
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            try:
                self._db = sqlite3.connect(uri, uri=True, timeout=60.0)
                self._db.execute("PRAGMA query_only=ON")
                self._db.execute("PRAGMA trusted_schema=OFF")
                tables = {r[0] for r in self._db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'")}
            except sqlite3.DatabaseError as err:
                raise ValueError(f"{self.path} is not a bodi results database: {err}") from err
            if not {"tasks", "evaluations"} <= tables:
                self._db.close()
                raise ValueError(f"{self.path} is not a bodi results database (tables: "
                                 f"{', '.join(sorted(tables)[:5]) or 'none'})")
            return
        self.out.mkdir(parents=True, exist_ok=True)
        _check_is_results_database(self.path)
        try:
            self._db = sqlite3.connect(self.path, timeout=60.0)  # another runner may be writing
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA)
            _check_is_current(self._db, self.path)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(tasks)")}
            if "provenance" not in columns:  # written before runs recorded what made them
                with self._db:
                    self._db.execute("ALTER TABLE tasks ADD COLUMN provenance TEXT")
        except sqlite3.DatabaseError as err:
            raise ValueError(f"{self.path} is not a bodi results database: {err}") from err

    def close(self) -> None:
        self._db.close()

    def register(self, problem: str, method: str, seed: int, direction: str,
                 optimal_value: float | None, budget: int, n_init: int,
                 design: str = "uniform", made_by: dict[str, Any] | None = None) -> None:
        """Record a task (the latest budget wins, so a run can be extended). A task already
        recorded with another initial design (size or kind) is an error: its evaluations
        would not continue the same run. ``made_by`` (bodi's version, the git commit, the
        method's resolved settings: :func:`bodi.experiments.runner.made_by`) is appended to
        the task's ``provenance``, a JSON list with one entry for each distinct code that
        ran it (a run resumed by another release has two)."""
        known = self._db.execute(
            "SELECT n_init, design, provenance FROM tasks "
            "WHERE problem = ? AND method = ? AND seed = ?",
            (problem, method, seed),
        ).fetchone()
        if known is not None and tuple(known[:2]) != (n_init, design):
            raise ValueError(
                f"{self.path} holds {problem} {method} seed {seed} with an initial design of "
                f"{known[0]} {known[1]} points; this run asks for {n_init} {design} points "
                "(use another output directory, or the same --n-init and --design)"
            )
        provenance = json.loads(known[2]) if known is not None and known[2] else []
        if made_by is not None and (not provenance or provenance[-1] != made_by):
            provenance.append(made_by)
        with self._db:
            self._db.execute(
                "INSERT INTO tasks (problem, method, seed, direction, optimal_value, budget, "
                "n_init, design, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO UPDATE SET budget = excluded.budget, "
                "optimal_value = excluded.optimal_value, provenance = excluded.provenance",
                (problem, method, seed, direction, optimal_value, budget, n_init, design,
                 json.dumps(provenance) if provenance else None),
            )

    def history(self, problem: str, method: str, seed: int) -> list[Evaluation]:
        """The evaluations of a run, in order."""
        rows = self._db.execute(
            "SELECT params, value, suggest_seconds, eval_seconds, message FROM evaluations "
            "WHERE problem = ? AND method = ? AND seed = ? ORDER BY number",
            (problem, method, seed),
        ).fetchall()
        return [Evaluation(json.loads(p), v, s, e, m) for p, v, s, e, m in rows]

    def append(self, problem: str, method: str, seed: int, direction: str,
               evaluation: Evaluation) -> None:
        """Persist one evaluation (its own transaction) with the best value so far."""
        orientation = sign(direction)
        with self._db:
            number, best = self._db.execute(
                "SELECT COUNT(*), MAX(? * best) FROM evaluations "
                "WHERE problem = ? AND method = ? AND seed = ?",
                (orientation, problem, method, seed),
            ).fetchone()
            best = None if best is None else orientation * best
            value = evaluation.value
            if value is not None and (best is None or orientation * value > orientation * best):
                best = value
            self._db.execute(
                "INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (problem, method, seed, number, json.dumps(evaluation.params), value, best,
                 "complete" if value is not None else "failed", evaluation.message,
                 evaluation.suggest_seconds, evaluation.eval_seconds, time.time()),
            )

    def tasks(self) -> list[dict[str, Any]]:
        cursor = self._db.execute("SELECT * FROM tasks ORDER BY problem, method, seed")
        names = [c[0] for c in cursor.description]
        # a database written before a column existed: the design those runs used, no record
        older = {"design": "sparsity", "provenance": None}
        return [{**older, **dict(zip(names, row, strict=True))} for row in cursor.fetchall()]

    def curves(self) -> dict[tuple[str, str, int], list[dict[str, Any]]]:
        """Every task's evaluations in order: ``(problem, method, seed) -> rows``."""
        cursor = self._db.execute(
            "SELECT problem, method, seed, number, value, best, state, suggest_seconds, "
            "eval_seconds FROM evaluations ORDER BY problem, method, seed, number"
        )
        names = [c[0] for c in cursor.description]
        out: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        for row in cursor.fetchall():
            record = dict(zip(names, row, strict=True))
            problem, method = record.pop("problem"), record.pop("method")
            key = (problem, method, record.pop("seed"))
            out.setdefault(key, []).append(record)
        return out


def finite_or_none(value: Any) -> float | None:
    """A float, or ``None`` for values that are not finite numbers."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
