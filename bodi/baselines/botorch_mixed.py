"""What a BoTorch user gets without bodi: ``MixedSingleTaskGP`` with BoTorch's mixed optimizer.

- Model: BoTorch's ``MixedSingleTaskGP`` (Ru et al.'s CoCaBO-style sum-plus-product of a
  categorical kernel on the binary/categorical parameters and a Matérn kernel on the rest),
  fitted with ``fit_gpytorch_mll``.
- Acquisition: ``LogExpectedImprovement`` maximized by ``optimize_acqf_mixed_alternating``
  (discrete neighbourhood search alternating with L-BFGS-B), through the same wrapper that
  keeps evaluated points out of the proposals in discrete spaces.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

from botorch.exceptions.warnings import InputDataWarning
from botorch.models import MixedSingleTaskGP, SingleTaskGP
from botorch.models.model import Model
from torch import Tensor

from bodi.models.gp import fit_model
from bodi.optimizers.gp_optimizer import GPOptimizer
from bodi.space import SearchSpace
from bodi.trials import History


class BoTorchMixed(GPOptimizer):
    """BoTorch's mixed GP; options as :class:`GPOptimizer` (the optimizer is always BoTorch's)."""

    acquisition_optimizer: ClassVar[str] = "botorch"

    def __init__(self, space: SearchSpace, **kwargs: Any) -> None:
        if kwargs.get("trust_region"):
            raise ValueError("botorch-mixed has no trust region")
        super().__init__(space, **kwargs)

    def make_model(self, train_X: Tensor, train_Y: Tensor, history: History) -> Model:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InputDataWarning)
            if self.space.discrete_dims:
                model = MixedSingleTaskGP(train_X, train_Y, cat_dims=self.space.discrete_dims)
            else:  # nothing categorical: MixedSingleTaskGP refuses, and is SingleTaskGP anyway
                model = SingleTaskGP(train_X, train_Y)
        return fit_model(model)
