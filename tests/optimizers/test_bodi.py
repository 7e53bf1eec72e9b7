"""BODi end to end: planted problems, determinism, the ask/tell contract."""

import itertools
import math

import pytest
import torch

import bodi
from bodi.acquisition.trust_region import TrustRegionSettings
from bodi.novelty import SearchSpaceExhaustedError
from bodi.optimizers.gp_optimizer import DESIGN_FEW, LOCAL_MODEL_MIN_POINTS, nearest_rows
from bodi.optimizers.registry import make_optimizer
from bodi.problems import planted_binary, planted_categorical, planted_mixed
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.trials import History


def _best_so_far(result):
    values = [t.value if t.state == "complete" else math.inf for t in result.history]
    return list(itertools.accumulate(values, min))


# smaller acquisition settings than the defaults keep the suite short
FAST = {"dictionary_size": 32, "num_restarts": 4, "raw_samples": 256}


def test_finds_planted_binary_optimum_within_60_evaluations():
    problem = planted_binary(20, seed=0)
    hidden = problem.space.encode(problem.optimal_params)[0]
    assert 0 < hidden.sum() < 20  # the optimum is a random bit string, not a corner
    result = bodi.minimize(problem, problem.space, budget=60, seed=0, **FAST)
    assert result.best_value == 0.0
    assert result.best_params == problem.optimal_params


@pytest.mark.parametrize(
    "make_problem, budget",
    [
        (lambda: planted_categorical(12, 4, seed=1), 50),
        (lambda: planted_mixed(8, 4, 2, seed=1), 40),
    ],
    ids=["categorical", "mixed"],
)
def test_beats_random_search_with_the_same_budget(make_problem, budget):
    problem = make_problem()
    ours, theirs = [], []
    for seed in range(2):
        ours.append(bodi.minimize(problem, problem.space, budget=budget, seed=seed,
                                  n_init=10, **FAST).best_value)
        random = bodi.RandomSearch(problem.space, seed=seed)
        theirs.append(bodi.minimize(problem, problem.space, budget=budget,
                                    optimizer=random).best_value)
    assert sum(ours) < sum(theirs), (ours, theirs)
    assert max(ours) < min(theirs), (ours, theirs)


def test_same_seed_gives_identical_histories():
    problem = planted_mixed(6, 3, 1, seed=2)

    def run(seed):
        result = bodi.minimize(problem, problem.space, budget=16, seed=seed, n_init=8, **FAST)
        return [(t.params, t.value) for t in result.history]

    first = run(0)
    assert first == run(0)
    assert first != run(1)


def test_ask_tell_batches_pending_points_and_no_repeats():
    space = SearchSpace([Binary(f"b{i}") for i in range(6)] + [Integer("k", 0, 2)])
    opt = bodi.BODi(space, seed=3, n_init=5, dictionary_size=16)
    f = lambda c: sum(c[f"b{i}"] for i in range(6)) + (c["k"] - 1) ** 2  # noqa: E731
    seen = []
    first = opt.ask(4)  # initial design
    assert isinstance(first, list) and len(first) == 4
    opt.tell(first, [f(c) for c in first])
    while len(seen) + 4 < 30:
        batch = opt.ask(3)
        pending = opt.ask()  # asked while the batch is still pending
        assert isinstance(pending, dict)
        opt.tell([*batch, pending], [f(c) for c in [*batch, pending]])
        seen = [t.params for t in opt.trials]
    keys = [tuple(sorted(p.items())) for p in seen]
    assert len(keys) == len(set(keys))  # never the same point twice in a discrete space
    assert all(t.state == "complete" for t in opt.trials)
    params, value = opt.best
    assert value == min(t.value for t in opt.trials) and f(params) == value


def test_maximize_direction_and_ucb():
    problem = planted_binary(10, seed=4)
    neg = lambda c: -problem(c)  # noqa: E731
    result = bodi.minimize(neg, problem.space, budget=30, seed=0, direction="maximize",
                           acquisition="ucb", n_init=10)
    assert result.best_value == max(t.value for t in result.history)
    assert result.best_value >= -1.0


@pytest.mark.parametrize("dictionary", ["diverse", "wavelet", "naive", "gaussian"])
def test_every_dictionary_runs(dictionary):
    problem = planted_binary(12, seed=5)
    result = bodi.minimize(problem, problem.space, budget=14, seed=0, n_init=10,
                           dictionary=dictionary, dictionary_size=32)
    assert len(result.history) == 14


def test_mixed_space_with_botorch_optimizer_and_batch():
    space = SearchSpace([Binary("b0"), Binary("b1"), Categorical("c", ["p", "q", "r"]),
                         Continuous("lr", 1e-4, 1e-1, log=True), Integer("k", 1, 30)])
    opt = bodi.BODi(space, seed=0, n_init=6, dictionary_size=16, num_restarts=4,
                    raw_samples=64)

    def f(c):
        return (math.log10(c["lr"]) + 2) ** 2 + (c["k"] - 20) ** 2 / 100 + c["b0"] + (c["c"] != "q")

    for _ in range(3):
        xs = opt.ask(3)
        for x in xs:
            assert 1e-4 <= x["lr"] <= 1e-1 and isinstance(x["k"], int) and x["c"] in "pqr"
        opt.tell(xs, [f(x) for x in xs])
    assert len(opt.trials) == 9


def test_tell_validates_values_and_records_failures():
    space = SearchSpace([Binary("a"), Binary("b"), Binary("c")])
    opt = bodi.BODi(space, seed=0, n_init=2)
    x = opt.ask()
    with pytest.raises(ValueError, match="real number"):
        opt.tell(x, "3.0")
    with pytest.raises(ValueError, match="single number"):
        opt.tell(x, torch.ones(2))
    with pytest.raises(ValueError, match="values"):
        opt.tell([x], [1.0, 2.0])
    with pytest.raises(ValueError, match="unknown parameter"):
        opt.tell({"a": True, "b": False, "c": True, "d": 1}, 1.0)
    with pytest.warns(UserWarning):
        trial = opt.tell(x, float("nan"))
    assert trial.state == "failed" and "nan" in trial.message
    assert opt.best is None
    # failed points are never proposed again, and the run goes on
    for _ in range(6):
        y = opt.ask()
        assert y != x
        opt.tell(y, float(sum(y.values())))
    assert len([t for t in opt.trials if t.state == "complete"]) == 6


def test_small_space_is_exhausted_cleanly():
    space = SearchSpace([Binary("a"), Categorical("c", [1, 2])])
    opt = bodi.BODi(space, seed=0, n_init=2, dictionary_size=4)
    for _ in range(4):
        x = opt.ask()
        opt.tell(x, float(x["a"]) + x["c"])
    assert len({tuple(t.params.items()) for t in opt.trials}) == 4
    with pytest.raises(SearchSpaceExhaustedError):
        opt.ask()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"dictionary_size": 0}, "dictionary_size"),
        ({"dictionary": "hadamard"}, "unknown dictionary"),
        ({"kernel": "rbf"}, "unknown kernel"),
        ({"n_init": -1}, "n_init"),
        ({"acquisition": "pi"}, "unknown acquisition"),
        ({"direction": "up"}, "direction"),
        ({"seed": 1.5}, "seed"),
        ({"max_model_points": 1}, "max_model_points"),
        ({"max_model_points": 2.5}, "max_model_points"),
    ],
)
def test_invalid_settings(kwargs, match):
    space = SearchSpace([Binary("a"), Binary("b")])
    with pytest.raises(ValueError, match=match):
        bodi.BODi(space, **kwargs)


