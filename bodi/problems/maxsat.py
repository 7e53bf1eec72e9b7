"""Weighted MaxSAT from WCNF files (maximize the total weight of satisfied clauses).

File format (the classic WCNF of the MaxSAT Evaluations): lines starting with ``c`` are comments,
``p wcnf NVARS NCLAUSES [TOP]`` is the header, and each further line is one clause
``WEIGHT LIT LIT ... 0`` where a literal ``i > 0`` means ``x_i = 1`` and ``-i`` means ``x_i = 0``
(variables are 1-based in the file and named ``x1 .. xN`` in the search space). Hard clauses
(weight ``TOP``) are treated as ordinary clauses of that weight.

Objective: ``f(x) = sum_c w_c [clause c satisfied]``. With ``weighting="literature"`` (COMBO,
CASMOPOLITAN, BODi) the weights are z-scored over all clauses, ``(w - mean(w)) / std(w)`` with
the population standard deviation; ``weighting="raw"`` keeps the file's weights.

The evaluation is vectorised: a sparse clause x variable matrix ``M`` holds ``+1`` for a positive
and ``-1`` for a negative literal, so the number of true literals of every clause for a batch
``X`` is ``X M^T + (number of negative literals)``; a clause is satisfied iff that is positive.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.problems.base import Problem
from bodi.space import DTYPE, Binary, SearchSpace

WEIGHTINGS = ("literature", "raw")

#: The paper's instance (MaxSAT Evaluation 2018, weighted crafted track).
MAXSAT60_FILE = "frb10-6-4.wcnf"
MAXSAT60_ENV = "BODI_MAXSAT60"
#: frb10-6-4 is 10 groups of 6 mutually exclusive variables (each group a clique of 2-clauses
#: ``61 -a -b 0``, plus edges between groups), with a unit clause ``1 i 0`` per variable. One
#: independent set of size 10, i.e. a raw optimum 638 * 61 + 10 = 38928:
MAXSAT60_RAW_OPTIMUM = 38928.0
MAXSAT60_INDEPENDENT_SET = (6, 8, 14, 21, 30, 36, 37, 46, 50, 60)


class WCNF(NamedTuple):
    """A weighted CNF instance: ``n_vars``, clause ``weights`` (float64) and ``clauses``.

    ``clauses`` is a list of tuples of signed 1-based literals (``3`` is ``x3``, ``-3`` is
    ``not x3``). Being a tuple, ``n_vars, weights, clauses = read_wcnf(path)`` unpacks it.
    """

    n_vars: int
    weights: Tensor
    clauses: list[tuple[int, ...]]


def _int_token(token: str, lineno: int, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise ValueError(
            f"line {lineno}: non-numeric {what} {token!r} (expected an integer)"
        ) from None


def read_wcnf(path: str | Path) -> WCNF:
    """Read and validate a WCNF file; errors are ``ValueError`` naming the line number."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ValueError(f"cannot read WCNF file {path}: {err}") from err
    where = f"WCNF file {path}"
    n_vars = n_declared = header_line = None
    weights: list[float] = []
    clauses: list[tuple[int, ...]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("c"):
            continue
        tokens = line.split()
        if tokens[0] == "p":
            if header_line is not None:
                raise ValueError(
                    f"{where}, line {lineno}: second header (the first is on line {header_line})"
                )
            if len(tokens) not in (4, 5) or tokens[1] != "wcnf":
                raise ValueError(
                    f"{where}, line {lineno}: garbled header {line!r} "
                    "(expected 'p wcnf NVARS NCLAUSES TOP')"
                )
            try:
                numbers = [int(t) for t in tokens[2:4]]
                if len(tokens) == 5:
                    float(tokens[4])
            except ValueError:
                raise ValueError(
                    f"{where}, line {lineno}: garbled header {line!r} "
                    "(NVARS, NCLAUSES and TOP must be numbers)"
                ) from None
            n_vars, n_declared = numbers
            if n_vars < 1 or n_declared < 0:
                raise ValueError(
                    f"{where}, line {lineno}: garbled header {line!r} "
                    "(needs NVARS >= 1 and NCLAUSES >= 0)"
                )
            header_line = lineno
            continue
        if header_line is None:
            raise ValueError(
                f"{where}, line {lineno}: missing header 'p wcnf NVARS NCLAUSES TOP' "
                "before the first clause"
            )
        try:
            weight = float(tokens[0])
        except ValueError:
            raise ValueError(
                f"{where}, line {lineno}: non-numeric clause weight {tokens[0]!r}"
            ) from None
        if not math.isfinite(weight) or weight <= 0:
            raise ValueError(
                f"{where}, line {lineno}: clause weight must be a positive number, "
                f"got {tokens[0]!r}"
            )
        try:
            literals = [_int_token(t, lineno, "literal") for t in tokens[1:]]
        except ValueError as err:
            raise ValueError(f"{where}, {err}") from None
        if not literals or literals[-1] != 0:
            raise ValueError(f"{where}, line {lineno}: clause is not terminated by 0")
        literals = literals[:-1]
        if 0 in literals:
            raise ValueError(
                f"{where}, line {lineno}: 0 inside the clause (one clause per line, ending in 0)"
            )
        for literal in literals:
            if abs(literal) > n_vars:
                raise ValueError(
                    f"{where}, line {lineno}: literal {literal} out of range "
                    f"(variables are 1..{n_vars})"
                )
        weights.append(weight)
        clauses.append(tuple(literals))
    if header_line is None:
        raise ValueError(f"{where}: empty file (no header 'p wcnf NVARS NCLAUSES TOP', no clauses)")
    if len(clauses) != n_declared:
        raise ValueError(
            f"{where}: the header on line {header_line} declares {n_declared} clauses "
            f"but the file has {len(clauses)}"
        )
    return WCNF(n_vars, torch.tensor(weights, dtype=DTYPE), clauses)


def _format_weight(weight: float) -> str:
    return str(int(weight)) if float(weight).is_integer() else repr(float(weight))


def write_wcnf(
    path: str | Path,
    n_vars: int,
    weights: Tensor | Sequence[float],
    clauses: Sequence[Sequence[int]],
    comment: str | None = None,
) -> Path:
    """Write an instance as a WCNF file (``TOP`` = sum of weights + 1); returns the path.

    ``write_wcnf(path, *instance)`` writes a :class:`WCNF`.
    """
    weights = [float(w) for w in torch.as_tensor(weights, dtype=DTYPE).tolist()]
    if len(weights) != len(clauses):
        raise ValueError(f"{len(weights)} weights for {len(clauses)} clauses")
    lines = [f"c {part}" for part in (comment or "").splitlines()]
    top = _format_weight(math.floor(sum(weights)) + 1)
    lines.append(f"p wcnf {n_vars} {len(clauses)} {top}")
    for weight, clause in zip(weights, clauses, strict=True):
        lines.append(" ".join([_format_weight(weight), *(str(int(lit)) for lit in clause), "0"]))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


def clause_weights(weights: Tensor, weighting: str) -> Tensor:
    """The weights used by the objective: z-scored (``"literature"``) or as given (``"raw"``)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {list(WEIGHTINGS)}, got {weighting!r}")
    weights = torch.as_tensor(weights, dtype=DTYPE)
    if weighting == "raw":
        return weights
    std = weights.std(unbiased=False) if len(weights) else torch.tensor(0.0, dtype=DTYPE)
    if not std > 0:
        raise ValueError(
            "all clause weights are equal, so z-scoring them is undefined; use weighting='raw'"
        )
    return (weights - weights.mean()) / std


def satisfied(instance: WCNF, X: Tensor) -> Tensor:
    """``... x n_clauses`` boolean tensor: which clauses each row of ``X`` (0/1) satisfies."""
    n_vars, _, clauses = instance
    return _satisfier(n_vars, clauses)(X)


def _satisfier(n_vars: int, clauses: Sequence[Sequence[int]]):
    rows, cols, values = [], [], []
    n_negative = torch.zeros(len(clauses), dtype=DTYPE)
    for c, clause in enumerate(clauses):
        for literal in clause:
            rows.append(c)
            cols.append(abs(literal) - 1)
            values.append(1.0 if literal > 0 else -1.0)
            if literal < 0:
                n_negative[c] += 1
    # Duplicate entries are summed by coalesce(): `1 1 0` counts x1 twice (still > 0 iff x1 = 1)
    # and a tautology `i -i` gets 0 here and 1 negative literal, so it is always satisfied.
    M = torch.sparse_coo_tensor(
        torch.tensor([rows, cols], dtype=torch.long).reshape(2, -1),
        torch.tensor(values, dtype=DTYPE),
        (len(clauses), n_vars),
        check_invariants=True,
    ).coalesce()

    def evaluate(X: Tensor) -> Tensor:
        X = torch.as_tensor(X, dtype=DTYPE)
        if X.shape[-1] != n_vars:
            raise ValueError(f"expected ... x {n_vars} inputs, got shape {tuple(X.shape)}")
        flat = X.reshape(-1, n_vars)
        true_literals = torch.sparse.mm(M, flat.T).T + n_negative
        return (true_literals > 0.5).reshape(*X.shape[:-1], len(clauses))

    return evaluate


def maxsat_problem(
    instance: WCNF,
    name: str,
    weighting: str = "literature",
    optimal_value: float | None = None,
    optimal_params: dict | None = None,
) -> Problem:
    """A :class:`Problem` (maximize) from an in-memory instance."""
    n_vars, weights, clauses = instance
    w = clause_weights(weights, weighting)
    sat = _satisfier(n_vars, clauses)
    space = SearchSpace([Binary(f"x{i + 1}") for i in range(n_vars)])

    def evaluate(X: Tensor) -> Tensor:
        return sat(X).to(DTYPE) @ w

    return Problem(name, space, evaluate, "maximize", optimal_value, optimal_params)


def maxsat(path: str | Path, weighting: str = "literature", name: str | None = None) -> Problem:
    """Weighted MaxSAT read from the WCNF file ``path`` (maximize; optimum unknown).

    The default name is the file's stem, with ``-raw`` appended for ``weighting="raw"``.
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {list(WEIGHTINGS)}, got {weighting!r}")
    if name is None:
        name = Path(path).stem + ("-raw" if weighting == "raw" else "")
    return maxsat_problem(read_wcnf(path), name, weighting)


def random_wcnf(
    n_vars: int,
    n_clauses: int | None = None,
    seed: int = 0,
    clause_lengths: tuple[int, int] = (1, 3),
    max_weight: int = 100,
) -> WCNF:
    """A seeded random weighted instance.

    ``n_clauses`` (default ``10 * n_vars``) clauses; each has a length drawn uniformly from
    ``clause_lengths`` (inclusive, capped at ``n_vars``), distinct variables, random signs and
    an integer weight uniform in ``1 .. max_weight``; all drawn from
    ``numpy.random.default_rng(seed)``.
    """
    n_vars = check_integer("n_vars", n_vars)
    n_clauses = 10 * n_vars if n_clauses is None else n_clauses
    n_clauses = check_integer("n_clauses", n_clauses, 2)
    low, high = clause_lengths
    if not 1 <= low <= high:
        raise ValueError(f"clause_lengths must be (low, high) with 1 <= low <= high, got "
                         f"{clause_lengths!r}")
    if max_weight < 2:
        raise ValueError(f"max_weight must be >= 2, got {max_weight!r}")
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.integers(low, high + 1, size=n_clauses), n_vars)
    weights = rng.integers(1, max_weight + 1, size=n_clauses)
    clauses = []
    for length in lengths:
        variables = rng.choice(n_vars, size=int(length), replace=False) + 1
        signs = rng.integers(0, 2, size=int(length)) * 2 - 1
        clauses.append(tuple(int(v) for v in variables * signs))
    return WCNF(n_vars, torch.tensor(weights, dtype=DTYPE), clauses)


