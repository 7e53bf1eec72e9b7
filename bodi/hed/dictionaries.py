"""Dictionary constructions for the HED embedding (paper, Sec. 3 and appendix).

Every constructor takes the dictionary size ``m``, the discrete structure of the space and a
seed or ``torch.Generator``, and returns an ``m x d`` tensor of row values (indices
``0 .. tau_j - 1`` per column, ``float64``), except :func:`gaussian_random`, which returns the real
projection ``Abar`` of Proposition 1's affine form. :func:`make_dictionary` wraps any of them in a
:class:`Dictionary` that computes the embedding.

==============  =========================================================  ==================
name            construction                                               spaces
==============  =========================================================  ==================
``diverse``     Alg. 1 (binary) / appendix Alg. 3 (categorical, mixed)     any discrete
``anchored``    Alg. 1's spread of distances for any discrete variables     any discrete
``wavelet``     appendix Alg. 4, sub-sampled to d columns, rows uniform    binary only
``naive``       every entry uniform over its values                        any discrete
``gaussian``    ``Abar ~ N(0, 1)`` in the affine form (Prop. 1)            binary only
==============  =========================================================  ==================
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.device import DTYPE
from bodi.hed.embedding import affine_embedding, one_hot, onehot_embedding
from bodi.seeding import as_generator

DICTIONARY_KINDS = ("diverse", "anchored", "wavelet", "naive", "gaussian")
#: dictionaries defined for binary variables only
BINARY_ONLY_DICTIONARIES = ("wavelet", "gaussian")
#: dictionaries without discrete rows, which cannot be relabelled around a reference point
UNRELABELLABLE_DICTIONARIES = ("gaussian",)


def dictionary_problem(kind: str, cardinalities: Sequence[int] | None = None,
                       relabelled: bool = False) -> str | None:
    """Why a dictionary of ``kind`` cannot serve discrete variables with ``cardinalities``
    (``None``: any), relabelled around a reference point if ``relabelled``; ``None`` if it can.
    The one home of these rules: :func:`make_dictionary`, BODi's options and the surrogates
    ask it."""
    if kind not in DICTIONARY_KINDS:
        return f"unknown dictionary {kind!r}; choose one of {list(DICTIONARY_KINDS)}"
    if (kind in BINARY_ONLY_DICTIONARIES and cardinalities is not None
            and not all(int(c) == 2 for c in cardinalities)):
        return (f"the {kind!r} dictionary is defined for binary variables only; "
                "use 'diverse', 'anchored' or 'naive' with categorical variables")
    if relabelled and kind in UNRELABELLABLE_DICTIONARIES:
        return (f"a {kind.capitalize()} dictionary has no discrete rows to relabel around a "
                "reference")
    return None


def check_dictionary(kind: str, cardinalities: Sequence[int] | None = None,
                     relabelled: bool = False) -> None:
    """Raise ``ValueError`` with :func:`dictionary_problem`'s reason, if there is one."""
    problem = dictionary_problem(kind, cardinalities, relabelled)
    if problem is not None:
        raise ValueError(problem)


def _check_size(m: int, d: int) -> None:
    m = check_integer("dictionary size m", m)
    if d < 1:
        raise ValueError("a dictionary needs at least one discrete variable")


def diverse_random_binary(m: int, d: int, seed: int | torch.Generator | None = None) -> Tensor:
    """Algorithm 1: per row ``theta ~ U(0, 1)``, then ``d`` bits ``~ Bernoulli(theta)``.

    Returns:
        ``m x d`` tensor of zeros and ones.
    """
    _check_size(m, d)
    g = as_generator(seed)
    theta = torch.rand(m, 1, generator=g, dtype=DTYPE)
    return (torch.rand(m, d, generator=g, dtype=DTYPE) < theta).to(DTYPE)


