"""bodi.hed.dictionaries: the dictionary constructions and Proposition 3's cardinality bound."""

from __future__ import annotations

import itertools

import pytest
import torch

from bodi.hed.dictionaries import (
    DICTIONARY_KINDS,
    Dictionary,
    anchored_random_categorical,
    binary_wavelet,
    binary_wavelet_matrix,
    cardinality_bound,
    coherence,
    diverse_random_binary,
    diverse_random_categorical,
    gaussian_random,
    make_dictionary,
    naive_random,
)
from bodi.hed.embedding import hamming_embedding
from bodi.seeding import as_generator

BINARY = [2] * 12
CATEGORICAL = [3, 5, 2, 7, 4, 2, 10]
POINT_KINDS = ("diverse", "anchored", "wavelet", "naive")  # rows are points of the space


def _assert_valid_points(rows: torch.Tensor, cardinalities: list[int], m: int) -> None:
    assert rows.shape == (m, len(cardinalities))
    assert rows.dtype == torch.float64
    assert torch.equal(rows, rows.round()), "values must be integers"
    upper = torch.tensor(cardinalities, dtype=torch.float64) - 1
    assert (rows >= 0).all()
    assert (rows <= upper).all(), "column j must be in 0 .. tau_j - 1"


# --------------------------------------------------------------------- valid rows
@pytest.mark.parametrize("m", [1, 7, 64, 130])
@pytest.mark.parametrize("kind", POINT_KINDS)
def test_binary_dictionaries_are_points_of_the_space(kind, m):
    for seed in range(3):
        dictionary = make_dictionary(kind, m, BINARY, seed)
        assert isinstance(dictionary, Dictionary)
        assert (dictionary.m, dictionary.d, dictionary.kind) == (m, len(BINARY), kind)
        assert dictionary.cardinalities == tuple(BINARY)
        _assert_valid_points(dictionary.rows, BINARY, m)


@pytest.mark.parametrize("m", [1, 9, 200])
@pytest.mark.parametrize("kind", ["diverse", "anchored", "naive"])
@pytest.mark.parametrize("cardinalities", [CATEGORICAL, [2, 3], [2, 2, 2, 9], [4]])
def test_categorical_dictionaries_are_points_of_the_space(kind, m, cardinalities):
    for seed in range(3):
        dictionary = make_dictionary(kind, m, cardinalities, seed)
        _assert_valid_points(dictionary.rows, cardinalities, m)


@pytest.mark.parametrize(("m", "d"), [(1, 1), (5, 12), (40, 3)])
def test_gaussian_dictionary_is_a_real_matrix(m, d):
    dictionary = make_dictionary("gaussian", m, [2] * d, seed=0)
    rows = dictionary.rows
    assert rows.shape == (m, d)
    assert rows.dtype == torch.float64
    assert torch.isfinite(rows).all()
    assert not torch.equal(rows, rows.round())  # real-valued, not a set of points
    assert torch.equal(rows, gaussian_random(m, d, seed=0))


def test_low_level_constructors_shapes():
    assert diverse_random_binary(6, 4, 0).shape == (6, 4)
    assert diverse_random_categorical(6, [2, 3, 4], 0).shape == (6, 3)
    assert anchored_random_categorical(6, [2, 3, 4], 0).shape == (6, 3)
    assert binary_wavelet(6, 5, 0).shape == (6, 5)
    assert naive_random(6, [2, 3], 0).shape == (6, 2)
    assert gaussian_random(6, 3, 0).shape == (6, 3)