def random_maxsat(
    n_vars: int,
    n_clauses: int | None = None,
    seed: int = 0,
    clause_lengths: tuple[int, int] = (1, 3),
    max_weight: int = 100,
    weighting: str = "literature",
    name: str | None = None,
) -> Problem:
    """Weighted MaxSAT on :func:`random_wcnf` (no file needed); named ``maxsat-random<N>``."""
    instance = random_wcnf(n_vars, n_clauses, seed, clause_lengths, max_weight)
    if name is None:
        name = f"maxsat-random{n_vars}" + ("-raw" if weighting == "raw" else "")
    return maxsat_problem(instance, name, weighting)


#: the group size of frb10-6-4, and the share of the cross-group variable pairs that are edges
#: in it (488 of the 1575 pairs that its independent set allows)
FRB_GROUP_SIZE = 6
FRB_EDGE_DENSITY = 488 / 1575


class FRBInstance(NamedTuple):
    """A forced-satisfiable instance in the style of frb10-6-4 and its planted optimum."""

    instance: WCNF
    #: the 1-based variables of the planted independent set, one per group
    independent_set: tuple[int, ...]


def frb_wcnf(
    n_vars: int, seed: int = 0, group_size: int = FRB_GROUP_SIZE,
    density: float = FRB_EDGE_DENSITY,
) -> FRBInstance:
    """A maximum-independent-set MaxSAT instance built like frb10-6-4, at any size.

    The ``n_vars`` variables form ``n_vars / group_size`` groups. Every pair inside a group is
    an edge; a pair of variables of different groups is an edge with probability ``density``,
    except the pairs of a planted independent set with one variable per group (model RB's
    forced satisfiability). Each edge is a clause ``-a -b`` of weight ``n_vars + 1`` and each
    variable a unit clause ``i`` of weight 1, as in the file. Drawn from
    ``numpy.random.default_rng(seed)``.

    The raw optimum is known by construction: no independent set has two variables of one
    group, so the planted set (one per group) satisfies every edge clause and the largest
    possible number of unit clauses. ``tests/problems/test_problems.py`` confirms it with an
    exact MaxSAT solver (python-sat's RC2).
    """
    if isinstance(n_vars, bool) or not isinstance(n_vars, int) or n_vars < 2 * group_size:
        raise ValueError(f"n_vars must be an integer >= {2 * group_size}, got {n_vars!r}")
    if n_vars % group_size:
        raise ValueError(f"n_vars must be a multiple of the group size {group_size}, "
                         f"got {n_vars}")
    if not 0 <= density < 1:
        raise ValueError(f"density must be in [0, 1), got {density!r}")
    rng = np.random.default_rng(seed)
    groups = np.arange(n_vars).reshape(-1, group_size)
    planted = groups[np.arange(len(groups)), rng.integers(0, group_size, len(groups))]
    group_of = np.repeat(np.arange(len(groups)), group_size)
    a, b = np.triu_indices(n_vars, k=1)
    same = group_of[a] == group_of[b]
    both_planted = np.isin(a, planted) & np.isin(b, planted)
    edge = same | (~both_planted & (rng.random(len(a)) < density))
    clauses = [(-int(i) - 1, -int(j) - 1) for i, j in zip(a[edge], b[edge], strict=True)]
    clauses += [(i + 1,) for i in range(n_vars)]
    weights = [float(n_vars + 1)] * int(edge.sum()) + [1.0] * n_vars
    instance = WCNF(n_vars, torch.tensor(weights, dtype=DTYPE), clauses)
    return FRBInstance(instance, tuple(int(v) + 1 for v in sorted(planted)))


