"""Many workers on one study, stale pending trials and configurations that kill their process."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import bodi
from bodi.initial_design import initial_design
from bodi.space import Binary, Categorical, SearchSpace
from bodi.storage import InMemoryStorage, TrialRecord
from bodi.workers import STALE_AFTER, heartbeat_interval, new_worker_name, worker_is_gone

SPACE = SearchSpace([Binary(f"b{i}") for i in range(10)] + [Categorical("c", ["x", "y", "z"])])

WORKER = """
import json, os, sys, time
import torch
import bodi
from bodi.space import SearchSpace

torch.set_num_threads(1)  # three workers share the machine

space = SearchSpace.from_json(sys.argv[1])
log = sys.argv[3]

def f(params):
    value = sum(params[f"b{{i}}"] for i in range(10)) + (params["c"] != "y")
    time.sleep(0.05)
    with open(log, "a") as handle:  # one line per evaluation, appended atomically
        handle.write(json.dumps({{"pid": os.getpid(), "params": params, "value": value}}) + "\\n")
    return value

bodi.minimize(f, space, budget={budget}, storage=sys.argv[2], study_name="shared", seed=0,
              n_init=8, dictionary_size=16, num_restarts=2, raw_samples=64, trust_region=False)
"""


def test_three_workers_fill_one_study_each_trial_exactly_once(tmp_path):
    budget = 18
    SPACE.to_json(tmp_path / "space.json")
    (tmp_path / "worker.py").write_text(WORKER.format(budget=budget))
    db, log = tmp_path / "study.db", tmp_path / "evaluations.jsonl"
    workers = [
        subprocess.Popen([sys.executable, str(tmp_path / "worker.py"), str(tmp_path / "space.json"),
                          str(db), str(log)], stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    for proc in workers:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    evaluations = [json.loads(line) for line in log.read_text().splitlines()]
    study = bodi.load_study(db, "shared")
    assert len(study.trials) == budget and all(t.state == "complete" for t in study.trials)
    # every trial evaluated exactly once, and every evaluated value is stored
    assert len(evaluations) == budget
    configs = [json.dumps(e["params"], sort_keys=True) for e in evaluations]
    assert len(set(configs)) == budget
    stored = {json.dumps(t.params, sort_keys=True): t.value for t in study.trials}
    assert stored == {json.dumps(e["params"], sort_keys=True): e["value"] for e in evaluations}
    assert len({e["pid"] for e in evaluations}) >= 2  # the work was shared


POISON = """
import json, os, pathlib

POISON = json.loads(pathlib.Path(__file__).with_name("poison.json").read_text())

def f(params):
    if params == POISON:
        os._exit(7)
    return float(sum(params[f"b{i}"] for i in range(10)) + (params["c"] != "y"))
