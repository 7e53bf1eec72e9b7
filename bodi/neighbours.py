"""Neighbours of a configuration: the one-parameter moves of a space (as index tensors, for
the local search, the trust region and the HED embedding's incremental update), the protocol
of a kernel that embeds neighbours incrementally, and a new configuration near a given one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Protocol, runtime_checkable

import torch
from torch import Tensor

from bodi.device import DTYPE
from bodi.novelty import SearchSpaceExhaustedError, key_weights, row_keys
from bodi.space import SearchSpace


class NeighbourMoves:
    """The single-parameter moves of a discrete space, as index tensors.

    For ``K`` moves: ``column[k]`` is the changed column; the new value is
    ``(x + shift[k]) mod modulus[k]`` for binary/categorical columns (``modulus > 0``) and
    ``clamp(x + shift[k], 0, 1)`` for integer columns (``modulus == 0``, shift = +-1 grid step).
    """

    def __init__(self, space: SearchSpace):
        columns, shifts, moduli = [], [], []
        for i, p in enumerate(space.parameters):
            if p.kind in ("binary", "categorical"):
                for s in range(1, p.cardinality):
                    columns.append(i)
                    shifts.append(float(s))
                    moduli.append(float(p.cardinality))
            elif p.kind == "integer":
                step = 1.0 / (p.high - p.low)
                columns += [i, i]
                shifts += [step, -step]
                moduli += [0.0, 0.0]
        self.column = torch.tensor(columns, dtype=torch.long)
        self.shift = torch.tensor(shifts, dtype=DTYPE)
        self.modulus = torch.tensor(moduli, dtype=DTYPE)

    def __len__(self) -> int:
        return len(self.column)

    def moved_values(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """The ``b x K`` current and new values of the moved column of every neighbour."""
        current = X[:, self.column]  # b x K
        return current, self._moved(current, self.shift, self.modulus)

    @staticmethod
    def _moved(current: Tensor, shift: Tensor, modulus: Tensor) -> Tensor:
        """New values: ``(x + shift) mod modulus``, or ``clamp(x + shift, 0, 1)`` where the
        modulus is 0 (integer columns)."""
        cyclic = torch.remainder(current + shift, modulus.clamp(min=1.0))
        stepped = (current + shift).clamp(0.0, 1.0)
        return torch.where(modulus > 0, cyclic, stepped)

    def apply(self, X: Tensor) -> Tensor:
        """``b x dim`` points -> ``b x K x dim`` neighbours (integer moves at a bound: no-ops)."""
        b, K = X.shape[0], len(self)
        _, new = self.moved_values(X)
        neighbours = X.unsqueeze(1).expand(b, K, X.shape[-1]).clone()
        index = self.column.view(1, K, 1).expand(b, K, 1)
        return neighbours.scatter_(2, index, new.unsqueeze(-1))

    def apply_at(self, X: Tensor, move: Tensor, parent: Tensor | None = None) -> Tensor:
        """The ``c`` neighbours of rows ``parent`` (``c`` indices, default: every row) of
        ``X`` (``b x dim``) by the moves ``move`` (``c`` indices into the ``K`` moves), as a
        ``c x dim`` tensor, without building the other neighbours (``O(c dim)``, where
        :meth:`apply` costs ``O(b K dim)``)."""
        neighbours = X.clone() if parent is None else X[parent]
        rows, column = torch.arange(len(neighbours)), self.column[move]
        neighbours[rows, column] = self._moved(neighbours[rows, column], self.shift[move],
                                               self.modulus[move]).to(X)
        return neighbours

    def keys(self, space: SearchSpace, X: Tensor, keys: Tensor) -> Tensor:
        """``b x K`` :func:`row_keys` of the neighbours of ``X`` (``b x dim``, keys ``b``),
        in ``O(b K)`` instead of ``O(b K dim)``: a move changes one column's code, so a
        neighbour's key is ``key + weight * (new code - old code)`` (exact in wrapping int64)."""
        current, new = self.moved_values(X.to(DTYPE))
        scale = torch.where(space._integer_steps > 0, space._integer_steps, 1.0)[self.column]
        delta = (new * scale).round().long() - (current * scale).round().long()
        return keys.unsqueeze(-1) + delta * key_weights(space.dim)[self.column]


