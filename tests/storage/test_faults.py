"""Studies under faults of their surroundings, with the real thing: read-only media (a
read-only bind mount), files of other applications, lost servers."""

import contextlib
import os
import subprocess
import sys
import time

import pytest

import bodi
from bodi.cli import main
from bodi.space import Binary, SearchSpace

SPACE = SearchSpace([Binary(f"b{i}") for i in range(5)])
MAKE_STUDY = """
import sys
import time
import bodi
from bodi.space import Binary, SearchSpace

space = SearchSpace([Binary(f"b{i}") for i in range(5)])
bodi.minimize(lambda p: float(sum(p.values())), space, budget=6, seed=0, storage=sys.argv[1],
              n_init=4, dictionary_size=4, num_restarts=2, raw_samples=32)
"""


@contextlib.contextmanager
def read_only_view(folder, mount_point):
    """``folder`` seen read-only at ``mount_point`` (a bind mount; root only)."""
    mount_point.mkdir()
    bound = subprocess.run(["mount", "--bind", str(folder), str(mount_point)],
                           capture_output=True)
    if bound.returncode != 0:
        pytest.skip(f"bind mounts need root here: {bound.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(mount_point)], check=True,
                       capture_output=True)
        yield mount_point
    finally:
        subprocess.run(["umount", "--lazy", str(mount_point)], capture_output=True)


def test_a_study_on_read_only_media_can_be_shown_and_loaded(tmp_path, capsys):
    folder = tmp_path / "studies"
    folder.mkdir()
    # written by a process that has ended, as a study is found later: no log files beside it
    subprocess.run([sys.executable, "-c", MAKE_STUDY, str(folder / "study.db")], check=True)
    assert sorted(p.name for p in folder.iterdir()) == ["study.db"]
    with read_only_view(folder, tmp_path / "ro") as view:
        with pytest.raises(OSError):
            (view / "probe").touch()
        study = bodi.load_study(view / "study.db", read_only=True)
        assert len(study.trials) == 6 and study.best[1] == 0.0
        assert main(["show", str(view / "study.db"), "--plot", str(tmp_path / "p.png")]) == 0
        assert main(["studies", str(view / "study.db")]) == 0
        out = capsys.readouterr().out
        assert "best trial" in out and "default: BODi" in out


SLOW_OBJECTIVE = """
import time

def f(params):
    time.sleep(0.3)
    return float(sum(params.values()))
"""


