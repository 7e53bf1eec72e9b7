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

- ``tasks(problem, method, seed, direction, optimal_value, budget, n_init, design)``; a
  database written before ``design`` existed gets the column, with ``"sparsity"`` (the design
  those runs used) for its tasks
- ``evaluations(problem, method, seed, number, params, value, best, state, message,
  suggest_seconds, eval_seconds, finished_at)`` with ``(problem, method, seed, number)`` unique.

A method spec means its options on top of bodi's defaults, so when a default changes, the runs
stored before are relabelled with the old value the first time the database is opened for
writing (``PRAGMA user_version`` counts the relabellings done), and a resumed run never mixes
two behaviours:

1. from bodi 0.2 on, whose BODi defaults to ``kernel="hed*hamming"``, a ``bodi`` run of an
   older database reads ``bodi[kernel=hed]`` (:func:`spec_under_current_defaults`);
2. from bodi 0.3 on, whose BODi's trust region gives the box of continuous/integer parameters
   its own rule (``box_failure_tolerance=4``), a ``bodi`` run of bodi 0.2 on a problem with
   such parameters reads ``bodi[trust_region.box_failure_tolerance=null]``
   (:func:`spec_without_own_box`); on all-discrete problems the rule changes nothing and the
   labels stay;
3. from bodi 0.4 on, whose BODi models an all-categorical space with the exact Hamming
   distance alone (``kernel="hamming"``), a ``bodi`` run without a ``kernel`` option on such a
   problem reads ``bodi[kernel=hed*hamming]`` (:func:`spec_with_product_kernel`; a problem
   the registry does not know keeps its label);
4. from bodi 0.5 on, whose BODi chooses per suggestion whether the model sees the whole
   initial design (``design_in_model="auto"``), a ``bodi`` run without a ``design_in_model``
   option reads ``bodi[...,design_in_model=all]`` on every problem
   (:func:`spec_with_whole_design`);
5. from bodi 0.6 on, whose BODi's trust region shrinks after 10 failures in a row instead of
   CASMOPOLITAN's 40, a ``bodi`` run whose region took BODi's default tolerance reads
   ``bodi[...,trust_region.failure_tolerance=40]`` on every problem
   (:func:`spec_with_casmopolitan_tolerance`);
6. from bodi 0.7 on, whose BODi keeps the whole initial design in the model where the trust
   region reaches a typical uniform point (``design_in_model="reach"``), a ``bodi`` run
   without a ``design_in_model`` option reads ``bodi[...,design_in_model=auto]`` on every
   problem (:func:`spec_with_held_out_design`);
7. from bodi 0.8 on, whose BODi fits a first-order term with its kernel and keeps it where
   the fit gives it a share (``first_order="auto-rescale"``), a ``bodi`` run without a
   ``first_order`` option reads ``bodi[...,first_order=false]`` on every problem
   (:func:`spec_without_first_order`). bodi 0.8's other new default, failed trials as an
   unknown constraint (``failed_trials="constraint"``), acts only once a trial fails, which
   no benchmark problem does, so it needs no relabel;
8. from bodi 0.9 on, whose BODi fits no first-order term on an all-categorical space
   (``first_order=False`` there), a ``bodi`` run without a ``first_order`` option on such a
   problem reads ``bodi[...,first_order=auto-rescale]`` (:func:`spec_with_first_order_term`;
   a problem the registry does not know keeps its label);
9. from bodi 0.10 on, whose BODi's acquisition is the upper confidence bound except on an
   all-categorical space (``acquisition="ucb"``), a ``bodi`` run without an ``acquisition``
   option reads ``bodi[...,acquisition=logei]`` on every problem that the registry does not
   know to be all-categorical (:func:`spec_with_expected_improvement`; the label is what the
   run did on any problem, and it changes only where the default did).
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


#: ``PRAGMA user_version`` of a database whose method specs mean what bodi's defaults mean now
FORMAT_VERSION = 9
#: the spec option that gives a BODi run bodi 0.2's trust region (the box shrinks with the radius)
BOX_WITH_RADIUS = "trust_region.box_failure_tolerance=null"
#: the spec option that gives a BODi run the radius rule of bodi 0.1-0.5 (CASMOPOLITAN's)
CASMOPOLITAN_TOLERANCE = "trust_region.failure_tolerance=40"


