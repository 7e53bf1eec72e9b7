"""Every kernel by name (bodi.models.registry): each builds a GP on every kind of space, BODi
takes each, and the model-fit surrogates are read from the same entries."""

import pytest
import torch
from gpytorch.kernels import Kernel

import bodi
from bodi.models.gp import fit_model
from bodi.models.registry import (
    KERNELS,
    check_kernel,
    make_kernel,
    make_surrogate,
    surrogate_available,
    uses_dictionary,
)
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study

SPACES = {
    "binary": SearchSpace([Binary(f"b{i}") for i in range(6)]),
    "categorical": SearchSpace([Categorical(f"c{i}", ["x", "y", "z"]) for i in range(5)]),
    "mixed": SearchSpace([Binary("b"), Categorical("c", [1, 2, 3]), Integer("k", 0, 5),
                          Continuous("u", 0.0, 1.0)]),
}


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("kind", list(SPACES))
def test_every_kernel_builds_a_gp_and_bodi_suggests_with_it(name, kind):
    space = SPACES[kind]
    X = space.sample(10, generator=torch.Generator().manual_seed(1))
    Y = X.sum(-1, keepdim=True)
    surrogate = f"{name}-diverse" if uses_dictionary(name) else name
    model = fit_model(make_surrogate(surrogate, X, Y, space, seed=0, dictionary_size=8))
    assert model.posterior(X[:3]).mean.shape == (3, 1)
    study = create_study(
        bodi.BODi(
            space, seed=0, n_init=4, kernel=name, dictionary_size=8, num_restarts=2, raw_samples=32
        )
    )
    for _ in range(6):
        x = study.ask()
        study.tell(x, float(sum(float(v) if not isinstance(v, str) else 1.0
                              for v in x.values())))
    assert study.optimizer.settings()["kernel"] == name
    assert isinstance(make_kernel(name, space, None if not uses_dictionary(name) else
                                  study.optimizer.make_dictionary(study.history)), Kernel)


def test_unknown_kernels_and_surrogates_are_one_line():
    with pytest.raises(ValueError, match="unknown kernel 'rbf'; choose one of"):
        check_kernel("rbf")
    X, Y = torch.zeros(2, 6, dtype=torch.float64), torch.zeros(2, 1, dtype=torch.float64)
    for name, message in (("hed", "needs a dictionary"), ("overlap-diverse", "uses no dictionary"),
                          ("hed-fancy", "unknown surrogate")):
        with pytest.raises(ValueError, match=message):
            make_surrogate(name, X, Y, SPACES["binary"], seed=0)
    assert not surrogate_available("hed-wavelet", SPACES["categorical"])
    assert surrogate_available("hed-wavelet", SPACES["binary"])
