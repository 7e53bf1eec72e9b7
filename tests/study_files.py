"""Helpers for tests that need a study file as an older version of bodi wrote it."""

import json
import sqlite3


def forget_settings(path, *names: str) -> None:
    """Remove the settings ``names`` from every study of the SQLite study file ``path``, as
    a version of bodi that did not have those options stored them."""
    with sqlite3.connect(path) as db:
        for study, settings in db.execute("SELECT name, settings FROM studies").fetchall():
            stored = json.loads(settings)
            for name in names:
                del stored[name]
            db.execute("UPDATE studies SET settings = ? WHERE name = ?",
                       (json.dumps(stored), study))


def set_settings(path, **values) -> None:
    """Set the settings ``values`` of every study of the SQLite study file ``path``, as a
    version of bodi with other options stored them."""
    with sqlite3.connect(path) as db:
        for study, settings in db.execute("SELECT name, settings FROM studies").fetchall():
            stored = {**json.loads(settings), **values}
            db.execute("UPDATE studies SET settings = ? WHERE name = ?",
                       (json.dumps(stored), study))
