"""BODiSampler: Optuna studies driven by BODi (in memory, SQLite, threads, processes)."""

import math
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

from optuna.distributions import (  # noqa: E402
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState, create_trial  # noqa: E402

import bodi  # noqa: E402
import bodi.integrations.optuna as bodi_optuna  # noqa: E402
from bodi.checks import UnusedOptionWarning  # noqa: E402
from bodi.integrations.optuna import PROPOSER_KEY, BODiSampler  # noqa: E402
from bodi.integrations.spaces.codecs import (  # noqa: E402
    BinaryCodec,
    ChoiceCodec,
    FloatCodec,
    GridCodec,
    LogIntCodec,
)
from bodi.integrations.spaces.optuna import codec_for  # noqa: E402
from bodi.seeding import derive_seed  # noqa: E402
from bodi.space import Binary, Integer, SearchSpace  # noqa: E402
from bodi.study import create_study  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

# small acquisition settings keep the suite short; the measured values below are with them
SMALL = {"dictionary_size": 32, "num_restarts": 4, "raw_samples": 256}
HIDDEN = [True, False, True, True, False, False, True, False, True, False, False, True]


def planted(trial) -> float:
    """Binary, categorical (with None), int and log-float parameters; minimum 0."""
    bits = [trial.suggest_categorical(f"b{i}", [False, True]) for i in range(len(HIDDEN))]
    opt = trial.suggest_categorical("opt", ["adam", "sgd", "rmsprop", None])
    layers = trial.suggest_int("layers", 1, 16)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    mismatches = sum(b != h for b, h in zip(bits, HIDDEN, strict=True))
    return mismatches + 2.0 * (opt != "rmsprop") + 0.25 * abs(layers - 11) + (
        math.log10(lr) + 3.3
    ) ** 2


def _bodi_trials(study) -> list:
    """Trials whose relative parameters came from BODi (the sampler stores who proposed)."""
    return [t for t in study.get_trials() if t.system_attrs.get(PROPOSER_KEY) == "bodi"]


# ------------------------------------------------------------------ the mapping
@pytest.mark.parametrize(
    "distribution, codec_type, kind, values",
    [
        (CategoricalDistribution([False, True]), BinaryCodec, "binary", [False, True]),
        (CategoricalDistribution([True, False]), BinaryCodec, "binary", [True, False]),
        (CategoricalDistribution(["a", "b", 3]), ChoiceCodec, "categorical", ["a", "b", 3]),
        (CategoricalDistribution([None, "x", 1.5, False]), ChoiceCodec, "categorical",
         [None, "x", 1.5, False]),
        (CategoricalDistribution([False, True, None]), ChoiceCodec, "categorical",
         [False, True, None]),
        (IntDistribution(2, 9), GridCodec, "integer", [2, 5, 9]),
        (IntDistribution(0, 9, step=3), GridCodec, "integer", [0, 3, 9]),
        (IntDistribution(1, 1000, log=True), LogIntCodec, "continuous", [1, 37, 1000]),
        (FloatDistribution(-1.0, 2.0), FloatCodec, "continuous", [-1.0, 0.25, 2.0]),
        (FloatDistribution(1e-5, 1e-1, log=True), FloatCodec, "continuous", [1e-5, 3e-3]),
        (FloatDistribution(0.0, 1.0, step=0.1), GridCodec, "integer", [0.0, 0.3, 0.7, 1.0]),
    ],
)
def test_every_distribution_maps_to_a_bodi_parameter_and_back(
    distribution, codec_type, kind, values
):
    codec = codec_for("p", distribution)
    assert isinstance(codec, codec_type)
    assert codec.parameter.kind == kind
    for value in values:
        back = codec.from_bodi(codec.to_bodi(value))
        assert back == value and type(back) is type(value)
        assert distribution._contains(distribution.to_internal_repr(back))


def test_values_outside_a_distribution_are_rejected_and_single_values_are_not_modelled():
    assert codec_for("p", IntDistribution(3, 3)) is None
    assert codec_for("p", CategoricalDistribution(["only"])) is None
    for distribution, bad in [
        (CategoricalDistribution([False, True]), "yes"),
        (CategoricalDistribution(["a", "b"]), "c"),
        (IntDistribution(0, 10, step=2), 3),
        (IntDistribution(0, 10), 11),
        (FloatDistribution(0.0, 1.0, step=0.25), 0.3),
        (FloatDistribution(0.0, 1.0), 1.5),
    ]:
        with pytest.raises(ValueError):
            codec_for("p", distribution).to_bodi(bad)


def test_bodi_without_initial_design_fits_a_model_at_once():
    # The adapters rebuild BODi with n_init=0: the host's start-up trials are the design.
    space = SearchSpace([Binary(f"b{i}") for i in range(6)] + [Integer("k", 0, 9)])
    told = [{**{f"b{i}": (j >> i) & 1 for i in range(6)}, "k": j} for j in (1, 5, 9)]
    study = create_study(bodi.BODi(space, seed=0, n_init=0, dictionary_size=8))
    study.tell(told, [1.0, 2.0, 3.0])
    pending = study.add_pending({**{f"b{i}": 1 for i in range(6)}, "k": 0})
    assert pending.state == "pending"
    x = study.ask()
    assert study.optimizer.model is not None and x != pending.params


def test_bodi_options_are_checked_when_the_sampler_is_made():
    with pytest.raises(TypeError, match="n_init"):
        BODiSampler(seed=0, n_init=5)
    with pytest.raises(ValueError, match="dictionary"):
        BODiSampler(seed=0, dictionary="nope")
    with pytest.raises(ValueError, match="n_startup_trials"):
        BODiSampler(seed=0, n_startup_trials=-1)


def test_dictionary_options_do_not_warn_on_a_space_optuna_derives_without_discrete_parameters():
    # the sampler's options hold for every space the study derives; a float-only one is not
    # a user's mistake, so BODi's UnusedOptionWarning is not raised there
    study = optuna.create_study(sampler=BODiSampler(seed=0, n_startup_trials=3, **SMALL))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedOptionWarning)
        study.optimize(lambda t: (t.suggest_float("x", -1, 1) - 0.3) ** 2, n_trials=5)
    assert len(_bodi_trials(study)) == 2


