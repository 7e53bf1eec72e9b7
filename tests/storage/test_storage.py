"""Studies in SQLite: persistence, resume, pending trials, foreign and corrupt files."""

import sqlite3

import pytest
from study_files import forget_settings

import bodi
from bodi.space import Binary, Categorical, Continuous, SearchSpace
from bodi.storage import InMemoryStorage, SQLiteStorage
from bodi.study import create_study

SPACE = SearchSpace([Binary(f"b{i}") for i in range(6)] + [Categorical("c", ["x", "y", "z"])])


def f(c):
    return sum(c[f"b{i}"] for i in range(6)) + (c["c"] != "y")


def _opt(path, study_name=None, **kwargs):
    options = {"seed": 0, "n_init": 4, "dictionary_size": 16, "num_restarts": 4,
               "raw_samples": 128}
    options.update(kwargs)
    return create_study(bodi.BODi(SPACE, **options), storage=path, study_name=study_name)


def test_every_state_change_is_committed_and_a_reload_continues_identically(tmp_path):
    path = tmp_path / "study.db"
    opt = _opt(path)
    for _ in range(7):
        x = opt.ask()
        opt.tell(x, f(x))
        # another connection sees the told value before the next suggestion
        with sqlite3.connect(path) as db:
            rows = db.execute("SELECT state, value FROM trials ORDER BY number").fetchall()
        assert rows[-1] == ("complete", f(x))
    pending = opt.ask()  # asked, never told: the process "crashes" here
    opt.close()  # (in this process: its worker ends, as a crashed process's would)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM trials WHERE state='pending'").fetchone() == (1,)

    loaded = bodi.load_study(path)
    assert (
        isinstance(loaded.optimizer, bodi.BODi)
        and loaded.optimizer.settings() == opt.optimizer.settings()
    )
    assert [t.params for t in loaded.trials] == [t.params for t in opt.trials]
    assert loaded.ask() == pending  # the pending trial is re-issued first
    loaded.tell(pending, f(pending))
    after = loaded.ask()

    # the same study without the interruption
    fresh = _opt(tmp_path / "other.db")
    for t in opt.trials:
        x = fresh.ask()
        assert x == t.params
        fresh.tell(x, f(x))
    assert fresh.ask() == after


def test_pending_trials_can_be_marked_failed_on_load(tmp_path):
    path = tmp_path / "study.db"
    opt = _opt(path)
    x = opt.ask()
    opt.close()
    loaded = bodi.load_study(path, on_pending="fail")
    trial = loaded.trials[0]
    assert trial.state == "failed" and "pending" in trial.message
    assert loaded.ask() != x


def test_resuming_with_another_space_or_settings_is_refused_and_changes_nothing(tmp_path):
    path = tmp_path / "study.db"
    opt = _opt(path)
    opt.tell(opt.ask(), 1.0)
    before = path.read_bytes()
    other = SearchSpace([Binary("b0"), Continuous("u", 0, 1)])
    with pytest.raises(ValueError, match=r"other settings \(space: parameter 'b1' only in the "
                                         r"stored space"):
        create_study(bodi.BODi(other, seed=0), storage=path)
    with pytest.raises(ValueError, match=r"settings\.n_init: stored \d+, given 5.*--study-name"):
        _opt(path, n_init=5)
    with pytest.raises(ValueError, match=r"seed: stored 0, given 1"):
        _opt(path, seed=1)
    assert path.read_bytes() == before
    assert len(bodi.load_study(path).trials) == 1


@pytest.mark.parametrize(
    "content",
    [b"not a database at all\n" * 20, b"SQLite format 3\x00" + b"\x07" * 2000],
    ids=["text", "corrupt-sqlite"],
)
def test_corrupt_files_are_reported_and_left_unchanged(tmp_path, content):
    path = tmp_path / "study.db"
    path.write_bytes(content)
    for attempt in (lambda: bodi.load_study(path), lambda: _opt(path),
                    lambda: bodi.minimize(f, SPACE, budget=2, storage=path)):
        with pytest.raises(ValueError, match="study file"):
            attempt()
    assert path.read_bytes() == content


def test_foreign_sqlite_database_is_reported_and_left_unchanged(tmp_path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
        db.execute("INSERT INTO customers VALUES (1, 'ada')")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="another application"):
        _opt(path)
    with pytest.raises(ValueError, match="another application"):
        bodi.load_study(path)
    assert path.read_bytes() == before


def test_several_studies_in_one_file_and_load_errors(tmp_path):
    path = tmp_path / "many.db"
    _opt(path, study_name="a").tell({**{f"b{i}": False for i in range(6)}, "c": "x"}, 1.0)
    create_study(bodi.RandomSearch(SPACE, seed=3), storage=path, study_name="b")
    with pytest.raises(ValueError, match="2 studies"):
        bodi.load_study(path)
    assert isinstance(bodi.load_study(path, "b").optimizer, bodi.RandomSearch)
    assert len(bodi.load_study(path, "a").trials) == 1
    with pytest.raises(ValueError, match="no study 'c'"):
        bodi.load_study(path, "c")
    with pytest.raises(ValueError, match="no study file"):
        bodi.load_study(tmp_path / "missing.db")
    assert SQLiteStorage(path).study_names() == ["a", "b"]


def test_in_memory_storage_is_the_default():
    study = create_study(bodi.RandomSearch(SPACE))
    assert isinstance(study.storage, InMemoryStorage)
    study.tell(study.ask(), 2.0)
    assert study.storage.trials("default")[0].value == 2.0


def test_a_study_stored_before_the_shift_robust_options_fails_with_one_line(tmp_path):
    # older versions stored neither dictionary_reference nor trust_region: they ran the paper's
    # configuration, whose dictionary this BODi no longer has (PaperBODi is the paper's)
    path = tmp_path / "study.db"
    opt = _opt(path)
    for _ in range(5):
        x = opt.ask()
        opt.tell(x, f(x))
    opt.close()
    forget_settings(path, "dictionary_reference", "trust_region")
    with pytest.raises(ValueError, match=r"^this study ran BODi with dictionary_reference='none'"):
        bodi.load_study(path)


def test_the_storage_contract_is_abstract_and_every_backend_implements_it():
    from bodi.storage import Storage
    from bodi.storage.postgres import PostgresStorage
    from bodi.storage.sql import SQLStorage

    with pytest.raises(TypeError, match="abstract"):
        Storage()
    assert {"get_study", "create_study", "changes", "_writing", "_write"} <= set(
        Storage.__abstractmethods__)
    for backend in (InMemoryStorage, SQLiteStorage, PostgresStorage):
        assert issubclass(backend, Storage) and not backend.__abstractmethods__
    assert SQLStorage.__abstractmethods__  # the shared SQL code is no backend by itself
