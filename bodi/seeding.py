"""One seed for every random choice: derived sub-seeds and a context that pins global RNGs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch


def derive_seed(*keys: int) -> int:
    """A 63-bit seed determined by ``keys`` (e.g. ``(seed, iteration)``), via NumPy SeedSequence."""
    state = np.random.SeedSequence([int(k) & 0xFFFFFFFFFFFFFFFF for k in keys])
    return int(state.generate_state(1, dtype=np.uint64)[0] & 0x7FFFFFFFFFFFFFFF)


@contextmanager
def seeded(seed: int) -> Iterator[torch.Generator]:
    """Run a block with torch's and Python's global RNGs seeded; restore them afterwards.

    BoTorch's acquisition optimizers draw from the global RNGs, so every suggestion runs inside
    this context with a seed derived from the optimizer's seed. Yields a ``torch.Generator``
    seeded the same way for code that takes one explicitly.
    """
    python_state = random.getstate()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        random.seed(seed)
        try:
            yield torch.Generator().manual_seed(seed)
        finally:
            random.setstate(python_state)


def as_generator(seed: int | torch.Generator | None) -> torch.Generator:
    """A ``torch.Generator`` from a seed (``None`` draws a fresh random seed)."""
    if isinstance(seed, torch.Generator):
        return seed
    generator = torch.Generator()
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(int(seed))
    return generator