"""


def _poison_project(tmp_path):
    SPACE.to_json(tmp_path / "space.json")
    poison = SPACE.decode(initial_design(SPACE, 8, 0)[2:3])[0]  # the third proposal
    (tmp_path / "poison.json").write_text(json.dumps(poison))
    (tmp_path / "objective.py").write_text(POISON)
    return poison


def _bodi_run(tmp_path, *extra):
    return subprocess.run(
        [sys.executable, "-m", "bodi", "run", "--objective", f"{tmp_path}/objective.py:f",
         "--space", str(tmp_path / "space.json"), "--budget", "12", "--n-init", "8",
         "--storage", str(tmp_path / "study.db"), "--quiet", *extra],
        capture_output=True, text=True, timeout=300,
    )


@pytest.mark.heavy
def test_a_configuration_that_kills_its_process_is_failed_after_max_attempts(tmp_path):
    poison = _poison_project(tmp_path)
    runs = [_bodi_run(tmp_path)]
    while runs[-1].returncode != 0 and len(runs) < 6:
        runs.append(_bodi_run(tmp_path, "--resume"))
    assert [r.returncode for r in runs] == [7, 7, 0]  # K = 2 deaths, then it goes on
    assert len(runs) - 1 <= 2 + 1  # at most K + 1 resumes
    study = bodi.load_study(tmp_path / "study.db")
    assert len(study.trials) == 12 and study.n_finished == 12
    (trial,) = [t for t in study.trials if t.params == poison]
    assert trial.state == "failed" and "lost 2 time(s)" in trial.message
    assert sum(t.state == "complete" for t in study.trials) == 11


def test_isolated_evaluations_record_a_dead_process_as_a_failed_trial(tmp_path):
    poison = _poison_project(tmp_path)
    run = _bodi_run(tmp_path, "--isolate")
    assert run.returncode == 0, run.stderr
    study = bodi.load_study(tmp_path / "study.db")
    (trial,) = [t for t in study.trials if t.params == poison]
    assert trial.state == "failed" and "died (exit code 7)" in trial.message
    assert study.n_finished == 12


def test_stale_pending_trials_are_reissued_live_ones_are_left_alone():
    storage = InMemoryStorage()
    study = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=storage)
    live, dead = study.ask(2)
    # make the first look like another process's (alive: fresh heartbeat on another host),
    # the second like a worker on another host that stopped beating
    for number, worker, beat in ((0, "elsewhere:1:a", time.time()),
                                 (1, "elsewhere:2:b", time.time() - 2 * STALE_AFTER)):
        record = study.trials[number].record()
        storage.put_trial("default", TrialRecord(**{**record.__dict__, "worker": worker,
                                                    "heartbeat": beat}))
    other = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=storage)
    assert other.ask() == dead  # re-issued
    assert other.trials[1].attempts == 2 and other.trials[1].worker == other.worker
    assert other.ask() not in (live, dead)  # the live one is not taken over
    assert other.trials[0].state == "pending" and other.trials[0].worker == "elsewhere:1:a"


def test_worker_liveness():
    me = new_worker_name()
    now = time.time()
    assert not worker_is_gone(f"elsewhere:{os.getpid()}:x", now)
    assert worker_is_gone(f"elsewhere:{os.getpid()}:x", now - STALE_AFTER - 1)
    assert worker_is_gone(None, now)
    host = me.split(":")[0]
    assert worker_is_gone(f"{host}:{os.getpid()}:other", now)  # an abandoned optimizer here
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    assert worker_is_gone(f"{host}:{proc.stdout.strip()}:x", now)  # its process has ended
    assert not worker_is_gone(f"{host}:1:x", now) or not os.path.exists("/proc/1")


def test_a_study_file_of_format_version_1_is_upgraded_and_resumed(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE bodi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO bodi_meta VALUES ('format', 'bodi-study'), ('version', '1');
        CREATE TABLE studies (name TEXT PRIMARY KEY, optimizer TEXT NOT NULL,
            space TEXT NOT NULL, settings TEXT NOT NULL, seed INTEGER NOT NULL,
            direction TEXT NOT NULL, created REAL NOT NULL);
        CREATE TABLE trials (study TEXT NOT NULL, number INTEGER NOT NULL, state TEXT NOT NULL,
            params TEXT NOT NULL, x TEXT NOT NULL, value REAL, message TEXT,
            suggest_seconds REAL NOT NULL, updated REAL NOT NULL, PRIMARY KEY (study, number));
    """)
    space = SearchSpace([Binary("a"), Binary("b"), Binary("c")])
    db.execute("INSERT INTO studies VALUES ('default', 'RandomSearch', ?, '{}', 0, "
               "'minimize', 0)", (json.dumps(space.to_dict()),))
    for number, (x, state) in enumerate([([0, 1, 0], "complete"), ([1, 1, 0], "pending")]):
        params = {k: bool(v) for k, v in zip("abc", x, strict=True)}
        db.execute("INSERT INTO trials VALUES ('default', ?, ?, ?, ?, ?, NULL, 0, 0)",
                   (number, state, json.dumps(params), json.dumps(x),
                    1.0 if state == "complete" else None))
    db.commit()
    db.close()
    study = bodi.load_study(path)
    assert [t.state for t in study.trials] == ["complete", "pending"]
    assert study.ask() == {"a": True, "b": True, "c": False}  # the old pending one, re-issued
    assert study.ask() not in ({"a": False, "b": True, "c": False},
                               {"a": True, "b": True, "c": False})


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
def test_claims_see_the_other_workers_trials(tmp_path, storage):
    store = InMemoryStorage() if storage == "memory" else tmp_path / "s.db"
    a = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=store)
    b = bodi.create_study(
        bodi.RandomSearch(SPACE, seed=0), storage=a.storage if storage == "memory" else store
    )
    # the same seed and the same trial count: both suggest the same first point
    first = a.ask()
    second = b.ask()
    assert first != second  # b saw a's claim and chose again
    assert [t.number for t in b.trials] == [0, 1]
    a.tell(first, 1.0)
    b.refresh()
    assert b.trials[0].state == "complete" and b.trials[0].value == 1.0