def _delete_and_recreate_under_a_running_worker(storage, folder):
    (folder / "slow.py").write_text(SLOW_OBJECTIVE)
    SPACE.to_json(folder / "space.json")
    worker = subprocess.Popen(
        [sys.executable, "-m", "bodi", "run", "--objective", "slow.py:f", "--space",
         "space.json", "--storage", storage, "--budget", "30", "--n-init", "30", "--quiet"],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until the worker has stored three trials
        with contextlib.suppress(ValueError):
            if len(bodi.load_study(storage, read_only=True).trials) >= 3:
                break
        time.sleep(0.1)
    assert main(["studies", storage, "--delete", "default"]) == 0
    fresh = bodi.create_study(
        bodi.RandomSearch(SPACE, seed=1), storage=storage
    )  # the same name, another study
    for _ in range(2):
        fresh.tell(fresh.ask(), -1.0)
    _, err = worker.communicate(timeout=120)
    assert worker.returncode == 2
    assert err.strip().count("\n") == 0 and "was deleted" in err and "writes nothing more" in err
    study = bodi.load_study(storage, read_only=True)
    assert [t.value for t in study.trials] == [-1.0, -1.0]  # none of the old worker's


def test_a_worker_of_a_deleted_study_writes_nothing_into_its_successor_sqlite(tmp_path):
    _delete_and_recreate_under_a_running_worker(str(tmp_path / "study.db"), tmp_path)


def test_a_worker_of_a_deleted_study_writes_nothing_into_its_successor_postgres(postgres_url,
                                                                                 tmp_path):
    _delete_and_recreate_under_a_running_worker(postgres_url, tmp_path)


COUNTING_OBJECTIVE = """
import json, os, time

def f(params):
    time.sleep(0.3)
    with open(os.environ["CALLS"], "a") as log:
        log.write(json.dumps(params, sort_keys=True) + "\\n")
    return float(sum(params.values()))
"""


def test_two_workers_of_one_host_name_in_two_process_tables_share_no_trial(tmp_path):
    """A worker in its own PID namespace (as in a container) shares the host name of one
    outside it; neither may take the other's live trials by looking up a pid in its own
    process table."""
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"PID namespaces need root here: {probe.stderr.decode().strip()}")
    (tmp_path / "counting.py").write_text(COUNTING_OBJECTIVE)
    SPACE.to_json(tmp_path / "space.json")
    run = [sys.executable, "-m", "bodi", "run", "--objective", "counting.py:f", "--space",
           "space.json", "--storage", "study.db", "--budget", "24", "--n-init", "24",
           "--quiet", "--join"]
    env = {**os.environ, "CALLS": str(tmp_path / "calls.jsonl"), "BODI_WORKER_HOST": "box",
           "OMP_NUM_THREADS": "1"}
    workers = [subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
               for command in (run, ["unshare", "--pid", "--fork", "--mount-proc", *run])]
    errors = [w.communicate(timeout=300)[1] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], errors
    calls = (tmp_path / "calls.jsonl").read_text().splitlines()
    study = bodi.load_study(tmp_path / "study.db", read_only=True)
    assert len(study.trials) == 24 and all(t.state == "complete" for t in study.trials)
    assert len(calls) == len(set(calls)) == 24  # every configuration evaluated once


def _calls_objective(folder):
    (folder / "counting.py").write_text(COUNTING_OBJECTIVE)
    SPACE.to_json(folder / "space.json")


def test_a_postgres_restart_mid_run_loses_no_value_and_repeats_no_evaluation(tmp_path):
    from postgres_server import new_database, postgres_server

    with postgres_server(control=True) as server:
        url = new_database(server.url)
        _calls_objective(tmp_path)
        run = subprocess.Popen(
            [sys.executable, "-m", "bodi", "run", "--objective", "counting.py:f", "--space",
             "space.json", "--storage", url, "--budget", "16", "--n-init", "16", "--quiet",
             "--workers", "2"],
            cwd=tmp_path, env={**os.environ, "CALLS": str(tmp_path / "calls.jsonl"),
                               "OMP_NUM_THREADS": "1"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        calls = tmp_path / "calls.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (
                not calls.exists() or len(calls.read_text().splitlines()) < 4):
            time.sleep(0.05)
        server.stop()  # immediate: every connection is cut
        time.sleep(3)
        server.start()
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        assert "16 complete, 0 failed" in out
        study = bodi.load_study(url, read_only=True)
        evaluated = calls.read_text().splitlines()
        assert len(evaluated) == len(set(evaluated)) == 16
        assert all(t.state == "complete" and t.value == sum(t.params.values())
                   for t in study.trials)


def test_a_bad_url_option_or_a_role_without_rights_is_one_line(postgres_url, tmp_path, capsys):
    import psycopg

    assert main(["studies", postgres_url + "?no_such_option=1"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("CREATE ROLE visitor LOGIN NOSUPERUSER")
    visitor = postgres_url.replace("bodi@", "visitor@")
    _calls_objective(tmp_path)
    code = main(["run", "--objective", f"{tmp_path / 'counting.py'}:f", "--space",
                 str(tmp_path / "space.json"), "--storage", visitor, "--budget", "2", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().count("\n") == 0 and "permission denied" in err, err


def test_a_restored_study_file_is_read_as_it_is_not_with_the_runs_old_log(tmp_path,
                                                                          monkeypatch):
    import sqlite3

    from bodi.storage import StudyFileGoneError

    monkeypatch.chdir(tmp_path)
    study = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage="study.db")
    for _ in range(3):
        study.tell(study.ask(), 1.0)
    source, backup = sqlite3.connect("study.db"), sqlite3.connect("backup.db")
    source.backup(backup)
    backup.close()
    source.close()
    for _ in range(2):
        study.tell(study.ask(), 2.0)
    os.replace("backup.db", "study.db")  # the backup of three trials restored mid-run
    with pytest.raises(StudyFileGoneError, match="replaced by another file"):
        study.tell(study.ask(), 3.0)
    restored = bodi.load_study("study.db", read_only=True)
    assert [t.value for t in restored.trials] == [1.0, 1.0, 1.0]
    (recovered,) = tmp_path.glob("study.db.recovered-*.db")
    assert [t.value for t in bodi.load_study(recovered, read_only=True).trials] == [1.0] * 3 + [
        2.0] * 2


def test_a_lock_held_at_opening_is_named_as_a_lock(tmp_path, monkeypatch):
    import sqlite3

    import bodi.storage.sqlite as sqlite_storage

    path = tmp_path / "study.db"
    bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=path).close()
    monkeypatch.setattr(sqlite_storage, "LOCK_SECONDS", 0.5)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ValueError, match="stayed locked by another process"):
            bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert bodi.load_study(path, read_only=True).trials == []


def test_a_full_disk_at_the_first_opening_is_one_line_and_leaves_no_file(tmp_path):
    disk = tmp_path / "small"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small tmpfs needs root here: {mounted.stderr.decode().strip()}")
    try:
        with contextlib.suppress(OSError), open(disk / "filler", "wb") as handle:
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
        with pytest.raises(ValueError, match="cannot be written here"):
            bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=disk / "study.db")
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]
        (disk / "filler").unlink()
        study = bodi.create_study(
            bodi.RandomSearch(SPACE, seed=0), storage=disk / "study.db"
        )  # room again
        study.tell(study.ask(), 1.0)
        study.close()
    finally:
        subprocess.run(["umount", "--lazy", str(disk)], capture_output=True)


