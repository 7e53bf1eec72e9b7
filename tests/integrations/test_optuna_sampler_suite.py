"""Optuna's own generic sampler tests (``optuna.testing.pytest_samplers``) run on BODiSampler.

The test-case classes come from the installed ``optuna``; each class below only supplies the
``sampler`` fixture. They are run twice: as Optuna runs them (the relative cases tell a single
trial, so BODi's random fallback answers) and with the model reached (:class:`WarmBODiSampler`
tells three random COMPLETE trials first, so every relative sample is a GP proposal; of the
numerical pairs, six that hold each distribution as ``x`` and as ``y``). Cases that
do not apply are skipped with the reason docs/integrations.md repeats.
"""

import pickle
from collections.abc import Callable

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")
pytest_samplers = pytest.importorskip("optuna.testing.pytest_samplers")

from optuna.distributions import (  # noqa: E402
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import RandomSampler  # noqa: E402
from optuna.trial import TrialState, create_trial  # noqa: E402

from bodi.integrations.optuna import PROPOSER_KEY, BODiSampler  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

# small acquisition settings keep the suite short
SMALL = {"dictionary_size": 16, "num_restarts": 2, "raw_samples": 64}
WARM_TRIALS = 3


def bodi_sampler() -> BODiSampler:
    return BODiSampler(seed=0, n_startup_trials=0, **SMALL)


class WarmBODiSampler(BODiSampler):
    """BODiSampler that first adds ``WARM_TRIALS`` random COMPLETE trials of the search space
    it is asked to sample, so that the relative cases reach the GP."""

    def sample_relative(self, study, trial, search_space):
        if search_space:
            warm_up(study, search_space)
        return super().sample_relative(study, trial, search_space)


def warm_up(study, search_space: dict[str, BaseDistribution]) -> None:
    """Add random COMPLETE trials of ``search_space`` until the study has ``WARM_TRIALS``."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    rng = np.random.default_rng(len(complete))
    for _ in range(WARM_TRIALS - len(complete)):
        params = {name: _random_value(d, rng) for name, d in search_space.items()}
        study.add_trial(create_trial(params=params, distributions=dict(search_space),
                                     value=float(rng.normal())))


def _random_value(distribution: BaseDistribution, rng: np.random.Generator):
    if isinstance(distribution, CategoricalDistribution):
        return distribution.choices[rng.integers(len(distribution.choices))]
    internal = RandomSampler(seed=int(rng.integers(2**31))).sample_independent(
        None, None, "x", distribution)  # RandomSampler ignores the study and trial here
    return internal


def warm_sampler() -> WarmBODiSampler:
    return WarmBODiSampler(seed=0, n_startup_trials=0, **SMALL)


class TestBasic(pytest_samplers.BasicSamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Callable[[], BODiSampler]:
        return bodi_sampler


class TestRelative(pytest_samplers.RelativeSamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Callable[[], BODiSampler]:
        return bodi_sampler


def _suite_values(test: Callable, argname: str) -> list:
    """The values the installed suite parametrizes ``test``'s ``argname`` with."""
    (mark,) = [m for m in test.pytestmark if m.name == "parametrize" and m.args[0] == argname]
    return list(mark.args[1])


#: the suite's numerical distributions (``x`` and ``y`` take the same ones)
NUMERICAL = _suite_values(pytest_samplers.RelativeSamplerTestCase.test_sample_relative_numerical,
                          "x_distribution")


class TestRelativeWithModel(pytest_samplers.RelativeSamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Callable[[], BODiSampler]:
        return warm_sampler

    # Each of the suite's six numerical distributions once as ``x`` and once as ``y``, beside
    # another kind (the GP's proposal is encoded and decoded per parameter); the suite's 36
    # pairs run on the random fallback in TestRelative.
    @pytest.mark.parametrize(
        ("x_distribution", "y_distribution"),
        [(x, NUMERICAL[(i + 1) % len(NUMERICAL)]) for i, x in enumerate(NUMERICAL)],
    )
    def test_sample_relative_numerical(self, sampler, x_distribution, y_distribution) -> None:
        super().test_sample_relative_numerical(sampler, x_distribution, y_distribution)


class TestMultiObjective(pytest_samplers.MultiObjectiveSamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Callable[[], BODiSampler]:
        return bodi_sampler


@pytest.mark.skip(reason="BODiSampler supports several objectives (one GP per objective, "
                         "qLogNEHVI), so it does not raise for multi-objective studies")
class TestSingleOnly(pytest_samplers.SingleOnlySamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Callable[[], BODiSampler]:
        return bodi_sampler


# -------------------------------------------------------------- what the suite lacks
STEPPED = {
    "x": FloatDistribution(-10, 10, step=0.5),
    "k": IntDistribution(3, 9, step=2),
    "flag": CategoricalDistribution([None, True, False]),
    "mixed": CategoricalDistribution(["a", 1, None, 2.5]),
    "lr": FloatDistribution(1e-5, 1e-1, log=True),
}


def test_model_proposals_keep_types_bounds_steps_and_none_or_bool_choices():
    study = optuna.create_study(sampler=bodi_sampler())
    warm_up(study, STEPPED)
    for _ in range(5):
        trial = study.ask(STEPPED)
        for name, distribution in STEPPED.items():
            value = trial.params[name]
            assert distribution._contains(distribution.to_internal_repr(value))
            assert not isinstance(value, np.floating | np.integer)
        assert isinstance(trial.params["k"], int) and (trial.params["k"] - 3) % 2 == 0
        assert float(trial.params["x"] * 2).is_integer()
        study.tell(trial, float(trial.params["x"]) + trial.params["k"])
    assert sum(t.system_attrs.get(PROPOSER_KEY) == "bodi" for t in study.trials) == 5


def test_exhausted_finite_space_proposes_the_best_configuration_again():
    space = {"x": CategoricalDistribution([1, 10, 100]), "y": CategoricalDistribution([-1, -10])}
    study = optuna.create_study(sampler=bodi_sampler())
    for x in (1, 10, 100):
        for y in (-1, -10):
            study.add_trial(create_trial(params={"x": x, "y": y}, distributions=space,
                                         value=float(x + y)))
    trial = study.ask(space)
    assert trial.params == {"x": 1, "y": -10}  # the best (smallest) value again


def test_reseed_rng_draws_a_new_seed():
    sampler = bodi_sampler()
    seed = sampler._seed
    sampler.reseed_rng()
    assert sampler._seed != seed


def test_failed_and_pruned_trials_are_failures_and_never_proposed_again():
    space = {"a": CategoricalDistribution([0, 1]), "b": CategoricalDistribution([0, 1])}
    study = optuna.create_study(sampler=bodi_sampler())

    def objective(trial):
        a, b = trial.suggest_categorical("a", [0, 1]), trial.suggest_categorical("b", [0, 1])
        if (a, b) == (0, 0):
            raise optuna.TrialPruned()
        if (a, b) == (1, 1):
            raise RuntimeError("broken configuration")
        return float(a - b)

    study.add_trial(create_trial(params={"a": 0, "b": 1}, distributions=space, value=-1.0))
    study.add_trial(create_trial(params={"a": 1, "b": 0}, distributions=space, value=1.0))
    study.optimize(objective, n_trials=2, catch=(RuntimeError,))
    states = sorted(t.state.name for t in study.trials[2:])
    assert states == ["FAIL", "PRUNED"]
    # every configuration is used: the next proposal is the best complete one, not a failure
    assert study.ask(space).params == {"a": 0, "b": 1}


def test_constraints_func_is_stored_and_modelled():
    seen = []

    def constraints(trial):
        seen.append(trial.number)
        return [trial.params["k"] - 4.5]  # feasible when k <= 4

    sampler = BODiSampler(seed=0, n_startup_trials=3, constraints_func=constraints, **SMALL)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: -float(t.suggest_int("k", 0, 9) + t.suggest_int("j", 0, 3)),
                   n_trials=10)
    assert seen == list(range(10))
    assert all(t.system_attrs["constraints"] == (t.params["k"] - 4.5,) for t in study.trials)
    best = study.best_trials[0]  # Optuna's own view honours the stored constraints
    assert best.params["k"] <= 4
    with pytest.raises(ValueError, match="constraints_func"):
        BODiSampler(constraints_func=3)


def test_two_jobs_share_an_rdb_storage_without_repeats(tmp_path):
    storage = f"sqlite:///{tmp_path / 'shared.db'}"
    space = [0, 1]

    def objective(trial):
        return float(sum(trial.suggest_categorical(f"b{i}", space) for i in range(6)))

    # one trial first: before any trial is complete Optuna does not know the space, and two
    # threads that start then sample independently (they may repeat each other)
    optuna.create_study(study_name="s", storage=storage, sampler=bodi_sampler()).optimize(
        objective, n_trials=1)
    for _ in range(2):  # two studies (as two processes would) on one RDB storage
        study = optuna.load_study(study_name="s", storage=storage, sampler=bodi_sampler())
        study.optimize(objective, n_trials=6, n_jobs=2)
    trials = optuna.load_study(study_name="s", storage=storage).trials
    configurations = [tuple(sorted(t.params.items())) for t in trials]
    assert len(trials) == 13 and len(set(configurations)) == 13


def test_the_sampler_pickles_with_its_settings():
    sampler = BODiSampler(seed=7, n_startup_trials=2, constraints_func=None, **SMALL)
    copy = pickle.loads(pickle.dumps(sampler))
    assert (copy._seed, copy._n_startup_trials, copy._bodi_options) == (
        7, 2, sampler._bodi_options)
    study = optuna.create_study(sampler=copy)
    study.optimize(lambda t: float(t.suggest_int("k", 0, 5)), n_trials=4)
    assert len(study.trials) == 4