def test_wavelet_dictionary_rejects_categorical_space():
    space = SearchSpace([Binary("a"), Categorical("c", ["x", "y", "z"])])
    with pytest.raises(ValueError, match="binary variables only"):
        bodi.BODi(space, dictionary="wavelet")


def test_initial_design_points_are_issued_once_with_awkward_bounds():
    space = SearchSpace([Binary("b"), Continuous("x", -3.7, 11.3), Continuous("y", 0.3, 7.1,
                                                                          log=True)])
    opt = bodi.BODi(space, seed=0, n_init=6, dictionary_size=8, num_restarts=2,
                    raw_samples=32)
    first = opt.ask(3)
    opt.tell(first, [1.0, 2.0, 3.0])
    second = opt.ask(3)
    assert all(x not in first for x in second)
    assert opt.unused_design_points(opt._design).shape[0] == 0


def test_unused_design_points_are_the_rows_not_yet_among_the_trials_in_order():
    space = SearchSpace([Binary("b"), Categorical("c", ["x", "y", "z"]),
                         Continuous("x", -1.0, 2.0)])
    opt = bodi.BODi(space, seed=0, n_init=8)
    design = opt._design
    told = [design[i] for i in (1, 4, 6)]
    opt.tell(space.decode(torch.stack(told)), [0.0, 1.0, 2.0])
    assert torch.equal(opt.unused_design_points(design), design[[0, 2, 3, 5, 7]])


def test_botorch_acquisition_optimizer_in_a_discrete_space_never_repeats():
    space = SearchSpace([Binary(f"b{i}") for i in range(5)] + [Categorical("c", ["x", "y"])])
    opt = bodi.BODi(space, seed=1, n_init=4, dictionary_size=16, acquisition_optimizer="botorch",
                    num_restarts=4, raw_samples=64)
    for _ in range(16):
        x = opt.ask()
        opt.tell(x, float(sum(x[f"b{i}"] for i in range(5)) + (x["c"] == "x")))
    keys = {tuple(t.params.items()) for t in opt.trials}
    assert len(keys) == 16


@pytest.mark.parametrize("options", [
    {"dictionary_reference": "random"},
    {"dictionary_reference": "none", "trust_region": False},  # the paper's configuration
])
def test_shift_robust_options_solve_a_planted_problem(options):
    problem = planted_binary(16, seed=4)
    opt = bodi.BODi(problem.space, seed=0, n_init=8, dictionary_size=32, num_restarts=4,
                    raw_samples=256, **options)
    for _ in range(40):  # the optimum within 40 evaluations
        x = opt.ask()
        opt.tell(x, float(problem(x)))
        if opt.best[1] == problem.optimal_value:
            break
    assert opt.best[1] == problem.optimal_value
    assert opt.settings()["dictionary_reference"] == options["dictionary_reference"]
    with pytest.raises(ValueError, match="dictionary_reference"):
        bodi.BODi(problem.space, dictionary_reference="corner")


@pytest.mark.parametrize(("kernel", "make_problem"), [
    ("hamming", lambda: planted_binary(16, seed=4)),
    ("hamming", lambda: planted_mixed(seed=2)),
    ("hed*hamming", lambda: planted_mixed(seed=2)),
    ("hed+hamming", lambda: planted_mixed(seed=2)),
])
def test_the_hamming_kernels_solve_a_planted_problem_and_are_recorded(kernel, make_problem,
                                                                      tmp_path):
    from bodi.hed.kernel import HammingDistanceKernel, HammingEmbeddingKernel

    problem = make_problem()
    opt = bodi.BODi(problem.space, seed=0, n_init=8, kernel=kernel, num_restarts=4,
                    raw_samples=256, dictionary_size=32, storage=tmp_path / "study.db")
    for _ in range(30):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    kinds = {type(k) for k in opt.model.covar_module.modules()}
    assert HammingDistanceKernel in kinds
    assert (HammingEmbeddingKernel in kinds) == kernel.startswith("hed")
    assert opt.settings()["kernel"] == kernel
    # a study resumes with its kernel; one stored before the option existed used HED
    assert bodi.load_study(tmp_path / "study.db").settings()["kernel"] == kernel
    assert bodi.BODi.legacy_settings["kernel"] == "hed"
    random_best = min(float(problem(x)) for x in problem.space.decode(
        problem.space.sample(30, generator=torch.Generator().manual_seed(0))))
    assert opt.best[1] < random_best


def _run(problem, asks: int, **options) -> bodi.BODi:
    """BODi (``FAST`` settings and ``options``) after ``asks`` sequential suggestions on
    ``problem``."""
    return _drive(bodi.BODi(problem.space, **options, **FAST), problem, asks)


def _drive(opt, problem, asks: int):
    """``opt`` after ``asks`` sequential suggestions, each told its value on ``problem``."""
    for _ in range(asks):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    return opt


def test_the_default_kernel_is_hed_times_hamming_and_a_hed_study_continues_as_hed(tmp_path):
    from study_files import forget_settings

    from bodi.hed.kernel import HammingDistanceKernel, HammingEmbeddingKernel
    from bodi.optimizers.registry import make_optimizer

    space = SearchSpace([Binary(f"b{i}") for i in range(8)])
    assert bodi.BODi(space).kernel == "hed*hamming"
    paper = make_optimizer("bodi-paper", space, seed=0, direction="minimize")
    assert paper.kernel == "hed"  # the paper's BODi is pinned
    # a study of bodi 0.1 (kernel "hed" by default; the oldest stored no kernel at all)
    path = tmp_path / "study.db"
    old = bodi.BODi(space, seed=0, n_init=4, kernel="hed", dictionary_size=16, storage=path)
    old.tell(old.ask(4), [1.0, 2.0, 3.0, 4.0])
    forget_settings(path, "kernel")
    loaded = bodi.load_study(path)
    assert loaded.kernel == "hed"
    loaded.tell(loaded.ask(), 0.5)
    kinds = {type(k) for k in loaded.model.covar_module.modules()}
    assert HammingEmbeddingKernel in kinds and HammingDistanceKernel not in kinds
    # reopened with today's default, the study says which setting differs
    with pytest.raises(ValueError, match="kernel: stored 'hed', given 'hed\\*hamming'"):
        bodi.BODi(space, seed=0, n_init=4, dictionary_size=16, storage=path)


def test_an_all_categorical_space_defaults_to_the_hamming_kernel_and_a_03_study_continues(
        tmp_path):
    from bodi.hed.kernel import HammingEmbeddingKernel
    from bodi.optimizers.bo import default_kernel

    categorical = planted_categorical(8, choices=4, seed=1)
    space = categorical.space
    assert space.is_categorical and default_kernel(space) == "hamming"
    assert bodi.BODi(space).kernel == "hamming"
    assert bodi.BODi(space, kernel="hed*hamming").kernel == "hed*hamming"  # asked for
    for other in (planted_binary(8).space, planted_mixed(seed=2).space,
                  SearchSpace([Categorical("a", ["x", "y", "z"]), Binary("b")]),
                  SearchSpace([Categorical("a", ["x", "y"]), Categorical("b", [1, 2, 3])])):
        assert bodi.BODi(other).kernel == "hed*hamming"
    # the default and the explicit option are one method: the same suggestions
    runs = []
    for kernel in (None, "hamming"):
        opt = _run(categorical, 10, seed=3, n_init=6, kernel=kernel)
        runs.append([t.params for t in opt.trials])
        assert not any(isinstance(k, HammingEmbeddingKernel)
                       for k in opt.model.covar_module.modules())
    assert runs[0] == runs[1]
    # a study of bodi 0.3 (the product kernel) says which setting differs, and continues
    path = tmp_path / "study.db"
    old = bodi.BODi(space, seed=0, n_init=4, kernel="hed*hamming", storage=path, **FAST)
    old.tell(old.ask(4), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="kernel: stored 'hed\\*hamming', given 'hamming'"):
        bodi.BODi(space, seed=0, n_init=4, storage=path, **FAST)
    assert bodi.load_study(path).kernel == "hed*hamming"


