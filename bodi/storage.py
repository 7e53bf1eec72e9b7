"""Study storage: every trial of a study, persisted as it changes state.

A *study* is a search space, an optimizer (class name, settings, seed, direction) and its trials.
:class:`SQLiteStorage` keeps studies in one SQLite file (WAL mode; every state change of a trial
is one committed transaction), so a study survives a crash or a kill at any moment and
:func:`bodi.load_study` continues it. :class:`InMemoryStorage` is the same interface without
persistence.

Opening a file never modifies it unless it is a bodi study file or an empty/new file: anything
else (not SQLite, a corrupt database, another application's SQLite database) is rejected with a
``ValueError`` after a read-only look.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "bodi-study"
VERSION = 1
SQLITE_HEADER = b"SQLite format 3\x00"
SCHEMA = """
CREATE TABLE IF NOT EXISTS bodi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS studies (
    name TEXT PRIMARY KEY, optimizer TEXT NOT NULL, space TEXT NOT NULL, settings TEXT NOT NULL,
    seed INTEGER NOT NULL, direction TEXT NOT NULL, created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
    study TEXT NOT NULL, number INTEGER NOT NULL, state TEXT NOT NULL, params TEXT NOT NULL,
    x TEXT NOT NULL, value REAL, message TEXT, suggest_seconds REAL NOT NULL,
    updated REAL NOT NULL, PRIMARY KEY (study, number)
);
"""


@dataclass(frozen=True)
class StudyRecord:
    """What a storage knows about a study (everything needed to rebuild its optimizer)."""

    name: str
    optimizer: str
    space: dict[str, Any]
    settings: dict[str, Any]
    seed: int
    direction: str


@dataclass(frozen=True)
class TrialRecord:
    """One stored trial."""

    number: int
    state: str
    params: dict[str, Any]
    x: list[float]
    value: float | None
    message: str | None
    suggest_seconds: float


class Storage:
    """The storage interface (the in-memory version keeps everything in dicts)."""

    def __init__(self) -> None:
        self._studies: dict[str, StudyRecord] = {}
        self._trials: dict[str, dict[int, TrialRecord]] = {}

    def get_study(self, name: str) -> StudyRecord | None:
        return self._studies.get(name)

    def study_names(self) -> list[str]:
        return sorted(self._studies)

    def create_study(self, record: StudyRecord) -> None:
        if record.name in self._studies:
            raise ValueError(f"study {record.name!r} already exists")
        self._studies[record.name] = record
        self._trials[record.name] = {}

    def put_trial(self, study: str, trial: TrialRecord) -> None:
        """Insert or replace a trial (one committed state change)."""
        self._trials[study][trial.number] = trial

    def trials(self, study: str) -> list[TrialRecord]:
        return [self._trials[study][k] for k in sorted(self._trials.get(study, {}))]

    def close(self) -> None:
        """Release resources (nothing to do in memory)."""


class InMemoryStorage(Storage):
    """Keeps studies in memory only (the default)."""


class SQLiteStorage(Storage):
    """Studies in a SQLite file (WAL journal, one transaction per trial state change)."""

    def __init__(self, path: str | Path):
        super().__init__()
        self.path = Path(path)
        _check_is_study_file(self.path)
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)  # CREATE ... IF NOT EXISTS: each one atomic
            with self._transaction():
                self._db.execute(
                    "INSERT OR IGNORE INTO bodi_meta VALUES ('format', ?), ('version', ?)",
                    (FORMAT, str(VERSION)),
                )
        except sqlite3.DatabaseError as err:  # pragma: no cover - guarded by the check
            raise ValueError(f"{self.path} is not a usable bodi study file: {err}") from err

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One committed transaction (rolled back if the block raises)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get_study(self, name: str) -> StudyRecord | None:
        row = self._db.execute(
            "SELECT name, optimizer, space, settings, seed, direction FROM studies "
            "WHERE name = ?", (name,),
        ).fetchone()
        if row is None:
            return None
        return StudyRecord(row[0], row[1], json.loads(row[2]), json.loads(row[3]), row[4], row[5])

    def study_names(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT name FROM studies ORDER BY name")]

    def create_study(self, record: StudyRecord) -> None:
        with self._transaction():
            if self.get_study(record.name) is not None:
                raise ValueError(f"study {record.name!r} already exists in {self.path}")
            self._db.execute(
                "INSERT INTO studies VALUES (?, ?, ?, ?, ?, ?, ?)",
                (record.name, record.optimizer, json.dumps(record.space),
                 json.dumps(record.settings), record.seed, record.direction, time.time()),
            )

    def put_trial(self, study: str, trial: TrialRecord) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (study, trial.number, trial.state, json.dumps(trial.params),
                 json.dumps(trial.x), trial.value, trial.message, trial.suggest_seconds,
                 time.time()),
            )

    def trials(self, study: str) -> list[TrialRecord]:
        rows = self._db.execute(
            "SELECT number, state, params, x, value, message, suggest_seconds FROM trials "
            "WHERE study = ? ORDER BY number", (study,),
        ).fetchall()
        return [TrialRecord(n, s, json.loads(p), json.loads(x), v, m, t)
                for n, s, p, x, v, m, t in rows]

    def close(self) -> None:
        self._db.close()


def _check_is_study_file(path: Path) -> None:
    """Reject (without writing) anything that is not a new, empty or bodi SQLite file."""
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a study file")
    if not path.exists() or path.stat().st_size == 0:
        if not path.parent.exists():
            raise ValueError(f"the folder of {path} does not exist")
        return
    with open(path, "rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        raise ValueError(f"{path} is not a bodi study file (not an SQLite database)")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if tables and "bodi_meta" not in tables:
                raise ValueError(
                    f"{path} is an SQLite database of another application (tables: "
                    f"{', '.join(sorted(tables)[:5])}), not a bodi study file"
                )
            if tables:
                meta = dict(db.execute("SELECT key, value FROM bodi_meta").fetchall())
                if meta.get("format") != FORMAT:
                    raise ValueError(f"{path} is not a bodi study file")
                if int(meta.get("version", 0)) > VERSION:
                    raise ValueError(
                        f"{path} was written by a newer bodi (format version {meta['version']})"
                    )
        finally:
            db.close()
    except sqlite3.DatabaseError as err:
        raise ValueError(f"{path} is not a readable bodi study file: {err}") from err


def open_storage(storage: str | Path | Storage | None) -> Storage:
    """``None`` -> in memory; a path -> SQLite; a :class:`Storage` is returned as is."""
    if storage is None:
        return InMemoryStorage()
    if isinstance(storage, Storage):
        return storage
    if isinstance(storage, str | Path):
        return SQLiteStorage(storage)
    raise ValueError(f"storage must be a path or a Storage, got {type(storage).__name__}")
