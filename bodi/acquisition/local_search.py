"""Vectorised hill climbing over 1-Hamming neighbours (with continuous steps in mixed spaces).

Paper, appendix "Local Search": starting points are the top-ranked candidates of a pool of
uniform random points and "spray" points (the 1-Hamming neighbours of the best points found so
far); from each, greedy hill climbing moves to the best neighbour until no neighbour improves or
``max_steps`` is reached. All restarts advance together: every step scores the neighbours of all
active restarts with tensor operations, in a single acquisition call; a neighbour's key, region
membership and embedding come from its parent's, and only the allowed neighbours are built.

A neighbour changes one parameter: a bit flip, a categorical set to another value, or an integer
moved one step. Points in ``avoid`` (evaluated or pending) are never returned. With a
:class:`~bodi.acquisition.trust_region.TrustRegion`, starts are drawn inside it and moves that
leave it are refused. In a constrained space (:mod:`bodi.constraints`) infeasible starts and
moves score ``-inf``: the climb stays on feasible points.
"""

from __future__ import annotations

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.generation import gen as botorch_gen
from torch import Tensor

from bodi.acquisition.trust_region import TrustRegion
from bodi.neighbours import NeighbourEmbedding, NeighbourMoves, embedding_hint
from bodi.novelty import SearchSpaceExhaustedError, first_occurrences, row_keys
from bodi.space import DTYPE, SearchSpace

NUM_SPRAY_CENTERS = 5  # spray starts: neighbours of this many best points

__all__ = ["NUM_SPRAY_CENTERS", "allowed_points", "local_search"]


