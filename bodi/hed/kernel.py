"""The HED kernel: a base kernel on the Hamming embedding of the discrete columns; and its
exact-distance limit, a base kernel of the Hamming distance."""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel
from torch import Tensor

from bodi.hed.dictionaries import Dictionary
from bodi.hed.embedding import affine_embedding, one_hot, onehot_embedding


class HammingEmbeddingKernel(Kernel):
    r"""``k(z, z') = k_base(phi_A(z) / d, phi_A(z') / d)`` (paper, Sec. 3 and Theorem 1).

    The embedding ``phi_A`` (one matrix product, Proposition 1 for binary columns, a one-hot
    product for categorical ones) is divided by the number ``d`` of discrete variables so that
    its coordinates lie in ``[0, 1]``, the scale BoTorch's lengthscale priors assume. The base
    kernel (Matérn-5/2 with one ARD lengthscale per dictionary row in
    :func:`bodi.models.gp.make_hed_model`) owns all hyperparameters.

    The dictionary's projection matrix (``Abar = 2A - 1``, ``m x d``, or the one-hot rows,
    ``m x sum(cardinalities)``) is a registered buffer, so ``model.to(device, dtype)`` moves it
    with the model and ``state_dict()`` saves it.

    Args:
        dictionary: the ``m x d`` dictionary.
        base_kernel: a kernel on ``m``-dimensional inputs.
        active_dims: the ``d`` columns of the input holding the discrete variables.
    """

    has_lengthscale = False

    def __init__(
        self, dictionary: Dictionary, base_kernel: Kernel, active_dims: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(active_dims=active_dims, **kwargs)
        self.register_buffer("dictionary_rows", dictionary.rows.clone())
        self.register_buffer("projection", dictionary.projection.clone())
        self.cardinalities = dictionary.cardinalities
        self.kind = dictionary.kind
        self.affine = dictionary.affine
        self.base_kernel = base_kernel

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())  # GPyTorch's Kernel returns its own __dict__
        state.pop("_recent", None)  # weak references do not pickle; a copy recomputes
        state.pop("_selections", None)
        return state

    @property
    def dictionary(self) -> Dictionary:
        """The dictionary, rebuilt from the buffer (on the buffer's device)."""
        return Dictionary(rows=self.dictionary_rows, cardinalities=self.cardinalities,
                          kind=self.kind)

    _hint: tuple[Tensor, Tensor] | None = None
    _recent: tuple[tuple[weakref.ref, int, Tensor, int, Tensor], ...] = ()

    def embed(self, Z: Tensor) -> Tensor:
        """``... x d`` discrete inputs -> ``... x m`` normalised embedding in ``[0, 1]``.

        Inside :meth:`hint_embedding`, inputs equal to the hinted ones take the hinted
        embedding (checked exactly: a view of the hinted rows at once, other inputs by
        comparison, ``O(N d)`` against the product's ``O(N d m)``).

        The last two embedded inputs are remembered: the training inputs are embedded once
        per fit and once per acquisition optimization, not once per likelihood evaluation and
        per batch of candidates (``O(n d m)`` each time). A remembered input is reused only
        while it is the same tensor (alive, through a weak reference, and the same memory),
        unmodified (its version counter) and embedded by the same, unmodified projection;
        inputs that require a gradient are not remembered, and pickling forgets them all."""
        hint = self._hint
        if hint is not None and hint[0].shape == Z.shape and (
            _same_memory(hint[0], Z) or torch.equal(hint[0].to(Z), Z)
        ):
            return hint[1].to(Z)
        for entry in self._recent:
            inputs, version, projection, projection_version, phi = entry
            inputs = inputs()  # None once the remembered input is freed
            if (inputs is not None and _same_memory(inputs, Z) and Z._version == version
                    and _same_memory(projection, self.projection)
                    and self.projection._version == projection_version):
                self._recent = (entry, *(e for e in self._recent if e is not entry))
                return phi
        if self.affine:
            phi = affine_embedding(Z, self.projection)
        else:
            phi = onehot_embedding(Z, self.projection, self.cardinalities)
        phi = phi / len(self.cardinalities)
        if not (Z.requires_grad or phi.requires_grad):
            entry = (weakref.ref(Z), Z._version, self.projection, self.projection._version, phi)
            self._recent = (entry, *self._recent[:1])
        return phi

    _selections: tuple[tuple[weakref.ref, int, Tensor], ...] = ()

    def discrete_columns(self, X: Tensor) -> Tensor:
        """The kernel's ``d`` columns of ``X`` (``... x dim``), as ``... x d`` (``X`` itself
        when the kernel takes every column).

        GPyTorch copies the ``active_dims`` of its inputs on every call, so the training inputs
        would be a new tensor, and miss :meth:`embed`'s memory, at every likelihood evaluation
        and every acquisition call (an ``O(n d m)`` product each time). The selections of the
        last four inputs are remembered (while the same tensor, unmodified, as in
        :meth:`embed`): an acquisition call selects from its candidates and from the training
        inputs, and the local search from its parents and their neighbours in between; with
        four, the training inputs of a mixed space are embedded once per ask (counted on
        ackley53: 11 times with three). Inputs that require a gradient are copied afresh."""
        if self.active_dims is None:
            return X
        for entry in self._selections:
            source, version, Z = entry
            source = source()
            if source is not None and _same_memory(source, X) and X._version == version:
                self._selections = (entry, *(e for e in self._selections if e is not entry))
                return Z
        Z = X.index_select(-1, self.active_dims.to(X.device))
        if not X.requires_grad:
            self._selections = ((weakref.ref(X), X._version, Z), *self._selections[:3])
        return Z

    def __call__(self, x1: Tensor, x2: Tensor | None = None, **params: Any) -> Any:
        """GPyTorch's call on :meth:`discrete_columns` of the inputs (equal to its own
        selection of ``active_dims``, but remembered)."""
        dims = self.active_dims
        if dims is None:
            return super().__call__(x1, x2, **params)
        z1 = self.discrete_columns(x1)
        z2 = None if x2 is None else z1 if x2 is x1 else self.discrete_columns(x2)
        self.active_dims = None  # the selection is done (as GPyTorch's lazy evaluation does)
        try:
            return super().__call__(z1, z2, **params)
        finally:
            self.active_dims = dims

    @contextmanager
    def hint_embedding(self, X: Tensor, phi: Tensor) -> Iterator[None]:
        """Within the block, inputs equal to the discrete columns of ``X`` (``N x dim``) embed
        as ``phi`` (``N x m``) instead of being computed (see :meth:`embed`); the local search
        knows its neighbours' embeddings (:meth:`neighbour_embedding`)."""
        try:
            self._hint = (self.discrete_columns(X), phi)
            yield
        finally:
            self._hint = None

    def neighbour_embedding(self, X: Tensor, column: Tensor, new_values: Tensor) -> Tensor:
        """Normalised embeddings (``b x K x m``) of the ``K`` one-parameter neighbours of each
        row of ``X`` (``b x dim``, the full encoded input): neighbour ``k`` sets column
        ``column[k]`` to ``new_values[:, k]``. One change moves each coordinate of the
        embedding by a known amount: ``[z_j = a_ij] - [z'_j = a_ij]`` for a Hamming distance,
        ``-(z'_j - z_j) Abar_ij`` in the affine form; so this costs ``O(b K m)``, where
        embedding the neighbours costs ``O(b K d m)``. Columns outside the kernel's
        ``active_dims`` leave the embedding unchanged."""
        X = X.to(self.projection)
        new_values = new_values.to(X)
        j, inside = _moved_positions(self.active_dims, X, column)
        d = len(self.cardinalities)
        Z = self.discrete_columns(X)
        parents = self.embed(Z) * d  # b x m, unnormalised
        old = Z[:, j]  # b x K
        if self.affine:
            change = -(new_values - old).unsqueeze(-1) * self.projection[:, j].T  # b x K x m
        else:
            rows = self.dictionary_rows[:, j].T.to(X)  # K x m
            change = (old.unsqueeze(-1) == rows).to(X) - (new_values.unsqueeze(-1) == rows).to(X)
        change = change * inside.to(X).unsqueeze(-1)
        return (parents.unsqueeze(1) + change) / d

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        """The base kernel on the embeddings; inputs that are the same points (the diagonal,
        the training covariance) are embedded once: the embedding is the costly part when
        ``d`` is large (``N x d x m`` multiply-adds). The diagonal of a stationary base kernel
        (Matérn, RBF) is its value at distance zero and needs no embedding at all."""
        if diag and x2 is x1 and isinstance(self.base_kernel, MaternKernel | RBFKernel):
            zero = x1.new_zeros(*x1.shape[:-2], 1, self.projection.shape[0])
            at_zero = self.base_kernel.forward(zero, zero, diag=True, **params)
            return at_zero.expand(*x1.shape[:-1])
        shared = rows_shared_by_batch(x1, x2, diag)
        if shared is not None:
            flat = x1.reshape(-1, x1.shape[-1])
            covar = self.base_kernel.forward(self.embed(flat), self.embed(shared), **params)
            return covar.reshape(*x1.shape[:-1], shared.shape[-2])
        phi1 = self.embed(x1)
        same = x2 is x1 or (
            x2.shape == x1.shape and not (x1.requires_grad or x2.requires_grad)
            and torch.equal(x1, x2)
        )
        phi2 = phi1 if same else self.embed(x2)
        return self.base_kernel.forward(phi1, phi2, diag=diag, **params)


