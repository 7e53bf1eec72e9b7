"""Every registered method runs on binary, categorical and mixed spaces through the runner's
factory, starts from the shared initial design, and proposes valid configurations."""

import pytest

from bodi.initial_design import initial_design
from bodi.optimizers.registry import METHODS, configuration, make_optimizer, optimizer_class
from bodi.problems import planted_binary, planted_categorical, planted_mixed
from bodi.space import Binary, Categorical, SearchSpace
from bodi.study import create_study

PROBLEMS = {
    "binary": lambda: planted_binary(8, seed=2),
    "categorical": lambda: planted_categorical(5, 3, seed=2),
    "mixed": lambda: planted_mixed(4, 2, 2, seed=2),
}
FAST = {"bodi", "bodi-paper", "casmopolitan", "combo", "botorch-mixed"}


def _spec(name):
    return f"{name}[num_restarts=3,raw_samples=128]" if name in FAST else name


@pytest.mark.parametrize("kind", sorted(PROBLEMS))
@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_runs_on_every_kind_of_space(name, kind):
    problem = PROBLEMS[kind]()
    study = create_study(
        make_optimizer(_spec(name), problem.space, seed=1, direction=problem.direction, n_init=4)
    )
    for _ in range(7):
        x = study.ask()
        assert problem.space.contains(problem.space.encode(x)).all()
        study.tell(x, float(problem(x)))
    assert all(t.state == "complete" for t in study.trials)
    if optimizer_class(name).uses_initial_design:
        design = problem.space.decode(initial_design(problem.space, 4, 1))
        assert [t.params for t in study.trials[:4]] == design


def test_bodi_paper_pins_the_papers_configuration():
    problem = planted_binary(6)
    opt = make_optimizer("bodi-paper", problem.space, seed=0, direction="minimize", n_init=3)
    settings = opt.settings()
    assert settings["dictionary"] == "diverse" and settings["dictionary_size"] == 128
    assert settings["trust_region"] is False and settings["dictionary_reference"] == "none"


def test_bodi_is_the_measured_configuration():
    # docs/results.md measured the default under this spec; they must stay the same
    problem = planted_binary(6)
    settings = [
        make_optimizer(spec, problem.space, seed=0, direction="minimize", n_init=3).settings()
        for spec in ("bodi", "bodi[trust_region=true,kernel=hed*hamming,acquisition=ucb]")
    ]
    assert settings[0] == settings[1]


def test_only_model_based_methods_use_the_initial_design():
    assert optimizer_class("bodi").uses_initial_design
    assert optimizer_class("smac").uses_initial_design
    assert not optimizer_class("random").uses_initial_design


def test_stored_class_names_and_method_names_resolve_to_one_class():
    assert optimizer_class("BODi") is optimizer_class("bodi")
    assert optimizer_class("PaperBODi") is optimizer_class("bodi-paper")
    assert optimizer_class("CASMOPOLITAN").__name__ == "CASMOPOLITAN"
    with pytest.raises(ValueError, match="unknown optimizer 'Nope'"):
        optimizer_class("Nope")


def test_configuration_fills_in_the_defaults_for_the_space():
    categorical = SearchSpace([Categorical("a", ["x", "y", "z"]), Categorical("b", [1, 2, 3])])
    binary = SearchSpace([Binary("a"), Binary("b")])
    for space, same in ((categorical, True), (binary, False)):
        default, hamming = (configuration(spec, space) for spec in (
            "bodi", "bodi[kernel=hamming,acquisition=logei]"))
        assert default is not None and (default == hamming) is same
    assert configuration("bodi[m=64]", binary) != configuration("bodi", binary)
    # classes whose settings do not record every option, and specs that do not build: none
    assert configuration("casmopolitan", binary) is None
    assert configuration("bodi[kernel=nope]", binary) is None
    assert configuration("nope", binary) is None
