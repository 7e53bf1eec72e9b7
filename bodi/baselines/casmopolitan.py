"""CASMOPOLITAN (Wan et al., ICML 2021): overlap-kernel GP searched inside a Hamming trust region.

- Model: a GP with the transformed overlap kernel ``exp(-mean_i delta(x_i != x'_i) / l_i)``
  (BoTorch's ``CategoricalKernel``, ARD) on binary/categorical parameters; in mixed spaces its
  mixture with a Matérn-5/2 kernel on the continuous/integer ones,
  ``s1 k_h k_x + s2 (k_h + k_x)`` (:func:`bodi.models.baseline_kernels.make_overlap_kernel`).
- Trust region: a Hamming ball around the incumbent of the current region (radius 20, at most
  30, capped at the number of discrete parameters) times a box of edge 0.8 on the continuous
  parameters; 3 consecutive successes expand both by 1.5, 40 consecutive failures shrink them;
  a collapsed region restarts from the point the acquisition function picks over the whole
  space (:mod:`bodi.acquisition.trust_region`).
- Acquisition: expected improvement (as ``LogExpectedImprovement``) maximized by local search
  inside the region, interleaved with L-BFGS-B steps on the continuous parameters.

Simplified against the reference code: hyperparameters are fitted by L-BFGS (``fit_gpytorch_mll``
with BoTorch's default priors) instead of 50 Adam steps; the box is not reweighted by the
lengthscales; a restart is guided by the current GP on all data instead of a GP on the best
point of each past region.
"""

from __future__ import annotations

from typing import Any

from botorch.models.model import Model
from torch import Tensor

from bodi.models.gp import fit_model, make_gp
from bodi.models.registry import make_kernel
from bodi.optimizers.gp_optimizer import GPOptimizer
from bodi.space import SearchSpace
from bodi.trials import History


class CASMOPOLITAN(GPOptimizer):
    """CASMOPOLITAN; the options are those of
    :class:`bodi.optimizers.gp_optimizer.GPOptimizer` (``trust_region=True`` by default:
    CASMOPOLITAN's sizes)."""

    def __init__(self, space: SearchSpace, *, trust_region: Any = True, **kwargs: Any) -> None:
        super().__init__(space, trust_region=trust_region, **kwargs)

    def make_model(self, train_X: Tensor, train_Y: Tensor, history: History) -> Model:
        return fit_model(make_gp(train_X, train_Y, make_kernel("overlap", self.space)))
