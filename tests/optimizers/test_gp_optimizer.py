"""The GP loop shared by BODi and the GP baselines (bodi.optimizers.gp_optimizer), through BODi:
the model's training rows (cap, initial design) and failed trials."""

import math

import pytest
import torch
from bodi_runs import FAST, drive

import bodi
from bodi.optimizers.gp_optimizer import DESIGN_FEW
from bodi.optimizers.registry import make_optimizer
from bodi.optimizers.training_data import nearest_rows
from bodi.problems import get_problem, planted_binary, planted_mixed
from bodi.space import Binary, Continuous, SearchSpace
from bodi.study import create_study


def test_max_model_points_fits_the_model_on_the_trials_nearest_the_region_centre(tmp_path):
    problem = planted_mixed(10, 2, 1, seed=2)
    storage = tmp_path / "s.db"
    # the whole design in the model: the rows kept are max_model_points' choice alone
    study = create_study(
        bodi.BODi(problem.space, seed=0, n_init=10, max_model_points=8, **FAST),
        storage=storage,
        study_name="local",
    )
    drive(study, problem, 14)
    train_X = study.optimizer.model.train_inputs[0]
    assert train_X.shape[0] == 8  # of 13 completed trials when the last model was fitted
    X_before = study.history.X_completed[:13]
    center = study.optimizer.region.center if study.optimizer.region is not None else X_before[
        study.history.Y_completed[:13].argmax()]
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
    assert resumed.optimizer.max_model_points == 8


def test_nearest_rows_breaks_ties_by_order():
    space = SearchSpace([Binary("a"), Binary("b"), Continuous("x", 0.0, 1.0)])
    X = torch.tensor([[1.0, 1.0, 0.5], [0.0, 0.0, 0.5], [0.0, 0.0, 0.5], [0.0, 1.0, 0.0]],
                     dtype=torch.float64)
    rows = nearest_rows(space, X, torch.tensor([0.0, 0.0, 0.4], dtype=torch.float64), 2)
    assert rows.tolist() == [1, 2]


class WholeDesign(bodi.BODi):
    """BODi with every point of the initial design in the model."""

    design_in_model = "all"


#: a trust region that a uniform point of 24 bits (12 flips away) is beyond
NARROW = {"init_radius": 4, "max_radius": 8}


def test_few_design_rows_are_the_designs_first_points_its_best_and_every_later_trial():
    problem = planted_binary(30, seed=2)
    study = create_study(bodi.BODi(problem.space, seed=0, n_init=12, **FAST))
    drive(study, problem, 12)
    assert study.optimizer.few_design_rows(
        study.history, torch.arange(12)
    ).all()  # nothing beyond the design yet
    drive(study, problem, 3)
    assert torch.equal(study.history.X_completed[:12], study.optimizer._design)
    expected = torch.zeros(15, dtype=torch.bool)
    expected[:DESIGN_FEW] = expected[12:] = True
    expected[int(study.optimizer.utility(study.history)[:12].argmax())] = True
    assert int(expected[:12].sum()) == 6  # the design's best is not among its first five
    assert torch.equal(study.optimizer.few_design_rows(study.history, torch.arange(15)), expected)


def _with_noisy_design(opt, problem, asks: int = 20):
    """``opt`` (with a design of 12) after ``asks`` suggestions: the design's values are noise
    far larger than the problem's, which the later trials follow."""
    g = torch.Generator().manual_seed(0)
    for i in range(asks):
        x = opt.ask()
        noise = 100.0 * float(torch.randn(1, generator=g))
        opt.tell(x, noise if i < 12 else float(problem(x)))
    return opt


@pytest.mark.parametrize("trust_region", [None, False])
def test_the_whole_design_is_in_the_model_where_the_region_reaches_a_uniform_point(
        trust_region):
    # 24 bits: a uniform point is 12 flips away, within the default radius of 30; and without
    # a region nothing is out of reach
    problem = planted_binary(24, seed=1)
    options = {} if trust_region is None else {"trust_region": trust_region}
    runs = [_with_noisy_design(create_study(cls(problem.space, seed=0, n_init=12, **options,
                                                **FAST)), problem)
            for cls in (bodi.BODi, WholeDesign)]
    for run in runs:
        run.ask()
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]
    assert len(runs[0].optimizer.model.train_inputs[0]) == 20


