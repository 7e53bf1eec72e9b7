"""Ask+tell throughput of a shared study, and the study's own overhead per ``ask``.

Usage:
    python benchmarks/study_throughput.py --postgres postgresql://bodi@127.0.0.1:5432/postgres
    python benchmarks/study_throughput.py --trials 2000 --workers 1,4   # SQLite only, shorter

``W`` worker processes run random search (no model: what is measured is the study, not the
algorithm) with a trivial objective on one study, until it holds ``--trials`` trials; each
worker times its ``ask`` and ``tell`` calls. Reported per backend and ``W``: trials per second
over the whole run, and the median and 95th percentile of one ``ask`` (claiming a trial: read
the others' changes, draw, insert under the lock) and one ``tell``. Each row is a new study
(a new SQLite file; a new PostgreSQL database, so the server must let the URL's user create
databases). Results are appended to ``benchmarks/results/study_throughput.jsonl``.
``--runs sqlite:4,postgres:16`` makes only those rows. For 10,000 trials and 16 workers, set
``MALLOC_MMAP_THRESHOLD_=65536``: without it each worker's heap keeps growing with the study
(glibc's fragmentation of the suggestions' ``O(n)`` buffers; docs/studies.md).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _worker(storage: str, trials: int, queue) -> None:
    import bodi

    opt = bodi.load_study(storage)  # as `bodi run --resume` joins a study
    asks, tells = [], []
    while True:
        start = time.perf_counter()
        batch = opt.ask_within(1, limit=trials)
        asks.append(time.perf_counter() - start)
        if not batch:
            break
        start = time.perf_counter()
        opt.tell(batch[0], float(sum(batch[0].values())))
        tells.append(time.perf_counter() - start)
    opt.close()
    queue.put((asks[:-1], tells))


def _new_storage(backend: str, postgres: str | None, folder: Path) -> str:
    if backend == "sqlite":
        return str(folder / f"{uuid.uuid4().hex[:8]}.db")
    import psycopg

    name = f"bodi_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return postgres.rsplit("/", 1)[0] + f"/{name}"


def measure(backend: str, storage: str, workers: int, trials: int) -> dict:
    import bodi
    from bodi.space import Binary, SearchSpace

    space = SearchSpace([Binary(f"b{i}") for i in range(40)])
    bodi.create_study(bodi.RandomSearch(space, seed=0), storage=storage).close()  # the study exists
    queue = multiprocessing.get_context("spawn").Queue()
    procs = [multiprocessing.get_context("spawn").Process(
        target=_worker, args=(storage, trials, queue)) for _ in range(workers)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    results = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    seconds = time.perf_counter() - start
    asks = sorted(a for r in results for a in r[0])
    tells = sorted(t for r in results for t in r[1])

    def p95(values):
        return values[int(0.95 * (len(values) - 1))]

    return {"backend": backend, "workers": workers, "trials": trials,
            "trials_per_second": trials / seconds, "seconds": seconds,
            "ask_median_ms": 1e3 * statistics.median(asks), "ask_p95_ms": 1e3 * p95(asks),
            "tell_median_ms": 1e3 * statistics.median(tells), "tell_p95_ms": 1e3 * p95(tells),
            "when": time.strftime("%Y-%m-%d %H:%M")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--workers", default="1,4,16")
    parser.add_argument("--postgres", default=None, help="server URL (omit: SQLite only)")
    parser.add_argument("--runs", default=None,
                        help="only these backend:workers pairs, e.g. sqlite:4,postgres:16")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "study_throughput.jsonl"))
    args = parser.parse_args()
    backends = ["sqlite"] + (["postgres"] if args.postgres else [])
    print("| backend | workers | trials | trials/s | ask median (p95) ms | "
          "tell median (p95) ms |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for backend in backends:
            for workers in [int(w) for w in args.workers.split(",")]:
                if args.runs and f"{backend}:{workers}" not in args.runs.split(","):
                    continue
                storage = _new_storage(backend, args.postgres, Path(folder))
                row = measure(backend, storage, workers, args.trials)
                with open(args.out, "a") as handle:
                    handle.write(json.dumps(row) + "\n")
                print(f"| {backend} | {workers} | {args.trials} | "
                      f"{row['trials_per_second']:.0f} | {row['ask_median_ms']:.1f} "
                      f"({row['ask_p95_ms']:.1f}) | {row['tell_median_ms']:.1f} "
                      f"({row['tell_p95_ms']:.1f}) |", flush=True)


if __name__ == "__main__":
    main()