def test_a_multi_objective_study_gets_bodi_with_qlognehvi(monkeypatch):
    seen = []
    original = bodi_optuna.propose

    def spy(codecs, **kwargs):
        if not kwargs["at_random"]:
            seen.append((kwargs["direction"], [v for _, v in kwargs["completed"]]))
        return original(codecs, **kwargs)

    monkeypatch.setattr(bodi_optuna, "propose", spy)
    study = optuna.create_study(directions=["minimize", "maximize"],
                                sampler=BODiSampler(seed=0, n_startup_trials=4, **SMALL))

    def objective(trial):
        bits = [trial.suggest_categorical(f"b{i}", [False, True]) for i in range(8)]
        return sum(bits), sum(b for i, b in enumerate(bits) if i % 2 == 0) - 0.1 * sum(bits)

    study.optimize(objective, n_trials=7)
    assert len(study.trials) == 7 and all(t.state == TrialState.COMPLETE for t in study.trials)
    assert len(seen) == 3  # the trials after the 4 start-up ones
    direction, values = seen[-1]
    assert direction == "minimize,maximize"
    assert len(values) == 6 and all(len(v) == 2 for v in values)
    assert study.best_trials  # Optuna's own Pareto front of the study


# ------------------------------------------- what BODi is told (propose captured)
SPACE = {"b": CategoricalDistribution([False, True]), "k": IntDistribution(0, 5)}


@pytest.mark.parametrize("use_pruned", [False, True])
def test_the_study_is_told_complete_failed_pruned_and_running_trials(monkeypatch, use_pruned):
    calls = []

    def fake_propose(codecs, **kwargs):
        calls.append(kwargs)
        return {"b": True, "k": 4}

    monkeypatch.setattr(bodi_optuna, "propose", fake_propose)
    sampler = BODiSampler(seed=7, n_startup_trials=3, use_pruned_intermediate_values=use_pruned,
                          **SMALL)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for k in range(3):
        study.add_trial(create_trial(params={"b": False, "k": k}, distributions=SPACE,
                                     value=float(k)))
    study.add_trial(create_trial(state=TrialState.FAIL, params={"b": True, "k": 0},
                                 distributions=SPACE))
    study.add_trial(create_trial(state=TrialState.PRUNED, params={"b": True, "k": 1},
                                 distributions=SPACE, intermediate_values={0: 9.0, 3: 5.0}))
    study.add_trial(create_trial(state=TrialState.PRUNED, params={"b": True, "k": 2},
                                 distributions=SPACE))
    # Skipped: a value outside the current domain, a missing parameter.
    wider = {"b": SPACE["b"], "k": IntDistribution(0, 10)}
    study.add_trial(create_trial(state=TrialState.FAIL, params={"b": True, "k": 9},
                                 distributions=wider))
    study.add_trial(create_trial(state=TrialState.PRUNED, params={"b": True},
                                 distributions={"b": SPACE["b"]}))

    running = study.ask()  # BODi proposes for it; the proposal is stored before it is used
    assert running.suggest_categorical("b", [False, True]) is True
    assert len(calls) == 1
    current = study.ask()
    current.suggest_categorical("b", [False, True])

    told = calls[1]
    assert told["seed"] == derive_seed(7, current.number)
    assert told["direction"] == "maximize"
    expected = [({"b": False, "k": k}, float(k)) for k in range(3)]
    if use_pruned:
        expected.append(({"b": True, "k": 1}, 5.0))
    assert told["completed"] == expected
    failed = [{"b": True, "k": 0}, {"b": True, "k": 2}]
    if not use_pruned:
        failed.insert(1, {"b": True, "k": 1})
    assert told["failed"] == failed
    assert told["pending"] == [{"b": True, "k": 4}]  # the running trial, k not yet suggested


