"""bodi.hed.kernel: the HED kernel, with its dictionary as a registered buffer."""

import pytest
import torch
from gpytorch.kernels import MaternKernel
from mixed_data import MIXED, mixed_data

from bodi.hed.dictionaries import make_dictionary
from bodi.hed.kernel import HammingEmbeddingKernel, _same_memory
from bodi.models.gp import make_hed_model
from bodi.neighbours import NeighbourMoves, embedding_hint
from bodi.space import Binary, Categorical, Continuous, Integer, SearchSpace
from bodi.study import create_study


def test_kernel_is_a_matern_of_the_normalised_embedding():
    dictionary = make_dictionary("diverse", 16, MIXED.cardinalities, seed=1)
    model = make_hed_model(*mixed_data(MIXED), MIXED, dictionary)
    kernel = next(k for k in model.covar_module.kernels if isinstance(k, HammingEmbeddingKernel))
    X = MIXED.sample(5, generator=torch.Generator().manual_seed(3))
    Z = X[:, MIXED.discrete_dims]
    direct = (dictionary.rows.unsqueeze(0) != Z.unsqueeze(1)).sum(-1) / len(MIXED.discrete_dims)
    torch.testing.assert_close(kernel.embed(Z), direct.to(Z))
    with torch.no_grad():
        K = kernel(X, X).to_dense()
        expected = kernel.base_kernel(direct.to(X), direct.to(X)).to_dense()
    torch.testing.assert_close(K, expected)


def test_the_dictionary_is_a_buffer_that_moves_and_saves_with_the_model():
    dictionary = make_dictionary("diverse", 8, MIXED.cardinalities, seed=4)
    model = make_hed_model(*mixed_data(MIXED), MIXED, dictionary)
    kernel = next(k for k in model.covar_module.kernels if isinstance(k, HammingEmbeddingKernel))
    names = {name for name, _ in model.named_buffers()}
    assert any(name.endswith("dictionary_rows") for name in names)
    assert any(name.endswith("projection") for name in names)
    assert any(key.endswith("projection") for key in model.state_dict())
    assert torch.equal(kernel.dictionary.rows, dictionary.rows)
    Z = MIXED.sample(4, generator=torch.Generator().manual_seed(1))[:, MIXED.discrete_dims]
    before = kernel.embed(Z)
    model.to(torch.float32)
    assert kernel.projection.dtype == torch.float32
    torch.testing.assert_close(kernel.embed(Z.float()), before.float())


def test_binary_columns_use_the_affine_form():
    space = SearchSpace([Binary(f"b{i}") for i in range(10)])
    dictionary = make_dictionary("diverse", 6, space.cardinalities, seed=0)
    kernel = HammingEmbeddingKernel(dictionary, base_kernel=None)
    assert kernel.affine and kernel.projection.shape == (6, 10)
    Z = space.sample(5, generator=torch.Generator().manual_seed(2))
    direct = (dictionary.rows.unsqueeze(0) != Z.unsqueeze(1)).sum(-1) / 10
    torch.testing.assert_close(kernel.embed(Z), direct.to(Z))


def test_equal_inputs_are_embedded_once_and_give_the_same_covariance():
    dictionary = make_dictionary("diverse", 8, MIXED.cardinalities, seed=0)
    kernel = make_hed_model(*mixed_data(MIXED), MIXED, dictionary).covar_module.kernels[0]
    Z = MIXED.sample(6, generator=torch.Generator().manual_seed(4))[:, MIXED.discrete_dims]
    calls = []
    embed = kernel.embed
    kernel.embed = lambda z: calls.append(z.shape) or embed(z)
    with torch.no_grad():
        same = kernel.forward(Z, Z.clone())
        assert len(calls) == 1
        apart = kernel.base_kernel.forward(embed(Z), embed(Z.clone()))
        diag = kernel.forward(Z, Z, diag=True)
    torch.testing.assert_close(same, apart)
    torch.testing.assert_close(diag, torch.diagonal(apart))
    assert len(calls) == 1  # a Matérn's diagonal needs no embedding


