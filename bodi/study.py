"""Load a stored study and continue it: ``bodi.load_study("study.db")``."""

from __future__ import annotations

from pathlib import Path

from bodi.optimizers import Optimizer, optimizer_class
from bodi.optimizers.registry import accepts_device
from bodi.space import SearchSpace
from bodi.storage import Storage, open_storage


def load_study(
    storage: str | Path | Storage,
    study_name: str | None = None,
    *,
    on_pending: str = "reissue",
    device: str | None = None,
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
    """
    if isinstance(storage, str | Path) and not Path(storage).is_file():
        raise ValueError(f"no study file at {storage}")
    store = open_storage(storage)
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
    return cls(
        SearchSpace.from_dict(record.space), seed=record.seed, direction=record.direction,
        storage=store, study_name=study_name, on_pending=on_pending,
        **cls.complete_settings(record.settings), **runtime,
    )