def test_startup_trials_are_random_then_bodi_takes_over(monkeypatch):
    calls = []
    real = bodi_optuna.propose
    monkeypatch.setattr(bodi_optuna, "propose",
                        lambda *a, **k: calls.append(k["at_random"]) or real(*a, **k))
    study = optuna.create_study(sampler=BODiSampler(seed=0, n_startup_trials=5, **SMALL))
    objective = lambda t: t.suggest_int("k", 0, 20) + t.suggest_categorical("b", [0, 1])  # noqa: E731
    study.optimize(objective, n_trials=5)
    # the first trial is sampled independently (no space known yet), the next four at random
    assert calls == [True] * 4 and not _bodi_trials(study)
    assert [t.system_attrs.get(PROPOSER_KEY) for t in study.trials] == [None] + ["random"] * 4
    study.optimize(objective, n_trials=2)
    assert calls[4:] == [False, False] and len(_bodi_trials(study)) == 2


def test_random_startup_trials_never_repeat_a_configuration():
    # 32 configurations and 20 start-up trials: independent draws would repeat with
    # probability 1 - prod(1 - i / 32 for i < 20) > 0.99; each trial after the first avoids them
    study = optuna.create_study(sampler=BODiSampler(seed=0, n_startup_trials=20))
    study.optimize(lambda t: float(sum(t.suggest_categorical(f"b{i}", [0, 1])
                                       for i in range(5))), n_trials=20)
    configurations = {tuple(sorted(t.params.items())) for t in study.trials}
    assert len(configurations) == 20 and not _bodi_trials(study)


def test_independent_sampling_is_seeded_per_trial():
    def params(seed):
        study = optuna.create_study(sampler=BODiSampler(seed=seed, n_startup_trials=100))
        study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_int("k", 0, 99),
                       n_trials=6)
        return [t.params for t in study.trials]

    first = params(3)
    assert first == params(3) and first != params(4)
    assert len({p["x"] for p in first}) == 6


# ---------------------------------------------------------------- end to end
def test_same_seed_gives_the_same_study():
    def run():
        study = optuna.create_study(sampler=BODiSampler(seed=5, n_startup_trials=8, **SMALL))
        study.optimize(planted, n_trials=11)
        return [(t.params, t.value) for t in study.trials]

    first = run()
    assert first == run()


@pytest.mark.heavy
def test_beats_random_sampling_on_a_planted_mixed_problem_in_memory():
    ours, theirs = [], []
    for seed in (0, 1):
        study = optuna.create_study(sampler=BODiSampler(seed=seed, n_startup_trials=10, **SMALL))
        study.optimize(planted, n_trials=30)
        trials = study.get_trials(states=(TrialState.COMPLETE,))
        assert len(trials) == 30 and len(_bodi_trials(study)) == 20
        for t in trials:
            assert type(t.params["b0"]) is bool and type(t.params["layers"]) is int
            assert t.params["opt"] in ("adam", "sgd", "rmsprop", None)
            assert 1e-5 <= t.params["lr"] <= 1e-1
        ours.append(study.best_value)
        random = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
        random.optimize(planted, n_trials=30)
        theirs.append(random.best_value)
    # Measured with the default acquisition settings: BODi 0.002 and 1.27, random 4.50 and
    # 5.62 (seeds 0 and 1); the smaller SMALL settings pass the same margin.
    assert max(ours) < min(theirs) - 2.0, (ours, theirs)


