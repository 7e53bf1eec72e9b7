"""Studies in a PostgreSQL database, shared by workers on many machines (the ``postgres`` extra).

``open_storage("postgresql://user@host:5432/db")`` returns a :class:`PostgresStorage`: the same
interface and the same promises as :class:`bodi.storage.sqlite.SQLiteStorage`, over the network.
It uses psycopg 3 directly (not SQLAlchemy): the storage is a dozen SQL statements, and the
two databases need their own ones where it matters (SQLite's write-ahead log and checkpoints,
PostgreSQL's row locks), so a layer over both would remove no code.

Tables (``bodi_meta``, ``bodi_studies``, ``bodi_trials``, prefixed so that they can share a
database with other applications' tables) are created when missing, in one transaction under
an advisory lock; ``bodi_meta`` records the format version, and later versions add columns in
place, as the SQLite files do.

Every write to a study first locks its row of ``bodi_studies`` (``SELECT ... FOR UPDATE``) and
numbers its change with that row's counter, so that:

* two workers never claim the same configuration (a claim reads the trials the others added
  and inserts its own under the lock);
* no update is lost, and a reader's cursor (:meth:`changes`, one ``REPEATABLE READ`` snapshot
  of the rows and the counter) never skips a change committed later with a smaller number.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bodi.extras import require
from bodi.storage.base import FORMAT, VERSION, StudyRecord, TrialRecord
from bodi.storage.sql import SQLStorage
from bodi.storage.urls import mask

#: an arbitrary key for ``pg_advisory_xact_lock``: one creator of the tables at a time
_SCHEMA_LOCK = 0xB0D1
_TABLES = (
    "CREATE TABLE IF NOT EXISTS bodi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS bodi_studies (
    name TEXT PRIMARY KEY, optimizer TEXT NOT NULL, space TEXT NOT NULL, settings TEXT NOT NULL,
    seed BIGINT NOT NULL, direction TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,
    seq BIGINT NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS bodi_trials (
    study TEXT NOT NULL REFERENCES bodi_studies (name) ON DELETE CASCADE,
    number INTEGER NOT NULL, state TEXT NOT NULL, params TEXT NOT NULL, x TEXT NOT NULL,
    value DOUBLE PRECISION, message TEXT, suggest_seconds DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL, worker TEXT, heartbeat DOUBLE PRECISION,
    attempts INTEGER NOT NULL DEFAULT 1, seq BIGINT NOT NULL DEFAULT 0, objective_values TEXT,
    constraint_values TEXT, user_attrs TEXT, started DOUBLE PRECISION,
    finished DOUBLE PRECISION, PRIMARY KEY (study, number))""",
    # format 5: a table of an older bodi gets the trials' times
    "ALTER TABLE bodi_trials ADD COLUMN IF NOT EXISTS started DOUBLE PRECISION",
    "ALTER TABLE bodi_trials ADD COLUMN IF NOT EXISTS finished DOUBLE PRECISION",
    "CREATE INDEX IF NOT EXISTS bodi_trials_seq ON bodi_trials (study, seq)",
)


#: how long an operation waits for a server that went away (a restart, a failover)
SERVER_AWAY_SECONDS = 120.0
#: how long the first connection of a storage waits for its server (a typo in the URL should
#: not take two minutes to report)
FIRST_CONNECT_SECONDS = 5.0


def _server_away(err: Exception) -> bool:
    """Whether ``err`` says the server is away for now (refused, shutting down, starting up,
    the connection lost), not that the request is wrong (a login, database or option)."""
    state = getattr(err, "sqlstate", None)
    return state is None or state.startswith(("08", "57P"))


def _one_line(what: str, err: Exception) -> str:
    text = str(err).strip()
    first = text.splitlines()[0] if text else type(err).__name__
    return mask(f"{what}: {first}")