def test_beyond_the_regions_reach_the_model_leaves_out_a_design_that_does_not_fit():
    """Later trials follow the problem; the design's values are unrelated noise far larger:
    where the region cannot reach a uniform point, the model leaves most of the design out
    (the whole design's model would keep it)."""
    problem = planted_binary(24, seed=1)
    opt = _with_noisy_design(create_study(bodi.BODi(problem.space, seed=0, n_init=12,
                                                    trust_region=NARROW, **FAST)), problem)
    few = opt.optimizer.few_design_rows(opt.history, torch.arange(20))
    assert 13 <= int(few.sum()) <= 14  # the first five, the best, the eight later
    opt.ask()
    assert len(opt.optimizer.model.train_inputs[0]) == int(few.sum())
    whole = _with_noisy_design(create_study(WholeDesign(problem.space, seed=0, n_init=12,
                                                        trust_region=NARROW, **FAST)), problem)
    whole.ask()
    assert len(whole.optimizer.model.train_inputs[0]) == 20


@pytest.mark.filterwarnings("ignore:objective value nan recorded as a failed trial")
def test_failed_trials_worst_puts_failed_points_in_the_model_at_the_worst_outcomes(tmp_path):
    """``failed_trials="worst"``: each failed trial's point is in the fitted models (after the
    completed ones), with the smallest objective and the largest constraint value of the
    completed trials; ``"ignore"`` (the paper's, and a study stored before the option) leaves
    it out; anything else is refused with one line."""
    problem = planted_binary(16, seed=3)
    storage = tmp_path / "s.db"

    def run(failed_trials: str | None) -> bodi.Study:
        options = {} if failed_trials is None else {"failed_trials": failed_trials}
        study = create_study(
            bodi.BODi(problem.space, seed=0, n_init=8, outcome_constraints=1, **options, **FAST),
            storage=storage,
            study_name=str(failed_trials),
        )
        for i in range(11):
            x = study.ask()
            value = float(problem(x)) if i % 4 else math.nan  # trials 0, 4, 8 fail
            study.tell(x, value, constraints=[value - 3.0])
        study.ask()
        return study

    opt = run("worst")
    X, n_failed = opt.history.X_completed, len(opt.history.X_failed)
    assert n_failed == 3
    objective, constraint = opt.optimizer.model.models
    assert torch.equal(objective.train_inputs[0], torch.cat([X, opt.history.X_failed]))

    def targets(model):
        return model.outcome_transform.untransform(model.train_targets.unsqueeze(-1))[0][:, 0]

    Y, C = opt.history.Y_completed[:, 0], opt.history.C_completed[:, 0]  # Y: larger is better
    assert torch.allclose(targets(objective)[len(X):], Y.min().expand(n_failed))
    assert torch.allclose(targets(constraint)[len(X):], C.max().expand(n_failed))
    assert torch.allclose(targets(objective)[:len(X)], Y)
    assert bodi.load_study(storage, "worst").optimizer.failed_trials == "worst"
    ignoring = run("ignore")
    assert torch.equal(ignoring.optimizer.model.models[0].train_inputs[0],
                       ignoring.history.X_completed)
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
    study = create_study(bodi.BODi(problem.space, seed=0, n_init=8, **FAST))
    assert (study.optimizer.acquisition, study.optimizer.failed_trials) == ("ucb", "constraint")
    for i in range(11):
        x = study.ask()
        study.tell(x, float(problem(x)) if i % 4 else math.nan)  # trials 0, 4, 8 fail
    study.ask()
    X, X_failed = study.history.X_completed, study.history.X_failed
    assert torch.equal(
        study.optimizer.model.train_inputs[0], X
    )  # the objective: completed trials only
    model, Y = study.optimizer.with_failure_constraint(
        study.history, study.optimizer.model, X, study.history.Y_completed
    )
    assert isinstance(model, ModelList) and len(model.models) == 2
    failure = model.models[-1]
    assert torch.equal(failure.train_inputs[0], torch.cat([X, X_failed]))
    indicator = failure.outcome_transform.untransform(failure.train_targets.unsqueeze(-1))[0]
    assert torch.allclose(indicator[:, 0], torch.tensor([-1.0] * len(X) + [1.0] * 3).to(indicator))
    assert torch.equal(Y[:, -1], -torch.ones(len(X)))
    with pytest.raises(ValueError, match="unknown acquisition 'ts'"):
        bodi.BODi(problem.space, acquisition="ts")
    two = create_study(
        bodi.BODi(
            problem.space,
            seed=0,
            n_init=6,
            directions=["minimize", "minimize"],
            ref_point=[20.0, 20.0],
            **FAST,
        )
    )  # several objectives: qLogNEHVI's constraint
    for i in range(9):
        x = two.ask()
        two.tell(x, [float(problem(x)), -float(problem(x))] if i % 3 else [math.nan] * 2)
    finished = [t.params for t in two.trials]
    assert len(two.history.X_failed) == 3 and two.ask() not in finished
    for spec, expected in (("bodi[acquisition=logei]", "constraint"),
                           ("bodi-paper", "ignore"), ("bodi", "constraint")):
        assert make_optimizer(spec, problem.space, seed=0,
                              direction="minimize").failed_trials == expected, spec