@pytest.mark.parametrize("kind, space", [
    ("diverse", MIXED),  # one-hot form (a categorical column), with ordinal columns
    ("diverse", SearchSpace([Binary(f"b{i}") for i in range(7)] + [Integer("k", 0, 3)])),
    ("gaussian", SearchSpace([Binary(f"b{i}") for i in range(7)])),  # real affine form
])
def test_neighbour_embeddings_equal_the_embeddings_of_the_neighbours(kind, space):
    dictionary = make_dictionary(kind, 16, space.cardinalities, seed=2)
    kernel = HammingEmbeddingKernel(dictionary, MaternKernel(nu=2.5),
                                    active_dims=space.discrete_dims)
    moves = NeighbourMoves(space)
    X = space.sample(5, generator=torch.Generator().manual_seed(5))
    _, new_values = moves.moved_values(X)
    fast = kernel.neighbour_embedding(X, moves.column, new_values)
    neighbours = moves.apply(X)[..., space.discrete_dims]
    torch.testing.assert_close(fast, kernel.embed(neighbours))
    # inside the hint the kernel uses them for equal inputs, and computes other inputs
    flat = moves.apply(X).reshape(-1, space.dim)
    with embedding_hint({kernel: fast.reshape(len(flat), -1) + 1.0}, flat):
        assert torch.equal(kernel.embed(flat[:, space.discrete_dims]),
                           fast.reshape(len(flat), -1) + 1.0)
        torch.testing.assert_close(kernel.embed(neighbours[:2]), fast[:2])
    assert kernel._hint is None


def test_views_of_the_hinted_points_are_recognised_without_comparing_them():
    space = SearchSpace([Binary(f"b{i}") for i in range(6)])
    dictionary = make_dictionary("diverse", 8, space.cardinalities, seed=0)
    kernel = HammingEmbeddingKernel(dictionary, MaternKernel(nu=2.5))
    X = space.sample(4, generator=torch.Generator().manual_seed(0))
    assert _same_memory(X, X.unsqueeze(-2).reshape(4, 6))
    assert not _same_memory(X, X.clone()) and not _same_memory(X[1:], X[:-1])
    hint = torch.zeros(4, 8, dtype=X.dtype)
    with embedding_hint({kernel: hint}, X):
        assert torch.equal(kernel.embed(X.unsqueeze(-2).reshape(4, 6)), hint)  # a view
        assert torch.equal(kernel.embed(X.clone()), hint)  # equal values, compared
        other = 1 - X
        torch.testing.assert_close(kernel.embed(other), kernel.embed(other.clone()))
        assert not torch.equal(kernel.embed(other), hint)


@pytest.mark.parametrize("space", [MIXED, SearchSpace([Binary(f"b{i}") for i in range(9)])])
def test_a_recent_input_is_embedded_again_only_when_it_or_the_projection_changed(space):
    import pickle
    from unittest import mock

    import bodi.hed.kernel as kernel_module

    dictionary = make_dictionary("diverse", 8, space.cardinalities, seed=0)
    kernel = HammingEmbeddingKernel(dictionary, MaternKernel(nu=2.5, ard_num_dims=8))
    g = torch.Generator().manual_seed(4)
    train = space.sample(6, generator=g)[:, space.discrete_dims]
    other = space.sample(5, generator=g)[:, space.discrete_dims]
    function = "affine_embedding" if kernel.affine else "onehot_embedding"
    original = getattr(kernel_module, function)
    with mock.patch.object(kernel_module, function, side_effect=original) as product:
        first = kernel.embed(train)
        for _ in range(3):  # the training inputs between batches of candidates: remembered
            kernel.embed(other.clone())
            torch.testing.assert_close(kernel.embed(train), first)
        assert product.call_count == 1 + 3
        expected = first.clone()
        train[0, 0] = 1 - train[0, 0]  # modified in place (a binary column)
        changed = kernel.embed(train)
        assert product.call_count == 5 and not torch.equal(changed, expected)
        fresh = HammingEmbeddingKernel(dictionary, MaternKernel(nu=2.5, ard_num_dims=8))
        torch.testing.assert_close(changed, fresh.embed(train.clone()))
        calls = product.call_count
        kernel.projection.mul_(-1)  # a new projection (as load_state_dict writes it)
        kernel.embed(train)
        assert product.call_count == calls + 1
        kernel.to(torch.float32)  # moves the projection: the remembered embedding is stale
        kernel.embed(train)
        assert product.call_count == calls + 2
        wanted = train.clone().requires_grad_()
        kernel.embed(wanted)
        kernel.embed(wanted)  # an input that requires a gradient is not remembered
        assert product.call_count == calls + 4
        kernel.embed(train)
        copy = pickle.loads(pickle.dumps(kernel))  # the memo's weak references stay behind
        torch.testing.assert_close(copy.embed(train), kernel.embed(train))
        assert product.call_count == calls + 5