class PostgresStorage(SQLStorage):
    """Studies in a PostgreSQL database (see the module docstring).

    Args:
        url: ``postgresql://user[:password]@host[:port]/database``.
        read_only: never write (``bodi show``): every transaction is read-only.
    """

    placeholder = "%s"
    trials_table = "bodi_trials"

    shared = True

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        super().__init__()
        self._psycopg = require("psycopg", "a PostgreSQL study storage", "postgres")
        self.url = url
        self.path = mask(url)  # what messages name
        self.read_only = read_only
        self._local = threading.local()
        self._lock = threading.Lock()  # guards the list of connections
        self._connections: list[Any] = []
        #: whether a connection ever succeeded (then a failure is the server going away)
        self._reached = False
        if read_only:
            self.shared = False
            return
        self._retrying(self._create_tables)

    def _create_tables(self) -> None:
        with self._transaction():
            db = self._db
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _TABLES:
                db.execute(statement)
            db.execute("INSERT INTO bodi_meta VALUES ('format', %s), ('version', %s) "
                       "ON CONFLICT DO NOTHING", (FORMAT, str(VERSION)))
            meta = dict(db.execute("SELECT key, value FROM bodi_meta").fetchall())
            if meta.get("format") != FORMAT:
                raise ValueError(f"{self.path} holds a bodi_meta table that is not bodi's")
            if int(meta.get("version", 0)) > VERSION:
                raise ValueError(f"{self.path} was written by a newer bodi (format version "
                                 f"{meta['version']})")

    # --------------------------------------------------------------- connections
    def _retrying(self, operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``operation(*args, **kwargs)`` (whole transactions), run again on a fresh connection
        while the server is away (restarted, shutting down, unreachable), with backoff, for up
        to :data:`SERVER_AWAY_SECONDS` (:data:`FIRST_CONNECT_SECONDS` before any connection
        succeeded); an error that waiting cannot mend (a refused login, an unknown database
        or option, missing rights) is one line at once."""
        psycopg = self._psycopg
        start, pause = time.monotonic(), 0.25
        while True:
            try:
                return operation(*args, **kwargs)
            except (psycopg.OperationalError, psycopg.InterfaceError) as err:
                if not _server_away(err):
                    raise ValueError(_one_line(f"the study database {self.path}", err)) from None
                self._drop_connection()
                waited = time.monotonic() - start
                limit = SERVER_AWAY_SECONDS if self._reached else FIRST_CONNECT_SECONDS
                if waited + pause > limit:
                    raise ValueError(_one_line(
                        f"cannot reach the study database {self.path} (waited {waited:.0f} s)",
                        err)) from None
                time.sleep(pause)
                pause = min(2 * pause, 5.0)
            except psycopg.Error as err:
                raise ValueError(_one_line(f"the study database {self.path}", err)) from None

    def _drop_connection(self) -> None:
        """Forget this thread's connection (the server closed it or went away)."""
        db = getattr(self._local, "db", None)
        self._local.db = None
        if db is not None:
            with self._lock:
                if db in self._connections:
                    self._connections.remove(db)
            with contextlib.suppress(Exception):
                db.close()

    @property
    def _db(self) -> Any:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            self._reached = True
            if self.read_only:
                db.execute("SET default_transaction_read_only = on")
            self._local.db = db
            with self._lock:
                self._connections.append(db)
        return db

    @contextmanager
    def _transaction(self, isolation: str | None = None) -> Iterator[None]:
        """One committed transaction (rolled back if the block raises)."""
        db = self._db
        with db.transaction():
            if isolation:
                db.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
            yield

    def _writable(self) -> None:
        if self.read_only:
            raise ValueError(f"{self.path} is open read-only")

    def _lock_study(self, study: str) -> None:
        """Lock ``study``'s row until the transaction ends (every write takes it first)."""
        row = self._db.execute("SELECT created FROM bodi_studies WHERE name = %s FOR UPDATE",
                               (study,)).fetchone()
        self._check_bound(study, row and row[0], row is not None)
        if row is None:
            raise ValueError(f"no study {study!r} in {self.path}")

    def _next_seq(self, study: str) -> int:
        (seq,) = self._db.execute("UPDATE bodi_studies SET seq = seq + 1 WHERE name = %s "
                                  "RETURNING seq", (study,)).fetchone()
        return int(seq)

    # -------------------------------------------------------------------- studies
    def _tables_exist(self) -> bool:
        """Whether bodi's tables are in the database (a reader finds none in a new one)."""
        return self._db.execute("SELECT to_regclass('bodi_studies')").fetchone()[0] is not None

    def get_study(self, name: str) -> StudyRecord | None:
        return self._retrying(self._get_study, name)

    def _get_study(self, name: str) -> StudyRecord | None:
        if self.read_only and not self._tables_exist():
            return None
        row = self._db.execute(
            "SELECT name, optimizer, space, settings, seed, direction, created FROM bodi_studies "
            "WHERE name = %s", (name,)).fetchone()
        if row is None:
            return None
        return self._study_from_row(tuple(row))

    def study_names(self) -> list[str]:
        return self._retrying(self._study_names)

    def _study_names(self) -> list[str]:
        if self.read_only and not self._tables_exist():
            return []
        return [r[0] for r in self._db.execute("SELECT name FROM bodi_studies ORDER BY name")]

    def create_study(self, record: StudyRecord) -> None:
        self._writable()
        self._retrying(self._create_study, record)

    def _create_study(self, record: StudyRecord) -> None:
        with self._transaction():  # (a retried insert that did commit conflicts, as any)
            inserted = self._db.execute(
                "INSERT INTO bodi_studies (name, optimizer, space, settings, seed, direction, "
                "created) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (record.name, record.optimizer, json.dumps(record.space),
                 json.dumps(record.settings), record.seed, record.direction, time.time()),
            ).rowcount
        if not inserted:
            raise ValueError(f"study {record.name!r} already exists in {self.path}")

    def delete_study(self, name: str) -> None:
        self._writable()
        self._retrying(self._delete_study, name)

    def _delete_study(self, name: str) -> None:
        with self._transaction():
            self._lock_study(name)
            self._db.execute("DELETE FROM bodi_studies WHERE name = %s", (name,))

    # --------------------------------------------------------------------- trials
    def _write(self, study: str, trial: TrialRecord) -> None:  # inside a locked transaction
        self._db.execute(
            "INSERT INTO bodi_trials (study, number, state, params, x, value, message, "
            "suggest_seconds, updated, worker, heartbeat, attempts, seq, objective_values, "
            "constraint_values, user_attrs, started, finished) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (study, number) DO UPDATE SET state = EXCLUDED.state, "
            "params = EXCLUDED.params, x = EXCLUDED.x, value = EXCLUDED.value, "
            "message = EXCLUDED.message, suggest_seconds = EXCLUDED.suggest_seconds, "
            "updated = EXCLUDED.updated, worker = EXCLUDED.worker, "
            "heartbeat = EXCLUDED.heartbeat, attempts = EXCLUDED.attempts, seq = EXCLUDED.seq, "
            "objective_values = EXCLUDED.objective_values, "
            "constraint_values = EXCLUDED.constraint_values, user_attrs = EXCLUDED.user_attrs, "
            "started = EXCLUDED.started, finished = EXCLUDED.finished",
            self.row_values(study, trial, time.time(), self._next_seq(study)),
        )

    @contextmanager
    def _writing(self, study: str) -> Iterator[None]:
        self._writable()
        with self._transaction():
            self._lock_study(study)
            yield

    def changes(self, study: str, cursor: int) -> tuple[list[TrialRecord], int]:
        return self._retrying(self._changes, study, cursor)

    def _changes(self, study: str, cursor: int) -> tuple[list[TrialRecord], int]:
        with self._transaction("REPEATABLE READ"):  # the rows and the counter, one snapshot
            new = self._changed(study, cursor)
            row = self._db.execute("SELECT seq FROM bodi_studies WHERE name = %s",
                                   (study,)).fetchone()
        return new, int(row[0]) if row else cursor

    def heartbeat(self, study: str, worker: str) -> None:
        if not self.read_only:
            self._retrying(self._heartbeat, study, worker)

    def _heartbeat(self, study: str, worker: str) -> None:
        with self._transaction():
            self._lock_study(study)
            self._db.execute(
                "UPDATE bodi_trials SET heartbeat = %s, seq = %s "
                "WHERE study = %s AND worker = %s AND state = 'pending'",
                (time.time(), self._next_seq(study), study, worker))

    def add_trials(self, study: str, trials: Sequence[TrialRecord], **options: Any
                   ) -> list[TrialRecord] | None:
        return self._retrying(super().add_trials, study, trials, **options)

    def reclaim(self, study: str, seen: TrialRecord, worker: str, **options: Any
                ) -> TrialRecord | None:
        return self._retrying(super().reclaim, study, seen, worker, **options)

    def put_trials(self, study: str, trials: Sequence[TrialRecord]) -> None:
        self._retrying(super().put_trials, study, trials)

    def close(self) -> None:
        with self._lock:
            for db in self._connections:
                db.close()
            self._connections.clear()
        self._local = threading.local()