def test_leaving_the_design_out_compares_a_model_list_on_all_its_outcomes():
    """With an outcome constraint the model is a list of two GPs on the same rows; their
    held-out densities add up, and a design of unrelated noise is left out of both."""
    problem = planted_binary(24, seed=1)
    g = torch.Generator().manual_seed(0)
    study = create_study(
        bodi.BODi(
            problem.space, seed=0, n_init=12, trust_region=NARROW, outcome_constraints=1, **FAST
        )
    )
    for i in range(21):
        x = study.ask()
        value = float(problem(x))
        noise = 100.0 * torch.randn(2, generator=g)
        study.tell(x, float(noise[0]) if i < 12 else value,
                   constraints=[float(noise[1]) if i < 12 else value - 8.0])
    few = int(study.optimizer.few_design_rows(study.history, torch.arange(21)).sum())
    study.ask()
    assert [len(m.train_inputs[0]) for m in study.optimizer.model.models] == [few, few]


def test_bodis_fits_between_anchors_start_from_the_anchor_and_the_cache_changes_nothing(
        monkeypatch):
    """Every 10 trials the fit starts from the defaults; in between, from that anchor's fit
    (also where the anchor's model left its first-order term out), cached: a suggestion from
    the same history without the cache is the same."""
    import bodi.models.gp as gp
    import bodi.optimizers.gp_optimizer as gp_optimizer

    problem = get_problem("labs20")  # where the first-order term is left out
    study = drive(create_study(bodi.BODi(problem.space, seed=0, n_init=10, **FAST)), problem, 23)
    history = study.history
    anchors = [key[-1] for key in gp_optimizer.ANCHOR_FITS]
    assert history.prefix(20).digest in anchors and history.prefix(10).digest in anchors
    started = []
    start_from = gp._start_from
    monkeypatch.setattr(gp, "_start_from", lambda *a, **k: started.append(start_from(*a, **k))
                        or started[-1])
    asked = study.ask()
    assert len(started) == 1  # a start was tried (the loss decides whether it is taken)
    gp_optimizer.ANCHOR_FITS.clear()
    again = bodi.BODi(problem.space, seed=0, n_init=10, **FAST).suggest(history, 1)
    assert problem.space.decode(again)[0] == asked
    assert bodi.BODi(problem.space).fit_anchor_every == 10
    assert bodi.optimizers.PaperBODi(problem.space).fit_anchor_every == 0
    assert bodi.BODi(planted_mixed(seed=0).space).fit_anchor_every == 0  # continuous ones
