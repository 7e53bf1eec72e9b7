"""Input constraints of a search space: linear inequalities and Python predicates.

A :class:`LinearConstraint` bounds a weighted sum of binary, integer and continuous parameters,
in the user's units (a binary counts 0 or 1):

.. math:: \\text{lower} \\le \\sum_j a_j v_j \\le \\text{upper},

e.g. "at most 10 features": ``LinearConstraint({f"f{i}": 1 for i in range(50)}, upper=10)``.
A *predicate* is any ``params -> bool`` function, for forbidden combinations that are not linear
("these two options never together"). Both go into ``SearchSpace(parameters, constraints=[...])``.

Inside bodi the linear constraints are one matrix ``G`` (``K x dim``) and a vector ``h`` (``K``)
with ``G v <= h`` (a ``lower`` bound becomes ``-a v <= -lower``), so checking ``n`` points is one
matrix product. Predicates are called once per configuration, on decoded configurations.

:class:`ConstraintSet` holds both for a space: :meth:`~ConstraintSet.feasible` (a mask),
:meth:`~ConstraintSet.repair` (moves infeasible points onto the linear constraints) and the exact
feasibility check of the linear constraints at construction (a mixed-integer program, SciPy's
``milp``), so a constraint set that no configuration satisfies is an error at once.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

from bodi.device import DTYPE

if TYPE_CHECKING:
    from bodi.space import SearchSpace

#: a point satisfies ``G v <= h`` if ``G v <= h + TOLERANCE * (1 + |h|)`` (float round-off)
TOLERANCE = 1e-9


class InfeasibleConstraintsError(ValueError):
    """No configuration of the search space satisfies its constraints (or none was found)."""


def _finite(what: str, value: Any) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool | np.bool_):
        raise ValueError(f"linear constraint: {what} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"linear constraint: {what} must be finite, got {value!r}")
    return value


@dataclass(frozen=True)
class LinearConstraint:
    """``lower <= sum_j coefficients[j] * params[j] <= upper`` over binary (0/1), integer and
    continuous parameters, in the user's units. At least one bound is given.

    Examples:
        >>> at_most_3 = LinearConstraint({"f0": 1, "f1": 1, "f2": 1, "f3": 1, "f4": 1}, upper=3)
        >>> budget = LinearConstraint({"lr": 100.0, "epochs": 1}, lower=5, upper=50)
    """

    coefficients: tuple[tuple[str, float], ...]
    lower: float | None = None
    upper: float | None = None

    def __init__(self, coefficients: Mapping[str, float], lower: float | None = None,
                 upper: float | None = None) -> None:
        if not isinstance(coefficients, Mapping) or not coefficients:
            raise ValueError("linear constraint: coefficients must be a non-empty "
                             "{parameter name: number} dict")
        pairs = []
        for name, a in coefficients.items():
            if not isinstance(name, str):
                raise ValueError(f"linear constraint: parameter names must be strings, got "
                                 f"{name!r}")
            pairs.append((name, _finite(f"the coefficient of {name!r}", a)))
        if lower is None and upper is None:
            raise ValueError("linear constraint: give lower, upper or both")
        low = None if lower is None else _finite("lower", lower)
        high = None if upper is None else _finite("upper", upper)
        if low is not None and high is not None and low > high:
            raise ValueError(f"linear constraint: lower {low} > upper {high}")
        object.__setattr__(self, "coefficients", tuple(pairs))
        object.__setattr__(self, "lower", low)
        object.__setattr__(self, "upper", high)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "linear", "coefficients": dict(self.coefficients),
                "lower": self.lower, "upper": self.upper}

    def __str__(self) -> str:
        terms = " + ".join(f"{a:g}*{name}" for name, a in self.coefficients)
        low = "" if self.lower is None else f"{self.lower:g} <= "
        high = "" if self.upper is None else f" <= {self.upper:g}"
        return f"{low}{terms}{high}"


class Predicate:
    """A Python function ``params -> bool`` that is true for allowed configurations.

    Plain functions in ``SearchSpace(..., constraints=[...])`` are wrapped in one, named after the
    function. A predicate cannot be read back from JSON: the space's JSON keeps its name only.
    """

    def __init__(self, function: Callable[[dict[str, Any]], bool], name: str | None = None):
        if not callable(function):
            raise ValueError(f"a constraint must be a LinearConstraint or a function "
                             f"params -> bool, got {function!r}")
        self.function = function
        self.name = name or getattr(function, "__name__", None) or repr(function)

    def __call__(self, params: dict[str, Any]) -> bool:
        try:
            allowed = self.function(params)
        except Exception as err:
            raise ValueError(f"constraint {self.name!r} raised {err!r} on {params}") from err
        if not isinstance(allowed, bool | np.bool_):
            raise ValueError(f"constraint {self.name!r} must return True or False, got "
                             f"{allowed!r}")
        return bool(allowed)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Predicate) and self.function is other.function

    def __hash__(self) -> int:
        return hash(self.function)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "predicate", "name": self.name}

    def __repr__(self) -> str:
        return f"Predicate({self.name})"


Constraint = LinearConstraint | Predicate


def as_constraint(constraint: Any) -> Constraint:
    """A :class:`LinearConstraint`, a :class:`Predicate`, or a function wrapped in one."""
    if isinstance(constraint, LinearConstraint | Predicate):
        return constraint
    return Predicate(constraint)


def constraint_from_dict(data: Any) -> LinearConstraint:
    """Read a linear constraint from the space's JSON; a predicate there is an error."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a constraint must be an object, got {data!r}")
    kind = data.get("type")
    if kind == "predicate":
        raise ValueError(
            f"constraint {data.get('name')!r} is a Python predicate: it cannot be read from "
            "JSON. Build the space in Python, SearchSpace(parameters, constraints=[...]), and "
            "pass it (e.g. bodi.create_study(BODi(space), storage=...) to continue a study)"
        )
    if kind != "linear":
        raise ValueError(f"unknown constraint type {kind!r} (expected 'linear')")
    unknown = set(data) - {"type", "coefficients", "lower", "upper"}
    if unknown:
        raise ValueError(f"linear constraint: unknown field(s) {sorted(unknown)}")
    if "coefficients" not in data:
        raise ValueError("linear constraint: missing field 'coefficients'")
    return LinearConstraint(data["coefficients"], data.get("lower"), data.get("upper"))


