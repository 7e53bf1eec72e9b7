"""The fault run: shared studies under kills, a server restart, a deleted study, two containers
with one host name and a lost Dask scheduler, counted.

Usage:
    python benchmarks/fault_run.py --backend sqlite
    python benchmarks/fault_run.py --backend postgres     # starts its own PostgreSQL server

Every scenario runs real ``bodi run`` processes on an objective that sleeps 0.3 s and logs each
finished evaluation (configuration and value) before it returns:

- ``kill loop``: three ``bodi run --join`` workers, ten SIGKILLs of a random worker at random
  moments (each replaced at once; with PostgreSQL the server is restarted, down for 2 s, at the
  fifth kill), then a last run to the budget of 60;
- ``delete and re-create``: a worker runs; its study is deleted and created again under the
  same name by another process, which then tells 8 trials;
- ``one host name, two PID namespaces``: two workers with the same ``BODI_WORKER_HOST``, one in
  its own PID namespace (``unshare``; root only), fill a study of 30;
- ``Dask scheduler lost`` (SQLite): a run on a scheduler and two workers; the scheduler is
  killed after two evaluations.

Counted per scenario: trials in the study, evaluations finished (the log), configurations
evaluated twice, finished values lost (logged but not stored as told), and the lines the
processes printed for the faults (other than the expected one-line error). Printed as a Markdown
table (docs/studies.md shows it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' PostgreSQL server on loopback

OBJECTIVE = """
import json, os, time

def f(params):
    time.sleep(0.3)
    value = float(sum(params.values()))
    with open(os.environ["CALLS"], "a") as log:
        log.write(json.dumps({"params": params, "value": value}, sort_keys=True) + "\\n")
    return value
