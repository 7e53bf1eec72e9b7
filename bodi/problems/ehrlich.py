"""Ehrlich functions (Stanton et al. 2024, "Closed-Form Test Functions for Biophysical Sequence
Design"): a sequence design problem where most sequences are infeasible.

A sequence ``x`` of length ``L`` over ``v`` states is *feasible* when every transition
``x_{t-1} -> x_t`` has a nonzero probability under a sparse ergodic transition matrix ``P``
(a discrete Markov process, DMP); an infeasible sequence has no value (``-inf``: a failed
trial). ``c`` motifs of ``k`` states, each with a spacing, must appear in ``x``: a motif is
present to the degree ``q(h) = floor(h / k * q) / q`` of its ``h`` elements found at their
spaced positions from the best start, and ``f(x) = prod_i q(h_i)``, maximized, 1 at the
optimum (with the default quantization ``q = k``, the fraction of each motif present).

The instance (``P``, the motifs and their spacings) is drawn from ``torch.Generator`` seeded
with the instance seed, in the order of the reference implementation
(``holo.test_functions.closed_form.Ehrlich`` in pytorch-holo), so that an instance here equals
the reference's instance of the same seed (tests/problems/test_ehrlich.py compares them):

1. ``P``: a softmax of ``randn(v, v) / 0.5`` by rows, masked by a banded 0/1 matrix of
   bandwidth ``int(0.4 v)`` (wrapping) whose rows are permuted (``randperm``), the diagonal
   always allowed, rows renormalized; it must be ergodic (``P^m > 0`` for ``m = (v-1)^2+1``);
2. the motifs: one DMP sample of ``c k`` states from the stationary distribution of ``P``, cut
   into ``c`` motifs (so that a feasible optimum exists);
3. each motif's ``k - 1`` spacings: ``1 + floor(floor((L - c k) / c) w)`` for ``w`` uniform
   random weights normalized to sum 1.

The known feasible start (``Problem.initial_params``) is a DMP sample of length ``L`` from a
generator seeded again with the instance seed, the reference's ``initial_solution``: what a
user would enqueue as a known working sequence. ``ehrlich<L>`` (20 states, 2 motifs of 4,
instance seed 0) and ``ehrlich<L>-i<S>`` by name.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.problems.base import Problem
from bodi.space import DTYPE, Categorical, SearchSpace

STATES, MOTIFS, MOTIF_LENGTH = 20, 2, 4
#: the reference's settings of the transition matrix
BANDWIDTH_FRACTION, SOFTMAX_TEMPERATURE = 0.4, 0.5


def transition_matrix(states: int, generator: torch.Generator) -> Tensor:
    """A sparse ergodic ``states x states`` transition matrix (step 1 of the module
    docstring), in float32 as the reference draws it."""
    dense = (torch.randn(states, states, generator=generator) / SOFTMAX_TEMPERATURE).softmax(-1)
    bandwidth = int(states * BANDWIDTH_FRACTION)
    offsets = (torch.arange(states).unsqueeze(1) - torch.arange(states).unsqueeze(0)) % states
    banded = (offsets <= bandwidth) | (offsets >= states - bandwidth)
    mask = banded[torch.randperm(states, generator=generator)] | torch.eye(states, dtype=torch.bool)
    P = torch.where(mask, dense, torch.zeros_like(dense))
    P = P / P.sum(-1, keepdim=True)
    if not bool((torch.linalg.matrix_power(P, (states - 1) ** 2 + 1) > 0).all()):
        raise RuntimeError("the sampled transition matrix is not ergodic")
    return P


def stationary_distribution(P: Tensor) -> Tensor:
    """``pi`` with ``pi P = pi`` and ``sum(pi) = 1``: the least-squares solution of the stacked
    system, by QR (as the reference solves it)."""
    n = P.shape[0]
    A = torch.cat([(torch.eye(n) - P).T, torch.ones(1, n)])
    b = torch.zeros(n + 1, 1)
    b[-1] = 1.0
    Q, R = torch.linalg.qr(A)
    return torch.linalg.solve(R, Q.T @ b).squeeze(-1)


def sample_chain(start: Tensor, P: Tensor, length: int, generator: torch.Generator) -> Tensor:
    """One DMP sample of ``length`` states: the first from ``start``, then by ``P``."""
    states = [int(torch.multinomial(start, 1, replacement=True, generator=generator))]
    for _ in range(length - 1):
        states.append(int(torch.multinomial(P[states[-1]].unsqueeze(0), 1,
                                            generator=generator)))
    return torch.tensor(states)


def motif_presence(X: Tensor, motif: Tensor, spacing: Tensor, quantization: int) -> Tensor:
    """For each row of ``X`` (``n x L`` states), the quantized fraction of ``motif`` found at
    its spaced positions, the best over every start."""
    k = motif.numel()
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), spacing.cumsum(0)])
    starts = torch.arange(X.shape[-1] - int(offsets[-1]))
    windows = X[:, starts.unsqueeze(1) + offsets]  # n x starts x k
    found = (windows == motif).sum(-1).to(DTYPE)
    step = math.ceil(k / quantization)
    return (torch.div(found, step, rounding_mode="floor") / (k / step)).max(-1).values


def ehrlich(length: int, states: int = STATES, motifs: int = MOTIFS,
            motif_length: int = MOTIF_LENGTH, instance_seed: int = 0,
            quantization: int | None = None) -> Problem:
    """The Ehrlich instance of the module docstring (maximize; optimum 1; infeasible sequences
    are ``-inf``, failed trials)."""
    length, states = check_integer("length", length), check_integer("states", states)
    motifs, motif_length = check_integer("motifs", motifs), check_integer("motif_length",
                                                                           motif_length)
    quantization = motif_length if quantization is None else check_integer("quantization",
                                                                           quantization)
    slack = length - motifs * motif_length
    if motif_length < 2 or slack < 0 or 1 + slack // (motifs * (motif_length - 1)) < 1:
        raise ValueError(f"an Ehrlich sequence of length {length} cannot hold {motifs} motifs "
                         f"of {motif_length} states")
    generator = torch.Generator().manual_seed(instance_seed)
    P = transition_matrix(states, generator)
    stationary = stationary_distribution(P)
    chained = sample_chain(stationary, P, motifs * motif_length, generator)
    motif_list = list(chained.reshape(motifs, motif_length))
    spacings = []
    for _ in motif_list:
        weights = torch.rand(motif_length - 1, generator=generator)
        weights = weights / weights.sum()
        spacings.append(1 + ((slack // motifs) * weights).floor().long())
    allowed = P > 0
    start = sample_chain(stationary, P, length,
                         torch.Generator().manual_seed(instance_seed))

    def evaluate(X: Tensor) -> Tensor:
        X = torch.as_tensor(X)
        batch = X.shape[:-1]
        x = X.reshape(-1, length).round().long()
        feasible = allowed[x[:, :-1], x[:, 1:]].all(-1)
        value = torch.ones(len(x), dtype=DTYPE)
        for motif, spacing in zip(motif_list, spacings, strict=True):
            value = value * motif_presence(x, motif, spacing, quantization)
        return torch.where(feasible, value, -math.inf).reshape(batch)

    space = SearchSpace([Categorical(f"s{i + 1}", list(range(states))) for i in range(length)])
    name = f"ehrlich{length}" if instance_seed == 0 else f"ehrlich{length}-i{instance_seed}"
    optimum = _optimal_sequence(motif_list, spacings, length)
    return Problem(name, space, evaluate, "maximize", optimal_value=1.0,
                   optimal_params={f"s{i + 1}": s for i, s in enumerate(optimum)},
                   initial_params={f"s{i + 1}": int(s) for i, s in enumerate(start)})


def _optimal_sequence(motifs: list[Tensor], spacings: list[Tensor], length: int) -> list[int]:
    """A feasible sequence with every motif present: each motif's states at its spaced
    positions, each repeated until the next (a state may always follow itself), one motif
    after the other, the last state repeated to the end."""
    sequence: list[int] = []
    for motif, spacing in zip(motifs, spacings, strict=True):
        for state, gap in zip(motif.tolist(), [*spacing.tolist(), 1], strict=True):
            sequence += [state] * gap
    return (sequence + [sequence[-1]] * length)[:length]