def test_training_inputs_of_a_mixed_space_are_embedded_once(monkeypatch):
    """A kernel on a subset of the columns remembers its selection of the same input, so the
    training inputs keep their embedding across acquisition calls and likelihood evaluations."""
    import bodi.hed.kernel as kernel_module

    dictionary = make_dictionary("diverse", 8, MIXED.cardinalities, seed=0)
    model = make_hed_model(*mixed_data(MIXED, n=20), MIXED, dictionary)
    model.eval()
    embedded = []
    onehot = kernel_module.onehot_embedding
    monkeypatch.setattr(kernel_module, "onehot_embedding",
                        lambda Z, *args: embedded.append(len(Z)) or onehot(Z, *args))
    g = torch.Generator().manual_seed(5)
    kernel = model.covar_module.kernels[0]
    with torch.no_grad():
        for _ in range(3):
            parents = MIXED.sample(3, generator=g)
            kernel.discrete_columns(parents)  # as the local search does between calls
            model.posterior(MIXED.sample(7, generator=g).unsqueeze(-2))
    assert embedded == [20, 7, 7, 7]  # the 20 training inputs once, each batch of 7 once
    X = model.train_inputs[0]
    assert kernel.discrete_columns(X) is kernel.discrete_columns(X)
    assert torch.equal(kernel.discrete_columns(X), X[:, MIXED.discrete_dims])
    before = kernel.discrete_columns(X)
    X.add_(0.0)  # modified in place: selected again
    assert kernel.discrete_columns(X) is not before


def test_the_hamming_distance_kernel_is_a_matern_of_the_hamming_distance():
    """``k(z, z') = Matern(sqrt(H(z, z')) / l)`` on the discrete columns, whatever the others."""
    from bodi.hed.kernel import HammingDistanceKernel

    space = SearchSpace([Binary("a"), Categorical("c", ["x", "y", "z", "w"]), Continuous("u", 0, 1),
                         Binary("b"), Categorical("e", [1, 2, 3])])
    kernel = HammingDistanceKernel(space.cardinalities, MaternKernel(nu=2.5),
                                   active_dims=space.discrete_dims)
    kernel.base_kernel.lengthscale = 0.7
    X = space.sample(40, generator=torch.Generator().manual_seed(1))
    Z = X[:, space.discrete_dims]
    H = (Z.unsqueeze(1) != Z.unsqueeze(0)).sum(-1).to(X)
    r = 5 ** 0.5 * H.sqrt() / 0.7
    expected = (1 + r + r**2 / 3) * torch.exp(-r)
    with torch.no_grad():
        torch.testing.assert_close(kernel(X).to_dense(), expected)
        torch.testing.assert_close(kernel(X, diag=True), expected.diagonal())
    assert kernel.embedding_dim == 2 + 4 + 3


def test_the_many_row_limit_of_the_hed_distance_is_the_hamming_distance():
    """For binary points and uniformly random rows, ``||phi_A(z) - phi_A(z')||^2 / m`` tends
    to ``H(z, z')`` (the docstring's claim for :class:`HammingDistanceKernel`)."""
    from bodi.hed.embedding import hamming_embedding

    g = torch.Generator().manual_seed(0)
    d, m = 30, 200_000
    z = torch.randint(0, 2, (2, d), generator=g).double()
    A = torch.randint(0, 2, (m, d), generator=g).double()
    phi = hamming_embedding(z, A, [2] * d)
    squared = (phi[0] - phi[1]).pow(2).mean()
    assert abs(float(squared) - float((z[0] != z[1]).sum())) < 0.2