def local_search(
    acq_function: AcquisitionFunction,
    space: SearchSpace,
    *,
    avoid: Tensor,
    incumbents: Tensor | None = None,
    num_restarts: int = 20,
    raw_samples: int = 1024,
    num_spray_centers: int = NUM_SPRAY_CENTERS,
    max_steps: int = 50,
    batch_limit: int = 16384,
    region: TrustRegion | None = None,
    continuous_steps: int = 3,
    max_elements: int = 2**24,
) -> tuple[Tensor, Tensor]:
    """Maximize ``acq_function`` by multi-start hill climbing over 1-Hamming neighbours.

    In a space with continuous parameters the climb over the discrete parameters alternates
    with L-BFGS-B on the continuous ones (``continuous_steps`` rounds, BoTorch's
    ``gen_candidates_scipy``; CASMOPOLITAN's interleaved search).

    Args:
        acq_function: evaluated on ``b x 1 x dim`` inputs.
        space: the search space.
        avoid: ``k x dim`` points that must not be returned (fully discrete spaces).
        incumbents: ``c x dim`` best points so far (best first); the neighbours of the first
            ``num_spray_centers`` join the pool of starting candidates.
        num_restarts: number of hill climbs.
        raw_samples: uniform random candidates in the pool (drawn inside ``region``).
        max_steps: maximum number of moves per climb.
        region: a trust region; nothing outside it is proposed.
        max_elements: bound on the size (restarts x neighbours x dim) of one neighbour tensor;
            restarts are climbed in chunks below it, so peak memory stays bounded at any dim.

    Returns:
        The best point found (``dim``) and its acquisition value (scalar).

    Raises:
        SearchSpaceExhaustedError: if no point outside ``avoid`` is found.
    """
    moves = NeighbourMoves(space)
    avoid_keys = row_keys(space, avoid) if len(avoid) else None

    kernels = [k for k in acq_function.modules() if isinstance(k, NeighbourEmbedding)]

    def score(X: Tensor, keys: Tensor | None = None, inside: Tensor | None = None,
              hints: dict[NeighbourEmbedding, Tensor] | None = None) -> Tensor:
        """Acquisition values of ``N x dim`` points, ``-inf`` where not allowed (evaluated,
        outside the region, infeasible); only the allowed points are scored, which at a
        trust region's boundary are a few of the ``d`` neighbours. What is already known of
        the points may be given: their :func:`row_keys` (``keys``), the region's mask
        (``inside``) and their HED embeddings per kernel (``hints``, ``N x m`` each)."""
        allowed = allowed_points(space, X, avoid_keys, region, keys, inside)
        values = torch.full((len(X),), -torch.inf, dtype=DTYPE)
        rows = allowed.nonzero().squeeze(-1)
        with torch.no_grad():
            for chunk in rows.split(batch_limit) if len(rows) else ():
                points = X if len(chunk) == len(X) else X[chunk]
                chunk_hints = {k: phi if points is X else phi[chunk]
                               for k, phi in (hints or {}).items()}
                with embedding_hint(chunk_hints, points):
                    values[chunk] = acq_function(points.unsqueeze(-2)).to(DTYPE)
        return values

    def score_neighbours(parents: Tensor, keys: Tensor | None) -> tuple[Tensor, Tensor | None]:
        """Scores (``a x K``) of the one-parameter neighbours of ``parents`` (``a x dim``) and
        their keys (``a x K``, from the parents' ``keys``, or ``None``). What a neighbour shares
        with its parent is not recomputed: its key, its trust-region distance and its HED
        embedding are the parent's, updated for one changed parameter (``O(1)`` or ``O(m)``
        per neighbour, where recomputing costs ``O(d)`` or ``O(d m)``), and only the
        neighbours these allow (not evaluated, inside the region) are built as points."""
        a, K = len(parents), len(moves)
        allowed = torch.ones(a, K, dtype=torch.bool)
        if keys is not None:
            keys = moves.keys(space, parents, keys)
            if avoid_keys is not None:
                allowed &= ~torch.isin(keys, avoid_keys)
        if region is not None:
            allowed &= region.contains_neighbours(parents, moves)
        parent, move = allowed.nonzero(as_tuple=True)
        values = torch.full((a, K), -torch.inf, dtype=DTYPE)
        if len(parent):
            values[parent, move] = score(
                moves.apply_at(parents, move, parent),
                None if keys is None else keys[parent, move],
                inside=torch.ones(len(parent), dtype=torch.bool),  # checked above
                hints={k: phi[parent, move] for k, phi in neighbour_hints(parents).items()},
            )
        return values, keys

    def neighbour_hints(parents: Tensor) -> dict[NeighbourEmbedding, Tensor]:
        """The embeddings (``a x K x m`` per kernel) of the neighbours of ``parents``, of the
        kernels that know them now."""
        if not kernels:
            return {}
        _, new_values = moves.moved_values(parents)
        hints = {k: k.neighbour_embedding(parents, moves.column, new_values) for k in kernels}
        return {k: phi for k, phi in hints.items() if phi is not None}

    def candidates():  # the pool of starting candidates, part by part (bounded memory)
        # (points, their row keys or None, their embeddings): a neighbour's key and embedding
        # follow from its parent's in O(1) and O(m), where computing them costs O(d), O(d m)
        yield space.sample(raw_samples) if region is None else region.sample(raw_samples), None, {}
        if incumbents is not None:
            for incumbent in incumbents[:num_spray_centers]:  # spray: its K neighbours
                parent = incumbent.unsqueeze(0)
                keys = moves.keys(space, parent, row_keys(space, parent))[0]
                hints = {k: phi[0] for k, phi in neighbour_hints(parent).items()}
                yield moves.apply(parent)[0], keys, hints
        if region is not None:
            yield region.center.unsqueeze(0), None, {}

    X, values = _best_starts(candidates(), score, space, num_restarts)
    if not torch.isfinite(values).any():
        raise SearchSpaceExhaustedError("no candidate outside the evaluated points was found")
    X, values = X[torch.isfinite(values)], values[torch.isfinite(values)]
    rounds = continuous_steps if space.continuous_dims else 1
    for _ in range(rounds):
        keys = row_keys(space, X) if avoid_keys is not None else None
        X, values = _climb(X, values, keys, score_neighbours, moves, max_steps, max_elements)
        if space.continuous_dims:
            X, values = _continuous_step(acq_function, space, X, values, region)
    best = values.argmax()
    return X[best], values[best]


def allowed_points(space: SearchSpace, X: Tensor, avoid_keys: Tensor | None,
                   region: TrustRegion | None, keys: Tensor | None = None,
                   inside: Tensor | None = None) -> Tensor:
    """``N`` mask of the ``N x dim`` points a search may propose: not among the avoided rows
    (their :func:`row_keys` ``avoid_keys``; ``keys``: those of ``X`` if known), inside
    ``region`` (``inside``: its mask if known) and feasible."""
    allowed = torch.ones(len(X), dtype=torch.bool)
    if avoid_keys is not None:
        keys = row_keys(space, X) if keys is None else keys
        allowed &= ~torch.isin(keys, avoid_keys)
    if region is not None:
        allowed &= region.contains(X) if inside is None else inside
    if space.constraints:
        allowed &= space.feasible(X)
    return allowed