GIL_OBJECTIVE = """
import json, os, time

def f(params):
    with open("calls.jsonl", "a") as log:
        log.write(json.dumps({"params": params, "pid": os.getpid()}) + "\\n")
    if os.environ.get("HOLD_GIL") and not os.path.exists("held"):
        open("held", "w").close()
        sum(range(2 * 10**8))  # one C call: the interpreter runs nothing else meanwhile
    time.sleep(0.2)
    return float(sum(params[f"b{i}"] for i in range(6)))
"""


@pytest.mark.heavy
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_worker_that_holds_the_gil_or_is_stopped_keeps_its_trial(tmp_path, backend, request):
    """Three `bodi run` processes share a study; one holds the GIL far longer than the heartbeat
    allows (BODI_STALE_AFTER=1), another is stopped (SIGSTOP) for as long: on one host, no
    configuration is evaluated twice and the study ends with exactly its budget."""
    (tmp_path / "objective.py").write_text(GIL_OBJECTIVE)
    SearchSpace([Binary(f"b{i}") for i in range(6)]).to_json(tmp_path / "space.json")
    budget = 12
    storage = (request.getfixturevalue("postgres_url") if backend == "postgres"
               else str(tmp_path / "study.db"))
    command = [sys.executable, "-m", "bodi", "run", "--objective", "objective.py:f", "--space",
               "space.json", "--storage", storage, "--budget", str(budget), "--n-init", "4",
               "--quiet"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BODI_STALE_AFTER": "1"}
    first = subprocess.Popen(command, cwd=tmp_path, env={**env, "HOLD_GIL": "1"},
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "held").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    others = [subprocess.Popen([*command, "--resume"], cwd=tmp_path, env=env,
                               stderr=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(0.5)
    os.kill(others[0].pid, signal.SIGSTOP)
    time.sleep(3)  # three times BODI_STALE_AFTER
    os.kill(others[0].pid, signal.SIGCONT)
    for proc in [first, *others]:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    configurations = [json.dumps(c["params"], sort_keys=True) for c in calls]
    assert len(configurations) == len(set(configurations)) == budget
    study = bodi.load_study(storage, read_only=True)
    assert len(study.trials) == budget and study.n_finished == budget


def test_a_late_tell_adds_no_second_trial():
    storage = InMemoryStorage()
    slow = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=storage)
    x = slow.ask()
    slow.close()  # as if its lease ran out: the trial is handed back
    fast = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=storage)
    assert fast.ask() == x
    fast.tell(x, 1.0)
    late = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=storage)
    trial = late.tell(x, 2.0)  # the first worker's value, after the other told it
    assert trial.value == 1.0 and len(late.trials) == 1


RANDOM_WORKER = """
import sys
import bodi
opt = bodi.load_study(sys.argv[1])
while batch := opt.ask_within(1, limit=int(sys.argv[2])):
    opt.tell(batch[0], float(sum(batch[0].values())))
"""


@pytest.mark.heavy
def test_workers_with_one_seed_resolve_their_conflicting_claims(tmp_path):
    """Eight processes with the same seed propose the same point at the same moment; after a
    conflict each draws differently, so none gives up (it did after 20 conflicts)."""
    path = tmp_path / "study.db"
    bodi.create_study(
        bodi.RandomSearch(SearchSpace([Binary(f"b{i}") for i in range(30)]), seed=0), storage=path
    ).close()
    procs = [subprocess.Popen([sys.executable, "-c", RANDOM_WORKER, str(path), "400"],
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    study = bodi.load_study(path, read_only=True)
    assert len(study.trials) == 400 == len({json.dumps(t.params) for t in study.trials})


@pytest.mark.parametrize("text", ["60s", "0", "-5", "nan", "inf", ""])
def test_a_bad_stale_after_setting_is_one_line_before_anything_is_written(text, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("BODI_STALE_AFTER", text)
    with pytest.raises(ValueError, match="BODI_STALE_AFTER must be a positive number"):
        bodi.minimize(lambda p: 0.0, SPACE, budget=2, storage=tmp_path / "s.db")
    assert not (tmp_path / "s.db").exists()


def test_workers_beat_at_least_three_times_within_the_stale_time(monkeypatch):
    assert heartbeat_interval() == 10.0
    monkeypatch.setenv("BODI_STALE_AFTER", "1.5")
    assert heartbeat_interval() == 0.5