def frb_maxsat(n_vars: int, seed: int = 0, weighting: str = "literature") -> Problem:
    """MaxSAT on :func:`frb_wcnf` (maximize), named ``maxsat-frb<N>``, with its exact optimum.

    With z-scored weights the optimum is the all-zeros point, as for maxsat60 (the unit clauses
    get negative and the edge clauses positive weight, and all-zeros satisfies exactly the
    edges); with ``weighting="raw"`` it is the planted independent set. Its ``-shifted`` twin
    moves the optimum to a random point.
    """
    instance, independent_set = frb_wcnf(n_vars, seed)
    name = f"maxsat-frb{n_vars}" + ("-raw" if weighting == "raw" else "")
    x = torch.zeros(1, n_vars, dtype=DTYPE)
    if weighting == "raw":
        x[0, [i - 1 for i in independent_set]] = 1.0
    problem = maxsat_problem(instance, name, weighting)
    value = float(problem.evaluate_encoded(x)[0])
    return maxsat_problem(instance, name, weighting, value, problem.space.decode(x)[0])


def find_maxsat60(path: str | Path | None = None) -> Path:
    """Locate frb10-6-4.wcnf: ``path``, else ``$BODI_MAXSAT60``, else the copy shipped with
    bodi (``bodi/problems/data``; a public MaxSAT Evaluation 2018 instance)."""
    if path is not None:
        candidates = [Path(path)]
    elif os.environ.get(MAXSAT60_ENV):
        candidates = [Path(os.environ[MAXSAT60_ENV])]
    else:
        candidates = [Path(__file__).resolve().parent / "data" / MAXSAT60_FILE]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"maxsat60 needs the instance {MAXSAT60_FILE} (MaxSAT Evaluation 2018, weighted crafted "
        "track); looked for "
        + ", ".join(str(c) for c in candidates)
        + f". Pass --wcnf PATH (or set {MAXSAT60_ENV}=PATH)."
    )


