"""What the SQL storages share: the trial columns, a trial row both ways, and the queries that
read trials. The SQLite and PostgreSQL storages differ only in the placeholder, the trials
table's name, how a transaction locks, and their schemas."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from bodi.storage.base import Storage, StudyRecord, TrialRecord

#: the columns of a trial, in the order :func:`trial_from_row` reads them
TRIAL_COLUMNS = ("number", "state", "params", "x", "value", "message", "suggest_seconds",
                 "worker", "heartbeat", "attempts", "objective_values", "constraint_values",
                 "user_attrs", "started", "finished")


def trial_from_row(row: tuple) -> TrialRecord:
    """A :class:`TrialRecord` from a row of :data:`TRIAL_COLUMNS`; a value of the wrong kind
    (a file damaged or edited by hand) is a ``ValueError`` that names the column."""
    n, s, p, x, v, m, t, w, h, a, vs, cs, us, started, finished = row
    return TrialRecord(
        _integer("number", n), _one_of("state", s, TRIAL_STATES),
        _json("params", p, dict), _numbers("x", _json("x", x, list)),
        _number_or_none("value", v), _text_or_none("message", m),
        _number("suggest_seconds", t), _text_or_none("worker", w),
        _number_or_none("heartbeat", h), _integer("attempts", a),
        None if vs is None else _numbers("objective_values", _json("objective_values", vs, list)),
        None if cs is None else _numbers("constraint_values", _json("constraint_values", cs,
                                                                    list)),
        None if us is None else _json("user_attrs", us, dict),
        _number_or_none("started", started), _number_or_none("finished", finished))


def study_from_row(row: tuple) -> StudyRecord:
    """A :class:`StudyRecord` from ``name, optimizer, space, settings, seed, direction,
    created``, checked as :func:`trial_from_row` checks a trial."""
    name, optimizer, space, settings, seed, direction, created = row
    return StudyRecord(name, _text("optimizer", optimizer), _json("space", space, dict),
                       _json("settings", settings, dict), _integer("seed", seed),
                       _text("direction", direction), _number_or_none("created", created))


TRIAL_STATES = ("pending", "complete", "failed")


def _damaged(column: str, value: Any, wanted: str) -> ValueError:
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return ValueError(f"column {column} holds {shown}, not {wanted}")


def _json(column: str, text: Any, kind: type) -> Any:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise _damaged(column, text, "JSON") from None
    if not isinstance(value, kind):
        raise _damaged(column, text, f"a JSON {'object' if kind is dict else 'array'}")
    return value


def _integer(column: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _damaged(column, value, "a whole number")
    return value


def _number(column: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _damaged(column, value, "a number")
    return float(value)


def _number_or_none(column: str, value: Any) -> float | None:
    return None if value is None else _number(column, value)


def _numbers(column: str, values: list) -> list[float]:
    return [_number(column, v) for v in values]


def _text(column: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _damaged(column, value, "text")
    return value


def _text_or_none(column: str, value: Any) -> str | None:
    return None if value is None else _text(column, value)


def _one_of(column: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise _damaged(column, value, " or ".join(allowed))
    return value


class SQLStorage(Storage):
    """A :class:`Storage` whose trials are rows of one SQL table (``_db`` a DB-API
    connection that has ``execute``)."""

    #: the parameter placeholder of the driver (``?`` or ``%s``)
    placeholder: ClassVar[str]
    #: the table of the trials
    trials_table: ClassVar[str]
    _db: Any
    #: what messages name the storage by
    path: Any

    def row_values(self, study: str, trial: TrialRecord, updated: float, seq: int) -> tuple:
        """The 18 values of ``trial``'s row: study, number, state, params, x, value, message,
        suggest seconds, ``updated``, worker, heartbeat, attempts, ``seq``, objective values,
        constraint values, user attributes (JSON where structured), started, finished."""
        return (study, trial.number, trial.state, json.dumps(trial.params), json.dumps(trial.x),
                trial.value, trial.message, trial.suggest_seconds, updated, trial.worker,
                trial.heartbeat, trial.attempts, seq,
                None if trial.values is None else json.dumps(trial.values),
                None if trial.constraints is None else json.dumps(trial.constraints),
                json.dumps(trial.user_attrs) if trial.user_attrs else None,
                trial.started, trial.finished)

    def _selected_columns(self) -> str:
        """The ``SELECT`` list of :data:`TRIAL_COLUMNS` (a storage may fill missing ones)."""
        return ", ".join(TRIAL_COLUMNS)

    def _select(self, where: str, args: tuple) -> list[TrialRecord]:
        """The trials matching ``where`` (with :attr:`placeholder` s), by number."""
        rows = self._db.execute(
            f"SELECT {self._selected_columns()} FROM {self.trials_table} WHERE {where} "
            "ORDER BY number", args).fetchall()
        try:
            return [trial_from_row(row) for row in rows]
        except ValueError as err:
            raise ValueError(f"{self.path} is damaged: a trial row of study {args[0]!r} "
                             f"({err}); restore it from a copy, or remove that row") from None

    def _study_from_row(self, row: tuple) -> StudyRecord:
        try:
            return study_from_row(row)
        except ValueError as err:
            raise ValueError(f"{self.path} is damaged: the record of study {row[0]!r} "
                             f"({err}); restore it from a copy") from None

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