@pytest.mark.parametrize("old", ["all", "auto"], ids=["bodi 0.4", "bodi 0.6"])
def test_bodi_chooses_the_design_in_its_model_by_reach_and_older_studies_continue(
        tmp_path, old):
    from bodi.baselines.casmopolitan import CASMOPOLITAN

    problem = planted_binary(10, seed=4)
    space = problem.space
    assert bodi.BODi(space).design_in_model == "reach"
    assert bodi.BODi(space, design_in_model=old).design_in_model == old  # asked for
    assert CASMOPOLITAN(space).design_in_model == "all"  # the baselines keep the whole design
    assert make_optimizer("bodi-paper", space, seed=0,
                          direction="minimize").design_in_model == "all"  # pinned
    # the default and the explicit option are one method: the same suggestions
    default, explicit = (_run(problem, 13, seed=5, n_init=10, **options)
                         for options in ({}, {"design_in_model": "reach"}))
    assert [t.params for t in default.trials] == [t.params for t in explicit.trials]
    # a study of bodi 0.4 (the whole design in the model) or 0.6 (the held-out choice) says
    # which setting differs, and continues with its own
    path = tmp_path / "study.db"
    stored = bodi.BODi(space, seed=0, n_init=4, design_in_model=old, storage=path, **FAST)
    stored.tell(stored.ask(4), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=f"design_in_model: stored '{old}', given 'reach'"):
        bodi.BODi(space, seed=0, n_init=4, storage=path, **FAST)
    loaded = bodi.load_study(path)
    assert loaded.design_in_model == old
    loaded.tell(loaded.ask(), 0.5)
    assert bodi.BODi(space, seed=0, n_init=4, design_in_model=old, storage=path,
                     **FAST).design_in_model == old


def _check_an_older_study_continues(space, tmp_path, option: str, old, message: str) -> None:
    """A study stored with ``option=old`` (an older version's default) says which setting
    differs when BODi's default is given, and continues with its own through ``load_study``."""
    path = tmp_path / "study.db"
    stored = bodi.BODi(space, seed=0, n_init=4, storage=path, **{option: old}, **FAST)
    stored.tell(stored.ask(4), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=message):
        bodi.BODi(space, seed=0, n_init=4, storage=path, **FAST)
    loaded = bodi.load_study(path)
    assert getattr(loaded, option) == old
    loaded.tell(loaded.ask(), 0.5)


def test_bodi_fits_the_first_order_term_by_default_and_a_07_study_continues(tmp_path):
    """bodi 0.8's default is ``first_order="auto-rescale"`` (the paper's configuration keeps
    the kernel alone); a study of bodi 0.7 (``first_order=False`` stored) says which setting
    differs and continues with its own."""
    problem = planted_binary(10, seed=4)
    space = problem.space
    assert bodi.BODi(space).first_order == "auto-rescale"
    assert make_optimizer("bodi-paper", space, seed=0,
                          direction="minimize").first_order is False  # pinned
    default, explicit = (_run(problem, 13, seed=5, n_init=10, **options)
                         for options in ({}, {"first_order": "auto-rescale"}))
    assert [t.params for t in default.trials] == [t.params for t in explicit.trials]
    _check_an_older_study_continues(space, tmp_path, "first_order", False,
                                    "first_order: stored False, given 'auto-rescale'")


def test_an_all_categorical_space_has_no_first_order_term_by_default_and_a_08_study_continues(
        tmp_path):
    """bodi 0.9's default on an all-categorical space is ``first_order=False`` (the term on
    every other space); a study of bodi 0.8 there (``"auto-rescale"`` stored) says which
    setting differs and continues with its own."""
    from bodi.optimizers.bo import default_first_order

    space = planted_categorical(8, choices=4, seed=1).space
    assert default_first_order(space) is False and bodi.BODi(space).first_order is False
    assert bodi.BODi(space, first_order="auto-rescale").first_order == "auto-rescale"
    for other in (planted_binary(8).space, planted_mixed(seed=2).space,
                  SearchSpace([Categorical("a", ["x", "y", "z"]), Binary("b")])):
        assert default_first_order(other) == bodi.BODi(other).first_order == "auto-rescale"
    _check_an_older_study_continues(space, tmp_path, "first_order", "auto-rescale",
                                    "first_order: stored 'auto-rescale', given False")


def test_the_upper_confidence_bound_is_the_default_unless_all_categorical_and_a_09_study_continues(
        tmp_path):
    """bodi 0.10's default acquisition is the upper confidence bound for one objective on a
    space with binary, integer or continuous parameters, and LogEI on an all-categorical
    space, with several objectives or with outcome constraints; the paper's configuration
    keeps LogEI. A study of bodi 0.9 on a binary space (``"logei"`` stored) says which
    setting differs and continues with its own."""
    from bodi.optimizers.bo import default_acquisition

    categorical = planted_categorical(8, choices=4, seed=1).space
    assert default_acquisition(categorical) == bodi.BODi(categorical).acquisition == "logei"
    problem = planted_binary(10, seed=4)
    space = problem.space
    for other in (space, planted_mixed(seed=2).space,
                  SearchSpace([Categorical("a", ["x", "y", "z"]), Binary("b")])):
        assert default_acquisition(other) == bodi.BODi(other).acquisition == "ucb"
    assert default_acquisition(space, n_objectives=2) == "logei"
    assert default_acquisition(space, outcome_constraints=1) == "logei"
    assert bodi.BODi(space, directions=["minimize", "maximize"],
                     ref_point=[0.0, 0.0]).acquisition == "logei"
    assert bodi.BODi(space, outcome_constraints=1).acquisition == "logei"
    assert make_optimizer("bodi-paper", space, seed=0,
                          direction="minimize").acquisition == "logei"  # pinned
    default, explicit = (_run(problem, 13, seed=5, n_init=10, **options)
                         for options in ({}, {"acquisition": "ucb"}))
    assert [t.params for t in default.trials] == [t.params for t in explicit.trials]
    _check_an_older_study_continues(space, tmp_path, "acquisition", "logei",
                                    "acquisition: stored 'logei', given 'ucb'")


