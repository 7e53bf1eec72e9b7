"""BODi end to end: planted problems, determinism, the ask/tell contract."""

import math
import warnings

import pytest
import torch
from bodi_runs import FAST, drive, run_bodi
from study_files import set_settings

import bodi
from bodi.acquisition.trust_region import TrustRegionSettings
from bodi.checks import UnusedOptionWarning
from bodi.novelty import SearchSpaceExhaustedError
from bodi.optimizers.registry import make_optimizer
from bodi.problems import planted_binary, planted_categorical, planted_mixed
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study


def test_finds_planted_binary_optimum_within_60_evaluations():
    problem = planted_binary(20, seed=0)
    hidden = problem.space.encode(problem.optimal_params)[0]
    assert 0 < hidden.sum() < 20  # the optimum is a random bit string, not a corner
    result = bodi.minimize(problem, problem.space, budget=60, seed=0, **FAST)
    assert result.best_value == 0.0
    assert result.best_params == problem.optimal_params


@pytest.mark.heavy
@pytest.mark.parametrize(
    "make_problem, budget",
    [
        (lambda: planted_categorical(12, 4, seed=1), 50),
        (lambda: planted_mixed(8, 4, 2, seed=1), 30),
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
        return [(t.params, t.value) for t in result.trials]

    first = run(0)
    assert first == run(0)
    assert first != run(1)


def test_ask_tell_batches_pending_points_and_no_repeats():
    space = SearchSpace([Binary(f"b{i}") for i in range(6)] + [Integer("k", 0, 2)])
    study = create_study(bodi.BODi(space, seed=3, n_init=5, dictionary_size=16))
    f = lambda c: sum(c[f"b{i}"] for i in range(6)) + (c["k"] - 1) ** 2  # noqa: E731
    seen = []
    first = study.ask(4)  # initial design
    assert isinstance(first, list) and len(first) == 4
    study.tell(first, [f(c) for c in first])
    while len(seen) + 4 < 30:
        batch = study.ask(3)
        pending = study.ask()  # asked while the batch is still pending
        assert isinstance(pending, dict)
        study.tell([*batch, pending], [f(c) for c in [*batch, pending]])
        seen = [t.params for t in study.trials]
    keys = [tuple(sorted(p.items())) for p in seen]
    assert len(keys) == len(set(keys))  # never the same point twice in a discrete space
    assert all(t.state == "complete" for t in study.trials)
    params, value = study.best
    assert value == min(t.value for t in study.trials) and f(params) == value


def test_maximize_direction_and_ucb():
    problem = planted_binary(10, seed=4)
    neg = lambda c: -problem(c)  # noqa: E731
    result = bodi.minimize(neg, problem.space, budget=30, seed=0, direction="maximize",
                           acquisition="ucb", n_init=10)
    assert result.best_value == max(t.value for t in result.trials)
    assert result.best_value >= -1.0


@pytest.mark.parametrize("dictionary", ["diverse", "wavelet", "naive", "gaussian"])
def test_every_dictionary_runs(dictionary):
    problem = planted_binary(12, seed=5)
    result = bodi.minimize(problem, problem.space, budget=14, seed=0, n_init=10,
                           dictionary=dictionary, dictionary_size=32)
    assert len(result.trials) == 14


def test_mixed_space_with_botorch_optimizer_and_batch():
    space = SearchSpace([Binary("b0"), Binary("b1"), Categorical("c", ["p", "q", "r"]),
                         Continuous("lr", 1e-4, 1e-1, log=True), Integer("k", 1, 30)])
    study = create_study(
        bodi.BODi(space, seed=0, n_init=6, dictionary_size=16, num_restarts=4, raw_samples=64)
    )

    def f(c):
        return (math.log10(c["lr"]) + 2) ** 2 + (c["k"] - 20) ** 2 / 100 + c["b0"] + (c["c"] != "q")

    for _ in range(3):
        xs = study.ask(3)
        for x in xs:
            assert 1e-4 <= x["lr"] <= 1e-1 and isinstance(x["k"], int) and x["c"] in "pqr"
        study.tell(xs, [f(x) for x in xs])
    assert len(study.trials) == 9


def test_tell_validates_values_and_records_failures():
    space = SearchSpace([Binary("a"), Binary("b"), Binary("c")])
    study = create_study(bodi.BODi(space, seed=0, n_init=2))
    x = study.ask()
    with pytest.raises(ValueError, match="real number"):
        study.tell(x, "3.0")
    with pytest.raises(ValueError, match="single number"):
        study.tell(x, torch.ones(2))
    with pytest.raises(ValueError, match="values"):
        study.tell([x], [1.0, 2.0])
    with pytest.raises(ValueError, match="unknown parameter"):
        study.tell({"a": True, "b": False, "c": True, "d": 1}, 1.0)
    with pytest.warns(UserWarning):
        trial = study.tell(x, float("nan"))
    assert trial.state == "failed" and "nan" in trial.message
    assert study.best is None
    # failed points are never proposed again, and the run goes on
    for _ in range(6):
        y = study.ask()
        assert y != x
        study.tell(y, float(sum(y.values())))
    assert len([t for t in study.trials if t.state == "complete"]) == 6


def test_small_space_is_exhausted_cleanly():
    space = SearchSpace([Binary("a"), Categorical("c", [1, 2])])
    study = create_study(bodi.BODi(space, seed=0, n_init=2, dictionary_size=4))
    for _ in range(4):
        x = study.ask()
        study.tell(x, float(x["a"]) + x["c"])
    assert len({tuple(t.params.items()) for t in study.trials}) == 4
    with pytest.raises(SearchSpaceExhaustedError):
        study.ask()


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
    study = create_study(
        bodi.BODi(space, seed=0, n_init=6, dictionary_size=8, num_restarts=2, raw_samples=32)
    )
    first = study.ask(3)
    study.tell(first, [1.0, 2.0, 3.0])
    second = study.ask(3)
    assert all(x not in first for x in second)
    assert (
        study.optimizer.unused_design_points(study.history, study.optimizer._design).shape[0] == 0
    )


def test_unused_design_points_are_the_rows_not_yet_among_the_trials_in_order():
    space = SearchSpace([Binary("b"), Categorical("c", ["x", "y", "z"]),
                         Continuous("x", -1.0, 2.0)])
    study = create_study(bodi.BODi(space, seed=0, n_init=8))
    design = study.optimizer._design
    told = [design[i] for i in (1, 4, 6)]
    study.tell(space.decode(torch.stack(told)), [0.0, 1.0, 2.0])
    assert torch.equal(
        study.optimizer.unused_design_points(study.history, design), design[[0, 2, 3, 5, 7]]
    )


class BoTorchSearch(bodi.BODi):
    """BODi without a trust region, its acquisition maximized by BoTorch's optimizer."""

    acquisition_optimizer = "botorch"


def test_botorch_acquisition_optimizer_in_a_discrete_space_never_repeats():
    space = SearchSpace([Binary(f"b{i}") for i in range(5)] + [Categorical("c", ["x", "y"])])
    study = create_study(
        BoTorchSearch(
            space,
            seed=1,
            n_init=4,
            dictionary_size=16,
            trust_region=False,
            num_restarts=4,
            raw_samples=64,
        )
    )
    for _ in range(16):
        x = study.ask()
        study.tell(x, float(sum(x[f"b{i}"] for i in range(5)) + (x["c"] == "x")))
    keys = {tuple(t.params.items()) for t in study.trials}
    assert len(keys) == 16
    with pytest.raises(ValueError, match="trust region"):
        BoTorchSearch(space, trust_region=True)


def test_the_papers_configuration_solves_a_planted_problem():
    from bodi.hed.kernel import FirstOrderKernel, HammingDistanceKernel

    problem = planted_binary(16, seed=4)
    study = create_study(
        make_optimizer(
            "bodi-paper",
            problem.space,
            seed=0,
            direction="minimize",
            n_init=8,
            dictionary_size=32,
            num_restarts=4,
            raw_samples=256,
        )
    )
    assert isinstance(study.optimizer, bodi.optimizers.PaperBODi)
    assert (
        study.optimizer.kernel,
        study.optimizer.dictionary_reference,
        study.optimizer.trust_region_settings,
        study.optimizer.first_order,
        study.optimizer.design_in_model,
        study.optimizer.failed_trials,
        study.optimizer.acquisition,
    ) == ("hed", "none", None, False, "all", "ignore", "logei")
    for _ in range(40):  # the optimum within 40 evaluations
        x = study.ask()
        study.tell(x, float(problem(x)))
        if study.best[1] == problem.optimal_value:
            break
    assert study.best[1] == problem.optimal_value
    kinds = {type(k) for k in study.optimizer.model.covar_module.modules()}
    assert not kinds & {FirstOrderKernel, HammingDistanceKernel}


@pytest.mark.parametrize(("kernel", "make_problem"), [
    ("hamming", lambda: planted_binary(16, seed=4)),
    ("hamming", lambda: planted_mixed(seed=2)),
    ("hed*hamming", lambda: planted_mixed(seed=2)),
])
def test_the_hamming_kernels_solve_a_planted_problem_and_are_recorded(kernel, make_problem,
                                                                      tmp_path):
    from bodi.hed.kernel import HammingDistanceKernel, HammingEmbeddingKernel

    problem = make_problem()
    study = create_study(
        bodi.BODi(
            problem.space,
            seed=0,
            n_init=8,
            kernel=kernel,
            num_restarts=2,
            raw_samples=128,
            dictionary_size=32,
        ),
        storage=tmp_path / "study.db",
    )
    drive(study, problem, 24)
    kinds = {type(k) for k in study.optimizer.model.covar_module.modules()}
    assert HammingDistanceKernel in kinds
    assert (HammingEmbeddingKernel in kinds) == kernel.startswith("hed")
    assert study.optimizer.settings()["kernel"] == kernel
    # a study resumes with its kernel; one stored before the option existed used HED
    assert bodi.load_study(tmp_path / "study.db").optimizer.settings()["kernel"] == kernel
    assert bodi.BODi.legacy_settings["kernel"] == "hed"
    random_best = min(float(problem(x)) for x in problem.space.decode(
        problem.space.sample(30, generator=torch.Generator().manual_seed(0))))
    assert study.best[1] < random_best


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
    old = create_study(
        bodi.BODi(space, seed=0, n_init=4, kernel="hed", dictionary_size=16), storage=path
    )
    old.tell(old.ask(4), [1.0, 2.0, 3.0, 4.0])
    forget_settings(path, "kernel")
    loaded = bodi.load_study(path)
    assert loaded.optimizer.kernel == "hed"
    loaded.tell(loaded.ask(), 0.5)
    kinds = {type(k) for k in loaded.optimizer.model.covar_module.modules()}
    assert HammingEmbeddingKernel in kinds and HammingDistanceKernel not in kinds
    # reopened with today's default, the study says which setting differs
    with pytest.raises(ValueError, match="kernel: stored 'hed', given 'hed\\*hamming'"):
        create_study(bodi.BODi(space, seed=0, n_init=4, dictionary_size=16), storage=path)


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
        opt = run_bodi(categorical, 10, seed=3, n_init=6, kernel=kernel)
        runs.append([t.params for t in opt.trials])
        assert not any(isinstance(k, HammingEmbeddingKernel)
                       for k in opt.optimizer.model.covar_module.modules())
    assert runs[0] == runs[1]
    # a study of bodi 0.3 (the product kernel) says which setting differs, and continues
    path = tmp_path / "study.db"
    old = create_study(
        bodi.BODi(space, seed=0, n_init=4, kernel="hed*hamming", **FAST), storage=path
    )
    old.tell(old.ask(4), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="kernel: stored 'hed\\*hamming', given 'hamming'"):
        create_study(bodi.BODi(space, seed=0, n_init=4, **FAST), storage=path)
    assert bodi.load_study(path).optimizer.kernel == "hed*hamming"


def test_dictionary_options_that_no_dictionary_uses_are_named_in_a_warning(tmp_path):
    categorical = planted_categorical(8, choices=4, seed=1).space  # kernel "hamming"
    continuous = SearchSpace([Continuous("x", 0.0, 1.0), Continuous("y", 0.0, 1.0)])
    unused = "unused: BODi with kernel '{}' on this space draws no dictionary"
    with pytest.warns(UnusedOptionWarning, match="^dictionary_size, dictionary " + unused.format(
            "hamming")):
        bodi.BODi(categorical, dictionary_size=64, dictionary="naive")
    with pytest.warns(UnusedOptionWarning,
                      match=r"^dictionary_size " + unused.format(r"hed\*hamming")):
        bodi.BODi(continuous, dictionary_size=64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bodi.BODi(categorical)
        bodi.BODi(categorical, dictionary_size=128, dictionary="diverse")  # the defaults
        bodi.BODi(categorical, kernel="hed*hamming", dictionary_size=64)  # a dictionary kernel
        bodi.BODi(planted_binary(8).space, dictionary_size=64)
        # a stored study of the default reloads without it (its settings name every option)
        study = create_study(
            bodi.BODi(categorical, seed=0, n_init=4, num_restarts=4, raw_samples=256),
            storage=tmp_path / "s.db",
        )
        study.tell(study.ask(4), [1.0, 2.0, 3.0, 4.0])
        assert bodi.load_study(tmp_path / "s.db").optimizer.kernel == "hamming"


def test_bodi_chooses_the_design_in_its_model_by_reach():
    from bodi.baselines.casmopolitan import CASMOPOLITAN

    space = planted_binary(10, seed=4).space
    assert bodi.BODi(space).design_in_model == "reach"
    assert CASMOPOLITAN(space).design_in_model == "all"  # the baselines keep the whole design
    assert make_optimizer("bodi-paper", space, seed=0,
                          direction="minimize").design_in_model == "all"


def _stored_study(space, path, **settings):
    """A BODi study of four trials in ``path`` whose stored settings also name ``settings``,
    as an older version of bodi wrote them."""
    stored = create_study(bodi.BODi(space, seed=0, n_init=4, **FAST), storage=path)
    stored.tell(stored.ask(4), [1.0, 2.0, 3.0, 4.0])
    stored.close()
    set_settings(path, **settings)


@pytest.mark.parametrize(("option", "today", "other"), [
    ("design_in_model", "reach", "all"),
    ("first_order", "auto-rescale", False),
    ("dictionary_reference", "incumbent", "none"),
    ("noise_prior", "lognormal", "gamma"),
    ("design_noise", False, True),
    ("new_dictionary_every_iteration", True, False),
    ("coarse_steps", 0, 5),
    ("local_model", False, True),
    ("outcome_warping", "none", "rank"),
    ("acquisition_optimizer", "auto", "ga"),
    ("ucb_after", 0, 10),
])
def test_a_study_that_names_a_removed_option_continues_where_it_ran_as_today(
        tmp_path, option, today, other):
    """A stored study that names an option BODi no longer has loads and continues where its
    value is what BODi does today, and fails with one line that names it otherwise."""
    space = planted_binary(10, seed=4).space
    path = tmp_path / "today.db"
    _stored_study(space, path, **{option: today})
    loaded = bodi.load_study(path)
    loaded.tell(loaded.ask(), 0.5)
    assert len(create_study(bodi.BODi(space, seed=0, n_init=4, **FAST), storage=path).trials) == 5
    path = tmp_path / "other.db"
    _stored_study(space, path, **{option: other})
    message = (f"^this study ran BODi with {option}={other!r}, an option this version of "
               "bodi no longer has")
    for reopen in (lambda: bodi.load_study(path),
                   lambda: create_study(bodi.BODi(space, seed=0, n_init=4, **FAST), storage=path)):
        with pytest.raises(ValueError, match=message) as error:
            reopen()
        assert "\n" not in str(error.value)


def test_an_all_categorical_space_has_no_first_order_term_by_default():
    """BODi's first-order term on an all-categorical space is none (the term on every other
    space); its model has no first-order kernel."""
    from bodi.hed.kernel import FirstOrderKernel
    from bodi.optimizers.bo import default_first_order

    categorical = planted_categorical(8, choices=4, seed=1)
    assert default_first_order(categorical.space) is False
    assert bodi.BODi(categorical.space).first_order is False
    for other in (planted_binary(8).space, planted_mixed(seed=2).space,
                  SearchSpace([Categorical("a", ["x", "y", "z"]), Binary("b")])):
        assert default_first_order(other) == bodi.BODi(other).first_order == "auto-rescale"
    opt = run_bodi(categorical, 10, seed=3, n_init=6)
    assert FirstOrderKernel not in {type(k) for k in opt.optimizer.model.covar_module.modules()}


def _check_an_older_study_continues(space, tmp_path, option: str, old, message: str) -> None:
    """A study stored with ``option=old`` (an older version's default) says which setting
    differs when BODi's default is given, and continues with its own through ``load_study``."""
    path = tmp_path / "study.db"
    stored = create_study(bodi.BODi(space, seed=0, n_init=4, **{option: old}, **FAST), storage=path)
    stored.tell(stored.ask(4), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=message):
        create_study(bodi.BODi(space, seed=0, n_init=4, **FAST), storage=path)
    loaded = bodi.load_study(path)
    assert getattr(loaded.optimizer, option) == old
    loaded.tell(loaded.ask(), 0.5)


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
    default, explicit = (run_bodi(problem, 13, seed=5, n_init=10, **options)
                         for options in ({}, {"acquisition": "ucb"}))
    assert [t.params for t in default.trials] == [t.params for t in explicit.trials]
    _check_an_older_study_continues(space, tmp_path, "acquisition", "logei",
                                    "acquisition: stored 'logei', given 'ucb'")


def test_the_box_rule_changes_nothing_without_continuous_or_integer_parameters():
    space = SearchSpace([Binary(f"b{i}") for i in range(8)])

    def f(x):
        return float(sum(x[f"b{i}"] * (i % 3 - 1) for i in range(8)))

    runs = []
    for box in ({}, {"box_failure_tolerance": 1}):
        # a region that shrinks, restarts and regrows within the run
        study = create_study(
            bodi.BODi(
                space,
                seed=3,
                n_init=4,
                num_restarts=2,
                raw_samples=64,
                dictionary_size=8,
                trust_region={"init_radius": 4, "max_radius": 6, "failure_tolerance": 2, **box},
            )
        )
        xs = []
        for _ in range(16):
            x = study.ask()
            study.tell(x, f(x))
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
    stored = create_study(
        bodi.BODi(space, seed=0, n_init=4, dictionary_size=8, trust_region=TrustRegionSettings()),
        storage=path,
    )
    stored.tell(stored.ask(4), [1.0, 2.0, 3.0, 4.0])
    with sqlite3.connect(path) as db:
        (settings,) = db.execute("SELECT settings FROM studies").fetchone()
        settings = json.loads(settings)
        del settings["trust_region"]["box_failure_tolerance"]
        db.execute("UPDATE studies SET settings = ?", (json.dumps(settings),))
    assert bodi.load_study(path).optimizer.trust_region_settings == TrustRegionSettings()
    with pytest.raises(ValueError, match="trust_region"):  # not silently today's region
        create_study(bodi.BODi(space, seed=0, n_init=4, dictionary_size=8), storage=path)
    resumed = create_study(
        bodi.BODi(
            space,
            seed=0,
            n_init=4,
            dictionary_size=8,
            trust_region={"box_failure_tolerance": None, "failure_tolerance": 40},
        ),
        storage=path,
    )
    assert len(resumed.trials) == 4


def test_the_default_region_shrinks_after_ten_failures_and_a_05_study_continues(tmp_path):
    from bodi.baselines.casmopolitan import CASMOPOLITAN

    problem = planted_binary(10, seed=4)
    space = problem.space
    assert bodi.BODi(space).trust_region_settings.failure_tolerance == 10
    assert CASMOPOLITAN(space).trust_region_settings.failure_tolerance == 40  # unchanged
    # the default and the spec that names it are one method: the same suggestions
    default = run_bodi(problem, 13, seed=5, n_init=10)
    named = drive(
        create_study(
            make_optimizer(
                "bodi[trust_region.failure_tolerance=10]",
                space,
                seed=5,
                direction="minimize",
                n_init=10,
                **FAST,
            )
        ),
        problem,
        13,
    )
    assert [t.params for t in default.trials] == [t.params for t in named.trials]
    # a study of bodi 0.5 (CASMOPOLITAN's 40) says which setting differs, and continues with
    # its own region
    path = tmp_path / "study.db"
    old = create_study(
        bodi.BODi(space, seed=0, n_init=4, **FAST, trust_region={"failure_tolerance": 40}),
        storage=path,
    )
    old.tell(old.ask(4), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="trust_region"):
        create_study(bodi.BODi(space, seed=0, n_init=4, **FAST), storage=path)
    resumed = create_study(
        bodi.BODi(space, seed=0, n_init=4, **FAST, trust_region={"failure_tolerance": 40}),
        storage=path,
    )
    assert len(resumed.trials) == 4
    assert resumed.optimizer.trust_region_settings == TrustRegionSettings(box_failure_tolerance=4)


def test_with_the_box_rule_the_region_of_a_mixed_space_is_the_replayed_state():
    from bodi.acquisition.trust_region import (
        TrustRegionSettings,
        discrete_moves,
        trust_region_state,
    )

    problem = planted_mixed(seed=2)
    study = create_study(
        bodi.BODi(
            problem.space,
            seed=1,
            n_init=5,
            num_restarts=2,
            raw_samples=64,
            dictionary_size=8,
            trust_region={"box_failure_tolerance": 1},
        )
    )
    drive(study, problem, 14)
    progress = study.optimizer.progress(study.history)
    moved = discrete_moves(study.history.X_completed[:, problem.space.discrete_dims], progress)
    settings = TrustRegionSettings(box_failure_tolerance=1)
    state = trust_region_state(progress, 5, settings, len(problem.space.discrete_dims),
                               moved)
    assert study.optimizer.trust_region(study.history).length == pytest.approx(state.length)
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
    assert bodi.BODi(space, trust_region=False).trust_region_settings is None


class WithFirstOrder(bodi.BODi):
    """BODi that always keeps the first-order term."""

    first_order_rule = True


def test_the_first_order_term_is_in_the_model_where_the_fit_keeps_it():
    """The default model is the kernel plus the first-order kernel (with its output scale)
    where the fit gives the term at least 1% of the prior variance: on an additive function
    it does; on LABS (no first-order effects: ``f(x) = f(not x)``) the fit gives it almost
    none and the model is the sum's kernel alone at unit prior variance, not refitted."""
    from bodi.hed.kernel import FirstOrderKernel, HammingEmbeddingKernel
    from bodi.models.gp import first_order_share
    from bodi.problems.registry import get_problem

    additive = planted_binary(16, seed=4)
    opt = drive(create_study(bodi.BODi(additive.space, seed=0, n_init=8, **FAST)), additive, 10)
    assert first_order_share(opt.optimizer.model) > 0.01
    kept = drive(
        create_study(WithFirstOrder(additive.space, seed=0, n_init=8, **FAST)), additive, 10
    )
    for model in (opt.optimizer.model, kept.optimizer.model):
        kinds = {type(k) for k in model.covar_module.modules()}
        assert {FirstOrderKernel, HammingEmbeddingKernel} <= kinds
    labs = get_problem("labs50-shifted")
    opt = drive(create_study(bodi.BODi(labs.space, seed=0, n_init=20, **FAST)), labs, 22)
    assert FirstOrderKernel not in {type(k) for k in opt.optimizer.model.covar_module.modules()}