@pytest.mark.parametrize("space", [
    MIXED,  # categorical and ordinal columns beside the binary ones
    SearchSpace([Binary(f"b{i}") for i in range(9)]),  # every column (no active_dims)
])
def test_hamming_neighbour_distances_equal_the_distances_of_the_neighbours(space):
    """The neighbours' squared distances to the training rows follow from their parent's
    (``O(n)`` each), and a cross-covariance of the hinted points takes them."""
    from bodi.hed.kernel import HammingDistanceKernel

    columns = None if list(space.discrete_dims) == list(range(space.dim)) else space.discrete_dims
    kernel = HammingDistanceKernel(space.cardinalities, MaternKernel(nu=2.5), active_dims=columns)
    kernel.base_kernel.lengthscale = 1.3
    moves = NeighbourMoves(space)
    X = space.sample(4, generator=torch.Generator().manual_seed(5))
    train = space.sample(11, generator=torch.Generator().manual_seed(6))
    _, new_values = moves.moved_values(X)
    assert kernel.neighbour_embedding(X, moves.column, new_values) is None  # no reference yet
    with torch.no_grad():
        kernel(X, train).to_dense()  # a cross-covariance: the training rows become the reference
    with torch.no_grad():  # a batch of joint posteriors (a batch acquisition) is no reference
        kernel(X.unsqueeze(1), train[:8].reshape(4, 2, -1)).to_dense()
    fast = kernel.neighbour_embedding(X, moves.column, new_values)
    neighbours = moves.apply(X)
    Z, R = neighbours[..., space.discrete_dims], train[:, space.discrete_dims]
    H = (Z.unsqueeze(-2) != R).sum(-1).to(X)  # 4 x K x 11
    assert torch.equal(fast, H)
    flat = neighbours.reshape(-1, space.dim)
    with torch.no_grad():
        exact = kernel(flat, train).to_dense()
        with embedding_hint({kernel: fast.reshape(len(flat), -1) + 1.0}, flat):
            hinted = kernel(flat, train).to_dense()  # the hint is taken for these points
            other = kernel(flat[:3], train).to_dense()  # other points are computed
    assert not torch.allclose(hinted, exact)
    torch.testing.assert_close(other, exact[:3])
    r = (5 * (H.reshape(len(flat), -1) + 1.0)).sqrt() / 1.3
    torch.testing.assert_close(hinted, (1 + r + r**2 / 3) * torch.exp(-r))
    assert kernel._hint is None


def test_the_first_order_kernel_is_one_minus_the_normalised_hamming_distance():
    """``k(z, z') = 1 - H(z, z') / d``, the mean of the per-variable match indicators, on the
    discrete columns whatever the others; a covariance (positive semidefinite)."""
    from bodi.hed.kernel import FirstOrderKernel

    kernel = FirstOrderKernel(MIXED.cardinalities, active_dims=MIXED.discrete_dims)
    X = MIXED.sample(30, generator=torch.Generator().manual_seed(2))
    Z = X[:, MIXED.discrete_dims]
    matches = (Z.unsqueeze(1) == Z.unsqueeze(0)).to(X)  # 30 x 30 x d
    with torch.no_grad():
        K = kernel(X).to_dense()
        torch.testing.assert_close(K, matches.mean(-1))
        torch.testing.assert_close(kernel(X, diag=True), torch.ones(30, dtype=X.dtype))
        torch.testing.assert_close(kernel(X[:5], X[5:9], diag=False).to_dense(),
                                   matches[:5, 5:9].mean(-1))
    assert torch.linalg.eigvalsh(K).min() > -1e-10
    assert not any(True for _ in kernel.parameters())  # the output scale lives outside


def test_first_order_neighbour_distances_give_the_neighbours_covariances():
    """The local search's shortcut: the neighbours' distances from their parent's, and the
    covariance of the hinted neighbours equals the computed one."""
    from bodi.hed.kernel import FirstOrderKernel

    kernel = FirstOrderKernel(MIXED.cardinalities, active_dims=MIXED.discrete_dims)
    moves = NeighbourMoves(MIXED)
    X = MIXED.sample(3, generator=torch.Generator().manual_seed(7))
    train = MIXED.sample(9, generator=torch.Generator().manual_seed(8))
    _, new_values = moves.moved_values(X)
    with torch.no_grad():
        kernel(X, train).to_dense()
    fast = kernel.neighbour_embedding(X, moves.column, new_values)
    flat = moves.apply(X).reshape(-1, MIXED.dim)
    with torch.no_grad():
        exact = kernel(flat, train).to_dense()
        with embedding_hint({kernel: fast.reshape(len(flat), -1)}, flat):
            hinted = kernel(flat, train).to_dense()
    torch.testing.assert_close(hinted, exact)