def test_ucb_after_suggests_by_logei_until_that_many_trials_have_completed(tmp_path):
    """``ucb_after=N`` with ``acquisition="ucb"``: the suggestions made with fewer than ``N``
    completed trials are LogEI's, the later ones UCB's; stored with the study, refused
    unless a non-negative integer, and 0 (UCB throughout) for a study stored before it."""
    problem = planted_binary(10, seed=4)
    early, logei = (_run(problem, 13, seed=5, n_init=10, **options)
                    for options in ({"ucb_after": 13}, {"acquisition": "logei"}))
    assert [t.params for t in early.trials] == [t.params for t in logei.trials]
    ucb = _run(problem, 13, seed=5, n_init=10)
    assert [t.params for t in ucb.trials] != [t.params for t in logei.trials]
    switched = _run(problem, 13, seed=5, n_init=10, ucb_after=11)
    assert [t.params for t in switched.trials][:11] == [t.params for t in logei.trials][:11]
    history = History.from_observations(problem.space, ["minimize"], completed=[
        (t.params, t.value) for t in switched.trials[:12]])
    for after, twin in ((12, ucb), (13, logei)):  # 12 completed: UCB if N <= 12
        opt = bodi.BODi(problem.space, seed=5, n_init=10, ucb_after=after, **FAST)
        twin_opt = bodi.BODi(problem.space, seed=5, n_init=10, acquisition=twin.acquisition,
                             **FAST)
        assert torch.equal(opt.suggest(history, 1), twin_opt.suggest(history, 1))
    stored = bodi.BODi(problem.space, ucb_after=40, storage=tmp_path / "study.db")
    assert stored.settings()["ucb_after"] == 40
    assert bodi.BODi.legacy_settings["ucb_after"] == 0
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="ucb_after must be"):
            bodi.BODi(problem.space, ucb_after=bad)


def test_ucb_until_exploits_the_last_part_of_a_known_budget(tmp_path):
    """``ucb_until=f`` with ``acquisition="ucb"`` and a known ``budget``: from ``f * budget``
    finished trials on the suggestions are LogEI's; without a budget, UCB's. ``minimize``
    passes its budget, which is not stored: the study continues with a larger one."""
    problem = planted_binary(10, seed=4)
    opt = bodi.BODi(problem.space, budget=20, ucb_until=0.7, **FAST)
    assert [opt.acquisition_at(n, n) for n in (13, 14, 19)] == ["ucb", "logei", "logei"]
    assert opt.acquisition_at(12, 14) == "logei"  # failed trials count toward the budget
    assert bodi.BODi(problem.space, ucb_until=0.7).acquisition_at(19, 19) == "ucb"
    assert bodi.BODi(problem.space, acquisition="ts", budget=20,
                     ucb_until=0.7).acquisition_at(19, 19) == "ts"
    runs = [[t.params for t in _run(problem, 13, seed=5, n_init=10, **options).trials]
            for options in ({"budget": 16, "ucb_until": 0.75}, {"budget": 20, "ucb_until": 0.5},
                            {}, {"acquisition": "logei"})]
    late, from_the_start, ucb, logei = runs
    assert from_the_start == logei != ucb  # 10 of 20 finished: LogEI from the first
    assert late[:12] == ucb[:12]
    history = History.from_observations(problem.space, ["minimize"], completed=[
        (params, problem(params)) for params in late[:12]])
    logei_opt = bodi.BODi(problem.space, seed=5, n_init=10, acquisition="logei", **FAST)
    assert problem.space.decode(logei_opt.suggest(history, 1))[0] == late[12]
    path = tmp_path / "study.db"
    first = bodi.minimize(problem, problem.space, budget=12, seed=0, n_init=10,
                          storage=path, **FAST)
    assert first.optimizer.budget == 12 and "budget" not in first.optimizer.settings()
    more = bodi.minimize(problem, problem.space, budget=15, seed=0, n_init=10,
                         storage=path, **FAST)
    assert len(more.history) == 15 and more.optimizer.budget == 15
    assert bodi.BODi.legacy_settings["ucb_until"] is None
    for name, bad in (("budget", 0), ("ucb_until", 1.5), ("ucb_until", "late")):
        with pytest.raises(ValueError, match=f"{name} must be"):
            bodi.BODi(problem.space, **{name: bad})


def test_the_noise_prior_is_an_option_stored_with_the_study(tmp_path):
    from gpytorch.priors import GammaPrior

    from bodi.optimizers.registry import make_optimizer

    problem = planted_mixed(seed=2)
    path = tmp_path / "study.db"
    opt = make_optimizer("bodi[noise_prior=gamma]", problem.space, seed=0, direction="minimize",
                         n_init=6, num_restarts=2, raw_samples=64, dictionary_size=16,
                         storage=path)
    for _ in range(8):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    assert isinstance(opt.model.likelihood.noise_covar.noise_prior, GammaPrior)
    assert bodi.load_study(path).settings()["noise_prior"] == "gamma"
    assert bodi.BODi(problem.space).noise_prior == "lognormal"
    assert bodi.BODi.legacy_settings["noise_prior"] == "lognormal"
    with pytest.raises(ValueError, match="unknown noise_prior"):
        bodi.BODi(problem.space, noise_prior="wide")


def test_the_auto_kernel_uses_the_model_that_predicts_left_out_trials_better(tmp_path):
    from bodi.models.gp import leave_one_out_log_likelihood
    from bodi.optimizers.bo import AUTO_KERNELS

    problem = planted_mixed(seed=2)
    opt = bodi.BODi(problem.space, seed=0, n_init=10, kernel="auto", num_restarts=4,
                    raw_samples=256, dictionary_size=32, storage=tmp_path / "study.db")
    for _ in range(14):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    X, Y = opt.X_completed, opt.Y_completed
    candidates = [opt.make_model_with_kernel(kernel, X, Y) for kernel in AUTO_KERNELS]
    scores = [float(leave_one_out_log_likelihood(model)) for model in candidates]
    chosen = opt.make_model(X, Y)
    best = candidates[scores.index(max(scores))]
    assert type(chosen.covar_module) is type(best.covar_module)
    assert torch.allclose(chosen.posterior(X).mean, best.posterior(X).mean)
    assert bodi.load_study(tmp_path / "study.db").settings()["kernel"] == "auto"
    with pytest.raises(ValueError, match="unknown kernel"):
        bodi.BODi(problem.space, kernel="best")


def test_the_alternate_kernel_takes_the_two_models_in_turn_and_resumes_on_the_same_turn(
        tmp_path):
    from bodi.optimizers.bo import AUTO_KERNELS

    problem = planted_mixed(seed=2)
    path = tmp_path / "study.db"
    opt = bodi.BODi(problem.space, seed=0, n_init=6, kernel="alternate", num_restarts=4,
                    raw_samples=128, dictionary_size=16, storage=path)
    turns = []
    for _ in range(11):
        if len(opt.trials) >= 6:
            turns.append(opt.kernel_for_next_suggestion())
            X, Y = opt.X_completed, opt.Y_completed
            model = opt.make_model(X, Y)
            expected = opt.make_model_with_kernel(turns[-1], X, Y)
            assert ([type(k) for k in model.covar_module.kernels]
                    == [type(k) for k in expected.covar_module.kernels])
            assert torch.allclose(model.posterior(X).mean, expected.posterior(X).mean)
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    assert turns == ["hed*hamming", "hamming"] * 2 + ["hed*hamming"]
    assert set(turns) == set(AUTO_KERNELS)
    resumed = bodi.load_study(path)
    assert resumed.settings()["kernel"] == "alternate"
    assert resumed.kernel_for_next_suggestion() == "hamming"  # 11 trials: the odd turn