class HammingDistanceKernel(Kernel):
    r"""``k(z, z') = k_base(e(z), e(z'))`` with ``||e(z) - e(z')||^2 = H(z, z')``, the number of
    discrete variables in which ``z`` and ``z'`` differ.

    The encoding ``e`` keeps a binary column as it is and writes a categorical one one-hot,
    divided by ``sqrt(2)``. With an isotropic base kernel (one lengthscale,
    :func:`bodi.models.gp.make_hamming_kernel`) ``k`` is a function of the Hamming distance
    alone, the discrete kernel of Bounce (Papenmeier et al., 2023). It is also the HED kernel
    with one shared lengthscale in the limit of a large uniformly random dictionary: for binary
    ``z, z'`` and a uniform row ``a``, ``h(z, a) - h(z', a)`` is a sum of ``H(z, z')``
    independent signs, so ``E_a[(h(z, a) - h(z', a))^2] = H(z, z')``, and
    ``||phi_A(z) - phi_A(z')||^2 / m`` tends to it as ``m`` grows. The exact distance has none
    of a finite dictionary's sampling noise (docs/results.md, Section 5, measures what that
    does to the ranking of the points near the incumbent).

    With an isotropic Matérn-5/2 base kernel the covariance is computed from the distances
    themselves, ``(1 + r + r^2 / 3) exp(-r)`` with ``r = sqrt(5 H) / l`` (one ``N x n x D``
    product for the distances, then ``O(N n)``), and the local search gets its neighbours'
    distances to the training points from their parent's (:meth:`neighbour_embedding`,
    ``O(n)`` per neighbour, where recomputing costs ``O(n D)``): the kernel's "embedding" of a
    point is its distances to the last training inputs it was evaluated against.

    Args:
        cardinalities: number of values of each of the ``d`` discrete variables.
        base_kernel: a kernel on the ``sum_j (c_j if c_j > 2 else 1)`` encoded columns.
        active_dims: the ``d`` columns of the input holding the discrete variables.
    """

    has_lengthscale = False
    #: (points, their ``N x n`` squared distances, the ``n`` reference rows), see
    #: :meth:`hint_embedding`
    _hint: tuple[Tensor, Tensor, Tensor] | None = None
    #: the second input of the last cross-covariance (the training inputs, in a posterior)
    _reference: tuple[Tensor] | None = None

    def __init__(self, cardinalities: Any, base_kernel: Kernel, active_dims: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(active_dims=active_dims, **kwargs)
        self.cardinalities = tuple(int(c) for c in cardinalities)
        self.base_kernel = base_kernel
        binary = [j for j, c in enumerate(self.cardinalities) if c == 2]
        categorical = [j for j, c in enumerate(self.cardinalities) if c != 2]
        self.register_buffer("binary_columns", torch.tensor(binary, dtype=torch.long))
        self.register_buffer("categorical_columns", torch.tensor(categorical, dtype=torch.long))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_reference", None)  # remembered inputs are not part of the kernel
        state.pop("_hint", None)
        return state

    @property
    def embedding_dim(self) -> int:
        """The number of encoded columns."""
        return len(self.binary_columns) + sum(c for c in self.cardinalities if c != 2)

    def discrete_columns(self, X: Tensor) -> Tensor:
        """The kernel's ``d`` columns of ``X`` (``... x dim``) as ``... x d``."""
        if self.active_dims is None:
            return X
        return X.index_select(-1, self.active_dims.to(X.device))

    def embed(self, Z: Tensor) -> Tensor:
        """``... x d`` discrete inputs -> ``... x D`` encoding ``e(Z)`` (``O(N d)``)."""
        if not len(self.categorical_columns):
            return Z
        parts = [Z.index_select(-1, self.binary_columns.to(Z.device))]
        categorical = Z.index_select(-1, self.categorical_columns.to(Z.device))
        cards = [self.cardinalities[j] for j in self.categorical_columns.tolist()]
        parts.append(one_hot(categorical, cards) / math.sqrt(2))
        return torch.cat(parts, -1)

    def squared_distances(self, z1: Tensor, z2: Tensor) -> Tensor:
        """``H(z1_a, z2_b)`` (``... x N x M``) of ``... x N x d`` and ``... x M x d`` discrete
        inputs: ``|e1|^2 + |e2|^2 - 2 e1 e2^T``, exact for integer-coded inputs (the encoded
        entries are 0, 1 and ``1 / sqrt(2)``, whose squares and products are dyadic)."""
        e1 = self.embed(z1)
        e2 = e1 if z2 is z1 else self.embed(z2)
        norms1 = e1.pow(2).sum(-1)
        norms2 = norms1 if e2 is e1 else e2.pow(2).sum(-1)
        inner = e1 @ e2.transpose(-1, -2)
        return (norms1.unsqueeze(-1) + norms2.unsqueeze(-2) - 2 * inner).clamp_min(0)

    def _of_distance(self) -> bool:
        """Whether the covariance is a function of the distance alone (a Matérn-5/2 base
        kernel with one lengthscale), computed by :meth:`_covariance`."""
        base = self.base_kernel
        return (type(base) is MaternKernel and base.nu == 2.5 and not base.batch_shape
                and base.lengthscale.numel() == 1)

    def _covariance(self, squared: Tensor) -> Tensor:
        """The covariance at Hamming distances ``squared`` (any shape): the Matérn-5/2,
        ``(1 + r + r^2 / 3) exp(-r)`` with ``r = sqrt(5 H) / l``."""
        lengthscale = self.base_kernel.lengthscale.reshape(())
        if squared.requires_grad or (lengthscale.requires_grad and torch.is_grad_enabled()):
            r = (5 * squared).clamp_min(1e-30).sqrt() / lengthscale
            return (1 + r + r.pow(2) / 3) * torch.exp(-r)
        # the same in place: N x n elementwise passes are this kernel's cost in a search
        r = (5 * squared).clamp_min_(1e-30).sqrt_().div_(lengthscale)
        return torch.exp(-r).mul_(r.div(3).add_(1).mul_(r).add_(1))

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params: Any) -> Tensor:
        shared = rows_shared_by_batch(x1, x2, diag)
        if shared is not None:
            flat = x1.reshape(-1, x1.shape[-1])
            if self._of_distance():
                covar = self._covariance(self.squared_distances(flat, shared))
            else:
                covar = self.base_kernel.forward(self.embed(flat), self.embed(shared), **params)
            return covar.reshape(*x1.shape[:-1], shared.shape[-2])
        if not self._of_distance():
            e1 = self.embed(x1)
            e2 = e1 if x2 is x1 else self.embed(x2)
            return self.base_kernel.forward(e1, e2, diag=diag, **params)
        if diag and x2 is x1:  # a point's variance: the covariance at distance zero, 1
            return x1.new_ones(x1.shape[:-1])
        if diag:
            squared = (self.embed(x1) - self.embed(x2)).pow(2).sum(-1)
        else:
            squared = self._hinted_distances(x1, x2)
            if squared is None:
                squared = self.squared_distances(x1, x2)
            if x2 is not x1 and not x2.requires_grad and x2.dim() == 2:
                # the training inputs of a posterior (``n x d``); not a batch of joint
                # posteriors (``b x q x d``, e.g. a batch acquisition's), whose rows the
                # neighbours of a ``b x dim`` parent cannot be measured against
                self._reference = (x2,)
        return self._covariance(squared)

    def _hinted_distances(self, x1: Tensor, x2: Tensor) -> Tensor | None:
        """The hinted ``N x n`` distances, if ``x1`` are the hinted points and ``x2`` the
        reference rows they were computed against (checked exactly)."""
        if self._hint is None:
            return None
        points, squared, reference = self._hint
        if _equal(points, x1) and _equal(reference, x2):
            return squared.to(x1)
        return None

    def neighbour_embedding(self, X: Tensor, column: Tensor, new_values: Tensor) -> Tensor | None:
        """Squared distances (``b x K x n``) of the ``K`` one-parameter neighbours of each row
        of ``X`` (``b x dim``) to the ``n`` reference rows (the training inputs of the last
        cross-covariance); neighbour ``k`` sets column ``column[k]`` to ``new_values[:, k]``.
        A change of variable ``j`` moves the distance to row ``i`` by
        ``[z'_j != r_ij] - [z_j != r_ij]``: ``O(b K n)``, where recomputing costs
        ``O(b K n D)``. ``None`` before any cross-covariance (no reference yet) or with a
        base kernel that is not a function of the distance."""
        if self._reference is None or not self._of_distance():
            return None
        reference = self._reference[0]
        X = X.to(reference)
        j, inside = _moved_positions(self.active_dims, X, column)
        inside = inside.unsqueeze(-1)
        Z = self.discrete_columns(X)
        parents = self.squared_distances(Z, reference)  # b x n
        rows = reference[:, j].T  # K x n
        old = Z[:, j].unsqueeze(-1)  # b x K x 1
        new = new_values.to(X).unsqueeze(-1)
        change = (new != rows).to(X).sub_((old != rows).to(X))  # b x K x n
        return change.mul_(inside).add_(parents.unsqueeze(1))

    @contextmanager
    def hint_embedding(self, X: Tensor, phi: Tensor) -> Iterator[None]:
        """Within the block, a cross-covariance of inputs equal to the discrete columns of
        ``X`` (``N x dim``) against the reference rows takes ``phi`` (``N x n``, from
        :meth:`neighbour_embedding`) as its squared distances."""
        try:
            if self._reference is not None:
                self._hint = (self.discrete_columns(X), phi, self._reference[0])
            yield
        finally:
            self._hint = None