# --------------------------------------------------------------------- determinism
@pytest.mark.parametrize(
    ("kind", "cardinalities"),
    [(k, BINARY) for k in DICTIONARY_KINDS]
    + [(k, CATEGORICAL) for k in ("diverse", "anchored", "naive")],
)
def test_same_seed_same_dictionary(kind, cardinalities):
    a = make_dictionary(kind, 40, cardinalities, seed=123)
    b = make_dictionary(kind, 40, cardinalities, seed=123)
    assert torch.equal(a.rows, b.rows)
    # A torch.Generator is accepted, and one seeded like the int gives the same rows.
    c = make_dictionary(kind, 40, cardinalities, seed=torch.Generator().manual_seed(123))
    assert torch.equal(a.rows, c.rows)
    d = make_dictionary(kind, 40, cardinalities, seed=124)
    assert not torch.equal(a.rows, d.rows)


def test_a_generator_is_consumed_not_copied():
    generator = torch.Generator().manual_seed(5)
    assert as_generator(generator) is generator
    first = diverse_random_binary(10, 8, generator)
    second = diverse_random_binary(10, 8, generator)
    assert not torch.equal(first, second)
    replay = torch.Generator().manual_seed(5)
    assert torch.equal(diverse_random_binary(10, 8, replay), first)
    assert torch.equal(diverse_random_binary(10, 8, replay), second)


def test_seed_none_draws_a_fresh_seed():
    assert isinstance(as_generator(None), torch.Generator)
    assert make_dictionary("diverse", 4, BINARY, None).rows.shape == (4, len(BINARY))


# ------------------------------------------------------------------- diversity
def test_diverse_binary_rows_span_all_densities_but_naive_rows_do_not():
    diverse = make_dictionary("diverse", 256, [2] * 60, seed=0).rows.mean(-1)
    assert diverse.min() < 0.15
    assert diverse.max() > 0.85
    naive = make_dictionary("naive", 256, [2] * 60, seed=0).rows.mean(-1)
    assert ((naive - 0.5).abs() <= 0.25).all()
    # The spread of the row densities: ~U(0, 1) (sd 0.29) versus ~N(0.5, 0.065).
    assert diverse.std() > 0.2
    assert naive.std() < 0.1


@pytest.mark.parametrize("kind", ["diverse", "anchored"])
def test_diverse_categorical_columns_use_every_value(kind):
    rows = make_dictionary(kind, 3000, CATEGORICAL, seed=0).rows
    for j, tau in enumerate(CATEGORICAL):
        assert set(rows[:, j].tolist()) == set(map(float, range(tau))), (j, tau)


def test_diverse_categorical_rows_concentrate_more_than_naive_ones():
    """Alg. 3 draws every entry of a row from one theta ~ U(simplex): rows reuse a few heavy
    values (like the binary rows' spread of densities); naive rows are uniform per entry."""
    cards = [6] * 40

    def top_share(rows):  # fraction of each row taken by its most frequent value
        counts = torch.nn.functional.one_hot(rows.long(), 6).sum(-2)
        return counts.max(-1).values / rows.shape[-1]

    diverse = top_share(make_dictionary("diverse", 400, cards, seed=0).rows)
    naive = top_share(make_dictionary("naive", 400, cards, seed=0).rows)
    assert diverse.mean() > naive.mean() + 0.1
    assert diverse.max() > naive.max()


def test_anchored_rows_spread_their_distance_to_the_reference_like_binary_diverse_rows():
    """Alg. 1's rows are Bernoulli(theta) with theta ~ U(0, 1): their distance to the all-zeros
    point is spread evenly over 0 .. d. Alg. 3's categorical rows with 5 values keep value 0
    with a Beta(1, 4) probability, so most rows lie far from it; anchored rows keep it with a
    U(0, 1) probability, as the binary rows do, and take every other value otherwise."""
    d, cards = 60, [5] * 60
    binary = make_dictionary("diverse", 512, [2] * d, seed=0).rows.ne(0).double().mean(-1)
    diverse = make_dictionary("diverse", 512, cards, seed=0).rows.ne(0).double().mean(-1)
    anchored_rows = make_dictionary("anchored", 512, cards, seed=0).rows
    anchored = anchored_rows.ne(0).double().mean(-1)
    near = 0.3  # a row within 30% of d of the reference
    assert (binary < near).double().mean() > 0.2
    assert (anchored < near).double().mean() > 0.2
    assert (diverse < near).double().mean() < 0.05
    assert abs(anchored.mean() - 0.5) < 0.05
    assert abs(anchored.std() - binary.std()) < 0.05
    assert set(anchored_rows[anchored_rows > 0].tolist()) == {1.0, 2.0, 3.0, 4.0}