def test_the_portfolio_kernel_is_the_arm_its_record_chooses_and_resumes_the_same(tmp_path):
    from bodi.models.portfolio import portfolio_arms
    from bodi.optimizers.bo import AUTO_KERNELS

    problem = planted_mixed(seed=2)
    path = tmp_path / "study.db"
    opt = bodi.BODi(problem.space, seed=4, n_init=6, kernel="portfolio", num_restarts=4,
                    raw_samples=128, dictionary_size=16, storage=path)
    for _ in range(12):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    arms = portfolio_arms(opt.progress(), 6, len(AUTO_KERNELS), seed=4)
    assert len(arms) == 12 - 6 + 1
    assert opt.kernel_for_next_suggestion() == AUTO_KERNELS[arms[-1]]
    X, Y = opt.X_completed, opt.Y_completed
    model = opt.make_model(X, Y)
    expected = opt.make_model_with_kernel(AUTO_KERNELS[arms[-1]], X, Y)
    assert torch.allclose(model.posterior(X).mean, expected.posterior(X).mean)
    resumed = bodi.load_study(path)
    assert resumed.settings()["kernel"] == "portfolio"
    assert resumed.kernel_for_next_suggestion() == opt.kernel_for_next_suggestion()


def test_the_box_rule_changes_nothing_without_continuous_or_integer_parameters():
    space = SearchSpace([Binary(f"b{i}") for i in range(8)])

    def f(x):
        return float(sum(x[f"b{i}"] * (i % 3 - 1) for i in range(8)))

    runs = []
    for box in ({}, {"box_failure_tolerance": 1}):
        # a region that shrinks, restarts and regrows within the run
        opt = bodi.BODi(space, seed=3, n_init=4, num_restarts=2, raw_samples=64,
                        dictionary_size=8, trust_region={"init_radius": 4, "max_radius": 6,
                                                         "failure_tolerance": 2, **box})
        xs = []
        for _ in range(16):
            x = opt.ask()
            opt.tell(x, f(x))
            xs.append(x)
        runs.append(xs)
    assert runs[0] == runs[1]


def test_the_default_region_has_the_box_rule_and_a_bodi_02_study_keeps_its_region(tmp_path):
    import json
    import sqlite3

    from bodi.baselines.casmopolitan import CASMOPOLITAN

    space = planted_mixed(seed=2).space
    assert bodi.BODi.default_trust_region == TrustRegionSettings(failure_tolerance=10,
                                                                 box_failure_tolerance=4)
    assert bodi.BODi(space).trust_region_settings == bodi.BODi.default_trust_region
    assert bodi.BODi(space, trust_region=True).trust_region_settings.box_failure_tolerance == 4
    assert CASMOPOLITAN(space).trust_region_settings == TrustRegionSettings()  # unchanged
    # a dict of fields (a method spec) is set on top of BODi's region
    assert bodi.BODi(space, trust_region={"init_radius": 2}).trust_region_settings == (
        TrustRegionSettings(init_radius=2, failure_tolerance=10, box_failure_tolerance=4))
    geometric = bodi.BODi(space, trust_region={"schedule": "geometric"})
    assert geometric.trust_region_settings.box_failure_tolerance is None
    old = make_optimizer(
        "bodi[trust_region.box_failure_tolerance=null,trust_region.failure_tolerance=40]",
        space, seed=0, direction="minimize")
    assert old.trust_region_settings == TrustRegionSettings()  # bodi 0.2's region
    # a study stored before the field existed resumes with the box shrinking with the radius
    path = tmp_path / "study.db"
    stored = bodi.BODi(space, seed=0, n_init=4, dictionary_size=8, storage=path,
                       trust_region=TrustRegionSettings())
    stored.tell(stored.ask(4), [1.0, 2.0, 3.0, 4.0])
    with sqlite3.connect(path) as db:
        (settings,) = db.execute("SELECT settings FROM studies").fetchone()
        settings = json.loads(settings)
        del settings["trust_region"]["box_failure_tolerance"]
        db.execute("UPDATE studies SET settings = ?", (json.dumps(settings),))
    assert bodi.load_study(path).trust_region_settings == TrustRegionSettings()
    with pytest.raises(ValueError, match="trust_region"):  # not silently today's region
        bodi.BODi(space, seed=0, n_init=4, dictionary_size=8, storage=path)
    resumed = bodi.BODi(space, seed=0, n_init=4, dictionary_size=8, storage=path,
                        trust_region={"box_failure_tolerance": None, "failure_tolerance": 40})
    assert len(resumed.trials) == 4


def test_the_default_region_shrinks_after_ten_failures_and_a_05_study_continues(tmp_path):
    from bodi.baselines.casmopolitan import CASMOPOLITAN

    problem = planted_binary(10, seed=4)
    space = problem.space
    assert bodi.BODi(space).trust_region_settings.failure_tolerance == 10
    assert CASMOPOLITAN(space).trust_region_settings.failure_tolerance == 40  # unchanged
    # the default and the spec that names it are one method: the same suggestions
    default = _run(problem, 13, seed=5, n_init=10)
    named = _drive(make_optimizer("bodi[trust_region.failure_tolerance=10]", space, seed=5,
                                  direction="minimize", n_init=10, **FAST), problem, 13)
    assert [t.params for t in default.trials] == [t.params for t in named.trials]
    # a study of bodi 0.5 (CASMOPOLITAN's 40) says which setting differs, and continues with
    # its own region
    path = tmp_path / "study.db"
    old = bodi.BODi(space, seed=0, n_init=4, storage=path, **FAST,
                    trust_region={"failure_tolerance": 40})
    old.tell(old.ask(4), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="trust_region"):
        bodi.BODi(space, seed=0, n_init=4, storage=path, **FAST)
    resumed = bodi.BODi(space, seed=0, n_init=4, storage=path, **FAST,
                        trust_region={"failure_tolerance": 40})
    assert len(resumed.trials) == 4
    assert resumed.trust_region_settings == TrustRegionSettings(box_failure_tolerance=4)


def test_with_the_box_rule_the_region_of_a_mixed_space_is_the_replayed_state():
    from bodi.acquisition.trust_region import (
        TrustRegionSettings,
        discrete_moves,
        trust_region_state,
    )

    problem = planted_mixed(seed=2)
    opt = bodi.BODi(problem.space, seed=1, n_init=5, num_restarts=2, raw_samples=64,
                    dictionary_size=8, trust_region={"box_failure_tolerance": 1})
    for _ in range(14):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    progress = opt.progress()
    moved = discrete_moves(opt.X_completed[:, problem.space.discrete_dims], progress)
    settings = TrustRegionSettings(box_failure_tolerance=1)
    state = trust_region_state(progress, 5, settings, len(problem.space.discrete_dims),
                               moved)
    assert opt.trust_region().length == pytest.approx(state.length)
    n_discrete = len(problem.space.discrete_dims)
    # the box narrowed at some point of the run (CASMOPOLITAN's would not have: 40 failures)
    assert any(trust_region_state(progress[:k], 5, settings, n_discrete, moved[:k]).length
               < settings.init_length for k in range(6, len(progress) + 1))