def rows_shared_by_batch(x1: Tensor, x2: Tensor, diag: bool = False) -> Tensor | None:
    """The ``n x d`` rows that every batch of ``x2`` repeats, when ``x1`` is a batch
    (``b x q x d``, any batch shape) and ``x2`` is ``n x d`` or a batch of the same shape
    whose batches are all equal; else ``None`` (and always for a diagonal).

    A batch of joint posteriors (a q-batch acquisition's ``b x q x dim`` candidates, pending
    points among them) meets the training inputs stacked once per batch (GPyTorch's exact
    prediction): embedding them ``b`` times and measuring ``b`` sets of ``q x n`` distances
    costs ``O(b n d m)`` where one ``b q x n`` cross-covariance against the shared rows costs
    ``O((b q + n) d m)``. Checked exactly (``O(b n d)``); kernels reshape their result to
    ``b x q x n``."""
    if diag or x1.dim() < 3:
        return None
    if x2.dim() == 2:
        return x2
    if x2.shape[:-2] != x1.shape[:-2]:
        return None
    first = x2[(0,) * (x2.dim() - 2)]
    if all(stride == 0 for stride in x2.stride()[:-2]) or torch.equal(first.expand_as(x2), x2):
        return first
    return None


def _equal(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` hold the same values (the same memory, or compared)."""
    return a.shape == b.shape and a.device == b.device and (
        _same_memory(a, b) or torch.equal(a.to(b.dtype), b))


def _moved_positions(active_dims: Tensor | None, X: Tensor,
                     column: Tensor) -> tuple[Tensor, Tensor]:
    """For ``K`` moves of the columns ``column`` of ``X`` (``b x dim``): each move's position
    among a kernel's ``active_dims`` (0 for a column outside them) and whether it is inside
    (``K`` each)."""
    dims = active_dims if active_dims is not None else torch.arange(X.shape[-1],
                                                                    device=X.device)
    position = torch.full((X.shape[-1],), -1, dtype=torch.long, device=X.device)
    position[dims.to(X.device)] = torch.arange(len(dims), device=X.device)
    j = position[column.to(X.device)]  # K positions among the discrete columns, or -1
    return j.clamp_min(0), j >= 0


def _same_memory(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` are views of the same elements (same storage, offset, shape
    and strides), so equal without comparing their ``O(N d)`` entries."""
    return (a.device == b.device and a.dtype == b.dtype and a.data_ptr() == b.data_ptr()
            and a.shape == b.shape and a.stride() == b.stride())


class FirstOrderKernel(HammingDistanceKernel):
    r"""``k(z, z') = 1 - H(z, z') / d = (1 / d) sum_i [z_i = z'_i]``: the first-order
    (additive) kernel of ``d`` discrete variables.

    Each indicator ``[z_i = z'_i]`` is a covariance (the inner product of one-hot codes), so
    ``k`` is the covariance of ``f(z) = sum_i w_i(z_i)`` with independent effects ``w_i(c)``
    of each variable's value, of variance ``1 / d`` each: a function with no interactions.
    Scaled by an output scale and added to an interaction kernel (``BODi(first_order=True)``),
    it lets the GP learn each variable's own effect from few points, where a kernel of the
    distance alone (or of a dictionary's embedding) cannot tell which variables moved
    (Walsh's first-order terms; BOCS's linear part). The distances are
    :class:`HammingDistanceKernel`'s, so the local search gets its neighbours' in ``O(n)``.

    Args:
        cardinalities: number of values of each of the ``d`` discrete variables.
        active_dims: the ``d`` columns of the input holding the discrete variables.
    """

    def __init__(self, cardinalities: Any, active_dims: Any = None, **kwargs: Any) -> None:
        super().__init__(cardinalities, base_kernel=None, active_dims=active_dims, **kwargs)

    def _of_distance(self) -> bool:
        return True

    def _covariance(self, squared: Tensor) -> Tensor:
        return 1 - squared / len(self.cardinalities)