def diverse_random_categorical(
    m: int, cardinalities: Sequence[int], seed: int | torch.Generator | None = None
) -> Tensor:
    """Appendix Algorithm 3 for categorical variables of different sizes.

    For each row, ``theta`` is drawn uniformly from the ``tau_max``-simplex; for each variable
    ``j`` a subsample of ``tau_j`` entries of ``theta`` (without replacement), normalised, is the
    categorical distribution from which the row's ``j``-th value is drawn.

    Returns:
        ``m x d`` tensor of indices, column ``j`` in ``0 .. tau_j - 1``.
    """
    cards = list(cardinalities)
    d = len(cards)
    _check_size(m, d)
    g = as_generator(seed)
    tau_max = max(cards)
    # theta ~ Dirichlet(1, ..., 1): normalised exponentials.
    theta = -torch.log(torch.rand(m, tau_max, generator=g, dtype=DTYPE).clamp_min(1e-300))
    theta = theta / theta.sum(-1, keepdim=True)
    # Per (row, variable) a random subset of tau_j of the tau_max weights, kept in theta's order:
    # value k of every variable takes the k-th chosen weight, so a row whose theta is peaked
    # favours low-index values across all variables (the categorical analogue of a sparse row).
    perm = torch.rand(m, d, tau_max, generator=g, dtype=DTYPE).argsort(-1)
    keep = torch.arange(tau_max) < torch.tensor(cards).unsqueeze(-1)  # d x tau_max
    chosen = perm.masked_fill(~keep, tau_max).sort(-1).values  # chosen indices first, sorted
    chosen = chosen.clamp(max=tau_max - 1)  # masked slots are zeroed below
    weights = torch.gather(theta.unsqueeze(1).expand(m, d, tau_max), -1, chosen)
    weights = weights * keep
    weights = weights / weights.sum(-1, keepdim=True)
    draws = torch.multinomial(weights.reshape(m * d, tau_max), 1, generator=g)
    return draws.reshape(m, d).to(DTYPE)


def anchored_random_categorical(
    m: int, cardinalities: Sequence[int], seed: int | torch.Generator | None = None
) -> Tensor:
    """Algorithm 1's distances for any discrete variables: per row ``t ~ U(0, 1)``; each
    variable keeps the value ``0`` with probability ``t`` and otherwise takes one of its other
    values, drawn as Algorithm 3 draws a row over them (``theta`` from the simplex).

    So a row's Hamming distance to the all-zeros point (the reference, once the rows are
    relabelled) is ``Binomial(d, 1 - t)``, spread evenly from ``0`` to ``d`` over the rows, as
    Algorithm 1's are for binary variables (with which it coincides: :func:`make_dictionary`
    calls :func:`diverse_random_binary` when every variable is binary). Algorithm 3's rows keep
    value ``0`` with a ``Beta(1, tau - 1)`` probability, so with ``tau = 5`` values a row
    rarely comes near the reference: the embedding has few rows that resolve the points next
    to it.

    Returns:
        ``m x d`` tensor of indices, column ``j`` in ``0 .. tau_j - 1``.
    """
    cards = [int(c) for c in cardinalities]
    _check_size(m, len(cards))
    g = as_generator(seed)
    keep = torch.rand(m, 1, generator=g, dtype=DTYPE)
    others = 1.0 + diverse_random_categorical(m, [c - 1 for c in cards], g)
    return torch.where(torch.rand(m, len(cards), generator=g, dtype=DTYPE) < keep, 0.0, others)


