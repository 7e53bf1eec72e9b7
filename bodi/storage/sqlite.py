"""Studies in one SQLite file (WAL mode; every state change of a trial is one committed
transaction), so that a study survives a crash or a kill at any moment.

Opening a file never modifies it unless it is a bodi study file or an empty/new file: anything
else (not SQLite, a corrupt database, another application's SQLite database) is rejected with a
``ValueError`` after a read-only look. ``SQLiteStorage(path, read_only=True)`` (``bodi show``,
``bodi studies``, ``bodi export``) never writes: no lock, no schema change, no trigger can run,
and it works on read-only media.

The write-ahead log is checkpointed into the study file after every committed write
(``wal_autocheckpoint``) and when the storage is closed, so that a copy of the ``.db`` file
alone holds the study (unless a reader held the log at that moment).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bodi.storage.base import FORMAT, VERSION, StudyRecord, TrialRecord
from bodi.storage.sql import TRIAL_COLUMNS, SQLStorage

SQLITE_HEADER = b"SQLite format 3\x00"
#: how long a connection waits for another process's lock on the study file
LOCK_SECONDS = 60.0
TABLES = (
    "CREATE TABLE IF NOT EXISTS bodi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS studies (
    name TEXT PRIMARY KEY, optimizer TEXT NOT NULL, space TEXT NOT NULL, settings TEXT NOT NULL,
    seed INTEGER NOT NULL, direction TEXT NOT NULL, created REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS trials (
    study TEXT NOT NULL, number INTEGER NOT NULL, state TEXT NOT NULL, params TEXT NOT NULL,
    x TEXT NOT NULL, value REAL, message TEXT, suggest_seconds REAL NOT NULL,
    updated REAL NOT NULL, worker TEXT, heartbeat REAL, attempts INTEGER NOT NULL DEFAULT 1,
    seq INTEGER NOT NULL DEFAULT 0, objective_values TEXT, constraint_values TEXT,
    user_attrs TEXT, started REAL, finished REAL, PRIMARY KEY (study, number))""",
)
#: columns added by format version 2 (a version-1 file is upgraded in place when opened)
_V2_COLUMNS = (
    "worker TEXT", "heartbeat REAL", "attempts INTEGER NOT NULL DEFAULT 1",
    "seq INTEGER NOT NULL DEFAULT 0",
)
#: the columns added by format versions 3 and 4
_V3_COLUMNS = ("objective_values TEXT", "constraint_values TEXT", "user_attrs TEXT",
               "started REAL", "finished REAL")


