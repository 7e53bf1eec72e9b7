"""A study's trials in the formats other tools read: rows, a pandas table, CSV, Optuna.

:func:`trial_rows` is the one flat view (one dict per trial, columns ``number``, ``state``,
``value`` or ``values_<i>``, ``datetime_start``, ``datetime_complete``, ``duration``,
``params_<name>``, ``constraints_<i>``, ``user_attrs_<key>``, ``message``,
``suggest_seconds``, as Optuna's ``trials_dataframe`` names them); the table, the
CSV file and the Optuna export are built from it or from the trials directly.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bodi.escaping import csv_cell
from bodi.extras import require
from bodi.storage.urls import is_url, mask

if TYPE_CHECKING:
    from bodi.stored_studies import StoredStudy
    from bodi.study import Study


def trial_rows(study: Study | StoredStudy) -> list[dict[str, Any]]:
    """Every trial of the study (an open one, or a stored one) as one flat dict (see the
    module docstring)."""
    if hasattr(study, "refresh"):
        study.refresh()
    rows = []
    for trial in study.trials:
        row: dict[str, Any] = {"number": trial.number, "state": trial.state}
        if study.is_multi_objective:
            complete = trial.state == "complete" and trial.values is not None
            values = list(trial.values) if complete else [None] * len(study.directions)
            row.update({f"values_{i}": v for i, v in enumerate(values)})
        else:
            row["value"] = trial.value
        start, end = _datetime(trial.started), _datetime(trial.finished)
        row.update({"datetime_start": start, "datetime_complete": end,
                    "duration": end - start if start and end else None})
        row.update({f"params_{name}": value for name, value in trial.params.items()})
        for i, c in enumerate(trial.constraints or []):
            row[f"constraints_{i}"] = c
        for key, value in (trial.user_attrs or {}).items():
            row[f"user_attrs_{key}"] = value
        row["message"] = trial.message
        row["suggest_seconds"] = trial.suggest_seconds
        rows.append(row)
    return rows


def _datetime(seconds: float | None) -> datetime | None:
    """A stored time (seconds since the epoch) as a local ``datetime``, as Optuna shows it."""
    return None if seconds is None else datetime.fromtimestamp(seconds)


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    return columns


def trials_dataframe(study: Study) -> Any:
    """The trials as a ``pandas.DataFrame``, one row per trial (the ``pandas`` extra)."""
    pandas = require("pandas", "trials_dataframe()", "pandas")
    rows = trial_rows(study)
    return pandas.DataFrame(rows, columns=_columns(rows))


def write_csv(study: Study | StoredStudy, path: str | Path | TextIO) -> Path | TextIO:
    """The trials as a CSV file, or into an open text stream (no extra needed); returns
    ``path``."""
    rows = trial_rows(study)
    if not isinstance(path, str | Path):
        _write_rows(rows, path)
        return path
    path = Path(path)
    with open(path, "w", newline="") as handle:
        _write_rows(rows, handle)
    return path


def _write_rows(rows: list[dict[str, Any]], handle: TextIO) -> None:
    writer = csv.DictWriter(handle, fieldnames=_columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: csv_cell(v) for k, v in row.items()} for row in rows)


def export_to_optuna(study: Study | StoredStudy, storage: str | Path,
                     study_name: str | None = None, *, replace: bool = False) -> str:
    """Write the study (an open one, or a stored one: no torch needed) into an Optuna storage
    (an RDB URL such as ``sqlite:///optuna.db``, or an SQLite file's path), so that Optuna's
    tools (optuna-dashboard, ``optuna.visualization``) show it. Each trial becomes an Optuna
    trial with the distributions of the bodi parameters
    (:func:`bodi.integrations.spaces.optuna.make_distributions`), its start and finish times;
    complete trials keep their values, failed ones are FAIL, pending ones WAITING; constraints
    and user attributes go into the user attributes.
    An Optuna study of the same name in ``storage`` is an error unless ``replace``, which
    deletes it first. Returns the Optuna study's name (``study_name``, default the bodi
    study's)."""
    optuna = require("optuna", "the export to Optuna", "optuna")
    from optuna.trial import FrozenTrial, TrialState

    from bodi.integrations.spaces.optuna import make_distributions, optuna_params_of
    from bodi.stored_studies import objective_values

    if hasattr(study, "refresh"):
        study.refresh()
    parameters = study.space.parameters if hasattr(study, "space") else study.parameters
    distributions = make_distributions(parameters)
    name = study_name or study.study_name
    url = str(storage) if is_url(storage) else f"sqlite:///{storage}"
    rdb = optuna.storages.RDBStorage(url)  # one engine and one schema check for every step
    if name in optuna.get_all_study_names(storage=rdb):
        if not replace:
            raise ValueError(f"{mask(url)} already holds an Optuna study {name!r}; replace it "
                             "(--replace, replace=True) or name another (--optuna-study-name)")
        optuna.delete_study(study_name=name, storage=rdb)
    target = optuna.create_study(storage=rdb, study_name=name,
                                 directions=list(study.directions))
    states = {"complete": TrialState.COMPLETE, "failed": TrialState.FAIL,
              "pending": TrialState.WAITING}
    for trial in study.trials:
        attrs = dict(trial.user_attrs or {})
        if trial.constraints is not None:
            attrs["constraints"] = list(trial.constraints)
        if trial.message:
            attrs["message"] = trial.message
        complete = trial.state == "complete"
        target.add_trial(FrozenTrial(
            number=-1, trial_id=-1, state=states[trial.state], value=None,
            values=objective_values(trial) if complete else None,
            datetime_start=_datetime(trial.started),
            datetime_complete=_datetime(trial.finished) if trial.state != "pending" else None,
            params=optuna_params_of(parameters, distributions, trial.params),
            distributions=distributions, user_attrs=attrs,
            system_attrs={"bodi:number": trial.number}, intermediate_values={}))
    return name
