"""`bodi run` / `bodi show`: a user's own objective, stored, resumable, crash-safe."""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bodi.cli import main
from bodi.space import Binary, Categorical, Integer, SearchSpace

SPACE = SearchSpace([Binary(f"b{i}") for i in range(5)] + [Categorical("c", ["x", "y", "z"]),
                                                           Integer("k", 0, 3)])
OBJECTIVE = """
import time

def f(params):
    time.sleep(0.02)
    return float(sum(params[f"b{i}"] for i in range(5)) + (params["c"] != "y") + params["k"])

def broken(params):
    raise RuntimeError("always fails")
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "objective.py").write_text(OBJECTIVE)
    SPACE.to_json(tmp_path / "space.json")
    return tmp_path


def _run_args(project, *extra):
    return ["run", "--objective", f"{project / 'objective.py'}:f", "--space",
            str(project / "space.json"), "--storage", str(project / "study.db"), "--quiet",
            "--n-init", "5", *extra]


def _states(db_path):
    db = sqlite3.connect(db_path)
    try:
        return db.execute("SELECT number, state, params FROM trials ORDER BY number").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()


def test_run_show_and_resume(project, capsys):
    assert main(_run_args(project, "--budget", "8")) == 0
    assert "8 complete, 0 failed" in capsys.readouterr().out
    # the same study again needs --resume; with it, the budget grows to 11
    assert main(_run_args(project, "--budget", "11")) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(_run_args(project, "--budget", "11", "--resume")) == 0
    assert "11 complete" in capsys.readouterr().out
    assert main(["show", str(project / "study.db")]) == 0
    out = capsys.readouterr().out
    assert "best trial #" in out and (project / "study.png").stat().st_size > 5000
    assert main(["show", str(project / "study.db"), "--json"]) == 0
    trials = json.loads(capsys.readouterr().out)["trials"]
    assert len(trials) == 11
    assert set(trials[0]) >= {"number", "state", "params", "value"}
    # --resume without a study to resume is an error, and creates nothing
    assert main(_run_args(project, "--budget", "3", "--resume", "--study-name", "other")) == 2
    assert "holds no study 'other' to resume" in capsys.readouterr().err
    # resuming with another seed is refused and leaves the file alone
    before = (project / "study.db").read_bytes()
    assert main(_run_args(project, "--budget", "12", "--resume", "--seed", "5")) == 2
    assert "seed: stored 0, given 5" in capsys.readouterr().err
    assert (project / "study.db").read_bytes() == before


def test_failing_objective_stops_with_a_clear_message(project, capsys):
    args = _run_args(project, "--budget", "10", "--max-failures", "3", "--catch", "RuntimeError")
    args[2] = f"{project / 'objective.py'}:broken"
    assert main(args) == 2
    assert "3 evaluations failed in a row" in capsys.readouterr().err
    assert [s for _, s, _ in _states(project / "study.db")] == ["failed"] * 3


@pytest.mark.parametrize(
    "objective, message",
    [("objective.py", "module:function"), ("missing.py:f", "does not exist"),
     ("objective.py:nope", "no function"), ("no_such_module_xyz:f", "cannot import")],
)
def test_bad_objective_arguments(project, capsys, objective, message):
    args = _run_args(project, "--budget", "3")
    args[2] = str(project / objective) if objective.endswith((".py", ".py:f", ".py:nope")) \
        else objective
    assert main(args) == 2
    assert message in capsys.readouterr().err


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    st.text(max_size=60),
    st.builds(json.dumps, st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
            st.sampled_from(["parameters", "name", "type", "choices", "low", "high", "log"]),
            inner, max_size=4),
        max_leaves=12)),
))
def test_fuzzed_space_files_give_a_clear_cli_error(project, capsys, text):
    (project / "fuzz.json").write_text(text)
    args = _run_args(project, "--budget", "1")
    args[4] = str(project / "fuzz.json")
    args[6] = str(project / "fuzz.db")
    code = main(args)  # never raises: a valid space runs, anything else is a clear error
    if code == 2:
        err = capsys.readouterr().err
        assert err.startswith("bodi: error:") and "Traceback" not in err
    else:
        assert code == 0
        (project / "fuzz.db").unlink()


@pytest.mark.heavy
def test_sigkill_at_random_moments_then_resume(project):
    """A study killed with SIGKILL five times still ends with every completed evaluation
    exactly once and reaches its budget."""
    budget = 24
    command = [sys.executable, "-m", "bodi", *_run_args(project, "--budget", str(budget))]
    rng = random.Random(0)
    db = project / "study.db"
    kills = 0
    while kills < 5:
        resume = ["--resume"] if db.exists() else []  # the first run starts the study
        proc = subprocess.Popen(command + resume, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        finished_before = sum(s != "pending" for _, s, _ in _states(db))
        deadline = time.monotonic() + 180
        while proc.poll() is None and time.monotonic() < deadline:  # wait for some progress
            if sum(s != "pending" for _, s, _ in _states(db)) > finished_before:
                break
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.6))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
    assert kills == 5
    done = subprocess.run([*command, "--resume"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = _states(db)
    complete = [params for _, state, params in rows if state == "complete"]
    assert len(complete) == budget
    assert len(set(complete)) == budget  # each configuration evaluated and stored exactly once
    assert [n for n, _, _ in rows] == list(range(len(rows)))
    assert all(state == "complete" for _, state, _ in rows)
