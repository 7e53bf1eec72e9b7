"""Study storage: every trial of a study, persisted as it changes state.

A *study* is a search space, an optimizer (class name, settings, seed, direction) and its
trials. :func:`open_storage` opens one by what the user names: nothing (memory,
:class:`InMemoryStorage`), a path or ``sqlite:///path`` (:class:`SQLiteStorage`, one file;
the URL forms as Optuna reads them, :mod:`bodi.storage.urls`),
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
    StudyGoneError,
    StudyRecord,
    TrialRecord,
)
from bodi.storage.sqlite import SQLiteStorage, StudyFileGoneError
from bodi.storage.urls import parse

__all__ = [
    "FORMAT",
    "VERSION",
    "InMemoryStorage",
    "SQLiteStorage",
    "Storage",
    "StudyFileGoneError",
    "StudyGoneError",
    "StudyRecord",
    "TrialRecord",
    "open_storage",
]


def open_storage(storage: str | Path | Storage | None, *, read_only: bool = False) -> Storage:
    """``None`` -> in memory; a path or ``sqlite:///path`` (relative, as in Optuna) -> SQLite; a
    ``postgresql://user@host:port/db`` URL -> PostgreSQL (:mod:`bodi.storage.postgres`); a
    :class:`Storage` is returned as is. ``read_only``: never written (``bodi show``)."""
    if storage is None:
        return InMemoryStorage()
    if isinstance(storage, Storage):
        return storage
    if not isinstance(storage, str | Path):
        raise ValueError(f"storage must be a path or a Storage, got {type(storage).__name__}")
    name = parse(storage)
    if name.kind == "postgresql":
        from bodi.storage.postgres import PostgresStorage

        return PostgresStorage(name.url, read_only=read_only)
    return SQLiteStorage(name.path, read_only=read_only)
