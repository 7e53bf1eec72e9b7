"""A configuration's identity (bodi.novelty): equal encoded rows, equal keys; one home."""

import re
from pathlib import Path

import pytest
import torch

import bodi
from bodi.novelty import SeenConfigurations, row_key, row_keys
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study

SPACE = SearchSpace([Binary("b"), Categorical("c", ["x", "y", "z"]), Integer("k", 0, 9),
                     Continuous("u", -1.0, 1.0)])


def test_equal_configurations_have_equal_keys_and_other_ones_other_keys():
    X = SPACE.canonicalize(SPACE.sample(64, generator=torch.Generator().manual_seed(0)))
    keys = row_keys(SPACE, X)
    assert row_keys(SPACE, SPACE.encode(SPACE.decode(X))).tolist() == keys.tolist()
    assert len(set(keys.tolist())) == len({tuple(x) for x in X.tolist()})
    assert [row_key(SPACE, x) for x in X] == keys.tolist() == [row_key(SPACE, x.tolist())
                                                              for x in X]
    seen = SeenConfigurations(SPACE, X[:10])
    assert all(x in seen for x in X[:10]) and not seen.add(X[3]) and seen.add(X[40])


def test_the_study_and_its_storage_claims_compare_configurations_by_their_key(tmp_path):
    """A configuration enqueued twice is refused, and a worker's suggestion that another
    worker stored first is not claimed twice: both by :func:`row_key`."""
    study = create_study(bodi.RandomSearch(SPACE, seed=0), storage=tmp_path / "s.db")
    x = study.ask()
    other = create_study(bodi.RandomSearch(SPACE, seed=0), storage=tmp_path / "s.db")
    assert other.ask() != x  # the same seed suggests x first: it is taken, so another one
    study.tell(x, 1.0)
    with pytest.raises(ValueError, match="already a trial"):
        study.enqueue(x)


def test_configurations_are_identified_in_one_place():
    """No module but bodi/novelty.py turns an encoded row into a key of its own (bytes of a
    tensor, a tuple of a trial's point)."""
    root = Path(__file__).resolve().parents[1] / "bodi"
    pattern = re.compile(r"\.tobytes\(\)|tuple\(\w+\.x\)")
    identifying = [str(p.relative_to(root)) for p in root.rglob("*.py")
                   if pattern.search(p.read_text())]
    assert identifying == []