def test_defaults_are_the_incumbent_relative_dictionary_and_a_trust_region():
    space = SearchSpace([Binary(f"b{i}") for i in range(6)])
    opt = bodi.BODi(space)
    assert opt.dictionary_reference == "incumbent" and opt.trust_region_settings is not None
    assert opt.settings()["trust_region"] == dict(
        TrustRegionSettings(failure_tolerance=10, box_failure_tolerance=4).__dict__)
    # where they do not apply, the defaults step aside instead of raising
    assert bodi.BODi(space, dictionary="gaussian").dictionary_reference == "none"
    assert bodi.BODi(space, acquisition_optimizer="botorch").trust_region_settings is None
    with pytest.raises(ValueError, match="trust region"):
        bodi.BODi(space, acquisition_optimizer="botorch", trust_region=True)


def test_max_model_points_fits_the_model_on_the_trials_nearest_the_region_centre(tmp_path):
    problem = planted_mixed(10, 2, 1, seed=2)
    storage = tmp_path / "s.db"
    # the whole design in the model: the rows kept are max_model_points' choice alone
    opt = bodi.BODi(problem.space, seed=0, n_init=10, max_model_points=8, storage=storage,
                    study_name="local", design_in_model="all", **FAST)
    for _ in range(14):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    train_X = opt.model.train_inputs[0]
    assert train_X.shape[0] == 8  # of 13 completed trials when the last model was fitted
    X_before = opt.X_completed[:13]
    center = opt.region.center if opt.region is not None else X_before[
        opt.Y_completed[:13].argmax()]
    rows = nearest_rows(problem.space, X_before, center, 8)
    assert torch.equal(train_X, X_before[rows])
    # the nearest 8 include the centre and no farther trial is kept over a nearer one
    distance = (X_before[:, problem.space.discrete_dims] != center[
        problem.space.discrete_dims]).sum(-1).double() + (
        X_before[:, problem.space.ordinal_dims] - center[problem.space.ordinal_dims]
    ).abs().sum(-1)
    kept = torch.zeros(13, dtype=torch.bool)
    kept[rows] = True
    assert distance[kept].max() <= distance[~kept].min()
    # stored with the study; a resumed study continues with the same setting
    resumed = bodi.load_study(storage, "local")
    assert resumed.max_model_points == 8


def test_local_model_fits_the_trials_inside_the_region_and_the_nearest(tmp_path):
    problem = planted_binary(40, seed=3)
    storage = tmp_path / "s.db"
    opt = bodi.BODi(problem.space, seed=0, n_init=24, local_model=True, storage=storage,
                    study_name="local", trust_region={"init_radius": 8},
                    design_in_model="all", **FAST)  # the rows are local_model's choice alone
    for _ in range(27):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    X_before = opt.X_completed[:26]  # what the last model was fitted on
    region = opt.region
    assert region is not None and region.radius == 8
    distance = (X_before != region.center).sum(-1)
    nearest = torch.zeros(26, dtype=torch.bool)
    nearest[nearest_rows(problem.space, X_before, region.center, LOCAL_MODEL_MIN_POINTS)] = True
    expected = X_before[(distance <= 8) | nearest]
    assert len(expected) < 26  # random design points 20 flips away are left out
    assert torch.equal(opt.model.train_inputs[0], expected)
    # stored with the study, and a spec sets it
    assert bodi.load_study(storage, "local").local_model is True
    assert make_optimizer("bodi[local_model=true]", problem.space, seed=0,
                          direction="minimize").local_model is True
    with pytest.raises(ValueError, match="needs trust_region"):
        bodi.BODi(problem.space, local_model=True, trust_region=False)
    with pytest.raises(ValueError, match="local_model"):
        bodi.BODi(problem.space, local_model="yes")


def test_nearest_rows_breaks_ties_by_order():
    space = SearchSpace([Binary("a"), Binary("b"), Continuous("x", 0.0, 1.0)])
    X = torch.tensor([[1.0, 1.0, 0.5], [0.0, 0.0, 0.5], [0.0, 0.0, 0.5], [0.0, 1.0, 0.0]],
                     dtype=torch.float64)
    rows = nearest_rows(space, X, torch.tensor([0.0, 0.0, 0.4], dtype=torch.float64), 2)
    assert rows.tolist() == [1, 2]


def test_design_in_model_few_keeps_the_designs_first_points_and_its_best(tmp_path):
    problem = planted_binary(30, seed=2)
    storage = tmp_path / "s.db"
    opt = bodi.BODi(problem.space, seed=0, n_init=12, design_in_model="few", storage=storage,
                    study_name="few", **FAST)
    for _ in range(12):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    assert opt.few_design_rows(torch.arange(12)).all()  # nothing beyond the design yet
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    assert torch.equal(opt.X_completed[:12], opt._design)
    expected = torch.zeros(15, dtype=torch.bool)
    expected[:DESIGN_FEW] = expected[12:] = True
    expected[int(opt.utility()[:12].argmax())] = True
    assert int(expected[:12].sum()) == 6  # the design's best is not among its first five
    assert torch.equal(opt.few_design_rows(torch.arange(15)), expected)
    X = opt.X_completed
    opt.ask()
    assert torch.equal(opt.model.train_inputs[0], X[expected])
    assert bodi.load_study(storage, "few").design_in_model == "few"
    assert make_optimizer("bodi[design_in_model=auto]", problem.space, seed=0,
                          direction="minimize").design_in_model == "auto"
    with pytest.raises(ValueError, match="design_in_model must be one of all, few, auto"):
        bodi.BODi(problem.space, design_in_model="some")


def _with_noisy_design(opt, problem, asks: int = 20):
    """``opt`` (with a design of 12) after ``asks`` suggestions: the design's values are noise
    far larger than the problem's, which the later trials follow."""
    g = torch.Generator().manual_seed(0)
    for i in range(asks):
        x = opt.ask()
        noise = 100.0 * float(torch.randn(1, generator=g))
        opt.tell(x, noise if i < 12 else float(problem(x)))
    return opt


@pytest.mark.parametrize(("trust_region", "same_as"), [
    (None, "all"),  # 24 bits: a uniform point is 12 flips away, within the radius of 30
    ({"init_radius": 4, "max_radius": 8}, "auto"),  # beyond a radius of 8
    (False, "all"),  # no region: nothing is out of its reach
])
def test_design_in_model_reach_is_all_within_the_regions_reach_and_auto_beyond(
        trust_region, same_as):
    # the design's values are noise that the later trials do not follow, so "auto" leaves
    # most of the design out and "all" does not
    problem = planted_binary(24, seed=1)
    options = {} if trust_region is None else {"trust_region": trust_region}
    runs = []
    for mode in ("reach", same_as, "auto" if same_as == "all" else "all"):
        opt = _with_noisy_design(bodi.BODi(problem.space, seed=0, n_init=12,
                                           design_in_model=mode, **options, **FAST), problem)
        opt.ask()
        runs.append(opt)
    params = [[t.params for t in run.trials] for run in runs]
    assert params[0] == params[1]
    fitted_on = [len(run.model.train_inputs[0]) for run in runs]
    assert fitted_on[0] == fitted_on[1] != fitted_on[2]  # the rule's choice matters here
    assert runs[0].settings()["design_in_model"] == "reach"


@pytest.mark.parametrize("design_in_model", ["auto", "auto-refit"])
def test_design_in_model_auto_leaves_out_a_design_that_does_not_fit_the_later_trials(
    design_in_model,
):
    """Later trials follow the problem; the design's values are unrelated noise far larger:
    the model leaves most of the design out."""
    problem = planted_binary(24, seed=1)
    opt = _with_noisy_design(bodi.BODi(problem.space, seed=0, n_init=12,
                                       design_in_model=design_in_model, **FAST), problem)
    few = opt.few_design_rows(torch.arange(20))
    assert 13 <= int(few.sum()) <= 14  # the first five, the best, the eight later
    opt.ask()
    assert len(opt.model.train_inputs[0]) == int(few.sum())


