"""COMBO (Oh et al., NeurIPS 2019): a GP with the diffusion kernel on the combinatorial graph.

- Model: the graph of the space is the Cartesian product of one complete graph per
  binary/categorical parameter, so the diffusion kernel factorises into a closed form per
  parameter with one ``beta_i`` each (:class:`bodi.models.baseline_kernels.DiffusionKernel`);
  continuous and integer parameters, which COMBO does not support, get a Matérn-5/2 factor.
- Acquisition: expected improvement (as ``LogExpectedImprovement``) maximized by local search
  from the best of random points and of the neighbours of the best points so far.

Simplified: COMBO samples ``beta`` by slice sampling under a horseshoe prior and averages the
acquisition over the samples; we use a point estimate, the posterior mode under the
horseshoe-type prior of :func:`bodi.models.baseline_kernels.make_diffusion_kernel`.
"""

from __future__ import annotations

from botorch.models.model import Model
from torch import Tensor

from bodi.models.gp import fit_model, make_gp
from bodi.models.registry import make_kernel
from bodi.optimizers.gp_optimizer import GPOptimizer
from bodi.trials import History


class COMBO(GPOptimizer):
    """COMBO with a point estimate of the kernel; options as :class:`GPOptimizer`."""

    def make_model(self, train_X: Tensor, train_Y: Tensor, history: History) -> Model:
        return fit_model(make_gp(train_X, train_Y, make_kernel("diffusion", self.space)))
