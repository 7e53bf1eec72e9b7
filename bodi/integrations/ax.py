"""BODi inside an Ax (1.x) experiment, through Ax's ``ExternalGenerationNode``.

Example:
    >>> from ax.api.client import Client
    >>> from ax.api.configs import ChoiceParameterConfig, RangeParameterConfig
    >>> from bodi.integrations.ax import bodi_generation_strategy
    >>> client = Client()
    >>> client.configure_experiment(parameters=[...])
    >>> client.configure_optimization(objective="-loss")
    >>> client.set_generation_strategy(bodi_generation_strategy(n_init=8, seed=0))
    >>> for index, params in client.get_next_trials(max_trials=1).items():
    ...     client.complete_trial(index, raw_data={"loss": train(params)})

:func:`bodi_generation_strategy` returns a ``GenerationStrategy`` with a Sobol node for the first
``n_init`` trials followed by :class:`BODiGenerationNode`. The node rebuilds a fresh
:class:`~bodi.optimizers.bo.BODi` from the experiment at every generation call (nothing is kept
between calls but the experiment's own record):

* the search space: ``ChoiceParameter`` -> Binary (bool values ``False``/``True``), Categorical
  (unordered, or two values) or an Integer over the index of the values (ordered choices with
  more than two values, which is also what ``RangeParameterConfig(step_size=...)`` becomes in
  Ax); ``RangeParameter`` int -> Integer
  (``log_scale``: a log Continuous over ``[low - 0.5, high + 0.5]``, rounded); float ->
  Continuous (``log_scale`` kept; ``digits`` rounds proposals; ``logit_scale`` is treated as
  linear); ``FixedParameter`` -> not modelled, its value is added to every proposal. Parameter
  constraints, hierarchical (dependent) parameters and multi-objective or scalarized objectives
  are refused with ``UnsupportedError``;
* COMPLETED and EARLY_STOPPED trials with data for the objective are told their (last-step)
  mean (a non-finite mean counts as a failure); FAILED and ABANDONED trials are failures;
  CANDIDATE, STAGED and RUNNING trials, and the arms already generated in the same call, are
  pending points.

BODi's seed is derived from ``(seed, number of trials, number of candidates generated since the
last update)``, so a run with a fixed seed is reproducible. A client using the node cannot be
saved with Ax's storage: ``Client.save_to_json_file`` raises ``JSONEncodeError`` (Ax's encoder
registry has no entry for this class).
"""

from __future__ import annotations

from bodi.extras import require

require("ax", "bodi.integrations.ax", "ax")  # before the imports it checks

import json
import time
from typing import Any

import numpy as np
from ax.adapter.registry import Generators
from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.core.parameter import FixedParameter
from ax.core.trial_status import TrialStatus
from ax.exceptions.core import UnsupportedError
from ax.generation_strategy.external_generation_node import ExternalGenerationNode
from ax.generation_strategy.generation_node import GenerationNode
from ax.generation_strategy.generation_strategy import GenerationStrategy
from ax.generation_strategy.generator_spec import GeneratorSpec
from ax.generation_strategy.transition_criterion import MinTrials

from bodi.checks import check_integer
from bodi.integrations._common import check_bodi_options, propose
from bodi.integrations.spaces.ax import codec_for
from bodi.integrations.spaces.codecs import Codec, to_bodi
from bodi.seeding import derive_seed

__all__ = ["BODiGenerationNode", "bodi_generation_strategy"]

_PENDING = (TrialStatus.CANDIDATE, TrialStatus.STAGED, TrialStatus.RUNNING)
_FAILED = (TrialStatus.FAILED, TrialStatus.ABANDONED)
_OBSERVED = (TrialStatus.COMPLETED, TrialStatus.EARLY_STOPPED)


def _plain(value: Any) -> Any:
    """NumPy scalars (e.g. from ``step_size`` grids) as Python numbers."""
    return value.item() if isinstance(value, np.generic) else value


