"""Stored studies read and managed without their optimizer: what ``bodi show``, ``bodi studies``
and the tables need.

A :class:`StoredStudy` is a read-only view of one study of a storage (its record and trial
records) with the best trial, the Pareto front and the trials as dicts, computed in plain
Python: reading a study loads neither torch nor BoTorch, so the commands that only read answer
at once. :func:`study_summaries`, :func:`copy_study` and :func:`delete_study` manage the
studies of a storage. To continue a study, :func:`bodi.load_study` rebuilds its optimizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bodi.directions import sign
from bodi.escaping import for_terminal
from bodi.storage import Storage, StudyRecord, TrialRecord, open_storage
from bodi.storage.urls import parse as parse_storage

if TYPE_CHECKING:
    from bodi.parameters import Parameter


def existing_storage(storage: str | Path | Storage, read_only: bool = False) -> Storage:
    """An existing study file (or a URL, or a Storage) opened; a missing file is an error."""
    if isinstance(storage, str | Path):
        name = parse_storage(storage)
        if not name.is_url and not name.path.is_file():
            raise ValueError(f"no study file at {name.path}")
    return open_storage(storage, read_only=read_only)


def check_trial(record: TrialRecord, number: int, dim: int, n_objectives: int, where: str,
                study: str) -> None:
    """Raise one ``ValueError`` naming ``where``, ``study`` and the trial when ``record``
    cannot be the trial numbered ``number`` (or an update of an earlier one) of a study with
    ``dim`` parameters and ``n_objectives`` objectives: a damaged or edited file."""
    problem = None
    if record.number > number:
        problem = f"it follows trial #{number - 1}: the numbers have a gap"
    elif len(record.x) != dim:
        problem = f"its encoding has {len(record.x)} numbers, the space {dim}"
    elif record.state == "complete" and (
            record.value is None if n_objectives == 1 and not record.values
            else record.values is None or len(record.values) != n_objectives):
        problem = "it is complete but holds no objective value for each objective"
    if problem is not None:
        raise ValueError(f"{where} is damaged: trial #{record.number} of study {study!r}: "
                         f"{problem}; restore it from a copy")


def _check_space(space: Any, where: str, study: str) -> int:
    """The number of parameters of a stored space (one ``ValueError`` if it is damaged)."""
    parameters = space.get("parameters") if isinstance(space, dict) else None
    if not (isinstance(parameters, list) and parameters and all(
            isinstance(p, dict) and isinstance(p.get("name"), str) for p in parameters)):
        raise ValueError(f"{where} is damaged: the space of study {study!r} (not a list of "
                         "named parameters); restore it from a copy")
    return len(parameters)


def study_name_in(store: Storage, study_name: str | None) -> str:
    """``study_name``, or the storage's only study when it is ``None``."""
    names = store.study_names()
    if study_name is None:
        if len(names) != 1:
            raise ValueError(
                f"the storage holds {len(names)} studies ({', '.join(names) or 'none'}); "
                "pass study_name (bodi show: --study-name)")
        return names[0]
    if study_name not in names:
        raise ValueError(f"no study {study_name!r} (studies: {', '.join(names) or 'none'})")
    return study_name