def nearby_new_point(
    space: SearchSpace, x: Tensor, taken: set[int], generator: torch.Generator
) -> Tensor:
    """A canonical configuration near canonical ``x`` whose :func:`row_keys` key is not in
    ``taken``.

    Tried in this order: the :class:`NeighbourMoves` of ``x`` (one discrete or integer parameter
    changed) in random order, ``x`` with its continuous parameters jittered at growing scales,
    then random samples. In a constrained space only feasible points qualify, and ``x`` repaired
    onto the linear constraints (:meth:`SearchSpace.repair`) and its neighbours are tried first.
    Raises :class:`SearchSpaceExhaustedError` if none is new.
    """

    def first_new(rows: Tensor) -> Tensor | None:
        if space.constraints:
            rows = rows[space.feasible(rows)]
        fresh = [i for i, key in enumerate(row_keys(space, rows).tolist()) if key not in taken]
        return rows[fresh[0]] if fresh else None

    moves = NeighbourMoves(space)
    if space.constraints:
        x = space.canonicalize(space.repair(x.unsqueeze(0), generator))[0]
        if (found := first_new(x.unsqueeze(0))) is not None:
            return found
    if len(moves):  # neighbours of a canonical row are canonical once rounded onto the grids
        order = torch.randperm(len(moves), generator=generator)
        if (found := first_new(space.round(moves.apply(x.unsqueeze(0))[0, order]))) is not None:
            return found
    continuous = space.continuous_dims
    for scale in (1e-4, 1e-3, 1e-2, 1e-1, 1.0) if continuous else ():
        rows = x.repeat(10, 1)
        noise = torch.randn(10, len(continuous), generator=generator, dtype=DTYPE)
        rows[:, continuous] = (rows[:, continuous] + scale * noise).clamp(0.0, 1.0)
        if (found := first_new(space.canonicalize(rows))) is not None:
            return found
    found = first_new(space.canonicalize(space.sample(1000, generator=generator)))
    if found is None:
        raise SearchSpaceExhaustedError("no configuration left that was not proposed before")
    return found


@runtime_checkable
class NeighbourEmbedding(Protocol):
    """A kernel that embeds its inputs and knows the embeddings of a point's neighbours from
    the point's own (the HED kernel, :class:`bodi.hed.kernel.HammingEmbeddingKernel`; the
    Hamming-distance kernel, whose "embedding" is the distances to the training points): the
    local search asks for them and hands them back while it scores those neighbours."""

    def neighbour_embedding(self, X: Tensor, column: Tensor,
                            new_values: Tensor) -> Tensor | None:
        """``b x K x m`` embeddings of the ``K`` neighbours (:class:`NeighbourMoves`) of each
        row of ``X`` (``b x dim``): neighbour ``k`` sets ``column[k]`` to ``new_values[:, k]``;
        ``None`` when the kernel cannot tell them now (the search then computes them)."""
        ...

    def hint_embedding(self, X: Tensor, phi: Tensor) -> AbstractContextManager[None]:
        """Within the block, inputs equal to the rows of ``X`` (``N x dim``) embed as ``phi``
        (``N x m``) instead of being computed."""
        ...


@contextmanager
def embedding_hint(hints: Mapping[NeighbourEmbedding, Tensor], X: Tensor) -> Iterator[None]:
    """Within the block, each kernel of ``hints`` embeds inputs equal to the rows of ``X``
    (``N x dim``) as the given ``N x m`` embedding (:meth:`NeighbourEmbedding.hint_embedding`)."""
    with ExitStack() as stack:
        for kernel, phi in hints.items():
            stack.enter_context(kernel.hint_embedding(X, phi))
        yield