class ConstraintSet:
    """The constraints of one search space, checked and in matrix form.

    Args:
        space: the space (its parameters, without constraints).
        constraints: :class:`LinearConstraint`, :class:`Predicate` or plain functions.

    Raises:
        ValueError: a linear constraint names an unknown or categorical parameter.
        InfeasibleConstraintsError: no configuration satisfies the linear constraints.
    """

    def __init__(self, space: SearchSpace, constraints: Sequence[Any]):
        if isinstance(constraints, Mapping | str) or not isinstance(constraints, Sequence):
            raise ValueError("constraints must be a list of LinearConstraint or functions")
        self.constraints = tuple(as_constraint(c) for c in constraints)
        self.linear = [c for c in self.constraints if isinstance(c, LinearConstraint)]
        self.predicates = [c for c in self.constraints if isinstance(c, Predicate)]
        self.space = space
        dim = space.dim
        rows, bounds = [], []
        for constraint in self.linear:
            row = torch.zeros(dim, dtype=DTYPE)
            for name, a in constraint.coefficients:
                if name not in space.names:
                    raise ValueError(f"linear constraint {constraint}: unknown parameter {name!r}")
                index = space.names.index(name)
                if space.parameters[index].kind == "categorical":
                    raise ValueError(
                        f"linear constraint {constraint}: {name!r} is categorical; linear "
                        "constraints take binary, integer and continuous parameters (use a "
                        "predicate for categorical ones)"
                    )
                row[index] += a
            if constraint.upper is not None:
                rows.append(row)
                bounds.append(constraint.upper)
            if constraint.lower is not None:
                rows.append(-row)
                bounds.append(-constraint.lower)
        self.G = torch.stack(rows) if rows else torch.zeros(0, dim, dtype=DTYPE)
        self.h = torch.tensor(bounds, dtype=DTYPE)
        lows, highs, logs = [], [], []
        for p in space.parameters:
            low, high = (0.0, 1.0) if p.kind in ("binary", "categorical") else (p.low, p.high)
            lows.append(float(low))
            highs.append(float(high))
            logs.append(p.kind == "continuous" and p.log)
        self._low = torch.tensor(lows, dtype=DTYPE)
        self._high = torch.tensor(highs, dtype=DTYPE)
        self._log = torch.tensor(logs, dtype=torch.bool)
        self._categorical = torch.tensor([p.kind == "categorical" for p in space.parameters])
        self._grid = torch.tensor(
            [p.kind in ("binary", "integer") for p in space.parameters], dtype=torch.bool
        )
        self._check_linear_feasible()

    def __bool__(self) -> bool:
        return bool(self.constraints)

    # ------------------------------------------------------------- units
    def values(self, X: Tensor) -> Tensor:
        """``n x dim`` encoded points -> their values in the user's units (binary 0/1; integer
        and continuous parameters decoded; categorical columns as they are, unused)."""
        X = X.to(DTYPE)
        low, high = self._low, self._high
        linear = low + X.clamp(0.0, 1.0) * (high - low)
        logged = torch.exp(low.clamp(min=1e-300).log() + X.clamp(0.0, 1.0)
                           * (high.clamp(min=1e-300).log() - low.clamp(min=1e-300).log()))
        return torch.where(self._categorical, X, torch.where(self._log, logged, linear))

    def _encode_column(self, j: Tensor, v: Tensor) -> Tensor:
        """Encoded positions of user values ``v`` (``b``) in columns ``j`` (``b``)."""
        low, high, log = self._low[j], self._high[j], self._log[j]
        lin = (v - low) / (high - low)
        logv = (v.clamp(min=1e-300).log() - low.clamp(min=1e-300).log()) / (
            high.clamp(min=1e-300).log() - low.clamp(min=1e-300).log())
        return torch.where(log, logv, lin).clamp(0.0, 1.0)

    # ------------------------------------------------------------- checks
    def slack(self, X: Tensor) -> Tensor:
        """``n x K`` values of ``G v - h`` (positive: violated)."""
        return self.values(X) @ self.G.T - self.h

    def feasible(self, X: Tensor) -> Tensor:
        """Mask (``...``) of the ``... x dim`` encoded points that satisfy every constraint."""
        shape = X.shape[:-1]
        X = X.reshape(-1, X.shape[-1]).detach().cpu().to(DTYPE)
        ok = torch.ones(len(X), dtype=torch.bool)
        if len(self.h):
            ok &= (self.slack(X) <= TOLERANCE * (1 + self.h.abs())).all(-1)
        if self.predicates and ok.any():
            rows = ok.nonzero().squeeze(-1)
            configs = self.space.decode(X[rows])
            allowed = [all(p(config) for p in self.predicates) for config in configs]
            ok[rows] = torch.tensor(allowed, dtype=torch.bool)
        return ok.reshape(shape)

    # ------------------------------------------------------------- repair
    def repair(self, X: Tensor, generator: torch.Generator | None = None,
               max_moves: int | None = None) -> Tensor:
        """Move the rows of ``X`` (``n x dim``, encoded) that violate a linear constraint onto
        them, one parameter at a time (a copy is returned).

        Each move takes the most violated constraint of a row, picks at random one of its
        parameters that can move in the helpful direction, and moves it as far as the constraint
        needs (within its bounds; binary and integer parameters on their grid). Rows that still
        violate a constraint after ``max_moves`` moves (default ``4 * dim``) are returned as
        they are; :meth:`feasible` tells them apart. Predicates are not repaired.
        """
        X = X.clone()
        if not len(self.h) or not len(X):
            return X
        tol = TOLERANCE * (1 + self.h.abs())
        for _ in range(max_moves or 4 * X.shape[-1]):
            V = self.values(X)
            R = V @ self.G.T - self.h  # n x K
            bad = ((tol < R).any(-1)).nonzero().squeeze(-1)
            if not len(bad):
                break
            worst = R[bad].argmax(-1)
            excess = R[bad, worst]  # b
            g = self.G[worst]  # b x dim
            v = V[bad]
            movable = ((g > 0) & (v > self._low + 1e-12)) | ((g < 0) & (v < self._high - 1e-12))
            stuck = ~movable.any(-1)
            u = torch.rand(movable.shape, generator=generator, dtype=DTYPE)
            j = torch.where(movable, u, -1.0).argmax(-1)  # b: a random movable column
            a = g.gather(-1, j.unsqueeze(-1)).squeeze(-1)
            old = v.gather(-1, j.unsqueeze(-1)).squeeze(-1)
            new = old - excess / a  # exactly on the constraint
            grid = self._grid[j]
            new = torch.where(grid & (a > 0), new.floor(), new)
            new = torch.where(grid & (a < 0), new.ceil(), new)
            new = torch.minimum(torch.maximum(new, self._low[j]), self._high[j])
            rows, cols = bad[~stuck], j[~stuck]
            if not len(rows):
                break
            X[rows, cols] = self._encode_column(cols, new[~stuck])
        return X

    def _check_linear_feasible(self) -> None:
        """Raise :class:`InfeasibleConstraintsError` unless some configuration satisfies the
        linear constraints (an exact mixed-integer feasibility problem)."""
        if not len(self.h):
            return
        from scipy.optimize import Bounds, milp
        from scipy.optimize import LinearConstraint as ScipyLinear

        used = (self.G != 0).any(0)
        G, h = self.G[:, used].numpy(), self.h.numpy()
        result = milp(
            c=np.zeros(G.shape[1]),
            constraints=ScipyLinear(G, -np.inf, h + TOLERANCE * (1 + np.abs(h))),
            integrality=self._grid[used].numpy().astype(int),
            bounds=Bounds(self._low[used].numpy(), self._high[used].numpy()),
        )
        if result.status == 2:  # infeasible
            raise InfeasibleConstraintsError(
                "no configuration satisfies the linear constraints "
                f"{[str(c) for c in self.linear]}"
            )