def test_design_in_model_auto_refit_uses_the_fit_with_the_larger_held_out_density():
    from bodi.models.gp import leave_one_out_log_densities
    from bodi.optimizers.gp_optimizer import squash_outcomes

    problem = planted_binary(24, seed=1)
    opt = bodi.BODi(problem.space, seed=0, n_init=12, design_in_model="auto-refit", **FAST)
    for _ in range(20):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    X, Y = opt.X_completed, squash_outcomes(opt.Y_completed)
    few = opt.few_design_rows(torch.arange(20))
    everything = opt.make_objective_model(X, Y)
    fewer = opt.make_objective_model(X[few], Y[few])
    keep_all = (leave_one_out_log_densities(everything)[few].mean()
                >= leave_one_out_log_densities(fewer).mean())
    opt.ask()
    assert torch.equal(opt.model.train_inputs[0], X if keep_all else X[few])


@pytest.mark.filterwarnings("ignore:objective value nan recorded as a failed trial")
def test_failed_trials_worst_puts_failed_points_in_the_model_at_the_worst_outcomes(tmp_path):
    """``failed_trials="worst"``: each failed trial's point is in the fitted models (after the
    completed ones), with the smallest objective and the largest constraint value of the
    completed trials; ``"ignore"`` (the paper's, and a study stored before the option) leaves
    it out; anything else is refused with one line."""
    problem = planted_binary(16, seed=3)
    storage = tmp_path / "s.db"

    def run(failed_trials: str | None) -> bodi.BODi:
        options = {} if failed_trials is None else {"failed_trials": failed_trials}
        opt = bodi.BODi(problem.space, seed=0, n_init=8, outcome_constraints=1,
                        storage=storage, study_name=str(failed_trials), **options, **FAST)
        for i in range(11):
            x = opt.ask()
            value = float(problem(x)) if i % 4 else math.nan  # trials 0, 4, 8 fail
            opt.tell(x, value, constraints=[value - 3.0])
        opt.ask()
        return opt

    opt = run("worst")
    X, n_failed = opt.X_completed, len(opt.X_failed)
    assert n_failed == 3
    objective, constraint = opt.model.models
    assert torch.equal(objective.train_inputs[0], torch.cat([X, opt.X_failed]))

    def targets(model):
        return model.outcome_transform.untransform(model.train_targets.unsqueeze(-1))[0][:, 0]

    Y, C = opt.Y_completed[:, 0], opt.C_completed[:, 0]  # Y: larger is better
    assert torch.allclose(targets(objective)[len(X):], Y.min().expand(n_failed))
    assert torch.allclose(targets(constraint)[len(X):], C.max().expand(n_failed))
    assert torch.allclose(targets(objective)[:len(X)], Y)
    assert bodi.load_study(storage, "worst").failed_trials == "worst"
    ignoring = run("ignore")
    assert torch.equal(ignoring.model.models[0].train_inputs[0], ignoring.X_completed)
    assert bodi.BODi.legacy_settings["failed_trials"] == "ignore"
    assert make_optimizer("bodi[failed_trials=worst]", problem.space, seed=0,
                          direction="minimize").failed_trials == "worst"
    with pytest.raises(ValueError, match="failed_trials must be one of ignore, worst, constr"):
        bodi.BODi(problem.space, failed_trials="x")


@pytest.mark.filterwarnings("ignore:objective value nan recorded as a failed trial")
def test_failed_trials_constraint_models_failure_beside_the_objective():
    """``failed_trials="constraint"`` (BODi's default with logei since bodi 0.8, and with
    ucb): the objective's GP sees the completed trials only; the acquisition's model has one
    more output, a GP of the failure indicator (+1 at the failed points, -1 at the completed
    ones), as an outcome constraint; logei or ucb, which after a failure suggests by the
    constrained LogEI (BODi's default is ``"ignore"`` with Thompson sampling, and the paper's
    configuration keeps ``"ignore"``)."""
    from botorch.models.model import ModelList

    problem = planted_binary(16, seed=3)
    opt = bodi.BODi(problem.space, seed=0, n_init=8, **FAST)
    assert (opt.acquisition, opt.failed_trials) == ("ucb", "constraint")
    for i in range(11):
        x = opt.ask()
        opt.tell(x, float(problem(x)) if i % 4 else math.nan)  # trials 0, 4, 8 fail
    opt.ask()
    X, X_failed = opt.X_completed, opt.X_failed
    assert torch.equal(opt.model.train_inputs[0], X)  # the objective: completed trials only
    model, Y = opt.with_failure_constraint(opt.model, X, opt.Y_completed)
    assert isinstance(model, ModelList) and len(model.models) == 2
    failure = model.models[-1]
    assert torch.equal(failure.train_inputs[0], torch.cat([X, X_failed]))
    indicator = failure.outcome_transform.untransform(failure.train_targets.unsqueeze(-1))[0]
    assert torch.allclose(indicator[:, 0], torch.tensor([-1.0] * len(X) + [1.0] * 3).to(indicator))
    assert torch.equal(Y[:, -1], -torch.ones(len(X)))
    with pytest.raises(ValueError, match="failed_trials='constraint' needs acquisition 'logei'"):
        bodi.BODi(problem.space, failed_trials="constraint", acquisition="ts")
    assert bodi.BODi(problem.space, acquisition="ts").failed_trials == "ignore"
    two = bodi.BODi(problem.space, seed=0, n_init=6, directions=["minimize", "minimize"],
                    ref_point=[20.0, 20.0], **FAST)  # several objectives: qLogNEHVI's constraint
    for i in range(9):
        x = two.ask()
        two.tell(x, [float(problem(x)), -float(problem(x))] if i % 3 else [math.nan] * 2)
    finished = [t.params for t in two.trials]
    assert len(two.X_failed) == 3 and two.ask() not in finished
    for spec, expected in (("bodi[acquisition=ucb]", "constraint"),
                           ("bodi[acquisition=ts]", "ignore"), ("bodi-paper", "ignore"),
                           ("bodi", "constraint")):
        assert make_optimizer(spec, problem.space, seed=0,
                              direction="minimize").failed_trials == expected, spec


@pytest.mark.parametrize("warping", ["rank", "power"])
def test_outcome_warping_fits_the_model_on_the_warped_objective_only(tmp_path, warping):
    from bodi.models.warping import warp_outcomes

    problem = planted_binary(16, seed=3)
    storage = tmp_path / "s.db"
    opt = bodi.BODi(problem.space, seed=0, n_init=8, outcome_warping=warping,
                    outcome_constraints=1, storage=storage, study_name="w", **FAST)
    for _ in range(10):
        x = opt.ask()
        value = float(problem(x))
        opt.tell(x, value, constraints=[value - 3.0])
    opt.ask()
    objective, constraint = opt.model.models
    warped = warp_outcomes(opt.Y_completed, warping)  # Y_completed: larger is better
    assert torch.allclose(objective.outcome_transform.untransform(
        objective.train_targets.unsqueeze(-1))[0].squeeze(-1), warped.squeeze(-1))
    assert torch.allclose(constraint.outcome_transform.untransform(
        constraint.train_targets.unsqueeze(-1))[0].squeeze(-1), opt.C_completed.squeeze(-1))
    assert bodi.load_study(storage, "w").outcome_warping == warping
    assert make_optimizer(f"bodi[outcome_warping={warping}]", problem.space, seed=0,
                          direction="minimize").outcome_warping == warping
    with pytest.raises(ValueError, match="unknown outcome_warping 'log'"):
        bodi.BODi(problem.space, outcome_warping="log")
    with pytest.raises(ValueError, match="outcome_warping is for one objective"):
        bodi.BODi(problem.space, outcome_warping=warping, directions=["minimize"] * 2)