def test_anchored_equals_diverse_on_binary_variables():
    for seed in range(3):
        assert torch.equal(make_dictionary("anchored", 40, BINARY, seed).rows,
                           make_dictionary("diverse", 40, BINARY, seed).rows)


# ------------------------------------------------------------------ wavelets
def _wavelet_reference(n: int) -> list[list[int]]:
    """The recursion documented in binary_wavelet_matrix, written out independently.

    B_2 = [[1, 1], [1, 0]]; for n >= 4, B_n = [[Gamma, Delta], [Delta^T, Lambda]] where
    Gamma is (n-2) x (n-2) of ones except its lower-right (n-4) x (n-4) block, which is
    not B_{n-4}; Delta has two equal columns 1, 0, 1, 0, ...; Lambda = [[1, 1], [1, 0]].
    """
    if n == 2:
        return [[1, 1], [1, 0]]
    inner = _wavelet_reference(n - 4) if n > 4 else []
    B = [[1] * n for _ in range(n)]
    for i, row in enumerate(inner):
        for j, value in enumerate(row):
            B[2 + i][2 + j] = 1 - value
    for i in range(n - 2):
        B[i][n - 2] = B[i][n - 1] = B[n - 2][i] = B[n - 1][i] = 1 - i % 2
    B[n - 1][n - 1] = 0
    return B


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64])
def test_wavelet_matrix_is_binary_and_full_rank(n):
    B = binary_wavelet_matrix(n)
    assert B.shape == (n, n)
    assert B.dtype == torch.float64
    assert set(B.unique().tolist()) <= {0.0, 1.0}
    assert int(torch.linalg.matrix_rank(B)) == n
    assert len({tuple(row) for row in B.tolist()}) == n  # distinct rows


def test_wavelet_matrix_base_case_b2():
    assert binary_wavelet_matrix(2).tolist() == [[1.0, 1.0], [1.0, 0.0]]


def test_wavelet_matrix_base_case_b4():
    assert binary_wavelet_matrix(4).tolist() == [
        [1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 0.0, 0.0],
        [1.0, 0.0, 1.0, 1.0],
        [1.0, 0.0, 1.0, 0.0],
    ]


@pytest.mark.parametrize(
    "n",
    [2, 4, 6, 8, 10, 12, 14, 16, 18, 30, 32, 64],
)
def test_wavelet_matrix_follows_the_documented_recursion(n):
    assert binary_wavelet_matrix(n).long().tolist() == _wavelet_reference(n)


@pytest.mark.parametrize("n", [6, 8, 16, 64])
def test_wavelet_matrix_block_structure(n):
    """The blocks outside Gamma's inner part, independent of the base case."""
    B = binary_wavelet_matrix(n)
    alternating = torch.tensor([1.0 - i % 2 for i in range(n - 2)], dtype=torch.float64)
    assert torch.equal(B[: n - 2, n - 2], alternating)
    assert torch.equal(B[: n - 2, n - 1], alternating)
    assert torch.equal(B[n - 2, : n - 2], alternating)
    assert torch.equal(B[n - 1, : n - 2], alternating)
    assert B[n - 2 :, n - 2 :].tolist() == [[1.0, 1.0], [1.0, 0.0]]
    assert (B[:2, : n - 2] == 1).all() and (B[: n - 2, :2] == 1).all()
    assert torch.equal(B[2 : n - 2, 2 : n - 2], 1.0 - binary_wavelet_matrix(n - 4))


