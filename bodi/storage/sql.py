"""What the SQL storages share: the trial columns, a trial row both ways, and the queries that
read trials. The SQLite and PostgreSQL storages differ only in the placeholder, the trials
table's name, how a transaction locks, and their schemas."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from bodi.storage.base import Storage, TrialRecord

#: the columns of a trial, in the order :func:`trial_from_row` reads them
TRIAL_COLUMNS = ("number", "state", "params", "x", "value", "message", "suggest_seconds",
                 "worker", "heartbeat", "attempts", "objective_values", "constraint_values",
                 "user_attrs")


def trial_from_row(row: tuple) -> TrialRecord:
    """A :class:`TrialRecord` from a row of :data:`TRIAL_COLUMNS`."""
    n, s, p, x, v, m, t, w, h, a, vs, cs, us = row
    return TrialRecord(n, s, json.loads(p), json.loads(x), v, m, t, w, h, a,
                       None if vs is None else json.loads(vs),
                       None if cs is None else json.loads(cs),
                       None if us is None else json.loads(us))


class SQLStorage(Storage):
    """A :class:`Storage` whose trials are rows of one SQL table (``_db`` a DB-API
    connection that has ``execute``)."""

    #: the parameter placeholder of the driver (``?`` or ``%s``)
    placeholder: ClassVar[str]
    #: the table of the trials
    trials_table: ClassVar[str]
    _db: Any

    def row_values(self, study: str, trial: TrialRecord, updated: float, seq: int) -> tuple:
        """The 16 values of ``trial``'s row: study, number, state, params, x, value, message,
        suggest seconds, ``updated``, worker, heartbeat, attempts, ``seq``, objective values,
        constraint values, user attributes (JSON where structured)."""
        return (study, trial.number, trial.state, json.dumps(trial.params), json.dumps(trial.x),
                trial.value, trial.message, trial.suggest_seconds, updated, trial.worker,
                trial.heartbeat, trial.attempts, seq,
                None if trial.values is None else json.dumps(trial.values),
                None if trial.constraints is None else json.dumps(trial.constraints),
                json.dumps(trial.user_attrs) if trial.user_attrs else None)

    def _selected_columns(self) -> str:
        """The ``SELECT`` list of :data:`TRIAL_COLUMNS` (a storage may fill missing ones)."""
        return ", ".join(TRIAL_COLUMNS)

    def _select(self, where: str, args: tuple) -> list[TrialRecord]:
        """The trials matching ``where`` (with :attr:`placeholder` s), by number."""
        rows = self._db.execute(
            f"SELECT {self._selected_columns()} FROM {self.trials_table} WHERE {where} "
            "ORDER BY number", args).fetchall()
        return [trial_from_row(row) for row in rows]

    def _trials_from(self, study: str, first: int) -> list[TrialRecord]:
        p = self.placeholder
        return self._select(f"study = {p} AND number >= {p}", (study, first))

    def _trial(self, study: str, number: int) -> TrialRecord | None:
        p = self.placeholder
        found = self._select(f"study = {p} AND number = {p}", (study, number))
        return found[0] if found else None

    def _count(self, study: str) -> int:
        (count,) = self._db.execute(
            f"SELECT COUNT(*) FROM {self.trials_table} WHERE study = {self.placeholder}",
            (study,)).fetchone()
        return int(count)

    def _changed(self, study: str, cursor: int) -> list[TrialRecord]:
        """The trials whose change counter is past ``cursor``."""
        p = self.placeholder
        return self._select(f"study = {p} AND seq > {p}", (study, cursor))