class BODiGenerationNode(ExternalGenerationNode):
    """An Ax generation node whose candidates come from BODi (single objective).

    Args:
        seed: seeds every suggestion (with the number of trials); ``None`` draws one now.
        name: the node's name in the generation strategy.
        **bodi_options: keyword options of :class:`bodi.BODi` (``dictionary_size``,
            ``dictionary``, ``acquisition``, ``num_restarts``, ``raw_samples``, ...; not
            ``n_init``: the initialization node is the initial design).
    """

    def __init__(self, seed: int | None = None, name: str = "BODi", **bodi_options: Any):
        start = time.monotonic()
        super().__init__(name=name)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.seed = int(seed)
        self.bodi_options = check_bodi_options(bodi_options, "BODiGenerationNode")
        self._codecs: list[Codec] = []
        self._fixed: dict[str, Any] = {}
        self._direction = "minimize"
        self._completed: list[tuple[dict, float]] = []
        self._failed: list[dict] = []
        self._pending: list[dict] = []
        self._n_trials = 0
        self._calls = 0
        self.fit_time_since_gen += time.monotonic() - start

    def update_generator_state(self, experiment: Experiment, data: Data) -> None:
        """Read the search space, the objective and every trial's arms from the experiment."""
        space = experiment.search_space
        if space.parameter_constraints:
            raise UnsupportedError("BODi does not support parameter constraints")
        codecs, fixed = [], {}
        for parameter in space.parameters.values():
            if isinstance(parameter, FixedParameter):
                fixed[parameter.name] = parameter.value
            else:
                codecs.append(codec_for(parameter))
        if not codecs:
            raise UnsupportedError("BODi needs at least one non-fixed parameter")
        config = experiment.optimization_config
        if config is None:
            raise UnsupportedError("BODi needs an optimization config (an objective)")
        objective = config.objective
        if not objective.is_single_objective:
            raise UnsupportedError(
                f"BODi supports a single objective only, got {objective.expression!r}"
            )
        metric = objective.metric_names[0]

        df = data.df
        means: dict[tuple[int, str], float] = {}
        if not df.empty:
            rows = df[df["metric_name"] == metric]
            for index, arm, mean in zip(rows["trial_index"], rows["arm_name"], rows["mean"],
                                        strict=True):
                means[(int(index), str(arm))] = float(mean)

        completed, failed, pending = [], [], []
        for trial in experiment.trials.values():
            for arm in trial.arms:
                params = to_bodi(codecs, arm.parameters)
                if params is None:  # not in the current search space
                    continue
                if trial.status in _OBSERVED:
                    value = means.get((trial.index, arm.name))
                    if value is not None:
                        completed.append((params, value))
                elif trial.status in _FAILED:
                    failed.append(params)
                elif trial.status in _PENDING:
                    pending.append(params)
        self._codecs, self._fixed = codecs, fixed
        self._direction = "minimize" if objective.minimize else "maximize"
        self._completed, self._failed, self._pending = completed, failed, pending
        self._n_trials = len(experiment.trials)
        self._calls = 0

    def get_next_candidate(self, pending_parameters: list[dict[str, Any]]) -> dict[str, Any]:
        """One BODi suggestion, with ``pending_parameters`` (and running trials) pending."""
        pending, seen = [], set()
        for params in [*self._pending, *(to_bodi(self._codecs, p) for p in pending_parameters)]:
            key = None if params is None else json.dumps(params, sort_keys=True, default=str)
            if key is not None and key not in seen:
                seen.add(key)
                pending.append(params)
        seed = derive_seed(self.seed, self._n_trials, self._calls)
        self._calls += 1
        params = propose(
            self._codecs,
            seed=seed,
            direction=self._direction,
            options=self.bodi_options,
            completed=self._completed,
            failed=self._failed,
            pending=pending,
        )
        if params is None:
            raise UnsupportedError("BODi: every configuration of this finite space was used")
        return {**{k: _plain(v) for k, v in params.items()}, **self._fixed}


def bodi_generation_strategy(
    n_init: int = 5, seed: int | None = None, **bodi_options: Any
) -> GenerationStrategy:
    """Sobol for the first ``n_init`` trials (failed and abandoned ones not counted), then BODi.

    ``seed`` seeds both the Sobol sequence and BODi; ``bodi_options`` go to
    :class:`BODiGenerationNode`.
    """
    n_init = check_integer("n_init", n_init)
    node = BODiGenerationNode(seed=seed, **bodi_options)
    sobol = GenerationNode(
        name="Sobol",
        generator_specs=[
            GeneratorSpec(generator_enum=Generators.SOBOL, generator_kwargs={"seed": seed})
        ],
        transition_criteria=[
            MinTrials(
                threshold=n_init,
                transition_to=node.name,
                use_all_trials_in_exp=True,
                not_in_statuses=[TrialStatus.FAILED, TrialStatus.ABANDONED],
            )
        ],
        should_deduplicate=True,
    )
    return GenerationStrategy(name="Sobol+BODi", nodes=[sobol, node])