def _best_starts(
    parts, score, space: SearchSpace, k: int
) -> tuple[Tensor, Tensor]:
    """The ``k`` best distinct candidates (``k x dim``, best first) and their scores, from
    ``parts`` (an iterable of ``(N_i x dim`` points, their :func:`row_keys` or ``None``, their
    embeddings as ``score`` hints)) scored one part at a time, so that the spray of a large
    space (``d`` neighbours of each of several centres) is never held whole."""
    X = torch.empty(0, space.dim, dtype=DTYPE)
    values = torch.empty(0, dtype=DTYPE)
    keys = torch.empty(0, dtype=torch.long)
    for part, part_keys, hints in parts:
        if space.is_discrete:  # distinct starting points
            part_keys = row_keys(space, part) if part_keys is None else part_keys
            first = first_occurrences(part_keys)
            kept = first[~torch.isin(part_keys[first], keys)]
            if len(kept) < len(part):
                part, part_keys = part[kept], part_keys[kept]
                hints = {kernel: phi[kept] for kernel, phi in hints.items()}
            keys = torch.cat([keys, part_keys])
        if len(part) == 0:
            continue
        X = torch.cat([X, part])
        values = torch.cat([values, score(part, part_keys, hints=hints).to(values)])
        top = values.topk(min(k, len(values))).indices
        X, values = X[top], values[top]
        keys = keys[top] if space.is_discrete else keys
    return X, values


def _climb(
    X: Tensor, values: Tensor, keys: Tensor | None, score_neighbours, moves: NeighbourMoves,
    max_steps: int, max_elements: int = 2**24,
) -> tuple[Tensor, Tensor]:
    """Greedy 1-Hamming hill climbing of all rows of ``X`` (``b x dim``, scores ``values``,
    :func:`row_keys` ``keys`` or ``None``) at once.

    Each step scores the ``K`` neighbours of the ``a`` active rows
    (``score_neighbours(parents, keys) -> (a x K scores, a x K keys)``), in chunks of rows
    whose neighbours hold at most ``max_elements`` entries (``a K dim``), and moves each row
    to its best neighbour if that improves on it. Rows that reach the same point would climb
    the same path from there: it is climbed once, and the others end where it ends (the
    restarts often merge: at d = 1000, n = 1000, ten restarts were at one point after 6-10
    steps, docs/speed.md).
    """
    if len(moves) == 0:
        return X, values
    chunk = max(1, max_elements // max(1, len(moves) * X.shape[-1]))
    active = torch.ones(len(X), dtype=torch.bool)
    leader = torch.arange(len(X))  # the row whose climb each row shares (itself by default)
    for _ in range(max_steps):
        climbing = active.nonzero().squeeze(-1)
        if len(climbing) == 0:
            break
        _, inverse = torch.unique(X[climbing], dim=0, return_inverse=True)
        position = torch.arange(len(climbing))
        first = torch.full((len(climbing),), len(climbing), dtype=torch.long).scatter_reduce(
            0, inverse, position, reduce="amin")[inverse]  # the first active row at each point
        follower = first != position
        leader[climbing[follower]] = climbing[first[follower]]
        active[climbing[follower]] = False
        for rows in climbing[~follower].split(chunk):
            nb_values, nb_keys = score_neighbours(X[rows], None if keys is None else keys[rows])
            best_values, best_index = nb_values.max(-1)
            improved = best_values > values[rows]
            moved = rows[improved]
            X[moved] = moves.apply_at(X[moved], best_index[improved])
            values[moved] = best_values[improved]
            if keys is not None:
                keys[moved] = nb_keys[improved, best_index[improved]]
            active[rows[~improved]] = False
    while not torch.equal(leader[leader], leader):  # a leader may have joined another later
        leader = leader[leader]
    return X[leader], values[leader]


def _continuous_step(
    acq_function: AcquisitionFunction,
    space: SearchSpace,
    X: Tensor,
    values: Tensor,
    region: TrustRegion | None,
) -> tuple[Tensor, Tensor]:
    """L-BFGS-B on the continuous columns of every row (others fixed, per row), within the
    region's box; a row keeps its old point unless the new one scores higher (and is feasible)."""
    bounds = space.bounds if region is None else region.bounds
    fixed = [i for i in range(space.dim) if i not in set(space.continuous_dims)]
    options: dict = {"maxiter": 100}
    if botorch_gen.get_reasons_against_fast_path("L-BFGS-B", True, options, None):
        # Outside the SciPy range BoTorch has tested (e.g. SciPy 1.18) it solves the rows one
        # problem at a time and then accepts per-row fixed features only one row per problem.
        options["max_optimization_problem_aggregation_size"] = 1
    candidates, _ = botorch_gen.gen_candidates_scipy(
        initial_conditions=X.unsqueeze(-2),
        acquisition_function=acq_function,
        lower_bounds=bounds[0],
        upper_bounds=bounds[1],
        fixed_features={i: X[:, i] for i in fixed},
        options=options,
    )
    candidates = candidates.detach().squeeze(-2)
    with torch.no_grad():
        new_values = acq_function(candidates.unsqueeze(-2))
    better = new_values > values
    if space.constraints:  # a step that leaves the feasible set is refused
        better &= space.feasible(candidates)
    X = torch.where(better.unsqueeze(-1), candidates, X)
    return X, torch.where(better, new_values, values)
