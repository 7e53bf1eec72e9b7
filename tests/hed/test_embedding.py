"""bodi.hed.embedding and Dictionary.embed: the HED embedding as one matrix product."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bodi.hed.dictionaries import Dictionary, make_dictionary
from bodi.hed.embedding import affine_embedding, hamming_embedding, one_hot

PROPERTY = settings(max_examples=80, deadline=None, derandomize=True)


def direct_hamming(Z: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """``... x m`` count of differing coordinates, without any algebra."""
    Zr = Z.reshape(-1, Z.shape[-1])
    counts = (A.unsqueeze(0) != Zr.unsqueeze(1)).sum(-1)
    return counts.reshape(*Z.shape[:-1], A.shape[0]).to(torch.float64)


@st.composite
def problems(draw, kind: str, batched: bool = False):
    """Cardinalities, an m x d dictionary and inputs (n x d, or b x q x d when batched)."""
    d = draw(st.integers(1, 12))
    if kind == "binary":
        cards = [2] * d
    elif kind == "categorical":
        cards = draw(st.lists(st.integers(3, 9), min_size=d, max_size=d))
    else:  # mixed binary + categorical, at least one of each
        cards = draw(st.lists(st.sampled_from([2, 2, 3, 4, 7]), min_size=d, max_size=d))
        cards = [*cards, 2, 5]
        cards = draw(st.permutations(cards))
    d = len(cards)
    m = draw(st.integers(1, 10))
    shape = (
        (draw(st.integers(1, 3)), draw(st.integers(1, 4)))
        if batched
        else (draw(st.integers(1, 6)),)
    )
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    high = torch.tensor(cards, dtype=torch.float64)

    def points(*lead):
        u = torch.rand(*lead, d, generator=generator, dtype=torch.float64)
        return (u * high).floor()

    A = points(m)
    # Make some inputs coincide with dictionary rows (distance 0 must come out exactly).
    Z = points(*shape)
    if draw(st.booleans()):
        Z.reshape(-1, d)[0] = A[0]
    return cards, A, Z


def _check(cards, A, Z):
    expected = direct_hamming(Z, A)
    got = hamming_embedding(Z, A, cards)
    assert got.shape == (*Z.shape[:-1], A.shape[0])
    assert got.dtype == torch.float64
    assert torch.equal(got, expected)
    embedded = Dictionary(rows=A, cardinalities=tuple(cards), kind="diverse").embed(Z)
    assert torch.equal(embedded, expected)
    assert ((expected >= 0) & (expected <= len(cards))).all()


@PROPERTY
@given(problems("binary"))
def test_binary_embedding_is_the_hamming_distance(problem):
    _check(*problem)


@PROPERTY
@given(problems("categorical"))
def test_categorical_embedding_is_the_hamming_distance(problem):
    _check(*problem)


@PROPERTY
@given(problems("mixed"))
def test_mixed_embedding_is_the_hamming_distance(problem):
    _check(*problem)


@PROPERTY
@given(
    st.sampled_from(["binary", "categorical", "mixed"]).flatmap(
        lambda kind: problems(kind, batched=True)
    )
)
def test_batched_embedding_is_the_hamming_distance(problem):
    cards, A, Z = problem
    assert Z.ndim == 3
    _check(cards, A, Z)
    # Each batch slice equals the embedding of that slice on its own.
    for b in range(Z.shape[0]):
        assert torch.equal(hamming_embedding(Z[b], A, cards), direct_hamming(Z[b], A))


@PROPERTY
@given(st.integers(1, 12), st.integers(1, 10), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_proposition_1_affine_identity(d, m, n, seed):
    """2 phi_A(z) = d 1_m - (2A - 1)(2z - 1) for binary A and z."""
    generator = torch.Generator().manual_seed(seed)
    A = (torch.rand(m, d, generator=generator) < 0.5).to(torch.float64)
    Z = (torch.rand(n, d, generator=generator) < 0.5).to(torch.float64)
    phi = direct_hamming(Z, A)
    rhs = d - (2 * Z - 1) @ (2 * A - 1).T
    assert torch.equal(2 * phi, rhs)
    assert torch.equal(affine_embedding(Z, 2 * A - 1), phi)


@PROPERTY
@given(st.integers(1, 12), st.integers(1, 10), st.integers(0, 2**32 - 1))
def test_made_dictionaries_embed_as_hamming_distances(d, m, seed):
    generator = torch.Generator().manual_seed(seed)
    for kind, cards in [
        ("diverse", [2] * d),
        ("wavelet", [2] * d),
        ("naive", [2] * d),
        ("diverse", [2, *[4] * d]),
        ("naive", [*[3] * d, 2]),
    ]:
        dictionary = make_dictionary(kind, m, cards, seed=generator)
        high = torch.tensor(cards, dtype=torch.float64)
        Z = (torch.rand(5, len(cards), generator=generator, dtype=torch.float64) * high).floor()
        assert torch.equal(dictionary.embed(Z), direct_hamming(Z, dictionary.rows))


def test_gaussian_dictionary_uses_the_affine_form():
    dictionary = make_dictionary("gaussian", 6, [2] * 5, seed=0)
    Z = torch.tensor([[0, 1, 1, 0, 1], [1, 1, 1, 1, 1]], dtype=torch.float64)
    expected = 0.5 * (5 - (2 * Z - 1) @ dictionary.rows.T)
    assert torch.allclose(dictionary.embed(Z), expected, rtol=0, atol=1e-12)


def test_embedding_follows_the_input_dtype():
    A = torch.tensor([[0, 2, 1], [1, 0, 0]], dtype=torch.float64)
    Z = torch.tensor([[0, 2, 0], [1, 1, 1]], dtype=torch.float32)
    out = hamming_embedding(Z, A, [2, 3, 2])
    assert out.dtype == torch.float32
    assert out.tolist() == [[1.0, 2.0], [2.0, 2.0]]


# ---------------------------------------------------------------------- one_hot
@PROPERTY
@given(
    st.lists(st.integers(1, 7), min_size=1, max_size=8),
    st.integers(1, 5),
    st.integers(0, 2**32 - 1),
)
def test_one_hot_rows_sum_to_d_with_ones_at_the_offsets(cards, n, seed):
    generator = torch.Generator().manual_seed(seed)
    high = torch.tensor(cards, dtype=torch.float64)
    Z = (torch.rand(n, len(cards), generator=generator, dtype=torch.float64) * high).floor()
    H = one_hot(Z, cards)
    assert H.shape == (n, sum(cards))
    assert H.dtype == Z.dtype
    assert set(H.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(H.sum(-1), torch.full((n,), float(len(cards)), dtype=torch.float64))
    offsets = [sum(cards[:j]) for j in range(len(cards))]
    for i in range(n):
        for j, tau in enumerate(cards):
            block = H[i, offsets[j] : offsets[j] + tau]
            assert block.sum() == 1
            assert block[int(Z[i, j])] == 1


def test_one_hot_small_example_and_batches():
    Z = torch.tensor([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0]])
    expected = torch.tensor(
        [[1, 0, 0, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 0]],
        dtype=torch.float32,
    )
    assert torch.equal(one_hot(Z, [2, 3, 2]), expected)
    batch = torch.stack([Z, Z.flip(0)])  # 2 x 2 x 3
    out = one_hot(batch, [2, 3, 2])
    assert out.shape == (2, 2, 7)
    assert torch.equal(out[0], expected)
    assert torch.equal(out[1], expected.flip(0))


def test_one_hot_rounds_near_integer_inputs():
    Z = torch.tensor([[0.9999999, 1.0000001]], dtype=torch.float64)
    assert one_hot(Z, [2, 3]).tolist() == [[0.0, 1.0, 0.0, 1.0, 0.0]]


@pytest.mark.parametrize("cards", [[2], [5], [2, 2, 2], [3, 1, 4]])
def test_embedding_of_a_row_against_itself_is_zero(cards):
    high = torch.tensor(cards, dtype=torch.float64)
    A = (
        torch.rand(4, len(cards), generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        * high
    ).floor()
    assert torch.equal(
        torch.diagonal(hamming_embedding(A, A, cards)), torch.zeros(4, dtype=torch.float64)
    )
