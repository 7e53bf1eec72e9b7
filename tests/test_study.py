"""The study apart from the algorithm: the host frameworks' adapters and the benchmark runner
suggest from a history, with no study of their own and nothing replayed."""

import pytest

import bodi
import bodi.study
from bodi.experiments import runner
from bodi.integrations._common import propose
from bodi.integrations.spaces.codecs import BinaryCodec


@pytest.fixture
def no_study(monkeypatch):
    """Any Study made from here on is an error: the code under test must not need one."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("a Study was made")

    monkeypatch.setattr(bodi.study.Study, "__init__", refuse)


def test_the_integrations_propose_without_a_study(no_study):
    codecs = [BinaryCodec(f"b{i}") for i in range(8)]
    completed = [({f"b{i}": bool((i + j) % 3) for i in range(8)}, float(j)) for j in range(4)]
    params = propose(codecs, seed=0, direction="minimize",
                     options={"num_restarts": 2, "raw_samples": 32, "dictionary_size": 8},
                     completed=completed, failed=[], pending=[completed[0][0]])
    assert set(params) == {f"b{i}" for i in range(8)}
    assert params not in [p for p, _ in completed]


def test_a_bench_step_suggests_without_a_study(no_study):
    task = runner.Task("planted-binary12", "bodi[num_restarts=2,raw_samples=32]", 0, budget=8,
                       n_init=4)
    history = list(runner.run_step(task, ()))
    history += runner.run_step(task, tuple(history))
    assert len(history) == 5 and len({str(e.params) for e in history}) == 5


def test_a_study_holds_its_optimizer_and_asks_it_for_points(tmp_path):
    optimizer = bodi.RandomSearch(bodi.SearchSpace([bodi.Binary("a"), bodi.Binary("b")]))
    study = bodi.create_study(optimizer, storage=tmp_path / "s.db", study_name="s")
    assert isinstance(study, bodi.Study) and study.optimizer is optimizer
    assert study.study_name == "s" and study.space is optimizer.space
    x = study.ask()
    study.tell(x, 1.0)
    assert study.history.best == (x, 1.0) == study.best
    study.close()
    again = bodi.load_study(tmp_path / "s.db")
    assert type(again.optimizer) is bodi.RandomSearch and again.trials[0].params == x
