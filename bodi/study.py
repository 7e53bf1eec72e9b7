"""Stored studies: load one and continue it (``bodi.load_study("study.db")``), list, copy
and delete them."""

from __future__ import annotations

from pathlib import Path

from bodi.optimizers import Optimizer, optimizer_class
from bodi.optimizers.registry import accepts_device
from bodi.space import SearchSpace
from bodi.storage import Storage, open_storage


def _existing(storage: str | Path | Storage, read_only: bool = False) -> Storage:
    """An existing study file (or a Storage) opened; a missing file is an error."""
    if isinstance(storage, str | Path) and "://" not in str(storage) and not Path(
            storage).is_file():
        raise ValueError(f"no study file at {storage}")
    return open_storage(storage, read_only=read_only)


def study_summaries(storage: str | Path | Storage) -> list[str]:
    """One line per study of ``storage``: name, optimizer, trials by state, direction."""
    store = _existing(storage, read_only=True)
    lines = []
    for name in store.study_names():
        record = store.get_study(name)
        states = [t.state for t in store.trials(name)]
        counts = ", ".join(f"{states.count(s)} {s}" for s in ("complete", "failed", "pending")
                           if states.count(s)) or "no trials"
        lines.append(f"{name}: {record.optimizer}, {len(record.space['parameters'])} "
                     f"parameters, {len(states)} trials ({counts}), {record.direction}")
    return lines


def delete_study(storage: str | Path | Storage, study_name: str) -> None:
    """Remove ``study_name`` and its trials from ``storage``."""
    _existing(storage).delete_study(study_name)


def copy_study(source: str | Path | Storage, study_name: str, target: str | Path | Storage,
               new_name: str | None = None) -> str:
    """Copy ``study_name`` (its definition and every trial) from ``source`` into ``target``
    (a new file is created) as ``new_name`` (default: the same name); returns the name."""
    src = _existing(source, read_only=True)
    record = src.get_study(study_name)
    if record is None:
        raise ValueError(f"no study {study_name!r} (studies: "
                         f"{', '.join(src.study_names()) or 'none'})")
    dst = open_storage(target)
    name = new_name or study_name
    dst.create_study(type(record)(name, record.optimizer, record.space, record.settings,
                                  record.seed, record.direction))
    dst.put_trials(name, src.trials(study_name))
    return name


def load_study(
    storage: str | Path | Storage,
    study_name: str | None = None,
    *,
    on_pending: str = "reissue",
    device: str | None = None,
    read_only: bool = False,
) -> Optimizer:
    """Rebuild the optimizer of a stored study, with all its trials, ready to ``ask``.

    The space, optimizer class, settings, seed and direction come from the storage, so the
    study continues as it would have without the interruption. Trials that were pending are
    re-issued by the next ``ask`` (``on_pending="fail"`` marks them failed instead).

    Args:
        storage: a study file path or a :class:`bodi.storage.Storage`.
        study_name: which study; may be omitted when the storage holds exactly one.
        device: where a GP optimizer's model computes (``"cuda"``; default the CPU). The device
            is not part of a study: one run on a GPU continues on the CPU and vice versa.
        read_only: open the study file read-only, to look at the study (its trials, best,
            front, tables): nothing is written, and ``ask``/``tell`` raise ``ValueError``.
    """
    store = _existing(storage, read_only)
    names = store.study_names()
    if study_name is None:
        if len(names) != 1:
            raise ValueError(
                f"the storage holds {len(names)} studies ({', '.join(names) or 'none'}); "
                "pass study_name (bodi show: --study-name)"
            )
        study_name = names[0]
    record = store.get_study(study_name)
    if record is None:
        raise ValueError(f"no study {study_name!r} (studies: {', '.join(names) or 'none'})")
    try:
        cls = optimizer_class(record.optimizer)
    except ValueError:
        raise ValueError(
            f"study {study_name!r} uses an unknown optimizer {record.optimizer!r}"
        ) from None
    runtime = {} if device is None else {"device": device}
    if runtime and not accepts_device(cls):
        raise ValueError(f"study {study_name!r} runs {record.optimizer}, which has no model "
                         "device; omit device")
    settings = cls.complete_settings(record.settings)
    try:
        return cls(
            SearchSpace.from_dict(record.space), seed=record.seed, direction=record.direction,
            storage=store, study_name=study_name, on_pending=on_pending, **settings, **runtime,
        )
    except TypeError as err:  # a setting this version of bodi does not know
        raise ValueError(f"study {study_name!r} was stored with settings that "
                         f"{record.optimizer} of this bodi does not take ({err}); settings: "
                         f"{sorted(settings)}") from None