@pytest.mark.heavy
def test_sqlite_storage_maximize_and_failed_trials(tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"

    def objective(trial):
        value = -planted(trial)
        if trial.params["opt"] is None:
            raise RuntimeError("this optimizer does not exist")
        return value

    study = optuna.create_study(study_name="s", storage=storage, direction="maximize",
                                sampler=BODiSampler(seed=0, n_startup_trials=10, **SMALL))
    study.optimize(objective, n_trials=30, catch=(RuntimeError,))
    reloaded = optuna.load_study(study_name="s", storage=storage)
    states = [t.state for t in reloaded.trials]
    assert len(states) == 30 and set(states) <= {TrialState.COMPLETE, TrialState.FAIL}
    assert states.count(TrialState.FAIL) >= 1
    assert len(_bodi_trials(reloaded)) >= 15
    # Measured: BODi reached -0.26; RandomSampler(seed=0) on this objective reached -6.0.
    assert reloaded.best_value > -2.0, reloaded.best_value


def _discrete_objective(trial) -> float:
    bits = [trial.suggest_categorical(f"b{i}", [False, True]) for i in range(16)]
    colour = trial.suggest_categorical("colour", ["red", None, "blue"])
    k = trial.suggest_int("k", 0, 20, step=2)
    q = trial.suggest_float("q", 0.0, 1.0, step=0.25)
    time.sleep(0.02)  # let the two workers overlap
    return sum(bits[::2]) - sum(bits[1::2]) + (colour is None) + abs(k - 8) / 4 + abs(q - 0.5)


def _keys(study) -> list:
    return [tuple(sorted(t.params.items(), key=lambda kv: kv[0]))
            for t in study.get_trials(states=(TrialState.COMPLETE,))]


def test_two_threads_share_a_study_without_duplicates():
    study = optuna.create_study(sampler=BODiSampler(seed=0, n_startup_trials=10, **SMALL))
    study.optimize(_discrete_objective, n_trials=30, n_jobs=2)
    keys = _keys(study)
    assert len(keys) == 30
    assert len(set(keys)) == 30
    assert len(_bodi_trials(study)) >= 15


WORKER = textwrap.dedent(
    """
    import sys, optuna
    sys.path.insert(0, sys.argv[3])
    from test_optuna import _discrete_objective
    from bodi.integrations.optuna import BODiSampler
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name="shared", storage=sys.argv[1],
                              sampler=BODiSampler(seed=int(sys.argv[2]), n_startup_trials=6,
                                                  dictionary_size=32))
    study.optimize(_discrete_objective, n_trials=8)
    """
)


def test_two_processes_share_one_sqlite_study(tmp_path):
    storage = f"sqlite:///{tmp_path / 'shared.db'}"
    optuna.create_study(study_name="shared", storage=storage)
    here = str(Path(__file__).parent)
    # One thread each: two processes with two torch threads each on two cores are much slower.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, storage, str(seed), here], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for seed in (0, 0)  # the same seed on purpose: per-trial seeds still differ
    ]
    for worker in workers:
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == 0, out
    study = optuna.load_study(study_name="shared", storage=storage)
    keys = _keys(study)
    assert len(keys) == 16
    assert len(set(keys)) == 16
    assert len(_bodi_trials(study)) >= 4


def _study_and_another_process():
    """A study of three complete trials, seed 3, and a running trial of "another process"."""
    study = optuna.create_study(sampler=BODiSampler(seed=3, n_startup_trials=3, **SMALL))
    for k in range(3):
        study.add_trial(create_trial(params={"b": False, "k": k}, distributions=SPACE,
                                     value=float(k)))
    return study, study.ask()


def test_a_proposal_stored_meanwhile_by_another_process_is_not_repeated(monkeypatch):
    calls = []
    study, other = _study_and_another_process()  # other: running, nothing suggested yet

    def fake_propose(codecs, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:  # the other process stores the same proposal meanwhile
            bodi_optuna._store_proposal(study, study.trials[other.number], {"b": True, "k": 4},
                                        "bodi")
            return {"b": True, "k": 4}
        return {"b": True, "k": 5}

    monkeypatch.setattr(bodi_optuna, "propose", fake_propose)
    current = study.ask()
    assert current.suggest_int("k", 0, 5) == 5
    assert [c["seed"] for c in calls] == [derive_seed(3, current.number),
                                          derive_seed(3, current.number, 1)]
    assert calls[0]["pending"] == [] and calls[1]["pending"] == [{"b": True, "k": 4}]


def test_after_three_colliding_proposals_an_untaken_random_one_is_kept(monkeypatch):
    calls = []
    study, other = _study_and_another_process()
    bodi_optuna._store_proposal(study, study.trials[other.number], {"b": True, "k": 4}, "bodi")

    def fake_propose(codecs, **kwargs):  # the model insists on the taken configuration
        calls.append(kwargs)
        return {"b": False, "k": 5} if kwargs["at_random"] else {"b": True, "k": 4}

    monkeypatch.setattr(bodi_optuna, "propose", fake_propose)
    current = study.ask()
    assert (current.suggest_categorical("b", [False, True]), current.suggest_int("k", 0, 5)) == (
        False, 5)
    assert [c["at_random"] for c in calls] == [False, False, False, True]