def test_design_noise_marks_the_design_once_a_later_trial_is_in(tmp_path):
    from bodi.models.noise import MarkedInputsNoise

    problem = planted_binary(16, seed=3)
    storage = tmp_path / "s.db"
    opt = bodi.BODi(problem.space, seed=0, n_init=8, design_noise=True, storage=storage,
                    study_name="n", **FAST)
    for _ in range(8):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    assert opt.noisier_inputs(opt.X_completed) is None  # the design alone: one noise
    x = opt.ask()
    opt.tell(x, float(problem(x)))
    opt.ask()
    noise = opt.model.likelihood.noise_covar
    assert isinstance(noise, MarkedInputsNoise) and torch.equal(noise.marked, opt._design)
    assert noise.is_marked(opt.X_completed).tolist() == [True] * 8 + [False]
    assert bodi.load_study(storage, "n").design_noise is True
    assert make_optimizer("bodi[design_noise=true]", problem.space, seed=0,
                          direction="minimize").design_noise is True
    with pytest.raises(ValueError, match="design_noise must be True or False"):
        bodi.BODi(problem.space, design_noise="yes")


def test_design_in_model_auto_compares_a_model_list_on_all_its_outcomes():
    """With an outcome constraint the model is a list of two GPs on the same rows; their
    held-out densities add up, and a design of unrelated noise is left out of both."""
    problem = planted_binary(24, seed=1)
    g = torch.Generator().manual_seed(0)
    opt = bodi.BODi(problem.space, seed=0, n_init=12, design_in_model="auto",
                    outcome_constraints=1, **FAST)
    for i in range(20):
        x = opt.ask()
        value = float(problem(x))
        noise = 100.0 * torch.randn(2, generator=g)
        opt.tell(x, float(noise[0]) if i < 12 else value,
                 constraints=[float(noise[1]) if i < 12 else value - 8.0])
    few = int(opt.few_design_rows(torch.arange(20)).sum())
    opt.ask()
    assert [len(m.train_inputs[0]) for m in opt.model.models] == [few, few]


def test_the_genetic_acquisition_optimizer_searches_the_region_reproducibly():
    space = SearchSpace([Binary(f"b{i}") for i in range(12)])

    def problem(x):
        return sum(x.values())

    def run():
        opt = bodi.BODi(space, seed=3, n_init=5, dictionary_size=8,
                        acquisition_optimizer="ga",
                        acquisition_options={"population": 20, "evaluations": 60})
        return _drive(opt, problem, 9)

    first, again = run(), run()
    assert [t.params for t in first.trials] == [t.params for t in again.trials]
    assert len({tuple(t.params.values()) for t in first.trials}) == 9
    with pytest.raises(ValueError, match="unknown acquisition_optimizer"):
        bodi.BODi(space, acquisition_optimizer="annealing")


def test_the_first_order_term_is_in_the_model_recorded_and_resumed(tmp_path):
    """``first_order=True`` adds the first-order kernel (with its output scale) to the
    default model; the study records it and resumes with it; studies stored before the option
    existed ran without it; anything but a bool is refused with one line."""
    from bodi.hed.kernel import FirstOrderKernel, HammingEmbeddingKernel

    problem = planted_binary(16, seed=4)
    opt = bodi.BODi(problem.space, seed=0, n_init=8, first_order=True, num_restarts=4,
                    raw_samples=256, dictionary_size=32, storage=tmp_path / "study.db")
    _drive(opt, problem, 30)
    kinds = {type(k) for k in opt.model.covar_module.modules()}
    assert {FirstOrderKernel, HammingEmbeddingKernel} <= kinds
    assert opt.settings()["first_order"] is True
    assert bodi.load_study(tmp_path / "study.db").settings()["first_order"] is True
    assert bodi.BODi.legacy_settings["first_order"] is False
    plain = _drive(bodi.BODi(problem.space, seed=0, n_init=8, first_order=False, num_restarts=4,
                             raw_samples=256, dictionary_size=32), problem, 9)
    assert FirstOrderKernel not in {type(k) for k in plain.model.covar_module.modules()}
    random_best = min(float(problem(x)) for x in problem.space.decode(
        problem.space.sample(30, generator=torch.Generator().manual_seed(0))))
    assert opt.best[1] < random_best
    with pytest.raises(ValueError, match="first_order must be True, False, 'auto' or"):
        bodi.BODi(problem.space, first_order="yes")


def _first_order_share_on_an_additive_function(first_order: str) -> float:
    """The first-order term's share in BODi's model after 10 trials of a 16-bit planted
    (additive) function."""
    from bodi.models.gp import first_order_share

    additive = planted_binary(16, seed=4)
    opt = _drive(bodi.BODi(additive.space, seed=0, n_init=8, first_order=first_order,
                           **FAST), additive, 10)
    return first_order_share(opt.model)


def test_first_order_auto_keeps_the_term_only_where_the_fit_gives_it_variance():
    """``first_order="auto"``: on an additive function the fitted sum keeps the first-order
    term (its share of the prior variance near 1); on LABS (no first-order effects: ``f(x) =
    f(not x)``) the fit gives it almost none and the model is the kernel alone, the same
    model as ``first_order=False``'s; anything else is refused."""
    from bodi.hed.kernel import FirstOrderKernel
    from bodi.problems.registry import get_problem

    assert _first_order_share_on_an_additive_function("auto") > 0.01
    labs = get_problem("labs50-shifted")
    asks = {}
    for first_order in ("auto", False):
        opt = _drive(bodi.BODi(labs.space, seed=0, n_init=20, first_order=first_order, **FAST),
                     labs, 22)
        assert FirstOrderKernel not in {type(k) for k in opt.model.covar_module.modules()}
        asks[first_order] = [t.params for t in opt.trials]
    assert asks["auto"] == asks[False]
    with pytest.raises(ValueError, match="first_order must be True, False, 'auto' or"):
        bodi.BODi(labs.space, first_order="sometimes")


def test_first_order_auto_rescale_keeps_the_sums_kernel_where_the_term_is_dropped():
    """``first_order="auto-rescale"``: on an additive function the sum, as ``"auto"``; on LABS
    (the term dropped) the kernel alone, not refitted: the sum's kernel at unit prior
    variance; recorded in the settings."""
    from bodi.hed.kernel import FirstOrderKernel
    from bodi.problems.registry import get_problem

    assert _first_order_share_on_an_additive_function("auto-rescale") > 0.01
    labs = get_problem("labs50-shifted")
    opt = _drive(bodi.BODi(labs.space, seed=0, n_init=20, first_order="auto-rescale", **FAST),
                 labs, 22)
    assert FirstOrderKernel not in {type(k) for k in opt.model.covar_module.modules()}
    assert opt.settings()["first_order"] == "auto-rescale"
