"""Where and in which precision the models compute: ``device=`` and ``dtype=`` of the GP optimizers.

The search itself (the study's points, neighbour moves, the trust region, the avoid set) stays in
CPU ``float64``, the space's canonical encoding, so that equality of configurations is exact and a
study does not depend on the device. The model, the embedding and the acquisition values are
computed on ``device`` in ``dtype`` (:class:`bodi.acquisition.optimize.OnModelDevice`).
"""

from __future__ import annotations

import torch

#: the model precisions bodi accepts, by name
#: the dtype of encoded points (:mod:`bodi.space`) and of every search-side tensor
DTYPE = torch.float64
DTYPES: dict[str, torch.dtype] = {"float64": torch.float64, "float32": torch.float32}
_ALIASES = {"double": "float64", "float": "float32", "single": "float32"}


def dtype_name(dtype: str | torch.dtype) -> str:
    """``"float64"`` or ``"float32"`` for a name (also ``"double"``, ``"float"``) or a dtype."""
    if isinstance(dtype, torch.dtype):
        for name, value in DTYPES.items():
            if value == dtype:
                return name
    elif isinstance(dtype, str):
        name = _ALIASES.get(dtype.lower(), dtype.lower())
        if name in DTYPES:
            return name
    raise ValueError(f"dtype must be one of {list(DTYPES)} (or the torch dtypes), got {dtype!r}")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """A ``torch.device`` for ``device`` (``None``: the CPU); a clear error if it is unusable."""
    if device is None:
        return torch.device("cpu")
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"unknown device {device!r}; use e.g. 'cpu' or 'cuda'") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {str(device)!r} was asked for, but CUDA is not available "
                             "here (torch.cuda.is_available() is False); use device='cpu'")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(f"device {str(device)!r}: only {torch.cuda.device_count()} CUDA "
                             "device(s) are visible")
    elif device.type != "cpu":
        raise ValueError(f"device {str(device)!r} is not supported; use 'cpu' or 'cuda'")
    return device


def model_tensor_kwargs(device: str | torch.device | None, dtype: str | torch.dtype
                        ) -> dict[str, torch.device | torch.dtype]:
    """``{"device": ..., "dtype": ...}`` for the model's tensors (BoTorch's ``tkwargs``)."""
    return {"device": resolve_device(device), "dtype": DTYPES[dtype_name(dtype)]}
