"""Storage names: one parser (Optuna's ``sqlite:///`` meaning) and one masking of passwords."""

from pathlib import Path

import pytest

import bodi
from bodi.space import Binary, SearchSpace
from bodi.storage import SQLiteStorage, open_storage
from bodi.storage.urls import mask, parse

SPACE = SearchSpace([Binary(f"b{i}") for i in range(4)])


def test_sqlite_urls_read_as_optuna_reads_them():
    assert parse("sqlite:///study.db").path == Path("study.db")
    assert parse("sqlite:///runs/study.db").path == Path("runs/study.db")
    assert parse("sqlite:////abs/study.db").path == Path("/abs/study.db")
    assert parse("study.db").path == Path("study.db") and not parse("study.db").is_url
    assert parse("postgresql://u@h/db").is_url and parse("postgres://u@h/db").kind == "postgresql"
    for bad in ("sqlite://study.db", "sqlite:///", "mysql://u@h/db"):
        with pytest.raises(ValueError, match="sqlite:///"):
            parse(bad)


def test_a_relative_sqlite_url_is_a_study_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = bodi.minimize(lambda p: float(sum(p.values())), SPACE, budget=5, seed=0,
                           storage="sqlite:///study.db", n_init=3, dictionary_size=4,
                           num_restarts=2, raw_samples=32)
    assert (tmp_path / "study.db").is_file()
    assert len(bodi.load_study(tmp_path / "study.db").trials) == len(result.trials) == 5
    store = open_storage("sqlite:///study.db", read_only=True)
    assert isinstance(store, SQLiteStorage) and store.study_names() == ["default"]


@pytest.mark.parametrize("text", [
    "postgresql://bodi:s3cret@127.0.0.1:5432/db",
    "postgres://bodi:s3cret@host/db?sslmode=require",
    "error at postgresql+psycopg://bodi:s3cret@host/db: refused",
    "postgresql://bodi@host/db?password=s3cret&sslmode=disable",
    "host=h user=bodi password=s3cret dbname=db",
    "host=h password='s3cret' dbname=db",
])
def test_every_form_of_a_password_is_masked(text):
    masked = mask(text)
    assert "s3cret" not in masked and "***" in masked
    plain = "postgresql://bodi@host/db and study.db"
    assert mask(plain) == plain


def test_storage_names_are_parsed_in_one_place():
    """No module but bodi/storage/urls.py looks for ``"://"`` itself."""
    root = Path(__file__).resolve().parents[2] / "bodi"
    parsing = [str(p.relative_to(root)) for p in root.rglob("*.py")
               if '"://"' in p.read_text() or "'://'" in p.read_text()]
    assert parsing == ["storage/urls.py"]
