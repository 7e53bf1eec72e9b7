"""Bring the stored benchmark runs to bodi 0.2, whose BODi defaults to ``kernel="hed*hamming"``.

Usage:
    python benchmarks/adopt_new_default.py       # idempotent: a second run changes nothing

1. Every results database under ``data/`` is opened for writing once, which relabels the runs
   stored under bodi 0.1's defaults (``bodi`` -> ``bodi[kernel=hed]``, see
   :func:`bodi.experiments.results.spec_under_current_defaults`).
2. The finished runs of the candidate that became the default, ``bodi[kernel=hed*hamming]`` in
   ``data/ablation`` (docs/results.md §5), are copied as ``bodi`` beside the other methods of
   the same protocol: the nine problems into ``data/yardstick``, ``maxsat-frb1002-shifted``
   into ``data/scale``. They stay in ``data/ablation`` under their own name.
3. The studies of ``benchmarks/multi_objective.py`` (``data/multi_objective/studies.db``,
   named ``problem/method/seedK``) are renamed the same way (``svm53-cost/bodi/seed0`` ->
   ``svm53-cost/bodi[kernel=hed]/seed0``); their stored settings already say what ran.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from bodi.experiments.multi_objective_runner import STUDIES
from bodi.experiments.results import DB_NAME, ResultsStore, spec_under_current_defaults

ROOT = Path(__file__).resolve().parents[1]
NEW_DEFAULT = "bodi[kernel=hed*hamming]"
#: where the new default's runs go, and the SQL condition on their problem
DESTINATIONS = {"yardstick": "!= 'maxsat-frb1002-shifted'", "scale": "= 'maxsat-frb1002-shifted'"}


def copy_as_default(destination: Path, source: Path, problem_condition: str) -> int:
    """Copy the finished ``NEW_DEFAULT`` runs of ``source`` whose problem meets
    ``problem_condition`` into ``destination`` as ``bodi``, but for those already there; the
    number of runs copied."""
    db = sqlite3.connect(destination)
    db.execute("ATTACH DATABASE ? AS source", (f"{source.resolve().as_uri()}?mode=ro",))
    keys = db.execute(
        f"SELECT problem, seed FROM source.tasks t WHERE method = ? AND problem "
        f"{problem_condition} AND t.budget = (SELECT COUNT(*) FROM source.evaluations e "
        "WHERE e.problem = t.problem AND e.method = t.method AND e.seed = t.seed) "
        "AND NOT EXISTS (SELECT 1 FROM main.tasks m WHERE m.problem = t.problem "
        "AND m.method = 'bodi' AND m.seed = t.seed)", (NEW_DEFAULT,)).fetchall()
    with db:
        for table in ("tasks", "evaluations"):
            columns = [row[1] for row in db.execute(f"PRAGMA main.table_info({table})")]
            chosen = ", ".join("'bodi'" if c == "method" else c for c in columns)
            db.executemany(f"INSERT INTO main.{table} ({', '.join(columns)}) SELECT {chosen} "
                           f"FROM source.{table} WHERE problem = ? AND seed = ? AND method = ?",
                           [(problem, seed, NEW_DEFAULT) for problem, seed in keys])
    db.execute("DETACH DATABASE source")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return len(keys)


def rename_studies(path: Path) -> int:
    """Rename the ``problem/method/seedK`` studies that ran a ``bodi`` spec under bodi 0.1's
    default kernel (their stored settings name no kernel, or ``hed``; see
    :func:`spec_under_current_defaults`); the number renamed."""
    db = sqlite3.connect(path)
    renamed = 0
    with db:
        for name, settings in db.execute("SELECT name, settings FROM studies").fetchall():
            problem, method, seed = name.split("/")
            new = "/".join((problem, spec_under_current_defaults(method), seed))
            if new != name and json.loads(settings).get("kernel", "hed") == "hed":
                db.execute("UPDATE studies SET name = ? WHERE name = ?", (new, name))
                db.execute("UPDATE trials SET study = ? WHERE study = ?", (new, name))
                renamed += 1
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return renamed


def main() -> None:
    for path in sorted((ROOT / "data").glob(f"*/{DB_NAME}")):
        ResultsStore(path.parent).close()  # relabels the runs of bodi 0.1's defaults
    source = ROOT / "data" / "ablation" / DB_NAME
    for name, condition in DESTINATIONS.items():
        copied = copy_as_default(ROOT / "data" / name / DB_NAME, source, condition)
        print(f"data/{name}: {copied} runs of {NEW_DEFAULT} copied as bodi")
    renamed = rename_studies(ROOT / "data" / "multi_objective" / STUDIES)
    print(f"data/multi_objective: {renamed} studies renamed")


if __name__ == "__main__":
    main()
