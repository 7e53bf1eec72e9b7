"""SMAC3 (random-forest Bayesian optimization) as a baseline, driven through SMAC's ask/tell API.

Needs the ``smac`` and ``ConfigSpace`` packages (``pip install bodi[baselines]``); they are
imported when a suggestion needs them, so ``import bodi.baselines`` works without them.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from bodi.diagnostics import quiet_logger
from bodi.extras import require
from bodi.integrations.spaces.configspace import (
    from_configuration,
    make_configspace,
    to_configuration,
)
from bodi.optimizers.model_based import ModelBasedOptimizer
from bodi.optimizers.random_search import sample_new_points
from bodi.seeding import derive_seed
from bodi.space import DTYPE
from bodi.trials import History

#: SMAC's intensifier gives up after this many loops without a new trial (its default); we add
#: one per told configuration, as it may need a loop to drop each from its queue.
_INTENSIFIER_RETRIES = 16


def _hash_independent(maximizer: Any) -> Any:
    """Make SMAC's ``LocalAndSortedRandomSearch`` independent of Python's string hash seed.

    Its local search dedupes its start points through ``list(set(configurations))``, and a
    ``Configuration`` hashes its ``repr`` string, so the order of the start points (and with it
    every later random draw) changed with ``PYTHONHASHSEED`` from one process to the next. We
    sort the same start points by their vector instead.
    """
    local_search = maximizer._local_search
    unordered = local_search._get_initial_points

    def ordered(*args: Any, **kwargs: Any) -> list[Any]:
        return sorted(unordered(*args, **kwargs), key=lambda c: tuple(c.get_array().tolist()))

    local_search._get_initial_points = ordered
    return maximizer


class SMAC(ModelBasedOptimizer):
    """SMAC3's ``HyperparameterOptimizationFacade`` behind bodi's ask/tell interface.

    The first ``n_init`` points are the shared :func:`bodi.initial_design.initial_design`. After
    that, every suggestion builds a fresh SMAC facade from the history (so the optimizer is
    stateless, like the benchmark runner wants it), tells it every completed trial and asks it
    for the new points through ``facade.ask()``. Settings:

    * ``HyperparameterOptimizationFacade`` with its defaults: random forest (10 trees, all
      features, ``min_samples_split=2``, ``min_samples_leaf=1``, bootstrapping, ``log_y``) on
      log-scaled costs, expected improvement on the log costs (``EI(xi=0, log=True)``),
      ``LocalAndSortedRandomSearch`` (10,000 random challengers plus 10 local searches) and an
      interleaved random configuration with probability 0.2;
    * except: the initial design is empty (the shared design above is the only one), the
      scenario is deterministic and the intensifier evaluates each configuration once
      (``max_config_calls=1``: no re-evaluation of the incumbent on other seeds);
    * three changes for speed that leave the proposals unchanged (checked): the intensifier's
      queue starts from the incumbents (SMAC would queue every told configuration and drop
      them one by one, comparing configurations in O(n^2): ~0.8 s of a suggestion with 100
      observations); the forest runs in one thread (``n_jobs=1``; SMAC's default of all cores
      made a suggestion 2.5x slower on a shared 2-core machine); and its ``max_leaf_nodes`` is
      the number of observations + 1 instead of ``2**20``: a tree cannot have more leaves than
      samples, so the trees are identical (same builder, same random draws), but scikit-learn
      no longer allocates room for 2 million nodes per tree (~0.1 s per tree);
    * costs are ``-(sign * value)`` (SMAC minimizes); failed trials are told as ``CRASHED``
      with the worst cost observed so far (SMAC's ``crash_cost``; its default ``inf`` would
      break the log-scaled cost model); a configuration told several times gets its mean cost;
      pending trials (and this batch's design points) are added as running trials;
    * the scenario seed derives from ``seed`` and the number of trials; SMAC writes its files
      to a temporary directory that is removed after the suggestion; its logging is silenced
      (level ``ERROR``) during a suggestion.

    SMAC never asks a configuration it has seen; should a proposal still repeat a trial of a
    fully discrete space, it is replaced by a uniform sample that was never proposed. Until a
    first value is known, points are drawn uniformly.

    ``n_init`` is the size of the shared initial design (``0``: none); the other arguments are
    those of :class:`bodi.optimizers.Optimizer`.
    """

    def _model_points(self, history: History, q: int, design: Tensor, taken: Tensor) -> Tensor:
        points = self._smac_points(history, q, design)
        if len(points) < q:  # SMAC gave up (e.g. a nearly exhausted discrete space)
            more = sample_new_points(self.space, q - len(points), torch.cat([taken, points]))
            points = torch.cat([points, more])
        return points  # a repeat is replaced by the base class, as for every optimizer

    def _smac_points(self, history: History, q: int, design: Tensor) -> Tensor:
        """Up to ``q`` points asked from a SMAC facade told the whole ``history``."""
        require("smac", "the SMAC baseline", "baselines")
        from smac import HyperparameterOptimizationFacade as Facade
        from smac import Scenario
        from smac.intensifier.intensifier import Intensifier
        from smac.main.exceptions import ConfigurationSpaceExhaustedException
        from smac.model.random_forest.random_forest import RandomForest
        from smac.runhistory.dataclasses import TrialInfo, TrialValue
        from smac.runhistory.enumerations import StatusType

        told: dict[tuple[float, ...], list[float]] = {}  # config -> costs (empty: only failed)
        for trial in history.trials:
            if trial.state == "complete":
                told.setdefault(tuple(trial.x.tolist()), []).append(-self.sign * trial.value)
            elif trial.state == "failed":
                told.setdefault(tuple(trial.x.tolist()), [])
        costs = [c for cs in told.values() for c in cs]
        worst = max(costs)
        pending = dict.fromkeys(tuple(x.tolist()) for x in torch.cat([history.X_pending, design]))
        running = [key for key in pending if key not in told]  # in order, once each

        seed = derive_seed(self.seed, len(history.trials), 0x5AC3) % (2**31 - 1)
        configspace = make_configspace(self.space, seed)
        rows: list[list[float]] = []
        with tempfile.TemporaryDirectory(prefix="bodi-smac-") as tmp, quiet_logger("smac"):
            scenario = Scenario(
                configspace,
                name="bodi",
                output_directory=Path(tmp) / "smac3_output",
                deterministic=True,
                crash_cost=float(worst),
                n_trials=len(history.trials) + len(design) + q + 1,
                seed=seed,
            )
            model = RandomForest(  # the facade's get_model() defaults, see the class docstring
                configspace, log_y=True, n_trees=10, ratio_features=1.0, min_samples_split=2,
                min_samples_leaf=1, max_depth=2**20, bootstrapping=True, seed=seed, n_jobs=1,
                max_leaf_nodes=len(told) + 1,
            )
            intensifier = Intensifier(
                scenario, max_config_calls=1, retries=_INTENSIFIER_RETRIES + len(told)
            )
            facade = Facade(
                scenario,
                None,  # no target function: ask/tell only
                model=model,
                acquisition_maximizer=_hash_independent(Facade.get_acquisition_maximizer(scenario)),
                initial_design=Facade.get_initial_design(scenario, n_configs=0),
                intensifier=intensifier,
                logging_level=False,
                overwrite=True,
            )
            for key, values in told.items():
                config = to_configuration(configspace, self.space, torch.tensor(key, dtype=DTYPE))
                if values:
                    value = TrialValue(cost=math.fsum(values) / len(values))
                else:
                    value = TrialValue(cost=float(worst), status=StatusType.CRASHED)
                facade.tell(TrialInfo(config, seed=0), value, save=False)
            for key in running:
                config = to_configuration(configspace, self.space, torch.tensor(key, dtype=DTYPE))
                facade.runhistory.add_running_trial(TrialInfo(config, seed=0))
            # The intensifier would queue every told configuration and drop them one by one (each
            # is an incumbent or rejected), comparing configurations in O(n^2); start it from the
            # incumbents instead: the same proposals (we checked), in linear time.
            intensifier.set_state({"queue": [
                (facade.runhistory.get_config_id(c), 1) for c in intensifier.get_incumbents()
            ]})
            for _ in range(q):
                try:
                    info = facade.ask()
                except (StopIteration, ConfigurationSpaceExhaustedException):
                    break
                rows.append(from_configuration(configspace, self.space, info.config))
        return torch.tensor(rows, dtype=DTYPE).reshape(len(rows), self.space.dim)