DAMAGES = {
    "settings not an object": "UPDATE studies SET settings = '[1]'",
    "settings not JSON": "UPDATE studies SET settings = '{bad'",
    "a space without a parameter list": "UPDATE studies SET space = '{\"parameters\": 5}'",
    "a seed of text": "UPDATE studies SET seed = 'x'",
    "a text value": "UPDATE trials SET value = 'abc' WHERE number = 1",
    "a complete trial without value": "UPDATE trials SET value = NULL WHERE number = 1",
    "a gap in the numbers": "UPDATE trials SET number = 7 WHERE number = 2",
    "params not JSON": "UPDATE trials SET params = '{bad' WHERE number = 0",
    "a short encoding": "UPDATE trials SET x = '[1]' WHERE number = 0",
    "an unknown state": "UPDATE trials SET state = 'weird' WHERE number = 0",
    "user attributes not an object": "UPDATE trials SET user_attrs = '[1]' WHERE number = 0",
}


@pytest.fixture(scope="module")
def intact_study(tmp_path_factory):
    path = tmp_path_factory.mktemp("intact") / "study.db"
    study = bodi.create_study(bodi.RandomSearch(SPACE, seed=0), storage=path)
    for _ in range(4):
        study.tell(study.ask(), 1.0)
    study.close()
    return path


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_study_file_is_one_line_that_names_it(damage, intact_study, tmp_path,
                                                        capsys):
    import shutil
    import sqlite3

    path = tmp_path / "damaged.db"
    shutil.copy(intact_study, path)
    db = sqlite3.connect(path)
    db.execute(DAMAGES[damage])
    db.commit()
    db.close()
    for command in (["show", str(path), "--plot", str(tmp_path / "p.png")], ["studies", str(path)],
                    ["show", str(path), "--csv", "-"]):
        code = main(command)
        err = capsys.readouterr().err
        if command[0] == "studies" and code == 0:
            continue  # listing reads the study's record and states only
        assert code == 2 and err.count("\n") == 1 and "damaged.db is damaged" in err, err
