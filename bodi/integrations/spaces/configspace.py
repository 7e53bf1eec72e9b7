"""bodi spaces as ConfigSpace spaces (for the ``smac`` baseline), and rows both ways.

ConfigSpace is imported inside the functions (the ``baselines`` extra).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from torch import Tensor

from bodi.integrations.spaces.codecs import host_choices
from bodi.space import SearchSpace


def make_configspace(space: SearchSpace, seed: int | None = None) -> Any:
    """The ConfigSpace ``ConfigurationSpace`` of a bodi space.

    Binary -> categorical ``[False, True]``; Categorical -> categorical over the choices (see
    :func:`bodi.integrations.spaces.codecs.host_choices`); Continuous ->
    ``UniformFloatHyperparameter``
    (``log`` kept); Integer -> ``UniformIntegerHyperparameter``. Categorical vector values are
    then exactly bodi's encoding.
    """
    from ConfigSpace import (
        CategoricalHyperparameter,
        ConfigurationSpace,
        UniformFloatHyperparameter,
        UniformIntegerHyperparameter,
    )

    hyperparameters = []
    for p in space.parameters:
        if p.kind == "binary":
            hyperparameters.append(CategoricalHyperparameter(p.name, [False, True]))
        elif p.kind == "categorical":
            hyperparameters.append(CategoricalHyperparameter(p.name, host_choices(p)))
        elif p.kind == "continuous":
            hyperparameters.append(UniformFloatHyperparameter(p.name, p.low, p.high, log=p.log))
        else:
            hyperparameters.append(UniformIntegerHyperparameter(p.name, p.low, p.high))
    configspace = ConfigurationSpace(seed=seed)
    configspace.add(hyperparameters)
    return configspace


def to_configuration(configspace: Any, space: SearchSpace, x: Tensor) -> Any:
    """The ConfigSpace ``Configuration`` of one encoded bodi row."""
    from ConfigSpace import Configuration

    vector = np.zeros(space.dim)
    for p, value in zip(space.parameters, x.tolist(), strict=True):
        j = configspace.index_of[p.name]
        if p.kind in ("binary", "categorical"):
            vector[j] = round(value)
        else:
            vector[j] = float(configspace[p.name].to_vector(p.decode(value)))
    return Configuration(configspace, vector=vector)


def from_configuration(configspace: Any, space: SearchSpace, config: Any) -> list[float]:
    """The encoded bodi row of a ConfigSpace ``Configuration``."""
    vector = config.get_array()
    row = []
    for p in space.parameters:
        if p.kind in ("binary", "categorical"):
            row.append(float(vector[configspace.index_of[p.name]]))
        elif p.kind == "continuous":
            row.append(p.encode(min(max(float(config[p.name]), p.low), p.high)))
        else:
            row.append(p.encode(min(max(round(config[p.name]), p.low), p.high)))
    return row
