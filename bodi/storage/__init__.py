"""Study storage: every trial of a study, persisted as it changes state.

A *study* is a search space, an optimizer (class name, settings, seed, direction) and its
trials. :func:`open_storage` opens one by what the user names: nothing (memory,
:class:`InMemoryStorage`), a path or ``sqlite:///path`` (:class:`SQLiteStorage`, one file),
or ``postgresql://user@host:port/db`` (:class:`~bodi.storage.postgres.PostgresStorage`, shared
by workers on many machines; the ``postgres`` extra, imported only when asked for).
:func:`bodi.load_study` continues a stored study.
"""

from __future__ import annotations

from pathlib import Path

from bodi.storage.base import (
    FORMAT,
    VERSION,
    InMemoryStorage,
    Storage,
    StudyRecord,
    TrialRecord,
)
from bodi.storage.sqlite import SQLiteStorage, StudyFileGoneError

__all__ = [
    "FORMAT",
    "VERSION",
    "InMemoryStorage",
    "SQLiteStorage",
    "Storage",
    "StudyFileGoneError",
    "StudyRecord",
    "TrialRecord",
    "open_storage",
]


def open_storage(storage: str | Path | Storage | None, *, read_only: bool = False) -> Storage:
    """``None`` -> in memory; a path or ``sqlite:///path`` -> SQLite; a
    ``postgresql://user@host:port/db`` URL -> PostgreSQL (:mod:`bodi.storage.postgres`); a
    :class:`Storage` is returned as is. ``read_only``: never written (``bodi show``)."""
    if storage is None:
        return InMemoryStorage()
    if isinstance(storage, Storage):
        return storage
    if isinstance(storage, str) and "://" in storage:
        scheme, _, rest = storage.partition("://")
        if scheme == "sqlite":
            return SQLiteStorage(rest, read_only=read_only)
        if scheme in ("postgresql", "postgres"):
            from bodi.storage.postgres import PostgresStorage

            return PostgresStorage(storage, read_only=read_only)
        raise ValueError(f"unknown storage URL scheme {scheme!r}: use a file path, "
                         "sqlite:///path or postgresql://user@host:port/database")
    if isinstance(storage, str | Path):
        return SQLiteStorage(storage, read_only=read_only)
    raise ValueError(f"storage must be a path or a Storage, got {type(storage).__name__}")
