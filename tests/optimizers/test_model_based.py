"""The loop shared by the model-based optimizers: design, then next to the best, then model."""

import torch

from bodi.optimizers import BODi
from bodi.space import Categorical, SearchSpace
from bodi.trials import History

SPACE = SearchSpace([Categorical(f"s{i}", list(range(6))) for i in range(12)])


def _history(completed, failed):
    return History.from_observations(SPACE, ["maximize"], completed=completed, failed=failed)


def test_with_one_success_among_failures_the_suggestions_are_its_neighbours():
    start = {f"s{i}": i % 6 for i in range(12)}
    failed = SPACE.decode(SPACE.sample(19, torch.Generator().manual_seed(1)))
    history = _history([(start, 0.0)], failed)
    opt = BODi(SPACE, seed=0, direction="maximize", n_init=0, dictionary_size=8)
    X = opt.suggest(history, 4)
    suggested = SPACE.decode(X)
    assert all(sum(s[k] != start[k] for k in start) == 1 for s in suggested)
    assert len({tuple(s.values()) for s in suggested}) == 4
    assert torch.equal(X, opt.suggest(history, 4))  # the seed decides


def test_with_no_success_the_suggestions_are_uniform():
    failed = SPACE.decode(SPACE.sample(20, torch.Generator().manual_seed(1)))
    opt = BODi(SPACE, seed=0, direction="maximize", n_init=0, dictionary_size=8)
    suggested = SPACE.decode(opt.suggest(_history([], failed), 4))
    assert max(sum(a != b for a, b in zip(s.values(), failed[0].values(), strict=True))
               for s in suggested) > 1


def test_on_a_plateau_the_suggestions_are_neighbours_of_the_latest_best():
    start = {f"s{i}": i % 6 for i in range(12)}
    walked = {**start, "s0": 5}
    failed = SPACE.decode(SPACE.sample(19, torch.Generator().manual_seed(1)))
    history = _history([(start, 0.25), (walked, 0.25)], failed)
    opt = BODi(SPACE, seed=0, direction="maximize", n_init=0, dictionary_size=8)
    suggested = SPACE.decode(opt.suggest(history, 4))
    assert all(sum(s[k] != walked[k] for k in walked) == 1 for s in suggested)
    assert start not in suggested