def spec_under_current_defaults(method: str) -> str:
    """The spec, under bodi 0.2's defaults, of a run stored as ``method`` by bodi 0.1, whose
    BODi defaulted to ``kernel="hed"``: ``"bodi"`` -> ``"bodi[kernel=hed]"``,
    ``"bodi[dtype=float32]"`` -> ``"bodi[kernel=hed,dtype=float32]"``; others unchanged."""
    if method == "bodi":
        return "bodi[kernel=hed]"
    if method.startswith("bodi[") and "kernel=" not in method:
        return "bodi[kernel=hed," + method.removeprefix("bodi[")
    return method


def spec_without_own_box(method: str) -> str:
    """The spec, under bodi 0.3's defaults, of a run stored as ``method`` by bodi 0.2 on a
    problem with continuous or integer parameters: a ``bodi`` spec whose region took BODi's
    default box rule gets :data:`BOX_WITH_RADIUS` (``"bodi"`` ->
    ``"bodi[trust_region.box_failure_tolerance=null]"``); specs without a region, with
    another schedule or with their own box rule, and other methods, are unchanged."""
    if not _region_takes_default(method, "box_failure_tolerance"):
        return method
    return _with_option(method, BOX_WITH_RADIUS, drop="trust_region=true")


def _region_takes_default(method: str, field: str) -> bool:
    """Whether ``method`` is a ``bodi`` spec whose search has a trust region with the
    ``"tolerance"`` schedule (the only one with ``field``) and leaves ``field`` to BODi's
    default; ``False`` for other methods and for specs this version cannot parse."""
    from bodi.optimizers.registry import parse_method

    try:
        name, options = parse_method(method)
    except ValueError:  # not a spec of this version's registry: nothing to relabel
        return False
    region = options.get("trust_region")
    if name != "bodi" or region is False or (
            region is None and options.get("acquisition_optimizer") == "botorch"):
        return False
    return not isinstance(region, dict) or (
        field not in region and region.get("schedule", "tolerance") == "tolerance")


def spec_with_product_kernel(method: str) -> str:
    """The spec, under bodi 0.4's defaults, of a run stored as ``method`` by bodi 0.2 or 0.3 on
    an all-categorical problem: a ``bodi`` spec without a ``kernel`` option gets bodi 0.3's
    ``kernel=hed*hamming`` (``"bodi"`` -> ``"bodi[kernel=hed*hamming]"``,
    ``"bodi[design_noise=false]"`` -> ``"bodi[design_noise=false,kernel=hed*hamming]"``);
    other specs and methods are unchanged."""
    from bodi.optimizers.bo import PRODUCT_KERNEL

    return _with_option_if_unset(method, "kernel", PRODUCT_KERNEL)


def spec_with_casmopolitan_tolerance(method: str) -> str:
    """The spec, under bodi 0.6's defaults, of a run stored as ``method`` by bodi 0.1-0.5: a
    ``bodi`` spec whose region took BODi's default failure tolerance gets CASMOPOLITAN's
    ``trust_region.failure_tolerance=40`` (``"bodi[design_in_model=all]"`` ->
    ``"bodi[design_in_model=all,trust_region.failure_tolerance=40]"``); specs without a
    region, with another schedule (which has no failure tolerance) or with their own
    tolerance, and other methods, are unchanged."""
    if not _region_takes_default(method, "failure_tolerance"):
        return method
    return _with_option(method, CASMOPOLITAN_TOLERANCE, drop="trust_region=true")


def spec_with_whole_design(method: str) -> str:
    """The spec, under bodi 0.5's defaults, of a run stored as ``method`` by bodi 0.1-0.4: a
    ``bodi`` spec without a ``design_in_model`` option gets their ``design_in_model=all``
    (``"bodi"`` -> ``"bodi[design_in_model=all]"``, ``"bodi[kernel=hed]"`` ->
    ``"bodi[kernel=hed,design_in_model=all]"``); other specs and methods are unchanged."""
    return _with_option_if_unset(method, "design_in_model", "all")


def spec_with_held_out_design(method: str) -> str:
    """The spec, under bodi 0.7's defaults, of a run stored as ``method`` by bodi 0.5 or 0.6
    (after the earlier steps): a ``bodi`` spec without a ``design_in_model`` option gets their
    ``design_in_model=auto`` (``"bodi"`` -> ``"bodi[design_in_model=auto]"``); other specs
    and methods are unchanged."""
    return _with_option_if_unset(method, "design_in_model", "auto")


