"""Open a stored study with its optimizer, ready to continue (``bodi.load_study("study.db")``)."""

from __future__ import annotations

from pathlib import Path

from bodi.optimizers.registry import optimizer_class
from bodi.space import SearchSpace
from bodi.storage import Storage
from bodi.stored_studies import existing_storage, study_name_in
from bodi.study import Study


def load_study(
    storage: str | Path | Storage,
    study_name: str | None = None,
    *,
    on_pending: str = "reissue",
    device: str | None = None,
    read_only: bool = False,
) -> Study:
    """A stored study with its optimizer rebuilt and all its trials, ready to ``ask``.

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
    store = existing_storage(storage, read_only)
    study_name = study_name_in(store, study_name)
    record = store.get_study(study_name)
    try:
        cls = optimizer_class(record.optimizer)
    except ValueError:
        raise ValueError(
            f"study {study_name!r} uses an unknown optimizer {record.optimizer!r}"
        ) from None
    runtime = {} if device is None else {"device": device}
    if runtime and not cls.takes_device:
        raise ValueError(f"study {study_name!r} runs {record.optimizer}, which has no model "
                         "device; omit device")
    try:
        space = SearchSpace.from_dict(record.space)
    except (ValueError, TypeError, KeyError) as err:
        raise ValueError(f"{getattr(store, 'path', 'the storage')} is damaged: the space of "
                         f"study {study_name!r} ({err}); restore it from a copy") from None
    settings = cls.complete_settings(record.settings, space)
    try:
        optimizer = cls(space, seed=record.seed, direction=record.direction, **settings,
                        **runtime)
    except TypeError as err:  # a setting this version of bodi does not know
        raise ValueError(f"study {study_name!r} was stored with settings that "
                         f"{record.optimizer} of this bodi does not take ({err}); settings: "
                         f"{sorted(settings)}") from None
    return Study(optimizer, store, study_name=study_name, on_pending=on_pending)
