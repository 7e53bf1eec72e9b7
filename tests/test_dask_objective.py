"""Dask runs the user's own objective file: a real ``dask scheduler`` and two
``dask worker`` processes on loopback, started in a folder from which the objective's modules
cannot be imported."""

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from bodi.cli import main
from bodi.space import Binary, Categorical, SearchSpace

SPACE = SearchSpace([Binary(f"b{i}") for i in range(6)] + [Categorical("c", ["x", "y", "z"])])
DASK = str(Path(sys.executable).parent / "dask")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two single-threaded workers, each its own process; stopped after."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    elsewhere = tmp_path / "workers"  # no objective or helper module here
    elsewhere.mkdir()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": ""}
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], cwd=elsewhere, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)]
    for _ in range(2):
        procs.append(subprocess.Popen(
            [DASK, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
             "--host", "127.0.0.1", "--local-directory", str(elsewhere)],
            cwd=elsewhere, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True))
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(2, timeout=120)
    yield address, procs
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture
def project(tmp_path):
    SPACE.to_json(tmp_path / "space.json")
    (tmp_path / "dask_helper.py").write_text(textwrap.dedent("""
        import os
        import time

        def score(params):
            time.sleep(float(os.environ.get("BODI_TEST_SLEEP", "0")))
            return float(sum(params[f"b{i}"] for i in range(6)) + (params["c"] != "y"))

        def pid():
            return os.getpid()
    """))
    (tmp_path / "objective.py").write_text(textwrap.dedent("""
        import dask_helper as helper  # a module beside the objective file, as a script would

        def f(params):
            return helper.score(params)
    """))
    return tmp_path


def _states(db):
    """The trials' states (none while the run has created the file but not yet its tables)."""
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
            return [r[0] for r in conn.execute("SELECT state FROM trials ORDER BY number")]
    except sqlite3.OperationalError:
        return []


def _args(project, address, budget):
    return ["run", "--objective", f"{project / 'objective.py'}:f", "--space",
            str(project / "space.json"), "--storage", str(project / "study.db"), "--budget",
            str(budget), "--n-init", "4", "--workers", "2", "--scheduler", address, "--quiet"]


def test_a_file_objective_that_imports_a_helper_runs_on_a_real_cluster(project, cluster,
                                                                        capsys):
    address, _ = cluster
    assert main(_args(project, address, 8)) == 0
    assert "8 complete, 0 failed" in capsys.readouterr().out
    assert _states(project / "study.db") == ["complete"] * 8


def test_a_worker_killed_mid_evaluation_fails_no_trial_and_loses_none(project, cluster,
                                                                      monkeypatch):
    address, procs = cluster
    budget = 8
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BODI_TEST_SLEEP": "1.5"}
    run = subprocess.Popen([sys.executable, "-m", "bodi", *_args(project, address, budget)],
                           cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    db = project / "study.db"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # until an evaluation is done and others run
        if db.exists() and "complete" in _states(db):
            break
        time.sleep(0.1)
    os.killpg(procs[1].pid, signal.SIGKILL)  # one worker, with its evaluation, gone
    _, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    states = _states(db)
    assert states == ["complete"] * budget, (states, err)


def test_the_scheduler_lost_mid_run_is_one_line_and_loses_no_finished_value(project, cluster):
    address, procs = cluster
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BODI_TEST_SLEEP": "1.0"}
    run = subprocess.Popen([sys.executable, "-m", "bodi", *_args(project, address, 20)],
                           cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    db = project / "study.db"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and _states(db).count("complete") < 2:
        time.sleep(0.1)
    os.killpg(procs[0].pid, signal.SIGKILL)  # the scheduler
    _, err = run.communicate(timeout=600)
    assert run.returncode == 2, err
    assert err.strip().count("\n") == 0 and "Dask scheduler" in err, err
    assert "Traceback" not in err
    states = _states(db)
    assert states.count("complete") >= 2 and "failed" not in states  # the lost ones pending