class SQLiteStorage(SQLStorage):
    """Studies in a SQLite file (WAL journal, one transaction per trial state change).

    Several processes may open the same file and work on one study at once: each claims new
    trials in an immediate (write-locked) transaction that sees the others' trials. Each thread
    uses its own connection.
    """

    placeholder = "?"
    trials_table = "trials"

    shared = True

    def __init__(self, path: str | Path, *, read_only: bool = False):
        super().__init__()
        self.path = Path(path)
        self.read_only = read_only
        _check_is_study_file(self.path)
        self._local = threading.local()
        self._lock = threading.Lock()  # guards the list of connections
        self._connections: list[sqlite3.Connection] = []
        #: why the storage can no longer write (its file was deleted or replaced)
        self._gone: str | None = None
        self._log_identities: dict[str, tuple[int, int] | None] = {}
        if read_only:
            if not self.path.is_file() or self.path.stat().st_size == 0:
                raise ValueError(f"no study file at {self.path}")
            self.shared = False  # no heartbeats: a reader holds no trial
            self._columns = {row[1] for row in self._db.execute("PRAGMA table_info(trials)")}
            return
        new_file = not self.path.exists() or self.path.stat().st_size == 0
        try:
            db = self._db
            self._identity = _identity(self.path)
            db.execute("PRAGMA journal_mode=WAL")
            with self._transaction():
                for statement in TABLES:
                    db.execute(statement)
                db.execute(
                    "INSERT OR IGNORE INTO bodi_meta VALUES ('format', ?), ('version', ?)",
                    (FORMAT, str(VERSION)),
                )
                self._upgrade(db)  # (the index needs the version-2 column seq)
                db.execute("CREATE INDEX IF NOT EXISTS trials_seq ON trials (study, seq)")
                db.execute("INSERT OR IGNORE INTO bodi_meta VALUES ('seq', '0')")
            self._log_identities = {suffix: _identity(self.path.with_name(self.path.name + suffix))
                                    for suffix in ("-wal", "-shm")}
        except sqlite3.DatabaseError as err:
            self.close()
            locked = "locked" in str(err) or "busy" in str(err)  # another process creates it
            if new_file and not locked:  # nothing of it is usable: a later run starts afresh
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with contextlib.suppress(OSError):
                        self.path.with_name(self.path.name + suffix).unlink()
            raise ValueError(_open_error(self.path, err)) from None

    @staticmethod
    def _upgrade(db: sqlite3.Connection) -> None:
        """Add the columns of later versions to an older file (inside the opening transaction)."""
        columns = {row[1] for row in db.execute("PRAGMA table_info(trials)")}
        if "seq" not in columns:
            for column in _V2_COLUMNS:
                db.execute(f"ALTER TABLE trials ADD COLUMN {column}")
            db.execute("UPDATE trials SET seq = rowid")
            db.execute("INSERT OR REPLACE INTO bodi_meta VALUES "
                       "('seq', (SELECT COALESCE(MAX(seq), 0) FROM trials))")
        for column in _V3_COLUMNS:
            if column.split()[0] not in columns:
                db.execute(f"ALTER TABLE trials ADD COLUMN {column}")
        db.execute("UPDATE bodi_meta SET value = ? WHERE key = 'version'", (str(VERSION),))

    @property
    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._read_only_connection() if self.read_only else sqlite3.connect(
                self.path, timeout=LOCK_SECONDS, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA trusted_schema=OFF")
            db.execute(f"PRAGMA busy_timeout={int(LOCK_SECONDS * 1000)}")
            if not self.read_only:
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA wal_autocheckpoint=1")  # the .db file holds every commit
            self._local.db = db
            with self._lock:
                self._connections.append(db)
        return db

    def _read_only_connection(self) -> sqlite3.Connection:
        """A connection that cannot write (:func:`_read_only`)."""
        return _read_only(self.path, timeout=LOCK_SECONDS, isolation_level=None,
                          check_same_thread=False)

    def _writable(self) -> None:
        if self.read_only:
            raise ValueError(f"{self.path} is open read-only")
        if self._gone is None and _identity(self.path) != self._identity:
            self._gone = self._recover()
            self._discard_log_files()
        if self._gone is not None:
            raise StudyFileGoneError(self._gone)

    def _discard_log_files(self) -> None:
        """Close this storage's connections and remove the write-ahead log and its index that
        belonged to the file that is gone (the same files as at opening): left beside the new
        file, SQLite would apply the old file's pages to it."""
        self.close()
        for suffix, identity in self._log_identities.items():
            log = self.path.with_name(self.path.name + suffix)
            if identity is not None and _identity(log) == identity:
                with contextlib.suppress(OSError):
                    log.unlink()

    def _recover(self) -> str:
        """What was stored so far, copied from the open connection (which still sees the
        deleted or replaced file) into a new study file beside it; the message says where."""
        stamp, n = int(time.time()), 0
        recovery = self.path.with_name(f"{self.path.name}.recovered-{stamp}.db")
        while recovery.exists():  # two recoveries within one second
            n += 1
            recovery = self.path.with_name(f"{self.path.name}.recovered-{stamp}-{n}.db")
        try:
            target = sqlite3.connect(recovery)
            with target:
                self._db.backup(target)
            target.close()
            saved = f"the trials stored so far are saved in {recovery} (move it to {self.path} " \
                    "to resume)"
        except (sqlite3.Error, OSError) as err:
            saved = f"the trials stored so far could not be saved ({err})"
        what = "deleted" if not self.path.exists() else "replaced by another file"
        return f"the study file {self.path} was {what} during the run; {saved}"

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One committed transaction (rolled back if the block raises)."""
        if self.read_only:  # a consistent snapshot for the reads of the block
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("ROLLBACK")
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _being_created(self) -> bool:
        """Whether a reader finds the file without bodi's tables yet: another process has
        just created it and is writing them (its first transaction), so it holds no study."""
        return self.read_only and not self._columns

    def get_study(self, name: str) -> StudyRecord | None:
        if self._being_created():
            return None
        row = self._db.execute(
            "SELECT name, optimizer, space, settings, seed, direction, created FROM studies "
            "WHERE name = ?", (name,),
        ).fetchone()
        if row is None:
            return None
        return self._study_from_row(tuple(row))

    def study_names(self) -> list[str]:
        if self._being_created():
            return []
        return [r[0] for r in self._db.execute("SELECT name FROM studies ORDER BY name")]

    def create_study(self, record: StudyRecord) -> None:
        self._writable()
        with self._transaction():
            if self.get_study(record.name) is not None:
                raise ValueError(f"study {record.name!r} already exists in {self.path}")
            self._db.execute(
                "INSERT INTO studies VALUES (?, ?, ?, ?, ?, ?, ?)",
                (record.name, record.optimizer, json.dumps(record.space),
                 json.dumps(record.settings), record.seed, record.direction, time.time()),
            )

    def delete_study(self, name: str) -> None:
        self._writable()
        with self._transaction():
            if self.get_study(name) is None:
                raise ValueError(f"no study {name!r} in {self.path}")
            self._db.execute("DELETE FROM trials WHERE study = ?", (name,))
            self._db.execute("DELETE FROM studies WHERE name = ?", (name,))

    def _next_seq(self) -> int:
        """The next change number (inside a transaction)."""
        self._db.execute("UPDATE bodi_meta SET value = CAST(value AS INTEGER) + 1 "
                         "WHERE key = 'seq'")
        return int(self._db.execute("SELECT value FROM bodi_meta WHERE key = 'seq'").fetchone()[0])

    def _write(self, study: str, trial: TrialRecord) -> None:  # inside a transaction
        self._db.execute(
            "INSERT OR REPLACE INTO trials VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.row_values(study, trial, time.time(), self._next_seq()),
        )

    @contextmanager
    def _writing(self, study: str) -> Iterator[None]:
        self._writable()
        with self._transaction():  # BEGIN IMMEDIATE: the file's write lock
            row = self._db.execute("SELECT created FROM studies WHERE name = ?",
                                   (study,)).fetchone()
            self._check_bound(study, row and row[0], row is not None)
            yield

    def _selected_columns(self) -> str:
        if not self.read_only:
            return super()._selected_columns()
        # an older file, not upgraded: its missing columns are empty
        return ", ".join(c if c in self._columns else f"NULL AS {c}" for c in TRIAL_COLUMNS)

    def changes(self, study: str, cursor: int) -> tuple[list[TrialRecord], int]:
        with self._transaction():  # one consistent snapshot of rows and cursor
            new = self._changed(study, cursor)
            (top,) = self._db.execute(
                "SELECT value FROM bodi_meta WHERE key = 'seq'").fetchone()
        return new, int(top)

    def heartbeat(self, study: str, worker: str) -> None:
        if self.read_only:
            return
        with self._transaction():
            self._db.execute(
                "UPDATE trials SET heartbeat = ?, seq = ? "
                "WHERE study = ? AND worker = ? AND state = 'pending'",
                (time.time(), self._next_seq(), study, worker),
            )

    def close(self) -> None:
        with self._lock:
            for db in self._connections:
                if not self.read_only:
                    with contextlib.suppress(sqlite3.Error):  # busy: the next writer will
                        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.close()
            self._connections.clear()
        self._local = threading.local()


class StudyFileGoneError(RuntimeError):
    """The study file was deleted or replaced while a run was writing to it."""


def _open_error(path: Path, err: sqlite3.DatabaseError) -> str:
    """Why a study file could not be opened for writing, as one line that says what to do."""
    text = str(err)
    if "locked" in text or "busy" in text:
        return (f"the study file {path} stayed locked by another process for "
                f"{LOCK_SECONDS:.0f} s ({text}); run again when it is done")
    if "full" in text or "I/O" in text or "readonly" in text or "read-only" in text:
        return (f"the study file {path} cannot be written here ({text}); free space or choose "
                "a writable place")
    return f"{path} is not a usable bodi study file: {text}"


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path`` (``None``: no file there)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _read_only(path: Path, **options: Any) -> sqlite3.Connection:
    """A read-only connection to the SQLite file at ``path``; on read-only media, where SQLite
    cannot create the log's index beside the file, as an immutable file."""
    uri = path.resolve().as_uri()
    for mode in ("mode=ro", "mode=ro&immutable=1"):
        db = sqlite3.connect(f"{uri}?{mode}", uri=True, **options)
        try:
            db.execute("PRAGMA query_only=ON")
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            db.close()
    raise ValueError(f"{path} cannot be read")


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
        db = _read_only(path)
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