"""
SPACE = {"parameters": [{"type": "binary", "name": f"b{i}"} for i in range(12)]}


def _bodi_run(folder: Path, storage: str, budget: int, *extra: str, env: dict | None = None,
              prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    command = [*prefix, sys.executable, "-m", "bodi", "run", "--objective", "objective.py:f",
               "--space", "space.json", "--storage", storage, "--budget", str(budget),
               "--n-init", "10", "--quiet", *extra]
    return subprocess.Popen(command, cwd=folder, env={**os.environ, "OMP_NUM_THREADS": "1",
                                                      "CALLS": str(folder / "calls.jsonl"),
                                                      **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _counts(folder: Path, storage: str, name: str, lines: list[str],
            log_name: str = "calls.jsonl") -> dict:
    import bodi

    study = bodi.load_study(storage, read_only=True)
    log = folder / log_name
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    keys = [json.dumps(c["params"], sort_keys=True) for c in calls]
    stored = {json.dumps(t.params, sort_keys=True): t.value for t in study.trials
              if t.state == "complete"}
    lost = sum(1 for c, k in zip(calls, keys, strict=True) if stored.get(k) != c["value"])
    return {"scenario": name, "trials": len(study.trials), "evaluations": len(calls),
            "evaluated twice": len(keys) - len(set(keys)), "values lost": lost,
            "lines printed": [line for line in lines if line.strip()]}


def _wait_for(condition, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        time.sleep(0.05)


def _logged(folder: Path) -> int:
    log = folder / "calls.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


def kill_loop(folder: Path, storage: str, server=None, budget: int = 60) -> dict:
    rng = random.Random(0)
    workers = {h: _bodi_run(folder, storage, budget, "--join", "--max-attempts", "50")
               for h in range(3)}
    errors: list[str] = []
    for kill in range(10):
        time.sleep(rng.uniform(0.5, 1.5))
        host = rng.randrange(3)
        if workers[host].poll() is None:
            os.killpg(workers[host].pid, signal.SIGKILL)
        workers[host].wait()
        if server is not None and kill == 4:
            server.stop()
            time.sleep(2)
            server.start()
        workers[host] = _bodi_run(folder, storage, budget, "--join", "--max-attempts", "50")
    for proc in workers.values():
        errors += proc.communicate(timeout=600)[1].splitlines()
    last = _bodi_run(folder, storage, budget, "--join", "--max-attempts", "50")
    errors += last.communicate(timeout=600)[1].splitlines()
    return _counts(folder, storage, "kill loop" + (", server restarted" if server else ""),
                   errors)


def delete_and_recreate(folder: Path, storage: str) -> dict:
    import bodi
    from bodi.space import SearchSpace
    from bodi.study import delete_study

    worker = _bodi_run(folder, storage, 40)
    _wait_for(lambda: _logged(folder) >= 3)
    delete_study(storage, "default")
    space = SearchSpace.from_dict(SPACE)
    fresh = bodi.create_study(bodi.RandomSearch(space, seed=1), storage=storage)
    for _ in range(8):  # the new study's evaluations, logged apart from the old worker's
        params = fresh.ask()
        value = float(sum(params.values()))
        with open(folder / "new_calls.jsonl", "a") as log:
            log.write(json.dumps({"params": params, "value": value}, sort_keys=True) + "\n")
        fresh.tell(params, value)
    fresh.close()
    lines = worker.communicate(timeout=300)[1].splitlines()
    counts = _counts(folder, storage, "delete and re-create under a running worker", lines,
                     "new_calls.jsonl")
    counts["old worker's trials in the new study"] = counts["trials"] - 8
    return counts


def two_pid_namespaces(folder: Path, storage: str) -> dict:
    env = {"BODI_WORKER_HOST": "box"}
    workers = [_bodi_run(folder, storage, 30, "--join", env=env),
               _bodi_run(folder, storage, 30, "--join", env=env,
                         prefix=("unshare", "--pid", "--fork", "--mount-proc"))]
    lines = [line for w in workers for line in w.communicate(timeout=300)[1].splitlines()]
    return _counts(folder, storage, "one host name, two PID namespaces", lines)


def scheduler_lost(folder: Path, storage: str) -> dict:
    dask = str(Path(sys.executable).parent / "dask")
    port = 8786 + os.getpid() % 1000
    address = f"tcp://127.0.0.1:{port}"
    spawn = {"cwd": folder, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
             "start_new_session": True,
             "env": {**os.environ, "CALLS": str(folder / "calls.jsonl"), "OMP_NUM_THREADS": "1"}}
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], **spawn)]
    procs += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard"],
                               **spawn) for _ in range(2)]
    try:
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        run = _bodi_run(folder, storage, 30, "--scheduler", address, "--workers", "2")
        _wait_for(lambda: _logged(folder) >= 2)
        os.killpg(procs[0].pid, signal.SIGKILL)
        lines = run.communicate(timeout=300)[1].splitlines()
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return _counts(folder, storage, "Dask scheduler lost", lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    rows = []
    with contextlib.ExitStack() as stack:
        server = None
        if args.backend == "postgres":
            from postgres_server import new_database, postgres_server

            server = stack.enter_context(postgres_server(control=True))
        scenarios = [(kill_loop, {"server": server} if server else {}),
                     (delete_and_recreate, {}), (two_pid_namespaces, {})]
        if args.backend == "sqlite":
            scenarios.append((scheduler_lost, {}))
        for scenario, options in scenarios:
            folder = Path(tempfile.mkdtemp(prefix="bodi-faults-"))
            (folder / "objective.py").write_text(OBJECTIVE)
            (folder / "space.json").write_text(json.dumps(SPACE))
            storage = new_database(server.url) if server else str(folder / "study.db")
            start = time.perf_counter()
            row = scenario(folder, storage, **options)
            row["seconds"] = round(time.perf_counter() - start)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n| {args.backend} scenario | trials | evaluations | evaluated twice | values lost "
          "| lines printed |\n|---|---|---|---|---|---|")
    for row in rows:
        printed = "; ".join(row["lines printed"]) or "none"
        print(f"| {row['scenario']} | {row['trials']} | {row['evaluations']} | "
              f"{row['evaluated twice']} | {row['values lost']} | {printed} |")


if __name__ == "__main__":
    main()
