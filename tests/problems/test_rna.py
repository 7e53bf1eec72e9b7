"""RNA inverse folding: ViennaRNA's MFE structures as designable targets."""

import pytest

from bodi.problems import get_problem
from bodi.problems.rna import BASES, rna_folding, target_structure

RNA = pytest.importorskip("RNA")


def test_the_target_is_the_mfe_structure_of_a_seeded_random_sequence():
    sequence, structure = target_structure(40, 7)
    assert len(sequence) == len(structure) == 40 and set(sequence) <= set(BASES)
    assert RNA.fold(sequence)[0] == structure and "(" in structure
    assert target_structure(40, 7) == (sequence, structure)  # the seed fixes it
    assert target_structure(40, 8) != (sequence, structure)


def test_the_objective_is_the_base_pair_distance_and_the_optimum_is_reached():
    problem = rna_folding(30, 3)
    assert problem.optimal_value == 0.0 and problem(problem.optimal_params) == 0.0
    _, target = target_structure(30, 3)
    poly_a = {f"b{i + 1}": "A" for i in range(30)}  # folds to no pair at all
    assert RNA.fold("A" * 30)[0] == "." * 30
    assert problem(poly_a) == target.count("(")  # every pair of the target missing
    X = problem.space.sample(6)
    batch = problem.evaluate_encoded(X)
    one_by_one = [problem(p) for p in problem.space.decode(X)]
    assert batch.tolist() == one_by_one and all(v >= 0 for v in one_by_one)


def test_names_sizes_and_instances():
    assert get_problem("rna40").name == "rna40"
    assert get_problem("rna40-i1001").name == "rna40-i1001"
    assert get_problem("rna40-i1001-shifted").space.dim == 40
    assert get_problem("rna40").optimal_params != get_problem("rna40-i1001").optimal_params
    with pytest.raises(ValueError, match="N >= 8"):
        get_problem("rna4")