def binary_wavelet_matrix(n: int) -> Tensor:
    """Appendix Algorithm 4: the ``n x n`` binary wavelet transform matrix ``B_n`` (``n`` even).

    ``B_n = [[Gamma, Delta], [Delta^T, Lambda]]`` with ``Gamma = [[1, 1], [1, not B_{n-4}]]``,
    ``Delta`` two columns ``1, 0, 1, 0, ...`` and ``Lambda = [[1, 1], [1, 0]]``.

    The recursion also covers ``n = 4`` (``Gamma`` all ones), giving second row ``[1, 1, 0, 0]``
    as in the authors' code; the paper's printed base case ``[1, 0, 0, 0]`` disagrees with its
    own recursion (both versions are full rank).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2 or n % 2:
        raise ValueError(f"the binary wavelet matrix needs an even size >= 2, got {n!r}")
    if n == 2:
        return torch.tensor([[1.0, 1.0], [1.0, 0.0]], dtype=DTYPE)
    B = torch.ones(n, n, dtype=DTYPE)
    if n > 4:
        B[2 : n - 2, 2 : n - 2] = 1.0 - binary_wavelet_matrix(n - 4)
    alternating = (torch.arange(n - 2) % 2 == 0).to(DTYPE)  # 1, 0, 1, 0, ...
    B[: n - 2, n - 2 :] = alternating.unsqueeze(-1)
    B[n - 2 :, : n - 2] = alternating.unsqueeze(0)
    B[n - 2 :, n - 2 :] = torch.tensor([[1.0, 1.0], [1.0, 0.0]], dtype=DTYPE)
    return B


def binary_wavelet(m: int, d: int, seed: int | torch.Generator | None = None) -> Tensor:
    """Sub-sampled binary wavelet dictionary (appendix, "Dictionary construction via binary
    wavelets").

    ``B_n`` is built for ``n``, the next power of two ``>= d``; ``d`` of its columns are kept
    (chosen uniformly, in order) and ``m`` rows are drawn uniformly. Rows are drawn without
    replacement while ``m <= n``; a larger ``m`` cycles through fresh permutations, so duplicate
    rows appear (they add nothing to the model).

    Returns:
        ``m x d`` tensor of zeros and ones.
    """
    _check_size(m, d)
    g = as_generator(seed)
    n = max(2, 1 << (d - 1).bit_length())
    B = binary_wavelet_matrix(n)
    columns = torch.randperm(n, generator=g)[:d].sort().values
    rows = torch.cat([torch.randperm(n, generator=g) for _ in range(math.ceil(m / n))])[:m]
    return B[rows][:, columns]


def naive_random(
    m: int, cardinalities: Sequence[int], seed: int | torch.Generator | None = None
) -> Tensor:
    """Na\u00efve random dictionary: every entry uniform over its values (``theta = 1/2`` for bits).

    Returns:
        ``m x d`` tensor of indices.
    """
    cards = torch.tensor(list(cardinalities), dtype=DTYPE)
    _check_size(m, len(cards))
    g = as_generator(seed)
    u = torch.rand(m, len(cards), generator=g, dtype=DTYPE)
    return torch.minimum((u * cards).floor(), cards - 1)


def gaussian_random(m: int, d: int, seed: int | torch.Generator | None = None) -> Tensor:
    """Gaussian random "dictionary": ``Abar ~ N(0, I)`` used in the affine form of Prop. 1.

    Returns:
        ``m x d`` real matrix ``Abar`` (not a set of points of the space).
    """
    _check_size(m, d)
    return torch.randn(m, d, generator=as_generator(seed), dtype=DTYPE)


@dataclass(frozen=True)
class Dictionary:
    """A dictionary and the HED embedding it defines.

    Attributes:
        rows: ``m x d`` row values (indices), or the real ``Abar`` when ``kind == "gaussian"``.
        cardinalities: number of values of each of the ``d`` discrete variables.
        kind: the construction (one of :data:`DICTIONARY_KINDS`).
        projection: what the embedding multiplies by: ``Abar = 2A - 1`` (``m x d``, binary
            columns or ``kind == "gaussian"``; Proposition 1) or the one-hot rows
            (``m x sum(cardinalities)``).
        affine: whether the embedding is Proposition 1's affine form.
    """

    rows: Tensor
    cardinalities: tuple[int, ...]
    kind: str = "diverse"
    projection: Tensor = field(init=False, repr=False, compare=False)
    affine: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        affine = self.kind == "gaussian" or all(c == 2 for c in self.cardinalities)
        if affine:
            # Prop. 1: phi = (d - zbar Abar^T) / 2 with Abar = 2A - 1 (or Gaussian).
            projection = self.rows if self.kind == "gaussian" else 2.0 * self.rows - 1.0
        else:
            projection = one_hot(self.rows, self.cardinalities)
        object.__setattr__(self, "affine", affine)
        object.__setattr__(self, "projection", projection)

    @property
    def m(self) -> int:
        return self.rows.shape[0]

    @property
    def d(self) -> int:
        return self.rows.shape[1]

    def embed(self, Z: Tensor) -> Tensor:
        """``... x d`` discrete inputs -> ``... x m`` Hamming distances (one matrix product)."""
        if self.affine:
            return affine_embedding(Z, self.projection)
        return onehot_embedding(Z, self.projection, self.cardinalities)


def make_dictionary(
    kind: str,
    m: int,
    cardinalities: Sequence[int],
    seed: int | torch.Generator | None = None,
    reference: Tensor | None = None,
) -> Dictionary:
    """Build a dictionary of the given kind for discrete variables with ``cardinalities``.

    ``diverse`` uses Algorithm 1 when every variable is binary and the categorical algorithm
    (binary variables as two-valued categoricals) otherwise.

    ``reference`` (a ``d`` vector of values) relabels the rows around that point:
    ``a_ij -> (a_ij + r_j) mod C_j`` (XOR for binary variables). Since
    ``H(a XOR r, z) = H(a, z XOR r)``, the embedding then treats ``r`` as the construction treats
    the all-zeros point: a diverse dictionary's nearly-all-zeros and nearly-all-ones rows sit
    next to ``r`` and its complement instead of at fixed corners of the space.
    """
    cards = tuple(int(c) for c in cardinalities)
    binary = all(c == 2 for c in cards)
    check_dictionary(kind, cards, relabelled=reference is not None)
    if kind in ("diverse", "anchored"):  # Algorithm 1 on bits, its categorical forms otherwise
        categorical = (diverse_random_categorical if kind == "diverse"
                       else anchored_random_categorical)
        rows = (diverse_random_binary(m, len(cards), seed) if binary
                else categorical(m, cards, seed))
    elif kind == "wavelet":
        rows = binary_wavelet(m, len(cards), seed)
    elif kind == "naive":
        rows = naive_random(m, cards, seed)
    else:
        rows = gaussian_random(m, len(cards), seed)
    if reference is not None:
        reference = torch.as_tensor(reference, dtype=rows.dtype).reshape(-1)
        if reference.shape[0] != len(cards):
            raise ValueError(f"reference has {reference.shape[0]} values for {len(cards)} "
                             "variables")
        rows = torch.remainder(rows + reference, torch.tensor(cards, dtype=rows.dtype))
    return Dictionary(rows=rows, cardinalities=cards, kind=kind)


def coherence(A: Tensor) -> int:
    """``mu_A = max_{i != j} max(h(a_i, a_j), h(not a_i, a_j))`` of Proposition 3 (binary ``A``).

    A single row has no pair; its ``mu`` is taken as ``d``.
    """
    m, d = A.shape
    if m < 2:
        return d
    h = (A.unsqueeze(1) != A.unsqueeze(0)).sum(-1)
    off_diagonal = ~torch.eye(m, dtype=torch.bool)
    return int(torch.maximum(h, d - h)[off_diagonal].max())


def cardinality_bound(A: Tensor) -> float:
    """Proposition 3's upper bound on ``|{phi_A(z) : z in {0,1}^d}|`` for a binary ``A``."""
    m, d = A.shape
    mu = coherence(A)
    return float(((mu + 1) * (d + 1 - mu)) ** (m // 2) * (d + 1) ** (m % 2))
