"""The study file is the whole study, and reading it never writes."""

import os
import shutil
import sqlite3
import stat
import time

import pytest

import bodi
from bodi.cli import main
from bodi.export import export_to_optuna, trial_rows
from bodi.space import Binary, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(6)])
SMALL = {"dictionary_size": 8, "num_restarts": 2, "raw_samples": 32, "n_init": 3}


def ones(params):
    return float(sum(params.values()))


def _study(path, budget=5):
    result = bodi.minimize(ones, SPACE, budget=budget, seed=0, storage=path, **SMALL)
    return result.study


def test_a_copy_of_the_db_file_alone_holds_every_told_trial(tmp_path):
    path = tmp_path / "study.db"
    opt = _study(path)  # still open: nothing closed or checkpointed by hand
    shutil.copy(path, tmp_path / "copy.db")  # the file alone, not its -wal
    copy = bodi.load_study(tmp_path / "copy.db", read_only=True)
    assert [t.params for t in copy.trials] == [t.params for t in opt.trials]
    assert [t.state for t in copy.trials] == ["complete"] * 5


def test_show_writes_nothing_and_works_on_a_read_only_file(tmp_path, capsys):
    path = tmp_path / "study.db"
    _study(path).close()
    before = path.read_bytes()
    (tmp_path / "study.db-wal").unlink(missing_ok=True)
    os.chmod(path, stat.S_IRUSR)
    os.chmod(tmp_path, stat.S_IRUSR | stat.S_IXUSR)  # read-only media: no file can be made
    try:
        assert main(["show", str(path), "--plot", str(tmp_path / "x.png"), "--json"]) == 0
        assert '"number": 4' in capsys.readouterr().out
        study = bodi.load_study(path, read_only=True)
        assert len(study.trials) == 5
        with pytest.raises(ValueError, match="read-only"):
            study.ask()
    finally:
        os.chmod(tmp_path, stat.S_IRWXU)
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_bytes() == before


def test_a_planted_trigger_never_runs_when_the_study_is_read(tmp_path, capsys):
    path = tmp_path / "study.db"
    _study(path).close()
    db = sqlite3.connect(path)
    db.execute("CREATE TRIGGER wipe AFTER UPDATE ON trials BEGIN DELETE FROM trials; END")
    db.execute("CREATE TRIGGER wipe2 AFTER UPDATE ON bodi_meta BEGIN DELETE FROM trials; END")
    db.commit()
    db.close()
    assert main(["show", str(path), "--json"]) == 0
    assert main(["studies", str(path)]) == 0
    assert "5 trials (5 complete)" in capsys.readouterr().out
    count = sqlite3.connect(path).execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    assert count == 5


def test_a_writer_holding_the_lock_does_not_block_show(tmp_path, capsys):
    path = tmp_path / "study.db"
    _study(path).close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process writing right now
    try:
        assert main(["show", str(path), "--json"]) == 0
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert '"number": 4' in capsys.readouterr().out


def test_report_refuses_another_applications_database_and_leaves_it_untouched(tmp_path,
                                                                             capsys):
    pytest.importorskip("distributed")
    (tmp_path / "app").mkdir()
    path = tmp_path / "app" / "results.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE users (name TEXT)")
    db.execute("INSERT INTO users VALUES ('ada')")
    db.commit()
    db.close()
    before = path.read_bytes()
    assert main(["report", str(tmp_path / "app")]) == 2
    assert "not a bodi results database (tables: users)" in capsys.readouterr().err
    assert path.read_bytes() == before
    assert not (tmp_path / "app" / "results.db-wal").exists()


def test_a_study_file_deleted_mid_run_stops_the_run_and_the_trials_are_recovered(tmp_path):
    path = tmp_path / "study.db"
    calls = []

    def objective(params):
        calls.append(params)
        if len(calls) == 4:
            path.unlink()  # e.g. a cleanup job
        return ones(params)

    with pytest.raises(RuntimeError, match=r"was deleted during the run.*recovered-\d+\.db"):
        bodi.minimize(objective, SPACE, budget=10, seed=0, storage=path, **SMALL)
    (recovered,) = tmp_path.glob("study.db.recovered-*.db")
    study = bodi.load_study(recovered, read_only=True)
    assert [t.state for t in study.trials][:3] == ["complete"] * 3
    assert len(calls) == 4  # the run stopped at once


def test_an_unknown_stored_setting_is_one_clear_error(tmp_path, capsys):
    path = tmp_path / "study.db"
    _study(path).close()
    db = sqlite3.connect(path)
    db.execute("""UPDATE studies SET settings = json_set(settings, '$.colour', 'red')""")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="colour"):
        bodi.load_study(path)
    # continuing it needs the optimizer; showing it does not (bodi show reads the trials)
    assert main(["show", str(path), "--plot", str(tmp_path / "p.png")]) == 0


def test_database_errors_become_one_line_that_says_what_to_do():
    from bodi.cli import _database_hint

    line = _database_hint(sqlite3.OperationalError("database is locked"))
    assert "over 60 s" in line and "--resume" in line
    assert "free space" in _database_hint(sqlite3.OperationalError("database or disk is full"))


def test_trials_carry_their_start_and_finish_times_into_every_table(tmp_path):
    optuna = pytest.importorskip("optuna")
    before = time.time()
    opt = create_study(bodi.RandomSearch(SPACE, seed=0), storage=tmp_path / "s.db")
    for k in range(3):
        params = opt.ask()
        time.sleep(0.05)
        opt.tell(params, float(k))
    taken = [t.params for t in opt.trials]
    waiting = opt.enqueue(next(p for p in ({f"b{i}": i == j for i in range(6)} for j in range(7))
                               if p not in taken))
    study = bodi.load_study(tmp_path / "s.db", read_only=True)
    done = [t for t in study.trials if t.state == "complete"]
    assert all(before <= t.started < t.finished - 0.04 for t in done)
    assert study.trials[waiting.number].started is None
    rows = trial_rows(study)
    assert rows[0]["duration"].total_seconds() >= 0.05 and rows[3]["duration"] is None
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    export_to_optuna(study, url)
    exported = optuna.load_study(study_name="default", storage=url).trials
    assert [t.datetime_start.timestamp() for t in exported[:3]] == pytest.approx(
        [t.started for t in done])
    assert exported[0].duration.total_seconds() >= 0.05


def test_a_study_file_of_the_format_before_trial_times_is_read_and_upgraded(tmp_path):
    path = tmp_path / "old.db"
    study = create_study(bodi.RandomSearch(SPACE, seed=0), storage=path)
    study.tell(study.ask(), 1.0)
    study.close()
    with sqlite3.connect(path) as db:  # as bodi's format 4 wrote it
        db.execute("ALTER TABLE trials DROP COLUMN started")
        db.execute("ALTER TABLE trials DROP COLUMN finished")
        db.execute("UPDATE bodi_meta SET value = '4' WHERE key = 'version'")
    old = bodi.load_study(path, read_only=True)
    assert old.trials[0].value == 1.0 and old.trials[0].started is None
    resumed = bodi.load_study(path)
    resumed.tell(resumed.ask(), 2.0)
    assert resumed.trials[1].started is not None and resumed.trials[1].finished is not None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM bodi_meta WHERE key = 'version'").fetchone() == (
            "5",)
