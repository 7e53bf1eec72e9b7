"""The GP loop shared by BODi and the GP baselines (bodi.optimizers.gp_optimizer), through BODi:
the model's training rows (cap, local model, initial design), failed trials, outcome warping, the
acquisition's switches and the genetic acquisition optimizer."""

import math

import pytest
import torch
from bodi_runs import FAST, drive, run_bodi

import bodi
from bodi.optimizers.gp_optimizer import DESIGN_FEW, LOCAL_MODEL_MIN_POINTS, nearest_rows
from bodi.optimizers.registry import make_optimizer
from bodi.problems import planted_binary, planted_mixed
from bodi.space import Binary, Continuous, SearchSpace
from bodi.trials import History


def test_ucb_after_suggests_by_logei_until_that_many_trials_have_completed(tmp_path):
    """``ucb_after=N`` with ``acquisition="ucb"``: the suggestions made with fewer than ``N``
    completed trials are LogEI's, the later ones UCB's; stored with the study, refused
    unless a non-negative integer, and 0 (UCB throughout) for a study stored before it."""
    problem = planted_binary(10, seed=4)
    early, logei = (run_bodi(problem, 13, seed=5, n_init=10, **options)
                    for options in ({"ucb_after": 13}, {"acquisition": "logei"}))
    assert [t.params for t in early.trials] == [t.params for t in logei.trials]
    ucb = run_bodi(problem, 13, seed=5, n_init=10)
    assert [t.params for t in ucb.trials] != [t.params for t in logei.trials]
    switched = run_bodi(problem, 13, seed=5, n_init=10, ucb_after=11)
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
    runs = [[t.params for t in run_bodi(problem, 13, seed=5, n_init=10, **options).trials]
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


def test_max_model_points_fits_the_model_on_the_trials_nearest_the_region_centre(tmp_path):
    problem = planted_mixed(10, 2, 1, seed=2)
    storage = tmp_path / "s.db"
    # the whole design in the model: the rows kept are max_model_points' choice alone
    opt = bodi.BODi(problem.space, seed=0, n_init=10, max_model_points=8, storage=storage,
                    study_name="local", design_in_model="all", **FAST)
    drive(opt, problem, 14)
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
    drive(opt, problem, 27)
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
    drive(opt, problem, 12)
    assert opt.few_design_rows(torch.arange(12)).all()  # nothing beyond the design yet
    drive(opt, problem, 3)
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
    drive(opt, problem, 20)
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
        return drive(opt, problem, 9)

    first, again = run(), run()
    assert [t.params for t in first.trials] == [t.params for t in again.trials]
    assert len({tuple(t.params.values()) for t in first.trials}) == 9
    with pytest.raises(ValueError, match="unknown acquisition_optimizer"):
        bodi.BODi(space, acquisition_optimizer="annealing")
