"""Bring the stored benchmark runs to bodi's current defaults, one step per default changed.

Usage:
    python benchmarks/adopt_new_default.py       # idempotent: a second run changes nothing

1. Results databases are relabelled when a newer bodi first writes to them, and reports read
   older ones under today's labels (:mod:`bodi.experiments.results`): bodi 0.1's ``bodi`` ->
   ``bodi[kernel=hed]``; bodi 0.2's ``bodi...`` specs on problems with continuous or integer
   parameters -> ``bodi[...,trust_region.box_failure_tolerance=null]``; bodi 0.2's and 0.3's
   on all-categorical problems -> ``bodi[...,kernel=hed*hamming]``; bodi 0.1-0.4's ->
   ``bodi[...,design_in_model=all]``; bodi 0.1-0.5's with a region ->
   ``bodi[...,trust_region.failure_tolerance=40]``. So the large databases stay as committed;
   this script opens for writing only the one it copies into.
2. The finished runs of the candidate that became the default are copied as the default
   beside the other runs of the same protocol, and stay under their own name:

   - bodi 0.2 (fourteenth session): ``bodi[kernel=hed*hamming]`` of ``data/ablation`` into
     ``data/yardstick`` and ``data/scale`` as ``bodi`` (done; that step is no longer here,
     since on a relabelled database it would copy 0.2's runs of the mixed problems again);
   - bodi 0.3: ``bodi[trust_region.box_failure_tolerance=4]`` (the twentieth session's B) of
     ``data/ablation2``, seeds 0-9 of the yardstick's problems with continuous parameters,
     as ``bodi[design_noise=false]`` (the label of today's default in the same-code tables,
     beside ``data/rerun``, whose runs of that label there read as bodi 0.2's). Under bodi
     0.3 that spec runs the same code as B: rerun here, ackley53-shifted seed 0 equals B's
     stored run in all 200 values and points;
   - bodi 0.4: ``bodi[kernel=hamming]`` (KD) on the all-categorical problems, the runs of
     ``data/ablation`` (pest-shifted, pest50-shifted) and ``data/unseen`` (pest35-shifted),
     seeds 0-9, into ``data/categorical`` as ``bodi[design_noise=false]`` (the runs of that
     label in ``data/rerun`` read as bodi 0.3's there). Under bodi 0.4 the default runs the
     same code as KD on these problems: rerun here, pest-shifted and pest50-shifted seed 0
     equal KD's stored runs in all 200 values and points. (The steps of bodi 0.3 and 0.4
     are done and no longer here either: a target database opened for writing by bodi 0.5
     reads their copies as ``bodi[design_noise=false,design_in_model=all]``, and the step
     would copy them again.)
   - bodi 0.5: ``bodi[design_in_model=auto]`` (D) is the default on every problem. Its runs
     keep their label (under bodi 0.5 ``bodi`` and D are one method: rerun here, ``bodi`` on
     labs50-shifted and pest50-shifted seed 0 equals D's stored runs in all 200 values and
     points), so reports show them as the default with ``--methods
     "bodi|bodi[design_in_model=auto]"``. Its maxsat-frb1002-shifted runs (5 seeds, in
     ``data/ablation`` beside copies of its other binary runs) are copied into
     ``data/ablation3``, which holds D's runs on every other problem, so that one report shows
     D on all ten problems (done; no longer here: under bodi 0.6 the copies read
     ``bodi[design_in_model=auto,trust_region.failure_tolerance=40]``, and the step would copy
     them again);
   - bodi 0.6: ``bodi[trust_region.failure_tolerance=10]`` (F10) is the default on every
     problem; all its runs are in ``data/ablation4`` under that label, which under bodi 0.6 is
     one method with ``bodi``, so reports show them as the default with ``--methods
     "bodi|bodi[trust_region.failure_tolerance=10]"`` and nothing is copied.
   - bodi 0.7: ``bodi[design_in_model=reach]`` (R) runs A10's code
     (``bodi[design_in_model=all]``) on the problems whose space the trust region reaches
     (:func:`~bodi.acquisition.trust_region.reaches_uniform_points`) and bodi 0.6's (F10's)
     on the others: rerun under bodi 0.7, R on labs50-shifted seed 0 equals A10's stored run
     and R on labs100-shifted seed 0 equals F10's, in all 200 values and points. So A10's
     runs on the reached problems (``data/ablation5``) and F10's on the others
     (``data/ablation4``) are copied as R into ``data/ablation6``, and those of seeds 10-19
     within ``data/seeds10to19``; reports show them as the default with ``--methods
     "bodi|bodi[design_in_model=reach]"`` (done; no longer here: a target that bodi 0.8
     wrote to reads those copies ``bodi[design_in_model=reach,first_order=false]``, and the
     step would copy them again).
   - bodi 0.8: ``bodi[first_order=auto-rescale]`` (R) is the default on every problem; its
     runs (``data/ablation8``, ``data/ablation9``) keep that label, which under bodi 0.8 is
     one method with ``bodi``, so reports show them as the default with ``--methods
     "bodi|bodi[first_order=auto-rescale]"`` and nothing is copied (bodi 0.7's runs read
     ``bodi[design_in_model=reach,first_order=false]``).

   Only the database copied into is opened for writing, and only when there is something to
   copy (opening an older database for writing relabels it; the large ones stay as
   committed).
3. The studies of ``benchmarks/multi_objective.py`` (``data/multi_objective/studies.db``,
   named ``problem/method/seedK``) are renamed the same way (``svm53-cost/bodi/seed0`` ->
   ``svm53-cost/bodi[kernel=hed]/seed0`` for bodi 0.1's, ->
   ``svm53-cost/bodi[trust_region.box_failure_tolerance=null]/seed0`` for bodi 0.2's on a
   mixed space, ``.../bodi[kernel=hed*hamming]/...`` for bodi 0.3's on a categorical one,
   ``.../bodi[design_in_model=all]/...`` for bodi 0.1-0.4's,
   ``.../bodi[...,trust_region.failure_tolerance=40]/...`` for bodi 0.1-0.5's with a
   region, ``.../bodi[design_in_model=auto]/...`` for bodi 0.5-0.6's,
   ``.../bodi[...,first_order=false,failed_trials=ignore]/...`` for bodi 0.1-0.7's); their
   stored settings already say what ran. (bodi 0.5 copied D's studies as
   ``svm53-cost/bodi/seedK``; under bodi 0.6 they read as above.) A candidate's studies that
   become the default are copied as ``bodi`` (``STUDY_ADOPTIONS``; none for 0.6 and 0.7:
   A10's studies on svm53-cost, R's code there, store ``design_in_model="all"``, which
   ``bodi`` would refuse to reopen, so they keep their label and the table shows them with
   ``bodi|bodi[design_in_model=all]``; none for 0.8: no study of R was stored).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from bodi.experiments.multi_objective_runner import STUDIES
from bodi.experiments.results import (
    DB_NAME,
    ResultsStore,
    spec_ignoring_failed_trials,
    spec_under_current_defaults,
    spec_with_casmopolitan_tolerance,
    spec_with_held_out_design,
    spec_with_product_kernel,
    spec_with_whole_design,
    spec_without_first_order,
    spec_without_own_box,
)
from bodi.optimizers.bo import PRODUCT_KERNEL
from bodi.space import SearchSpace

ROOT = Path(__file__).resolve().parents[1]
#: (database, the candidate that became the default, its label as the default, the SQL
#: condition on the problems and seeds copied)
ADOPTIONS: tuple[tuple[str, str, str, str, str], ...] = ()  # bodi 0.6's runs: one database
#: (the candidate that became the default, its label as the default) in the studies of
#: ``benchmarks/multi_objective.py``
STUDY_ADOPTIONS: tuple[tuple[str, str], ...] = ()  # none for bodi 0.6 and 0.7 (above)
def _runs(path: Path, method: str, problem_condition: str = "IS NOT NULL") -> set[tuple]:
    """``(problem, seed)`` of the finished runs stored as ``method`` in the results database
    ``path`` (read as it is) whose problem meets ``problem_condition``."""
    if not path.exists():
        return set()
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    rows = db.execute(
        f"SELECT problem, seed FROM tasks t WHERE method = ? AND problem {problem_condition} "
        "AND t.budget = (SELECT COUNT(*) FROM evaluations e WHERE e.problem = t.problem "
        "AND e.method = t.method AND e.seed = t.seed)", (method,)).fetchall()
    db.close()
    return set(rows)


def copy_as_default(source: Path, candidate: str, target: Path, label: str,
                    problem_condition: str) -> int:
    """Copy the finished ``candidate`` runs of the results database ``source`` whose problem
    meets ``problem_condition`` as ``label`` into ``target`` (which may be ``source``), but
    for those already there; the number of runs copied."""
    keys = sorted(_runs(source, candidate, problem_condition) - _runs(target, label))
    if not keys:
        return 0
    ResultsStore(target.parent).close()  # created, or relabelled to today's labels
    _copy_rows(source, target, {
        table: ("method", "problem = ? AND seed = ? AND method = ?",
                [(label, problem, seed, candidate) for problem, seed in keys])
        for table in ("tasks", "evaluations")})
    return len(keys)


def _copy_rows(source: Path, target: Path,
               tables: dict[str, tuple[str, str, list[tuple]]]) -> None:
    """Copy rows of the SQLite database ``source`` into ``target`` (which may be
    ``source``), in one transaction: for each ``table -> (column, condition, parameters)``, the
    rows meeting ``condition`` once per parameter tuple, with ``column`` set to the tuple's
    first value (the condition takes the rest)."""
    db = sqlite3.connect(target)
    schema = "main"
    if source.resolve() != target.resolve():
        db.execute("ATTACH DATABASE ? AS src", (f"{source.resolve().as_uri()}?mode=ro",))
        schema = "src"
    with db:
        for table, (column, condition, parameters) in tables.items():
            columns = [row[1] for row in db.execute(f"PRAGMA main.table_info({table})")]
            chosen = ", ".join(f"? AS {c}" if c == column else c for c in columns)
            db.executemany(f"INSERT INTO main.{table} ({', '.join(columns)}) SELECT {chosen} "
                           f"FROM {schema}.{table} WHERE {condition}", parameters)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _ran_without_own_box(settings: dict, space: SearchSpace) -> bool:
    """Whether a stored BODi study ran bodi 0.2's region on a space where bodi 0.3's differs."""
    region = settings.get("trust_region")
    return (bool(space.ordinal_dims) and isinstance(region, dict)
            and region.get("box_failure_tolerance") is None
            and region.get("schedule", "tolerance") == "tolerance")


def _ran_casmopolitan_tolerance(settings: dict) -> bool:
    """Whether a stored BODi study's region shrank after CASMOPOLITAN's 40 failures (bodi
    0.1-0.5's default, which bodi 0.6 changed)."""
    region = settings.get("trust_region")
    return (isinstance(region, dict) and region.get("failure_tolerance") == 40
            and region.get("schedule", "tolerance") == "tolerance")


def rename_studies(path: Path) -> int:
    """Rename the ``problem/method/seedK`` studies that ran a ``bodi`` spec under an older
    default (bodi 0.1's kernel: their stored settings name no kernel, or ``hed``; bodi 0.2's
    region on a mixed space; bodi 0.3's kernel on a categorical one; bodi 0.1-0.4's whole
    design in the model; bodi 0.1-0.5's failure tolerance; bodi 0.5-0.6's held-out choice of
    the design; bodi 0.1-0.7's kernel without the first-order term and failed trials
    ignored); the number renamed."""
    db = sqlite3.connect(path)
    renamed = 0
    with db:
        for name, settings, space in db.execute(
                "SELECT name, settings, space FROM studies").fetchall():
            problem, method, seed = name.split("/")
            settings, space = json.loads(settings), SearchSpace.from_dict(json.loads(space))
            new_method = method
            if settings.get("kernel", "hed") == "hed":
                new_method = spec_under_current_defaults(new_method)
            if _ran_without_own_box(settings, space):
                new_method = spec_without_own_box(new_method)
            if settings.get("kernel") == PRODUCT_KERNEL and space.is_categorical:  # bodi 0.3's
                new_method = spec_with_product_kernel(new_method)
            if settings.get("design_in_model", "all") == "all":  # bodi 0.1-0.4's
                new_method = spec_with_whole_design(new_method)
            if _ran_casmopolitan_tolerance(settings):  # bodi 0.1-0.5's region
                new_method = spec_with_casmopolitan_tolerance(new_method)
            if settings.get("design_in_model") == "auto":  # bodi 0.5-0.6's
                new_method = spec_with_held_out_design(new_method)
            if settings.get("first_order", False) is False:  # bodi 0.1-0.7's
                new_method = spec_without_first_order(new_method)
            if settings.get("failed_trials", "ignore") == "ignore":  # bodi 0.1-0.7's
                new_method = spec_ignoring_failed_trials(new_method)
            new = "/".join((problem, new_method, seed))
            if new != name:
                db.execute("UPDATE studies SET name = ? WHERE name = ?", (new, name))
                db.execute("UPDATE trials SET study = ? WHERE study = ?", (new, name))
                renamed += 1
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return renamed


def copy_studies(source: Path, candidate: str, target: Path, label: str) -> int:
    """Copy the ``problem/candidate/seedK`` studies of the studies database ``source`` (with
    their trials) into ``target`` (which may be ``source``) as ``problem/label/seedK``, but for
    those already there; the number of studies copied."""
    db = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    names = [name for (name,) in db.execute("SELECT name FROM studies")
             if name.split("/")[1] == candidate]
    db.close()
    db = sqlite3.connect(target)
    have = {name for (name,) in db.execute("SELECT name FROM studies")}
    db.close()
    copies = [(name.replace(f"/{candidate}/", f"/{label}/", 1), name) for name in names]
    copies = [(new, name) for new, name in copies if new not in have]
    _copy_rows(source, target, {"studies": ("name", "name = ?", copies),
                                "trials": ("study", "study = ?", copies)})
    return len(copies)


def main() -> None:
    for source, candidate, target, label, condition in ADOPTIONS:
        copied = copy_as_default(ROOT / "data" / source / DB_NAME, candidate,
                                 ROOT / "data" / target / DB_NAME, label, condition)
        print(f"data/{source} -> data/{target}: {copied} runs of {candidate} copied as {label}")
    studies = ROOT / "data" / "multi_objective" / STUDIES
    renamed = rename_studies(studies)
    print(f"data/multi_objective: {renamed} studies renamed")
    for candidate, label in STUDY_ADOPTIONS:
        copied = copy_studies(studies, candidate, studies, label)
        print(f"data/multi_objective: {copied} studies of {candidate} copied as {label}")


if __name__ == "__main__":
    main()
