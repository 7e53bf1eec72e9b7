"""Baseline optimizers of the benchmark, each behind :class:`bodi.optimizers.Optimizer`.

GP baselines share BODi's loop (:class:`bodi.optimizers.gp_optimizer.GPOptimizer`) and differ
in the model: CASMOPOLITAN (overlap kernel + Hamming trust region), COMBO (diffusion kernel) and
BoTorch's ``MixedSingleTaskGP``. SMAC, TPE and NGOpt drive the real ``smac``, ``optuna`` and
``nevergrad`` packages; simulated annealing follows MCBO's, and
the genetic algorithm is pymoo's with MCBO's settings.
"""

from bodi.baselines.annealing import SimulatedAnnealing
from bodi.baselines.botorch_mixed import BoTorchMixed
from bodi.baselines.casmopolitan import CASMOPOLITAN
from bodi.baselines.combo import COMBO
from bodi.baselines.genetic import GeneticAlgorithm
from bodi.baselines.ngopt import NGOpt
from bodi.baselines.smac3 import SMAC
from bodi.baselines.tpe import TPE

__all__ = [
    "CASMOPOLITAN",
    "COMBO",
    "SMAC",
    "TPE",
    "BoTorchMixed",
    "GeneticAlgorithm",
    "NGOpt",
    "SimulatedAnnealing",
]
