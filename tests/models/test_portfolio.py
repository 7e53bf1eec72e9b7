import pytest

from bodi.models.portfolio import portfolio_arms


def _run(succeeds, steps=60, n_init=5, seed=0):
    """Grow a history where each step's arm (chosen by the portfolio) improves the best value
    iff ``succeeds(arm)``; returns the arms used."""
    progress = [float(v) for v in range(n_init)]
    used = []
    for _ in range(steps):
        arm = portfolio_arms(progress, n_init, 2, seed)[-1]
        used.append(arm)
        best = max(progress)
        progress.append(best + 1.0 if succeeds(arm) else best - 1.0)
    return progress, used


def test_the_arm_that_improves_is_chosen_most_and_the_other_still_sometimes():
    for good in (0, 1):
        _, used = _run(lambda arm, good=good: arm == good)
        assert used.count(good) >= 50
        assert used.count(1 - good) >= 1


def test_the_arms_are_replayed_from_the_values_alone():
    progress, used = _run(lambda arm: arm == 1, seed=3)
    replayed = portfolio_arms(progress, 5, 2, seed=3)
    assert replayed[:-1] == used
    for k in range(5, len(progress)):
        assert portfolio_arms(progress[:k], 5, 2, seed=3) == used[: k - 5 + 1]


def test_before_the_design_ends_only_the_next_arm_is_given_and_bad_counts_fail():
    assert len(portfolio_arms([1.0, 2.0], 5, 2, seed=0)) == 1
    assert len(portfolio_arms([], 0, 3, seed=0)) == 1
    assert portfolio_arms([1.0] * 9, 4, 1, seed=0) == [0] * 6
    with pytest.raises(ValueError, match="at least one arm"):
        portfolio_arms([1.0], 0, 0, seed=0)