def _kernels_of_every_kind():
    from gpytorch.kernels import RBFKernel

    from bodi.hed.kernel import FirstOrderKernel, HammingDistanceKernel

    dictionary = make_dictionary("diverse", 16, MIXED.cardinalities, seed=1)
    hed = HammingEmbeddingKernel(dictionary, MaternKernel(nu=2.5, ard_num_dims=16),
                                 active_dims=MIXED.discrete_dims)
    hed.base_kernel.lengthscale = torch.linspace(0.2, 1.5, 16)
    distance = HammingDistanceKernel(MIXED.cardinalities, MaternKernel(nu=2.5),
                                     active_dims=MIXED.discrete_dims)
    distance.base_kernel.lengthscale = 0.9
    encoded = HammingDistanceKernel(MIXED.cardinalities, RBFKernel(),  # not of the distance
                                    active_dims=MIXED.discrete_dims)
    return [hed, distance, encoded, FirstOrderKernel(MIXED.cardinalities,
                                                     active_dims=MIXED.discrete_dims)]


@pytest.mark.parametrize("kernel", _kernels_of_every_kind(),
                         ids=["hed", "hamming", "hamming-rbf", "first-order"])
def test_a_batch_against_rows_repeated_per_batch_equals_each_batch_alone(kernel):
    """A batch of joint posteriors (``b x q x dim``) meets the training rows repeated per batch
    (expanded, or copied as GPyTorch's prediction does): one flat cross-covariance gives each
    batch's own; rows that differ between batches are measured batch by batch."""
    X = MIXED.sample(6, generator=torch.Generator().manual_seed(11)).reshape(3, 2, -1)
    train = MIXED.sample(7, generator=torch.Generator().manual_seed(12))
    other = MIXED.sample(7, generator=torch.Generator().manual_seed(13))
    with torch.no_grad():
        each = torch.stack([kernel(X[i], train).to_dense() for i in range(3)])
        for rows in (train, train.expand(3, 7, -1), train.repeat(3, 1, 1)):
            torch.testing.assert_close(kernel(X, rows).to_dense(), each)
        if isinstance(kernel, HammingEmbeddingKernel):  # the repeated rows embedded once
            embedded = []
            embed = kernel.embed
            kernel.embed = lambda Z: embedded.append(Z.shape[:-1].numel()) or embed(Z)
            kernel(X, train.repeat(3, 1, 1)).to_dense()
            del kernel.embed
            assert sorted(embedded) == [6, 7]
        differing = torch.stack([train, other, train])
        expected = torch.stack([kernel(X[i], differing[i]).to_dense() for i in range(3)])
        torch.testing.assert_close(kernel(X, differing).to_dense(), expected)


def test_rows_shared_by_batch_only_for_a_batch_against_equal_batches():
    from bodi.hed.kernel import rows_shared_by_batch

    x1 = torch.zeros(4, 2, 3)
    rows = torch.arange(15.0).reshape(5, 3)
    assert rows_shared_by_batch(x1, rows) is rows
    assert torch.equal(rows_shared_by_batch(x1, rows.expand(4, 5, 3)), rows)
    assert torch.equal(rows_shared_by_batch(x1, rows.repeat(4, 1, 1)), rows)
    changed = rows.repeat(4, 1, 1)
    changed[2, 1, 0] += 1.0
    assert rows_shared_by_batch(x1, changed) is None
    assert rows_shared_by_batch(x1, rows.expand(4, 5, 3), diag=True) is None
    assert rows_shared_by_batch(x1[0], rows) is None  # not a batch
    assert rows_shared_by_batch(x1, rows.expand(2, 5, 3)) is None  # other batch shape


def test_a_batch_posterior_of_bodis_model_equals_each_batch_alone():
    """The joint posterior of a batch of candidates beside pending points (a q-batch
    acquisition's input), through GPyTorch's exact prediction, is each batch's own."""
    import bodi

    class WithFirstOrder(bodi.BODi):
        first_order_rule = True

    X, Y = mixed_data(MIXED, n=15)
    study = create_study(WithFirstOrder(MIXED, seed=0, dictionary_size=16))
    model = study.optimizer.make_model(X, Y, study.history)
    candidates = MIXED.sample(8, generator=torch.Generator().manual_seed(14)).reshape(4, 2, -1)
    with torch.no_grad():
        batch = model.posterior(candidates)
        for i in range(4):
            alone = model.posterior(candidates[i])
            torch.testing.assert_close(batch.mean[i], alone.mean)
            torch.testing.assert_close(batch.covariance_matrix[i], alone.covariance_matrix)
