"""A portfolio of models chosen per suggestion by their record of improvements (Thompson sampling).

Each suggestion after the initial design is made with one of ``k`` models (arms). A step
*succeeds* when its value improves on the best value before it (``progress[i] > max(progress[:i])``;
``progress`` in the larger-is-better orientation, e.g. the trust region's series). For the next
suggestion every arm ``a`` draws ``theta_a ~ Beta(1 + s_a, 1 + f_a)`` from its successes ``s_a``
and failures ``f_a`` so far, and the arm with the largest draw is used (Thompson sampling for a
Bernoulli bandit; Chapelle and Li, 2011). The arm of each past step is not stored: it is
replayed from the values with the same seeded draws, so the choice is a pure function of the
history and a resumed study continues identically.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bodi.seeding import derive_seed

_SALT = 0xBA4D


def portfolio_arms(progress: Sequence[float], n_init: int, n_arms: int, seed: int) -> list[int]:
    """The arm of every step after the first ``n_init`` values of ``progress`` and of the next
    one: ``len(progress) - n_init + 1`` arms in ``0..n_arms-1`` (just the next one's while
    ``len(progress) <= n_init``)."""
    if n_arms < 1:
        raise ValueError(f"a portfolio needs at least one arm, got {n_arms}")
    successes, failures = np.zeros(n_arms), np.zeros(n_arms)
    start = min(n_init, len(progress))
    best = max(progress[:start], default=-np.inf)
    arms = []
    for index in range(start, len(progress) + 1):
        rng = np.random.default_rng(derive_seed(seed, index, _SALT))
        arm = int(np.argmax(rng.beta(1 + successes, 1 + failures)))
        arms.append(arm)
        if index == len(progress):
            break
        value = progress[index]
        if value > best:
            successes[arm] += 1
        else:
            failures[arm] += 1
        best = max(best, value)
    return arms