@pytest.mark.parametrize("n", [0, 1, 3, 5, 7, -2, 2.0, 4.0, True, "4", None])
def test_wavelet_matrix_rejects_odd_or_invalid_sizes(n):
    with pytest.raises(ValueError, match="even size"):
        binary_wavelet_matrix(n)


def _common_columns(A: torch.Tensor, B: torch.Tensor) -> list[int] | None:
    """Increasing columns S with every row of A equal to B[r, S] for some row r, or None."""
    rows = B.long().tolist()
    target = A.long().tolist()
    d, n = A.shape[1], B.shape[1]

    def search(j: int, start: int, candidates: list[list[int]]) -> list[int] | None:
        if j == d:
            return []
        for c in range(start, n - (d - j) + 1):
            narrowed = []
            for i, rs in enumerate(candidates):
                keep = [r for r in rs if rows[r][c] == target[i][j]]
                if not keep:
                    break
                narrowed.append(keep)
            else:
                rest = search(j + 1, c + 1, narrowed)
                if rest is not None:
                    return [c, *rest]
        return None

    return search(0, 0, [list(range(B.shape[0])) for _ in target])


@pytest.mark.parametrize("d", [33, 50, 60])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_subsampled_wavelet_rows_are_column_subsamples_of_b64(d, seed):
    B64 = binary_wavelet_matrix(64)
    A = binary_wavelet(64, d, seed)
    assert A.shape == (64, d)
    S = _common_columns(A, B64)
    assert S is not None
    assert len(S) == d
    assert sorted(set(S)) == S
    # A larger m cycles through the rows again.
    big = binary_wavelet(150, d, seed)
    assert _common_columns(big, B64) is not None


def test_common_columns_helper_rejects_a_random_matrix():
    noise = (torch.rand(8, 50, generator=torch.Generator().manual_seed(0)) < 0.5).double()
    assert _common_columns(noise, binary_wavelet_matrix(64)) is None


@pytest.mark.parametrize(("d", "n"), [(1, 2), (2, 2), (3, 4), (4, 4), (8, 8), (9, 16), (32, 32)])
def test_wavelet_dictionary_uses_the_next_power_of_two(d, n):
    B = binary_wavelet_matrix(n)
    A = binary_wavelet(n, d, seed=3)
    assert _common_columns(A, B) is not None
    if d == n:  # every column kept: exactly the rows of B_n, permuted
        assert sorted(A.tolist()) == sorted(B.tolist())


# ------------------------------------------------------------------ Proposition 3
def _all_binary_inputs(d: int) -> torch.Tensor:
    return torch.tensor(list(itertools.product([0.0, 1.0], repeat=d)), dtype=torch.float64)


@pytest.mark.parametrize("d", range(2, 11))
def test_number_of_distinct_embeddings_is_within_the_bound(d):
    Z = _all_binary_inputs(d)
    for kind in POINT_KINDS:
        for m in (1, 2, 3, 5, 8):
            for seed in (0, 1, 2):
                dictionary = make_dictionary(kind, m, [2] * d, seed)
                A = dictionary.rows
                embedding = dictionary.embed(Z)
                assert torch.equal(embedding, hamming_embedding(Z, A, [2] * d))
                distinct = torch.unique(embedding, dim=0).shape[0]
                bound = cardinality_bound(A)
                assert distinct <= bound, (kind, m, seed, distinct, bound)
                assert distinct <= 2**d


def test_bound_is_attained_by_a_single_row():
    # m = 1: phi(z) = h(a, z) takes every value 0..d, and the bound is d + 1.
    for d in (2, 5, 9):
        A = torch.zeros(1, d, dtype=torch.float64)
        distinct = torch.unique(hamming_embedding(_all_binary_inputs(d), A, [2] * d), dim=0)
        assert distinct.shape[0] == cardinality_bound(A) == d + 1


