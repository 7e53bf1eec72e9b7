"""Search spaces: the parameters together (:mod:`bodi.parameters`), the one tensor encoding,
sampling and JSON files.

A configuration is a ``dict`` mapping parameter names to the user's own values. Inside bodi a
configuration is a row of a ``float64`` tensor with one column per parameter, in the order the
parameters were given (the *encoding*):

=============  ==========================================  ==============================
parameter      encoded value                               decoded value
=============  ==========================================  ==============================
Binary         0.0 or 1.0                                  ``bool``
Categorical    index ``0 .. k-1`` of the choice            the choice itself
Continuous     position in ``[0, 1]`` (in log space if     ``float``
               ``log=True``)
Integer        ``(value - low) / (high - low)`` in         ``int``
               ``[0, 1]`` on the grid of integers
=============  ==========================================  ==============================

Binary and categorical columns are the *discrete* (Hamming) coordinates embedded by the HED
kernel; continuous and integer columns are the *ordinal* coordinates modelled by a Matérn kernel.

The identity of a configuration (its row key) is in :mod:`bodi.novelty`, the moves to its
neighbours in :mod:`bodi.neighbours`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from bodi.constraints import (
    Constraint,
    ConstraintSet,
    InfeasibleConstraintsError,
    constraint_from_dict,
)
from bodi.device import DTYPE
from bodi.parameters import (
    Binary,
    Categorical,
    Continuous,
    Integer,
    Parameter,
    Value,
    parameter_from_dict,
)

#: rounds of :meth:`SearchSpace.sample` in a constrained space before it gives up
MAX_SAMPLING_ROUNDS = 50


@dataclass(frozen=True)
class SearchSpace:
    """An ordered collection of named parameters.

    Examples:
        >>> space = SearchSpace([Binary("b0"), Categorical("c", ["x", "y"]),
        ...                      Continuous("u", 0.0, 1.0), Integer("k", 1, 5)])
        >>> X = space.encode([{"b0": True, "c": "y", "u": 0.5, "k": 3}])   # 1 x 4 tensor
        >>> space.decode(X)[0]["c"]
        'y'
    """

    parameters: tuple[Parameter, ...]
    #: input constraints (:mod:`bodi.constraints`): every point bodi proposes satisfies them
    constraints: tuple[Constraint, ...] = ()
    _index: dict[str, int] = field(init=False, repr=False, compare=False)
    _constraint_set: ConstraintSet | None = field(init=False, repr=False, compare=False)
    #: per column: the encoding's upper bound, and the grid steps of an integer column
    #: (``high - low``; 0 elsewhere); computed once, used by the vectorized methods
    _upper: Tensor = field(init=False, repr=False, compare=False)
    _integer_steps: Tensor = field(init=False, repr=False, compare=False)

    def __init__(self, parameters: Iterable[Parameter], constraints: Sequence[Any] = ()) -> None:
        if isinstance(parameters, Mapping | str):
            raise ValueError("parameters must be a list of Binary/Categorical/Continuous/Integer")
        parameters = tuple(parameters)
        if not parameters:
            raise ValueError("a search space needs at least one parameter")
        seen: set[str] = set()
        for p in parameters:
            if not isinstance(p, Binary | Categorical | Continuous | Integer):
                raise ValueError(
                    f"{p!r} is not a parameter (use Binary, Categorical, Continuous or Integer)"
                )
            if p.name in seen:
                raise ValueError(f"parameter {p.name!r}: duplicate name")
            seen.add(p.name)
        object.__setattr__(self, "parameters", parameters)
        object.__setattr__(self, "_index", {p.name: i for i, p in enumerate(parameters)})
        upper = [p.cardinality - 1 if p.kind == "categorical" else 1.0 for p in parameters]
        steps = [p.high - p.low if p.kind == "integer" else 0 for p in parameters]
        object.__setattr__(self, "_upper", torch.tensor(upper, dtype=DTYPE))
        object.__setattr__(self, "_integer_steps", torch.tensor(steps, dtype=DTYPE))
        object.__setattr__(self, "constraints", ())
        object.__setattr__(self, "_constraint_set", None)
        if isinstance(constraints, Sequence) and not isinstance(constraints, str) and (
            len(constraints) == 0
        ):
            return
        checked = ConstraintSet(self, constraints)
        object.__setattr__(self, "constraints", checked.constraints)
        object.__setattr__(self, "_constraint_set", checked)

    # ----------------------------------------------------------------- structure
    def __len__(self) -> int:
        return len(self.parameters)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def dim(self) -> int:
        """Number of columns of the encoding (one per parameter)."""
        return len(self.parameters)

    def _dims(self, *kinds: str) -> list[int]:
        return [i for i, p in enumerate(self.parameters) if p.kind in kinds]

    @property
    def binary_dims(self) -> list[int]:
        return self._dims("binary")

    @property
    def categorical_dims(self) -> list[int]:
        return self._dims("categorical")

    @property
    def discrete_dims(self) -> list[int]:
        """Binary and categorical columns: the coordinates of the Hamming embedding."""
        return self._dims("binary", "categorical")

    @property
    def continuous_dims(self) -> list[int]:
        return self._dims("continuous")

    @property
    def integer_dims(self) -> list[int]:
        return self._dims("integer")

    @property
    def ordinal_dims(self) -> list[int]:
        """Continuous and integer columns, all encoded in ``[0, 1]``."""
        return self._dims("continuous", "integer")

    @property
    def cardinalities(self) -> list[int]:
        """Number of values of each discrete (binary/categorical) parameter, in column order."""
        return [self.parameters[i].cardinality for i in self.discrete_dims]

    def other_discrete_values(self, X_discrete: Tensor,
                              generator: torch.Generator | None = None) -> Tensor:
        """``n x d`` values of the discrete columns (``X_discrete``, in :attr:`discrete_dims`
        order), each moved to another of its parameter's values, uniformly."""
        cards = torch.tensor(self.cardinalities, dtype=DTYPE)
        shift = torch.floor(torch.rand(X_discrete.shape, generator=generator) * (cards - 1)) + 1
        return torch.remainder(X_discrete + shift, cards)

    @property
    def is_categorical(self) -> bool:
        """True when every parameter is categorical with at least three values (no binary,
        integer or continuous parameter; a two-valued categorical is a binary choice)."""
        return bool(self.parameters) and all(
            p.kind == "categorical" and p.cardinality >= 3 for p in self.parameters)

    @property
    def is_discrete(self) -> bool:
        """True when every parameter takes finitely many values (no continuous parameter)."""
        return not self.continuous_dims

    @property
    def cardinality(self) -> int | float:
        """Number of distinct configurations: an exact ``int`` (any size), ``math.inf`` with a
        continuous parameter. Constraints are not counted: this is an upper bound for a
        constrained space."""
        if not self.is_discrete:
            return math.inf
        return math.prod(p.cardinality for p in self.parameters)

    @property
    def log_cardinality(self) -> float:
        """Natural log of :attr:`cardinality` (``inf`` with a continuous parameter)."""
        if not self.is_discrete:
            return math.inf
        return float(sum(math.log(p.cardinality) for p in self.parameters))

    @property
    def bounds(self) -> Tensor:
        """``2 x dim`` bounds of the encoding."""
        return torch.stack([torch.zeros_like(self._upper), self._upper])

    # ------------------------------------------------------------------ encoding
    def encode(self, configs: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Tensor:
        """Encode one configuration (a dict) or a list of them into an ``n x dim`` tensor."""
        if isinstance(configs, Mapping):
            configs = [configs]
        rows = []
        for config in configs:
            if not isinstance(config, Mapping):
                raise ValueError(f"a configuration must be a dict, got {config!r}")
            missing = [n for n in self.names if n not in config]
            extra = [k for k in config if k not in self._index]
            if missing:
                raise ValueError(f"configuration is missing parameter(s) {missing}")
            if extra:
                raise ValueError(f"configuration has unknown parameter(s) {extra}")
            rows.append([p.encode(config[p.name]) for p in self.parameters])
        return torch.tensor(rows, dtype=DTYPE).reshape(len(rows), self.dim)

    def decode(self, X: Tensor) -> list[dict[str, Value]]:
        """Decode an ``n x dim`` (or ``dim``) tensor into a list of configurations."""
        X = torch.as_tensor(X, dtype=DTYPE)
        if X.ndim == 1:
            X = X.unsqueeze(0)
        if X.ndim != 2 or X.shape[-1] != self.dim:
            raise ValueError(f"expected an n x {self.dim} tensor, got shape {tuple(X.shape)}")
        return [
            {p.name: p.decode(float(v)) for p, v in zip(self.parameters, row.tolist(), strict=True)}
            for row in X
        ]

    def canonicalize(self, X: Tensor) -> Tensor:
        """``encode(decode(X))``: the exact encoding of the configurations ``X`` stands for.

        Continuous values can change in the last bits on the way through the user's units;
        storing the canonical rows makes a told configuration match its asked row exactly.
        """
        return self.encode(self.decode(X))

    def round(self, X: Tensor) -> Tensor:
        """Snap encoded values onto the feasible set (binary/categorical/integer grids)."""
        X = torch.minimum(X.clamp(min=0.0), self._upper.to(X))
        discrete = self.discrete_dims
        if discrete:
            X[..., discrete] = X[..., discrete].round()
        integer = self.integer_dims
        if integer:
            n = self._integer_steps[integer].to(X)
            X[..., integer] = (X[..., integer] * n).round() / n
        return X

    def sample(self, n: int, generator: torch.Generator | None = None) -> Tensor:
        """Draw ``n`` configurations at random: an ``n x dim`` tensor.

        Without constraints they are uniform. With constraints every row is feasible: uniform
        draws are repaired onto the linear constraints (:meth:`repair`) and the infeasible ones
        dropped, in rounds, until ``n`` are found (if only some are found after many rounds,
        they are repeated to fill ``n`` rows).

        Raises:
            InfeasibleConstraintsError: if no feasible configuration was found at all.
        """
        if self._constraint_set is None:
            return self._sample_box(n, generator)
        found: list[Tensor] = []
        count, draws = 0, max(64, 2 * n)
        for _ in range(MAX_SAMPLING_ROUNDS):
            if count >= n:
                break
            X = self.repair(self._sample_box(draws, generator), generator)
            X = X[self.feasible(X)]
            found.append(X)
            count += len(X)
        X = torch.cat(found) if found else torch.empty(0, self.dim, dtype=DTYPE)
        if n and not len(X):
            raise InfeasibleConstraintsError(
                f"no configuration satisfying the constraints was found in "
                f"{MAX_SAMPLING_ROUNDS * draws} random draws (repaired onto the linear "
                f"constraints); check the constraints {[str(c) for c in self.constraints]}"
            )
        if len(X) < n:
            X = X.repeat(math.ceil(n / len(X)), 1)
        return X[:n]

    def feasible(self, X: Tensor) -> Tensor:
        """Mask (``...``) of the ``... x dim`` encoded points that satisfy the constraints."""
        if self._constraint_set is None:
            return torch.ones(X.shape[:-1], dtype=torch.bool, device=X.device)
        return self._constraint_set.feasible(X).to(X.device)

    def repair(self, X: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """A copy of ``n x dim`` points moved onto the linear constraints where possible
        (:meth:`bodi.constraints.ConstraintSet.repair`); unchanged without constraints."""
        if self._constraint_set is None:
            return X.clone()
        return self._constraint_set.repair(X, generator)

    def _sample_box(self, n: int, generator: torch.Generator | None = None) -> Tensor:
        """``n x dim`` uniform draws, constraints ignored."""
        X = torch.rand(n, self.dim, generator=generator, dtype=DTYPE)
        discrete = self.discrete_dims
        if discrete:
            k = self._upper[discrete] + 1
            X[:, discrete] = torch.minimum((X[:, discrete] * k).floor(), k - 1)
        integer = self.integer_dims
        if integer:
            steps = self._integer_steps[integer]
            X[:, integer] = torch.minimum((X[:, integer] * (steps + 1)).floor(), steps) / steps
        return X

    def contains(self, X: Tensor) -> Tensor:
        """Boolean mask (``n``) of rows that are valid encoded configurations."""
        X = torch.as_tensor(X, dtype=DTYPE)
        ok = torch.isfinite(X).all(-1)
        return ok & (self.round(X.nan_to_num()) == X).all(-1)

    # ---------------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """The space as JSON-ready data; a predicate constraint keeps only its name (it cannot
        be read back, see :func:`bodi.constraints.constraint_from_dict`)."""
        data: dict[str, Any] = {"parameters": [p.to_dict() for p in self.parameters]}
        if self.constraints:
            data["constraints"] = [c.to_dict() for c in self.constraints]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> SearchSpace:
        """Build a space from the documented JSON format (see ``to_dict``)."""
        if not isinstance(data, Mapping) or "parameters" not in data:
            raise ValueError('a search space must be an object with a "parameters" list')
        unknown = set(data) - {"parameters", "constraints"}
        if unknown:
            raise ValueError(f"search space: unknown field(s) {sorted(unknown)}")
        constraints = data.get("constraints", [])
        if not isinstance(constraints, list):
            raise ValueError('"constraints" must be a list')
        specs = data["parameters"]
        if not isinstance(specs, list):
            raise ValueError('"parameters" must be a list')
        parameters = [parameter_from_dict(spec, position) for position, spec in enumerate(specs)]
        return cls(parameters, [constraint_from_dict(c) for c in constraints])

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    @classmethod
    def from_json(cls, path_or_text: str | Path) -> SearchSpace:
        """Read a space from a JSON file path (or a JSON string)."""
        text = str(path_or_text)
        if not text.lstrip().startswith("{"):
            try:
                text = Path(path_or_text).read_text()
            except OSError as err:
                raise ValueError(f"cannot read search space file {path_or_text}: {err}") from err
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as err:
            raise ValueError(f"search space file is not valid JSON: {err}") from err
        return cls.from_dict(data)