def spec_without_first_order(method: str) -> str:
    """The spec, under bodi 0.8's defaults, of a run stored as ``method`` by bodi 0.1-0.7
    (after the earlier steps): a ``bodi`` spec without a ``first_order`` option gets their
    ``first_order=false`` (``"bodi[design_in_model=reach]"`` ->
    ``"bodi[design_in_model=reach,first_order=false]"``); other specs and methods are
    unchanged."""
    return _with_option_if_unset(method, "first_order", "false")


def spec_with_first_order_term(method: str) -> str:
    """The spec, under bodi 0.9's defaults, of a run stored as ``method`` by bodi 0.8 on an
    all-categorical problem: a ``bodi`` spec without a ``first_order`` option gets bodi 0.8's
    ``first_order=auto-rescale`` (``"bodi"`` -> ``"bodi[first_order=auto-rescale]"``); other
    specs and methods are unchanged."""
    from bodi.optimizers.bo import BODI_FIRST_ORDER

    return _with_option_if_unset(method, "first_order", BODI_FIRST_ORDER)


def spec_with_expected_improvement(method: str) -> str:
    """The spec, under bodi 0.10's defaults, of a run stored as ``method`` by bodi 0.1-0.9 on
    a problem that is not all-categorical (after the earlier steps): a ``bodi`` spec without
    an ``acquisition`` option gets their ``acquisition=logei`` (``"bodi"`` ->
    ``"bodi[acquisition=logei]"``); other specs and methods are unchanged."""
    from bodi.optimizers.gp_optimizer import DEFAULT_ACQUISITION

    return _with_option_if_unset(method, "acquisition", DEFAULT_ACQUISITION)


def spec_ignoring_failed_trials(method: str) -> str:
    """The spec, under bodi 0.8's defaults, of a study stored as ``method`` by bodi 0.1-0.7,
    whose BODi ignored failed trials: a ``bodi`` spec without a ``failed_trials`` option gets
    ``failed_trials=ignore``. For stored studies, whose settings are checked when they
    continue (results databases need no such relabel: see the module's step 7)."""
    return _with_option_if_unset(method, "failed_trials", "ignore")


def _with_option_if_unset(method: str, option: str, value: str) -> str:
    """``method`` with ``option=value`` appended if it is a ``bodi`` spec that does not set
    ``option``; otherwise (another method, or not a spec of this version) unchanged."""
    from bodi.optimizers.registry import parse_method

    try:
        name, options = parse_method(method)
    except ValueError:  # not a spec of this version's registry: nothing to relabel
        return method
    if name != "bodi" or option in options:
        return method
    return _with_option(method, f"{option}={value}")


def _with_option(method: str, option: str, drop: str | None = None) -> str:
    """The ``bodi`` spec ``method`` with ``option`` appended to its bracket (an item equal to
    ``drop``, spaces and case aside, left out)."""
    items = [item for item in method.removeprefix("bodi").strip("[]").split(",")
             if item and item.replace(" ", "").lower() != drop]
    return f"bodi[{','.join([*items, option])}]"


@cache
def registry_space(problem: str) -> SearchSpace | None:
    """The space of ``problem`` if the registry knows the name, else ``None`` (built once per
    name: relabels and reports ask per stored run)."""
    from bodi.problems.registry import get_problem

    try:
        return get_problem(problem).space
    except (ValueError, OSError):
        return None


def _has_ordinal_parameters(db: sqlite3.Connection, problem: str,
                            space: SearchSpace | None) -> bool:
    """Whether a stored problem has continuous or integer parameters: from its registry
    ``space`` if known, else from a stored point (a JSON float is a continuous value)."""
    if space is None:
        row = db.execute("SELECT params FROM evaluations WHERE problem = ? LIMIT 1",
                         (problem,)).fetchone()
        return row is not None and any(
            isinstance(value, float) for value in json.loads(row[0]).values())
    return bool(space.ordinal_dims)


