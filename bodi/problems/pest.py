"""Pest Control (COMBO, Oh et al. 2019): 25 stages, 5 choices each (minimize), and ``pest<N>``.

``x_t`` in {0, 1, 2, 3, 4} for stages ``t = 1..25`` (parameters ``x1 .. x25``, choices the ints
0..4); 0 is no pesticide and 1..4 a pesticide type. Over 100 simulations with threshold
``U = 0.1`` and per type ``k``: price {1.0, 0.8, 0.7, 0.5}, maximum discount {0.2, 0.3, 0.3, 0.0},
initial control beta {2/7, 3/7, 3/7, 5/7} and tolerance growth {1/7, 2.5/7, 2/7, 0.5/7}:

- initial pest fraction ``p ~ Beta(1, 30)``; for each stage ``t``: ``spread ~ Beta(1, 17/3)``;
  if ``x_t = k > 0``: ``control ~ Beta(1, beta_k)``, ``p' = (1 - control) p``,
  ``beta_k += tolerance_k / 25`` and the price paid is
  ``price_k (1 - maxdiscount_k / 25 * count(x == k))``; else ``p' = spread (1 - p) + p`` and
  nothing is paid; ``above += mean(p > U)`` (before the update); ``p = p'``.
- cost = sum of prices paid + above.

Every draw uses a freshly created ``numpy.random.RandomState(seed)`` (as the authors' code), so
the initial fractions, the spread rates of every stage and the control rates for a given
``beta`` are the same arrays each time. ``beta_k`` only depends on how many earlier stages used
type ``k`` (0..24), so all 4 x 25 possible control draws are made once (with ``beta_k`` grown by
the same repeated float additions as the original loop) and the batch is simulated at once.

``pest(stages=N)`` (``pest<N>`` by name) runs the same generator over ``N`` stages: the 25
above becomes ``N`` everywhere (the tolerance growth and discount divisors, the parameters
``x1 .. xN``); the draws are the same arrays, so ``N = 25`` is ``pest`` itself. The optimum is
unknown for every ``N``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.problems.base import Problem
from bodi.space import DTYPE, Categorical, SearchSpace

N_STAGES = 25
N_CHOICES = 5
N_SIMULATIONS = 100
THRESHOLD = 0.1
PRICE = (1.0, 0.8, 0.7, 0.5)
MAX_DISCOUNT = (0.2, 0.3, 0.3, 0.0)
CONTROL_BETA = (2.0 / 7.0, 3.0 / 7.0, 3.0 / 7.0, 5.0 / 7.0)
TOLERANCE_GROWTH = (1.0 / 7.0, 2.5 / 7.0, 2.0 / 7.0, 0.5 / 7.0)


def _draws(seed: int, stages: int) -> tuple[Tensor, Tensor, Tensor]:
    """Initial fractions (100), spread rates (100) and control rates (4 x stages x 100)."""
    init = np.random.RandomState(seed).beta(1.0, 30.0, size=N_SIMULATIONS)
    spread = np.random.RandomState(seed).beta(1.0, 17.0 / 3.0, size=N_SIMULATIONS)
    control = np.empty((4, stages, N_SIMULATIONS))
    for k in range(4):
        beta = CONTROL_BETA[k]
        for uses in range(stages):
            control[k, uses] = np.random.RandomState(seed).beta(1.0, beta, size=N_SIMULATIONS)
            beta += TOLERANCE_GROWTH[k] / float(stages)
    return (torch.from_numpy(init), torch.from_numpy(spread), torch.from_numpy(control))


def pest_cost(X: Tensor, seed: int = 0, stages: int = N_STAGES) -> Tensor:
    """The pest-control cost of each row of an ``n x stages`` tensor of choices 0..4."""
    return _evaluator(seed, stages)(X)


def _evaluator(seed: int, stages: int):
    init, spread, control = _draws(seed, stages)
    price = torch.tensor((0.0, *PRICE), dtype=DTYPE)
    discount = torch.tensor((0.0, *MAX_DISCOUNT), dtype=DTYPE)

    def evaluate(X: Tensor) -> Tensor:
        X = torch.as_tensor(X, dtype=DTYPE)
        if X.shape[-1] != stages:
            raise ValueError(f"expected ... x {stages} inputs, got shape {tuple(X.shape)}")
        batch = X.shape[:-1]
        x = X.reshape(-1, stages).round().long().clamp(0, N_CHOICES - 1)
        n = x.shape[0]
        one_hot = torch.nn.functional.one_hot(x, N_CHOICES).to(DTYPE)  # n x stages x 5
        counts = one_hot.sum(1)  # n x 5: how often each choice is used
        # uses[i, t]: how many stages before t used the same pesticide as stage t
        earlier = one_hot.cumsum(1) - one_hot
        uses = earlier.gather(2, x.unsqueeze(-1)).squeeze(-1).long()
        paid = price[x] * (1.0 - discount[x] / stages * counts.gather(1, x))
        p = init.expand(n, N_SIMULATIONS)
        above = torch.zeros(n, dtype=DTYPE)
        for t in range(stages):
            k = x[:, t]
            treated = k > 0
            rate = control[(k - 1).clamp(min=0), uses[:, t]]  # n x 100
            controlled = (1.0 - rate) * p
            spread_out = spread * (1.0 - p) + p
            above = above + (p > THRESHOLD).to(DTYPE).mean(-1)
            p = torch.where(treated.unsqueeze(-1), controlled, spread_out)
        return (paid.sum(-1) + above).reshape(batch)

    return evaluate


def pest(seed: int = 0, stages: int = N_STAGES) -> Problem:
    """Pest Control with ``stages`` categorical stages of choices 0..4 (minimize; optimum
    unknown): ``"pest"`` with the published 25, else ``"pest<stages>"``."""
    stages = check_integer("stages", stages)
    space = SearchSpace(
        [Categorical(f"x{t + 1}", list(range(N_CHOICES))) for t in range(stages)]
    )
    name = "pest" if stages == N_STAGES else f"pest{stages}"
    return Problem(name, space, _evaluator(seed, stages), "minimize")