@dataclass(frozen=True)
class StoredStudy:
    """One stored study as it is now: its record and its trials (records, by number)."""

    record: StudyRecord
    trials: list[TrialRecord] = field(repr=False)

    @classmethod
    def read(cls, storage: str | Path | Storage, study_name: str | None = None) -> StoredStudy:
        """The study ``study_name`` (default: the only one) of an existing storage, read-only."""
        store = existing_storage(storage, read_only=True)
        try:
            name = study_name_in(store, study_name)
            record = store.get_study(name)
            trials = sorted(store.trials(name), key=lambda t: t.number)
        finally:
            store.close()
        where = str(getattr(store, "path", storage))
        dim = _check_space(record.space, where, name)
        for number, trial in enumerate(trials):
            check_trial(trial, number, dim, len(record.directions), where, name)
        return cls(record, trials)

    @property
    def study_name(self) -> str:
        return self.record.name

    @property
    def optimizer_name(self) -> str:
        return self.record.optimizer

    @property
    def directions(self) -> tuple[str, ...]:
        return tuple(self.record.directions)

    @property
    def direction(self) -> str:
        return self.record.direction

    @property
    def is_multi_objective(self) -> bool:
        return len(self.directions) > 1

    @property
    def n_objectives(self) -> int:
        return len(self.directions)

    @property
    def parameters(self) -> list[Parameter]:
        """The study's parameters, from its stored definition."""
        from bodi.parameters import parameter_from_dict  # numpy: not needed to list studies

        return [parameter_from_dict(spec, i)
                for i, spec in enumerate(self.record.space.get("parameters", []))]

    @property
    def n_parameters(self) -> int:
        parameters = self.record.space.get("parameters")
        return len(parameters) if isinstance(parameters, list) else 0

    def _feasible_complete(self) -> list[TrialRecord]:
        return [t for t in self.trials if t.state == "complete"
                and (t.constraints is None or all(c <= 0 for c in t.constraints))]


    @property
    def best(self) -> tuple[dict[str, Any], float, int] | None:
        """``(params, value, number)`` of the best feasible complete trial (the first of
        equals), or ``None`` before any; one objective only."""
        if self.is_multi_objective:
            raise ValueError("a study with several objectives has no single best trial")
        orientation = sign(self.direction)
        done = self._feasible_complete()
        if not done:
            return None
        trial = max(done, key=lambda t: (orientation * t.value, -t.number))
        return dict(trial.params), trial.value, trial.number

    @property
    def pareto_front(self) -> list[TrialRecord]:
        """The feasible complete trials that no other one dominates (at least as good in every
        objective, better in one), in number order; equal points are all kept."""
        orientations = [sign(d) for d in self.directions]
        done = self._feasible_complete()
        points = [[s * v for s, v in zip(orientations, objective_values(t), strict=True)]
                  for t in done]

        def dominated(p: list[float]) -> bool:
            return any(all(a >= b for a, b in zip(q, p, strict=True)) and q != p
                       for q in points)

        return [t for t, p in zip(done, points, strict=True) if not dominated(p)]


def objective_values(trial: Any) -> list[float]:
    """A complete trial's values, one per objective (a trial or a trial record)."""
    return list(trial.values) if trial.values is not None else [trial.value]


def trial_as_dict(trial: Any) -> dict[str, Any]:
    """A trial (or a trial record) as a JSON-ready dict (``bodi show --json``)."""
    out = {"number": trial.number, "state": trial.state, "params": dict(trial.params),
           "value": trial.value, "message": trial.message,
           "suggest_seconds": trial.suggest_seconds, "started": trial.started,
           "finished": trial.finished}
    if trial.values is not None:
        out["values"] = list(trial.values)
    if trial.constraints is not None:
        out["constraints"] = list(trial.constraints)
    if trial.user_attrs:
        out["user_attrs"] = dict(trial.user_attrs)
    return out


def study_summaries(storage: str | Path | Storage) -> list[str]:
    """One line per study of ``storage``: name, optimizer, trials by state, direction."""
    store = existing_storage(storage, read_only=True)
    lines = []
    for name in store.study_names():
        record = store.get_study(name)
        states = [t.state for t in store.trials(name)]
        counts = ", ".join(f"{states.count(s)} {s}" for s in ("complete", "failed", "pending")
                           if states.count(s)) or "no trials"
        parameters = record.space.get("parameters")
        size = (f"{len(parameters)} parameters" if isinstance(parameters, list)
                else "a damaged space")
        lines.append(f"{for_terminal(name)}: {for_terminal(record.optimizer)}, {size}, "
                     f"{len(states)} trials ({counts}), {for_terminal(record.direction)}")
    return lines


def delete_study(storage: str | Path | Storage, study_name: str) -> None:
    """Remove ``study_name`` and its trials from ``storage``."""
    existing_storage(storage).delete_study(study_name)


def copy_study(source: str | Path | Storage, study_name: str, target: str | Path | Storage,
               new_name: str | None = None) -> str:
    """Copy ``study_name`` (its definition and every trial) from ``source`` into ``target``
    (a new file is created) as ``new_name`` (default: the same name); returns the name."""
    src = existing_storage(source, read_only=True)
    record = src.get_study(study_name)
    if record is None:
        raise ValueError(f"no study {study_name!r} (studies: "
                         f"{', '.join(src.study_names()) or 'none'})")
    dst = open_storage(target)
    name = new_name or study_name
    dst.create_study(StudyRecord(name, record.optimizer, record.space, record.settings,
                                 record.seed, record.direction))
    dst.put_trials(name, src.trials(study_name))
    return name
