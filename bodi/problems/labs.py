"""LABS: Low Autocorrelation Binary Sequences (maximize the merit factor).

A bit string ``x`` in ``{0,1}^n`` is read as the sequence ``s = 2x - 1`` in ``{-1,+1}^n``; with the
aperiodic autocorrelations ``C_k = sum_{i=1}^{n-k} s_i s_{i+k}`` and the energy
``E = sum_{k=1}^{n-1} C_k^2`` the merit factor is ``F(x) = n^2 / (2 E)`` (the standard
definition, whose optimum for ``n = 50`` is 8.170). ``E >= C_{n-1}^2 = 1`` for ``n >= 2``, so
``F`` is always finite.

The evaluation is BoTorch's :class:`~botorch.test_functions.synthetic.Labs`, which works for any
``n`` (vectorised over the batch; its only Python loop is over the ``n - 1`` lags). Known optima
(Packebusch & Mertens 2016) are attached for ``n`` in {10, 20, 30, 40, 50, 60}: the optimal value
is the merit factor of a known optimal sequence, computed exactly (e.g. 8.16993... for ``n = 50``,
quoted as 8.170).
"""

from __future__ import annotations

import torch
from botorch.test_functions.synthetic import Labs
from torch import Tensor

from bodi.problems.base import Problem
from bodi.space import DTYPE, Binary, SearchSpace

#: Optimal sequences as run lengths of alternating values, starting with 0 (Packebusch & Mertens
#: 2016, the same as BoTorch's). The ``n = 50`` one is the sequence given in the benchmark spec.
OPTIMAL_RUN_LENGTHS: dict[int, str] = {
    10: "42211",
    20: "5113112321",
    30: "551212111113231",
    40: "44412112131121313131",
    50: "215131311224112241141142",
    60: "761112141111131124211322211222",
}
#: Known optimal merit factors as published (3 decimals).
KNOWN_OPTIMA: dict[int, float] = {
    10: 3.846, 20: 7.692, 30: 7.627, 40: 7.407, 50: 8.170, 60: 8.257,
}


def sequence_from_run_lengths(runs: str | list[int]) -> list[int]:
    """Expand run lengths of alternating values (starting with 0) into a 0/1 list."""
    bits: list[int] = []
    value = 0
    for run in runs:
        bits += [value] * int(run)
        value = 1 - value
    return bits


def merit_factor(X: Tensor) -> Tensor:
    """The merit factor ``n^2 / (2E)`` of each row of an ``... x n`` 0/1 tensor."""
    X = torch.as_tensor(X, dtype=DTYPE)
    return Labs(dim=X.shape[-1], dtype=DTYPE).evaluate_true(X)


def labs(n: int = 50) -> Problem:
    """The LABS problem with ``n`` binary variables ``x1 .. xn`` (maximize)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"LABS needs an integer length n >= 2, got {n!r}")
    space = SearchSpace([Binary(f"x{i + 1}") for i in range(n)])
    function = Labs(dim=n, dtype=DTYPE)

    def evaluate(X: Tensor) -> Tensor:
        return function.evaluate_true(torch.as_tensor(X, dtype=DTYPE))

    optimal_value = optimal_params = None
    if n in OPTIMAL_RUN_LENGTHS:
        bits = sequence_from_run_lengths(OPTIMAL_RUN_LENGTHS[n])
        x = torch.tensor([bits], dtype=DTYPE)
        optimal_value = float(evaluate(x)[0])
        optimal_params = space.decode(x)[0]
    return Problem(f"labs{n}", space, evaluate, "maximize", optimal_value, optimal_params)
