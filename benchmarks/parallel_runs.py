"""Run the yardstick's protocol as one process per (method, problem, seed), on a machine with
many cores (the device machine; each run has one worker, so no Dask is needed), then merge
the runs into one results database.

Usage:
    python benchmarks/parallel_runs.py --methods "bodi;bounce" --problems labs100-shifted \
        --seeds 5-9 --out merged_dir [--seconds 480] [--jobs 14]

Runs start in the order problems x methods x seeds, at most ``--jobs`` at a time (default: the
cores), each with its own ``results.db`` under ``<out>/runs/<k>`` and one thread (so that runs
do not compete for cores); after ``--seconds`` unfinished runs are stopped (what
they evaluated is kept, and ``benchmarks/yardstick.py`` resumes them); then every run is
copied into ``<out>/results.db``. Methods are separated by ``;`` (a spec may hold commas).

    python benchmarks/parallel_runs.py --merge-from returned.db --out data/ablation

copies the runs of a database brought back (from the device machine) into ``<out>/results.db``.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bodi.experiments.results import DB_NAME, ResultsStore
from bodi.experiments.runner import expand_seeds

ROOT = Path(__file__).resolve().parents[1]


def merge(sources: list[Path], target: Path) -> int:
    """Copy the tasks and evaluations of every ``sources`` database into ``target`` (created
    with the first source's schema); returns the number of evaluations in ``target``."""
    sources = [s for s in sources if s.exists()]
    if not sources:
        return 0
    for path in [*sources, target]:  # runs of older bodi versions under today's labels
        if path.exists() and path.name == DB_NAME:
            ResultsStore(path.parent).close()
    for source in sources:  # fold each write-ahead log into its database
        with sqlite3.connect(source) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(sources[0]) as db, sqlite3.connect(target) as out:
            db.backup(out)
        sources = sources[1:]
    with sqlite3.connect(target) as out:
        for source in sources:
            out.execute("ATTACH DATABASE ? AS src", (str(source),))
            for table in ("tasks", "evaluations"):
                out.execute(f"INSERT OR IGNORE INTO {table} SELECT * FROM src.{table}")
            out.commit()
            out.execute("DETACH DATABASE src")
        return out.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", help="method specs separated by ';'")
    parser.add_argument("--problems")
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=480.0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--merge-from", help="only merge this results database into --out")
    args = parser.parse_args()
    out = Path(args.out)
    if args.merge_from:
        total = merge([Path(args.merge_from)], out / "results.db")
        print(f"{total} evaluations in {out / 'results.db'}")
        return
    if not args.methods or not args.problems:
        parser.error("--methods and --problems are required (or --merge-from)")
    jobs = [(m, p, s) for p in args.problems.split(",") if p
            for m in args.methods.split(";") if m for s in expand_seeds(args.seeds)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    processes: list[subprocess.Popen] = []
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        running = sum(p.poll() is None for p in processes)
        while running < args.jobs and len(processes) < len(jobs):
            method, problem, seed = jobs[len(processes)]
            folder = out / "runs" / str(len(processes))
            folder.mkdir(parents=True, exist_ok=True)
            with (folder / "log.txt").open("w") as log:
                processes.append(subprocess.Popen(
                    [sys.executable, str(ROOT / "benchmarks" / "yardstick.py"), "--out",
                     str(folder), "--methods", method, "--problems", problem,
                     "--seeds", str(seed)], stdout=log, stderr=subprocess.STDOUT, env=env))
            running += 1
        if running == 0 and len(processes) == len(jobs):
            break
        time.sleep(2)
    for p in processes:
        if p.poll() is None:
            p.terminate()
    for p in processes:
        p.wait()
    total = merge(sorted((out / "runs").glob("*/results.db"),
                         key=lambda path: int(path.parent.name)), out / "results.db")
    print(f"{len(jobs)} runs, {len(processes)} started, "
          f"{sum(p.returncode == 0 for p in processes)} finished; "
          f"{total} evaluations in {out / 'results.db'}")


if __name__ == "__main__":
    main()