def _current_labels(db: sqlite3.Connection) -> dict[tuple[str, str], str]:
    """``(problem, stored method) -> method under today's defaults`` for the runs that the
    steps of the module's list, from the database's version on, relabel."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version >= FORMAT_VERSION:
        return {}
    labels = {}

    def is_categorical(problem: str) -> bool:  # of the registry (an unknown one: False)
        return (space := registry_space(problem)) is not None and space.is_categorical

    stored = db.execute("SELECT DISTINCT problem, method FROM tasks").fetchall()
    for problem, method in stored:
        new = spec_under_current_defaults(method) if version < 1 else method
        if version < 2 and (boxless := spec_without_own_box(new)) != new and (
                _has_ordinal_parameters(db, problem, registry_space(problem))):
            new = boxless
        if version < 3 and (product := spec_with_product_kernel(new)) != new and (
                is_categorical(problem)):
            new = product
        if version < 4:
            new = spec_with_whole_design(new)
        if version < 5:
            new = spec_with_casmopolitan_tolerance(new)
        if version < 6:
            new = spec_with_held_out_design(new)
        if version < 7:
            new = spec_without_first_order(new)
        if version < 8 and (term := spec_with_first_order_term(new)) != new and (
                is_categorical(problem)):
            new = term
        if version < 9 and not is_categorical(problem):
            new = spec_with_expected_improvement(new)
        if new != method:
            labels[problem, method] = new
    _check_distinct_labels(stored, labels)
    return labels


def _check_distinct_labels(stored: list[tuple[str, str]],
                           labels: dict[tuple[str, str], str]) -> None:
    """Refuse a relabelling that gives two stored methods of one problem the same label (two
    names of one configuration, e.g. an old version's ``bodi`` and ``bodi[trust_region=true]``):
    their runs would merge, or the writer's update would fail on the unique key."""
    stored_as: dict[tuple[str, str], str] = {}
    for problem, method in stored:  # the database's (problem, method) pairs
        new = labels.get((problem, method), method)
        if (other := stored_as.setdefault((problem, new), method)) != method:
            raise ValueError(
                f"the runs stored as {other!r} and {method!r} on {problem!r} both read "
                f"{new!r} under today's defaults; delete one method's runs from the database "
                "before opening it")


def _relabel_older_runs(db: sqlite3.Connection) -> None:
    """Relabel the runs of a database written before :data:`FORMAT_VERSION`, in one
    transaction that holds the write lock from the version check on (runners may open the
    database at the same time)."""
    if db.execute("PRAGMA user_version").fetchone()[0] >= FORMAT_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    with db:  # commits, or rolls back on an error
        for (problem, method), new in _current_labels(db).items():
            for table in ("tasks", "evaluations"):
                db.execute(f"UPDATE {table} SET method = ? WHERE problem = ? AND method = ?",
                           (new, problem, method))
        db.execute(f"PRAGMA user_version = {FORMAT_VERSION}")


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

    Opened for writing, an older database is relabelled in place; ``read_only`` (reports)
    leaves the file as it is and shows its runs under today's labels all the same.
    """

    def __init__(self, out: str | Path, *, read_only: bool = False):
        self.out = Path(out)
        self.path = self.out / DB_NAME
        #: ``(problem, stored method) -> today's label`` of an older database read as it is,
        #: and the reverse
        self._labels: dict[tuple[str, str], str] = {}
        self._stored_labels: dict[tuple[str, str], str] = {}
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
            self._labels = _current_labels(self._db)
            self._stored_labels = {(p, new): old for (p, old), new in self._labels.items()}
            return
        self.out.mkdir(parents=True, exist_ok=True)
        _check_is_results_database(self.path)
        try:
            self._db = sqlite3.connect(self.path, timeout=60.0)  # another runner may be writing
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(tasks)")}
            if "design" not in columns:  # written before the design was recorded
                with self._db:
                    self._db.execute("ALTER TABLE tasks ADD COLUMN design TEXT NOT NULL "
                                     "DEFAULT 'sparsity'")
            if "provenance" not in columns:  # written before runs recorded what made them
                with self._db:
                    self._db.execute("ALTER TABLE tasks ADD COLUMN provenance TEXT")
            _relabel_older_runs(self._db)
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

    def _label(self, problem: str, stored: str) -> str:
        return self._labels.get((problem, stored), stored)

    def history(self, problem: str, method: str, seed: int) -> list[Evaluation]:
        """The evaluations of a run, in order (``method`` under today's labels)."""
        stored = self._stored_labels.get((problem, method), method)
        if stored == method and (problem, method) in self._labels:
            return []  # a stored label that today's labels give to no run
        rows = self._db.execute(
            "SELECT params, value, suggest_seconds, eval_seconds, message FROM evaluations "
            "WHERE problem = ? AND method = ? AND seed = ? ORDER BY number",
            (problem, stored, seed),
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
        tasks = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        for task in tasks:
            task["method"] = self._label(task["problem"], task["method"])
        return tasks

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
            key = (problem, self._label(problem, method), record.pop("seed"))
            out.setdefault(key, []).append(record)
        return out


def finite_or_none(value: Any) -> float | None:
    """A float, or ``None`` for values that are not finite numbers."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