@pytest.mark.parametrize(
    ("rows", "mu"),
    [
        ([[0, 1, 0, 1], [0, 1, 0, 1]], 4),  # duplicate rows
        ([[0, 1, 1, 0, 1, 0], [0, 1, 1, 0, 1, 0]], 6),
        ([[0, 1, 0, 1], [1, 0, 1, 0]], 4),  # complementary rows
        ([[0, 0, 0, 0], [1, 1, 0, 0]], 2),  # differ in exactly d/2 positions
        ([[1, 0, 1, 0, 1, 0], [0, 1, 0, 0, 1, 0]], 3),
        ([[0, 0, 0, 0], [1, 0, 0, 0]], 3),  # distance 1: max(1, d - 1)
        ([[0, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0]], 2),
        ([[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]], 3),
        ([[0, 1, 1]], 3),  # a single row: d by convention
    ],
)
def test_coherence_of_hand_made_dictionaries(rows, mu):
    A = torch.tensor(rows, dtype=torch.float64)
    assert coherence(A) == mu


def test_cardinality_bound_formula():
    # m = 2, d = 4, mu = 2: (mu + 1)(d + 1 - mu) = 9.
    assert cardinality_bound(torch.tensor([[0.0, 0, 0, 0], [1, 1, 0, 0]])) == 9.0
    # Duplicate rows (mu = d): (d + 1) * 1.
    assert cardinality_bound(torch.tensor([[0.0, 1, 0, 1], [0, 1, 0, 1]])) == 5.0
    # m = 3 adds a factor d + 1.
    assert cardinality_bound(torch.tensor([[0.0, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0]])) == 45.0


# ----------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kind", "m", "cardinalities", "message"),
    [
        ("random", 4, [2, 2], "unknown dictionary"),
        ("Diverse", 4, [2, 2], "unknown dictionary"),
        ("", 4, [2, 2], "unknown dictionary"),
        ("wavelet", 4, [2, 3], "binary variables only"),
        ("gaussian", 4, [3, 3], "binary variables only"),
        ("wavelet", 4, [2, 2, 5], "binary variables only"),
        ("diverse", 0, [2, 2], "positive integer"),
        ("diverse", -3, [2, 3], "positive integer"),
        ("naive", 0, [2, 3], "positive integer"),
        ("wavelet", 0, [2, 2], "positive integer"),
        ("gaussian", -1, [2, 2], "positive integer"),
        ("diverse", 2.5, [2, 2], "positive integer"),
        ("diverse", True, [2, 2], "positive integer"),
        ("diverse", 4, [], "at least one discrete variable"),
        ("naive", 4, [], "at least one discrete variable"),
    ],
)
def test_make_dictionary_errors(kind, m, cardinalities, message):
    with pytest.raises(ValueError, match=message):
        make_dictionary(kind, m, cardinalities, seed=0)


def test_reference_relabels_the_rows_around_a_point():
    """H(a + r, z) = H(a, z - r): a relabelled dictionary sees the space shifted by r."""
    cards = [2, 3, 4, 2, 5]
    g = torch.Generator().manual_seed(0)
    r = torch.tensor([1.0, 2.0, 3.0, 0.0, 4.0])
    plain = make_dictionary("diverse", 16, cards, seed=3)
    relabelled = make_dictionary("diverse", 16, cards, seed=3, reference=r)
    modulus = torch.tensor(cards, dtype=torch.float64)
    z = torch.stack([torch.randint(0, c, (20,), generator=g) for c in cards], -1).double()
    assert torch.allclose(relabelled.embed(z), plain.embed(torch.remainder(z - r, modulus)))
    # the reference point now plays the all-zeros point's role
    assert torch.allclose(relabelled.embed(r.unsqueeze(0)), plain.embed(torch.zeros(1, 5)))
    with pytest.raises(ValueError, match="Gaussian"):
        make_dictionary("gaussian", 4, [2] * 5, seed=0, reference=torch.zeros(5))
    with pytest.raises(ValueError, match="reference has 2 values"):
        make_dictionary("diverse", 4, cards, seed=0, reference=torch.zeros(2))
