"""Ehrlich functions against the reference implementation (pytorch-holo's ``Ehrlich``).

``data/ehrlich_reference.json`` holds, for four instances (states, length, motifs, motif
length, seed), the reference's motifs, spacings, initial and optimal solutions and its values
of twelve sequences (six feasible DMP samples, four uniform random ones, the optimum and the
initial solution), as pytorch-holo 0.0.5 computed them (in float32).
"""

import json
import math
from pathlib import Path

import pytest
import torch

from bodi.problems import get_problem
from bodi.problems.ehrlich import ehrlich

REFERENCE = json.loads((Path(__file__).parent / "data" / "ehrlich_reference.json").read_text())


@pytest.mark.parametrize("instance", sorted(REFERENCE))
def test_the_instance_and_its_values_equal_the_reference(instance):
    states, length, motifs, motif_length, seed = map(int, instance.split(","))
    expected = REFERENCE[instance]
    problem = ehrlich(length, states, motifs, motif_length, instance_seed=seed)
    names = [f"s{i + 1}" for i in range(length)]
    assert [problem.initial_params[n] for n in names] == expected["initial"]
    assert [problem.optimal_params[n] for n in names] == expected["optimal"]
    values = problem.evaluate_encoded(torch.tensor(expected["X"], dtype=torch.float64))
    for value, reference in zip(values.tolist(), expected["values"], strict=True):
        if math.isinf(reference):
            assert value == -math.inf
        else:
            assert value == pytest.approx(reference, rel=1e-6)
    assert problem(problem.optimal_params) == 1.0


def test_most_sequences_are_infeasible_and_the_start_is_feasible():
    problem = get_problem("ehrlich32")
    X = problem.space.sample(200, torch.Generator().manual_seed(0))
    values = problem.evaluate_encoded(X)
    assert (values == -math.inf).float().mean() > 0.95
    assert math.isfinite(problem(problem.initial_params))
    shifted = get_problem("ehrlich32-i1001-shifted")
    assert math.isfinite(shifted(shifted.initial_params))
    assert shifted(shifted.optimal_params) == 1.0
    with pytest.raises(ValueError, match="cannot hold"):
        ehrlich(6)


def test_the_benchmark_tells_the_known_start_first(tmp_path):
    from bodi.experiments.results import ResultsStore
    from bodi.experiments.runner import run_benchmark

    problem = get_problem("ehrlich16")
    run_benchmark(["ehrlich16"], ["random"], [0], budget=6, n_init=3, out=tmp_path,
                  n_workers=1, progress=False).close()
    store = ResultsStore(tmp_path, read_only=True)
    history = store.history("ehrlich16", "random", 0)
    store.close()
    assert len(history) == 6 and history[0].params == problem.initial_params
    assert history[0].value is not None  # feasible
