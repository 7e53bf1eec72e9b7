"""Build a BoTorch acquisition function by name."""

from __future__ import annotations

from botorch.acquisition import (
    AcquisitionFunction,
    LogExpectedImprovement,
    UpperConfidenceBound,
    qLogNoisyExpectedImprovement,
    qUpperConfidenceBound,
)
from botorch.acquisition.analytic import LogConstrainedExpectedImprovement
from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
from botorch.acquisition.multi_objective.objective import IdentityMCMultiOutputObjective
from botorch.acquisition.objective import GenericMCObjective
from botorch.models.model import Model
from torch import Tensor

#: the acquisition functions by name: the (log) expected improvement, the upper confidence bound
ACQUISITIONS = ("logei", "ucb")


def only_logei(n_objectives: int = 1, n_constraints: int = 0) -> bool:
    """The one rule of which acquisition works with what: with several objectives or outcome
    constraints only ``"logei"`` (qLogNEHVI / constrained qLogNEI) is defined; every name is
    for one objective without outcome constraints."""
    return n_objectives > 1 or n_constraints > 0


def check_acquisition(name: str, n_objectives: int = 1, n_constraints: int = 0) -> None:
    """Raise unless ``name`` is an acquisition that works here (:func:`only_logei`)."""
    if name not in ACQUISITIONS:
        raise ValueError(f"unknown acquisition {name!r}; choose one of {list(ACQUISITIONS)}")
    if only_logei(n_objectives, n_constraints) and name != "logei":
        raise ValueError(f"acquisition {name!r} is for one objective without outcome "
                         "constraints; with several objectives or outcome constraints use "
                         "'logei' (qLogNEHVI / constrained qLogNEI)")


def make_acquisition(
    name: str,
    model: Model,
    train_X: Tensor,
    train_Y: Tensor,
    X_pending: Tensor | None = None,
    q: int = 1,
    ucb_beta: float = 2.0,
    ref_point: Tensor | None = None,
    n_constraints: int = 0,
) -> AcquisitionFunction:
    """The acquisition function for one suggestion step (larger outcomes are better).

    With ``k > 1`` outcomes (a model with ``k`` outputs, ``train_Y`` of shape ``n x k``) only
    ``"logei"`` is defined: ``qLogNoisyExpectedHypervolumeImprovement`` over the hypervolume
    dominated by the Pareto front of ``X_baseline = train_X`` above ``ref_point`` (``k``, in
    the larger-is-better orientation), for one point or a batch (Daulton et al., 2021).

    With ``n_constraints = c > 0`` the last ``c`` outputs of the model (and columns of
    ``train_Y``) are outcome constraints, feasible when ``<= 0``: ``"logei"`` is then, for one
    point with nothing pending and one objective, the analytic constrained LogEI,
    ``log EI(x; best feasible value) + sum_j log P(c_j(x) <= 0)`` (independent Gaussian
    posteriors, :func:`best_feasible`); else qLogNEI (one objective) or qLogNEHVI (several) on
    the first outputs, each sample weighted by the sigmoid-smoothed probability that every
    constraint holds (BoTorch's ``constraints=``).

    - ``"logei"``: ``LogExpectedImprovement`` over the best observed value for one point with
      nothing pending; ``qLogNoisyExpectedImprovement`` (``X_baseline = train_X``) for a batch
      or when evaluations are pending (they enter as ``X_pending``).
    - ``"ucb"``: ``UpperConfidenceBound`` (``mu + sqrt(beta) sigma``) for one point,
      ``qUpperConfidenceBound`` with ``X_pending`` otherwise.

    Args:
        train_X: ``n x dim`` observed inputs; train_Y: ``n x 1`` observed outcomes.
        X_pending: ``p x dim`` points under evaluation, or ``None``.
        q: number of points to be optimized jointly.
    """
    pending = X_pending is not None and len(X_pending) > 0
    k = train_Y.shape[-1] - n_constraints
    check_acquisition(name, k, n_constraints)
    constraints = [_constraint(k + i) for i in range(n_constraints)] or None
    if k > 1:
        if ref_point is None:
            raise ValueError("several objectives need a reference point")
        return qLogNoisyExpectedHypervolumeImprovement(
            model, ref_point=ref_point.tolist(), X_baseline=train_X,
            X_pending=X_pending if pending else None, prune_baseline=True,
            objective=IdentityMCMultiOutputObjective(outcomes=list(range(k)))
            if n_constraints else None,
            constraints=constraints,
        )
    if n_constraints:
        if q == 1 and not pending:
            return LogConstrainedExpectedImprovement(
                model, best_f=best_feasible(train_Y, k), objective_index=0,
                constraints={k + i: (None, 0.0) for i in range(n_constraints)})
        return qLogNoisyExpectedImprovement(
            model, X_baseline=train_X, X_pending=X_pending if pending else None,
            prune_baseline=True, objective=GenericMCObjective(_first_output),
            constraints=constraints,
        )
    if name == "logei":
        if q == 1 and not pending:
            return LogExpectedImprovement(model, best_f=train_Y.max())
        return qLogNoisyExpectedImprovement(
            model, X_baseline=train_X, X_pending=X_pending if pending else None,
            prune_baseline=True,
        )
    if name == "ucb":
        if q == 1 and not pending:
            return UpperConfidenceBound(model, beta=ucb_beta)
        return qUpperConfidenceBound(
            model, beta=ucb_beta, X_pending=X_pending if pending else None
        )
    raise ValueError(f"unknown acquisition {name!r}; choose one of {list(ACQUISITIONS)}")


def best_feasible(train_Y: Tensor, k: int = 1) -> Tensor:
    """The largest first objective among the rows of ``train_Y`` (``n x (k + c)``) whose ``c``
    constraint columns are all ``<= 0``; the smallest of all rows where none is."""
    feasible = (train_Y[:, k:] <= 0).all(-1)
    values = train_Y[:, 0]
    return values[feasible].max() if feasible.any() else values.min()


def _first_output(samples: Tensor, X: Tensor | None = None) -> Tensor:
    return samples[..., 0]


def _constraint(index: int):
    """The ``index``-th output as a BoTorch constraint callable (feasible when ``<= 0``)."""

    def constraint(samples: Tensor) -> Tensor:
        return samples[..., index]

    return constraint
