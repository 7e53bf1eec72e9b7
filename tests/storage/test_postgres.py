"""Studies in PostgreSQL: a real server on loopback, no mocks."""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

import bodi
from bodi.cli import main
from bodi.space import Binary, Categorical, SearchSpace
from bodi.stored_studies import copy_study
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(8)] + [Categorical("c", ["x", "y", "z"])])
SMALL = {"dictionary_size": 8, "num_restarts": 2, "raw_samples": 64, "n_init": 4}


def value(params):
    return float(sum(params[f"b{i}"] for i in range(8)) + (params["c"] != "y"))


@pytest.fixture
def url(postgres_url):
    return postgres_url


def test_a_study_in_postgres_runs_resumes_and_shows(url, tmp_path, capsys):
    result = bodi.minimize(value, SPACE, budget=8, seed=0, storage=url, **SMALL)
    study = bodi.load_study(url)
    assert [t.params for t in study.trials] == [t.params for t in result.trials]
    more = bodi.minimize(value, SPACE, budget=10, study=study)
    assert len(more.trials) == 10
    assert main(["show", url, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["trials"]) == 10
    assert main(["studies", url, "--copy", "default", "--to", str(tmp_path / "copy.db")]) == 0
    assert len(bodi.load_study(tmp_path / "copy.db").trials) == 10
    with pytest.raises(ValueError, match="already exists"):
        copy_study(tmp_path / "copy.db", "default", url)


def test_an_unreachable_server_is_one_clear_error():
    with pytest.raises(ValueError, match="cannot reach the study database"):
        create_study(bodi.BODi(SPACE), storage="postgresql://bodi@127.0.0.1:9/none")


def test_concurrent_claims_never_share_a_configuration(url):
    """Eight threads, each its own connection and worker, claim at once."""
    create_study(bodi.RandomSearch(SPACE, seed=0), storage=url).close()  # the study exists
    claimed, errors = [], []

    def work(seed):
        try:
            study = create_study(
                bodi.RandomSearch(SPACE, seed=0), storage=url
            )  # the same seed on purpose
            for _ in range(5):
                x = study.ask()
                claimed.append(json.dumps(x, sort_keys=True))
                study.tell(x, value(x))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    study = bodi.load_study(url, read_only=True)
    assert len(claimed) == len(set(claimed)) == len(study.trials) == 40
    assert all(t.state == "complete" and t.value == value(t.params) for t in study.trials)


WORKER_OBJECTIVE = """
import json, os, time

def f(params):
    time.sleep(0.05)
    v = float(sum(params[f"b{i}"] for i in range(8)) + (params["c"] != "y"))
    with open(os.environ["CALLS"], "a") as log:
        log.write(json.dumps({"params": params, "value": v}) + "\\n")
    return v
"""


@pytest.mark.heavy
def test_workers_on_three_hosts_killed_ten_times_then_resumed_to_the_budget(url, tmp_path):
    (tmp_path / "objective.py").write_text(WORKER_OBJECTIVE)
    SPACE.to_json(tmp_path / "space.json")
    budget = 30
    base = [sys.executable, "-m", "bodi", "run", "--objective", "objective.py:f", "--space",
            "space.json", "--storage", url, "--budget", str(budget), "--n-init", "4",
            "--quiet", "--max-attempts", "50"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BODI_STALE_AFTER": "2",
           "CALLS": str(tmp_path / "calls.jsonl")}
    # the study is started by one run (the others join it with --resume)
    assert subprocess.run([*base, "--budget", "2"], cwd=tmp_path, env=env,
                          capture_output=True).returncode == 0
    rng = random.Random(0)

    def start(host):
        return subprocess.Popen([*base, "--resume"], cwd=tmp_path,
                                env={**env, "BODI_WORKER_HOST": host},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)

    workers = {host: start(host) for host in ("alpha", "beta", "gamma")}
    kills = 0
    deadline = time.monotonic() + 300
    while kills < 10 and time.monotonic() < deadline:
        time.sleep(rng.uniform(0.3, 1.5))
        host = rng.choice(sorted(workers))
        if workers[host].poll() is None:
            os.killpg(workers[host].pid, signal.SIGKILL)
            kills += 1
        workers[host].wait()
        workers[host] = start(host)
    for proc in workers.values():
        proc.communicate(timeout=600)
    assert kills == 10
    done = subprocess.run([*base, "--resume"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    study = bodi.load_study(url, read_only=True)
    configurations = {json.dumps(t.params, sort_keys=True) for t in study.trials}
    assert len(study.trials) == len(configurations) == budget
    assert all(t.state == "complete" for t in study.trials)
    assert all(t.value == value(t.params) for t in study.trials)  # every told value stored


def test_no_password_of_the_url_reaches_any_output(url, tmp_path, capsys, monkeypatch):
    """The server trusts every connection, so a URL with a password connects; the password
    must show in no line that the CLI prints, whatever the command or its error."""
    pytest.importorskip("optuna")
    monkeypatch.chdir(tmp_path)
    secret = url.replace("bodi@", "bodi:s3cret@")
    (tmp_path / "objective.py").write_text(
        "def f(p):\n    return float(sum(p[f'b{i}'] for i in range(8)))\n")
    SPACE.to_json(tmp_path / "space.json")
    run = ["run", "--objective", "objective.py:f", "--space", "space.json", "--storage", secret,
           "--budget", "5", "--n-init", "4", "--quiet"]
    commands = [run, [*run[:-1], "--resume", "--quiet"], run, ["show", secret],
                ["show", secret, "--csv", "-"], ["studies", secret],
                ["studies", secret, "--copy", "default", "--as", "copy"],
                ["studies", secret, "--delete", "copy"],
                ["export", secret, "--optuna", "optuna.db"],
                ["show", secret.rsplit("/", 1)[0] + "/nosuchdb"]]
    codes = [main(command) for command in commands]
    assert codes == [0, 0, 2, 0, 0, 0, 0, 0, 0, 2]
    printed = capsys.readouterr()
    assert "s3cret" not in printed.out + printed.err
    assert "***" in printed.err  # the errors name the storage, masked
    study = bodi.load_study(url, read_only=True)
    assert all("s3cret" not in (t.message or "") for t in study.trials)


def test_show_of_a_url_draws_to_the_study_name_in_the_working_directory(url, tmp_path, capsys,
                                                                        monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    bodi.minimize(value, SPACE, budget=5, seed=0, storage=url, study_name="knobs/v1", **SMALL)
    assert main(["show", url]) == 0
    assert "convergence plot: knobs_v1.png" in capsys.readouterr().out
    assert (tmp_path / "knobs_v1.png").stat().st_size > 1000


def test_a_nul_byte_in_an_objectives_message_is_stored_and_the_run_goes_on(url):
    def f(params):
        if params["b0"]:
            raise RuntimeError("bad\x00input")
        return value(params)

    result = bodi.minimize(f, SPACE, budget=8, seed=0, storage=url, catch=RuntimeError,
                           **SMALL)
    failed = [t for t in result.trials if t.state == "failed"]
    assert len(result.trials) == 8 and failed
    assert all(t.message == "RuntimeError: bad\\x00input" for t in failed)
    stored = bodi.load_study(url, read_only=True)
    assert [t.message for t in stored.trials] == [t.message for t in result.trials]