def maxsat60(path: str | Path | None = None, weighting: str = "literature") -> Problem:
    """The paper's MaxSAT problem: frb10-6-4 (60 variables, 698 clauses), maximize.

    Known optima: with z-scored weights the all-zeros point (the unit clauses carry negative
    weight, every 2-clause positive weight), value 195.6527...; with raw weights 38928 at an
    independent set of size 10 (:data:`MAXSAT60_INDEPENDENT_SET`).
    """
    file = find_maxsat60(path)
    instance = read_wcnf(file)
    if instance.n_vars != 60 or len(instance.clauses) != 698:
        raise ValueError(
            f"{file} is not {MAXSAT60_FILE}: expected 60 variables and 698 clauses, got "
            f"{instance.n_vars} and {len(instance.clauses)}"
        )
    name = "maxsat60" + ("-raw" if weighting == "raw" else "")
    x = torch.zeros(1, 60, dtype=DTYPE)
    if weighting == "raw":
        x[0, [i - 1 for i in MAXSAT60_INDEPENDENT_SET]] = 1.0
    problem = maxsat_problem(instance, name, weighting)
    value = float(problem.evaluate_encoded(x)[0])
    if weighting == "raw":
        known = value == MAXSAT60_RAW_OPTIMUM
    else:  # all zeros satisfies exactly the clauses of positive z-scored weight: a maximum
        w = clause_weights(instance.weights, weighting)
        known = bool((satisfied(instance, x)[0] == (w > 0)).all())
    if not known:
        raise ValueError(f"{file} is not {MAXSAT60_FILE}: its known optimum does not hold")
    return maxsat_problem(instance, name, weighting, value, problem.space.decode(x)[0])
