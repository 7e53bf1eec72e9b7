"""Bounce (Papenmeier, Nardi and Poloczek, NeurIPS 2023) as a baseline, written after the
published code (LeoIV/bounce, its ``configs/default.gin``) behind bodi's ask/tell interface.

Bounce optimizes in a low-dimensional *nested embedding* of the space and grows it:

- **Embedding** (``AxUS``): the parameters of each kind are shuffled into bins; the bins of a
  kind get a share of the ``d_0 = 5`` initial target dimensions proportional to the kind's
  number of parameters (at least one each). A binary or continuous bin is one target
  coordinate ``y in [-1, 1]`` copied into each of its parameters with a random sign; a
  categorical bin is a one-hot block over ``min`` of its parameters' category counts, whose
  active index ``k`` maps to category ``(ceil(k * K_p / K_bin) + offset_p) mod K_p`` of each
  parameter ``p`` (random offsets).
- **Trust region** around the best point of the current stage: a Hamming ball of radius
  ``L_discrete`` (initial ``min(10, target_dim)``, minimum 1, maximum ``target_dim``; counted on
  the ``{0, 1}`` coordinates, so a category change counts 2) and a box of side
  ``L_continuous`` (0.8, ``[0.5**7, 1.6]``) shaped by the ARD lengthscales. After each
  evaluation both lengths shrink by ``gamma = (1 / L_discrete) ** (1 / b)`` when the value did
  not improve the stage's best by ``1e-3`` of its size, and grow by ``1 / gamma`` otherwise, where
  ``b`` is the evaluations left to the stage; so a stage that never improves ends with its
  budget.
- **Splitting**: when a trust region collapses (``L_discrete <= 1`` or ``L_continuous <=
  0.5**7``), every bin with two or more parameters is split at random into ``1 + s`` bins (its
  data copied to the new coordinates) and a fresh trust region starts on the stage's data. ``s``
  (2 in the config) is adjusted so that ``d_0 (1 + s)^n`` lands closest to the dimension, and the
  stage budgets grow geometrically with the target dimension (``min(2**d, ...)``) so that the
  input dimension is reached after ``100`` evaluations; at full dimension a collapse restarts
  with a new initial sample.
- **Model**: a ``SingleTaskGP`` on the ``[0, 1]`` coordinates of the stage's data, standardized
  values, Matern-5/2 (one lengthscale on discrete coordinates, ARD on continuous ones, their
  mixture ``(1 - lambda)(k_d + k_c) + lambda k_d k_c`` for mixed spaces), Gamma priors
  ``(1.5, 0.1)`` on lengthscales, ``(1.5, 0.5)`` on the output scale and ``(1.1, 0.05)`` on the
  noise; fitted with ``fit_gpytorch_mll``.
- **Acquisition**: analytic expected improvement (batch size 1). Discrete coordinates: EI on
  ``min(5000, max(2000, 200 * target_dim))`` random points of the trust region plus the
  center's neighbours, then hill climbing over Hamming neighbours inside the trust region
  from the 3 best. Continuous coordinates: ``optimize_acqf`` in the box (10 restarts, 512 raw
  samples). Mixed spaces alternate the two 5 times.
- **Initial design**: 5 uniform points of the initial embedding (its own, not the shared
  design: points outside the embedding could not be modelled in it).

Deviations (README's baseline table): integer parameters are treated as continuous
coordinates and rounded (Bounce has no ordinal support); Bounce proposes one point at a time,
so a batch request ``ask(n)`` returns its best ``n`` distinct candidates of the last search
instead of Bounce's sequential qEI batch; every random choice derives from the seed (Bounce
draws from numpy's and Python's global generators).

The state is replayed from the trials in number order (failed trials are told the worst loss
so far, as for the other baselines), so a resumed study or a rebuilt optimizer continues the
same run. A trial whose point is not in the embedding (told from elsewhere) is taken at the
embedding coordinates read from the first parameter of each bin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor

from bodi.checks import check_integer
from bodi.optimizers.base import Optimizer
from bodi.seeding import derive_seed
from bodi.space import DTYPE, SearchSpace
from bodi.trials import History

BINARY, CATEGORICAL, CONTINUOUS = "binary", "categorical", "continuous"
_KIND_ORDER = (CONTINUOUS, BINARY, CATEGORICAL)  # Bounce's ParameterType enum order


@dataclass
class Bin:
    """Parameters (indices into the space) that share one target coordinate or one-hot block."""

    kind: str
    params: list[int]
    size: int  # target coordinates: 1, or the one-hot width of a categorical bin


class Embedding:
    """Bounce's ``AxUS``: bins of parameters, random signs and offsets, and their splitting.

    Target points ``Y`` are ``n x target_dim`` in ``[-1, 1]`` (one-hot blocks use ``-1``/``1``).
    """

    def __init__(self, space: SearchSpace, n_bins: int, rng: np.random.Generator):
        self.space = space
        self.kinds = [_kind(space, i) for i in range(space.dim)]
        self.card = [space.parameters[i].cardinality if k == CATEGORICAL else 1
                     for i, k in enumerate(self.kinds)]
        # random sign (+-1) of binary/continuous parameters, category offset of categorical ones
        self.sign = [int(rng.integers(0, self.card[i])) if k == CATEGORICAL
                     else int(rng.choice([-1, 1])) for i, k in enumerate(self.kinds)]
        by_kind = {k: [i for i in range(space.dim) if self.kinds[i] == k] for k in _KIND_ORDER}
        by_kind = {k: v for k, v in by_kind.items() if v}
        share = {k: max(1, math.floor(len(v) / space.dim * n_bins)) for k, v in by_kind.items()}
        kinds = list(by_kind)
        if sum(share.values()) < n_bins:
            share[kinds[int(rng.integers(len(kinds)))]] += 1
        while sum(share.values()) > n_bins:
            options = [k for k in kinds if share[k] > 1]
            share[options[int(rng.integers(len(options)))]] -= 1
        self.bins: list[Bin] = []
        for kind, indices in by_kind.items():
            order = rng.permutation(indices)
            for part in np.array_split(order, share[kind]):
                if len(part):
                    params = [int(i) for i in part]
                    size = min(self.card[i] for i in params) if kind == CATEGORICAL else 1
                    self.bins.append(Bin(kind, params, size))

    @property
    def target_dim(self) -> int:
        return sum(b.size for b in self.bins)

    @property
    def input_dim(self) -> int:
        """Bounce's representation dimension: one-hot width of categoricals, else 1 each."""
        return sum(self.card)

    def columns(self) -> list[slice]:
        """Each bin's slice of the target coordinates."""
        out, start = [], 0
        for b in self.bins:
            out.append(slice(start, start + b.size))
            start += b.size
        return out

    def kind_columns(self, *kinds: str) -> list[int]:
        return [c for b, s in zip(self.bins, self.columns(), strict=True) if b.kind in kinds
                for c in range(s.start, s.stop)]

    def project_up(self, Y: Tensor) -> Tensor:
        """``n x target_dim`` target points -> ``n x space.dim`` encoded configurations."""
        X = torch.zeros(len(Y), self.space.dim, dtype=DTYPE)
        for b, cols in zip(self.bins, self.columns(), strict=True):
            block = Y[:, cols]
            for p in b.params:
                if b.kind == CATEGORICAL:
                    k = block.argmax(-1)
                    X[:, p] = torch.remainder(
                        torch.ceil(k * self.card[p] / b.size) + self.sign[p], self.card[p])
                else:
                    X[:, p] = (block[:, 0] * self.sign[p] + 1) / 2
        return self.space.round(X.clamp(0, None))

    def project_down(self, X: Tensor) -> Tensor:
        """Encoded configurations -> target points, read from each bin's first parameter."""
        Y = -torch.ones(len(X), self.target_dim, dtype=DTYPE)
        for b, cols in zip(self.bins, self.columns(), strict=True):
            p = b.params[0]
            if b.kind == CATEGORICAL:
                k = torch.arange(b.size, dtype=DTYPE)
                images = torch.remainder(torch.ceil(k * self.card[p] / b.size) + self.sign[p],
                                         self.card[p])
                match = images.unsqueeze(0) == X[:, p : p + 1]
                index = torch.where(match.any(-1), match.to(torch.int64).argmax(-1), 0)
                Y[torch.arange(len(X)), cols.start + index] = 1.0
            else:
                Y[:, cols.start] = (2 * X[:, p] - 1) * self.sign[p]
        return Y

    def split(self, n_new: int, rng: np.random.Generator) -> list[tuple[slice, list[slice]]]:
        """Split every bin with two or more parameters into ``1 + n_new`` (fewer if it has
        fewer parameters); returns, per old bin, its columns and the new bins' columns (whose
        data copy the old ones'); the first part keeps the old place, new bins go last."""
        old_columns, kept, added, mapping = self.columns(), [], [], []
        end = self.target_dim
        for b, cols in zip(self.bins, old_columns, strict=True):
            parts = min(n_new, len(b.params) - 1)
            if parts == 0:
                kept.append(b)
                continue
            order = rng.permutation(len(b.params))
            groups = [[b.params[i] for i in g] for g in np.array_split(order, parts + 1)]
            kept.append(Bin(b.kind, groups[0], b.size))
            new_columns = []
            for g in groups[1:]:
                added.append(Bin(b.kind, g, b.size))
                new_columns.append(slice(end, end + b.size))
                end += b.size
            mapping.append((cols, new_columns))
        self.bins = kept + added
        return mapping


def _kind(space: SearchSpace, i: int) -> str:
    kind = space.parameters[i].kind
    if kind in (BINARY, CATEGORICAL):
        return kind
    return CONTINUOUS  # continuous, and integer (rounded): Bounce has no ordinal support


def _join(Y: Tensor, mapping: list[tuple[slice, list[slice]]], target_dim: int) -> Tensor:
    """Bounce's ``join_data``: old data in the split embedding (new bins copy their parent)."""
    out = torch.empty(len(Y), target_dim, dtype=DTYPE)
    out[:, : Y.shape[1]] = Y
    for old, news in mapping:
        for new in news:
            out[:, new] = Y[:, old]
    return out


@dataclass
class BounceTrustRegion:
    """Bounce's trust region lengths (``length_init_discrete = 10`` as in its config)."""

    dim: int
    init_discrete: int = 10
    init_continuous: float = 0.8
    min_continuous: float = 0.5**7
    max_continuous: float = 1.6
    length: float = field(init=False)  # Bounce's length_discrete_continuous
    length_continuous: float = field(init=False)
    terminated: bool = field(init=False)

    def __post_init__(self) -> None:
        self.init_discrete = min(self.init_discrete, self.dim)
        self.reset()

    def reset(self) -> None:
        self.length = float(self.init_discrete)
        self.length_continuous = self.init_continuous
        self.terminated = False

    @property
    def length_discrete(self) -> int:
        return max(1, math.floor(self.length))

    def update(self, loss: float, incumbent: float, factor: float) -> None:
        """Shrink by ``factor`` unless ``loss`` improves the incumbent, else grow (Bounce's
        ``update_tr_state``)."""
        if loss >= incumbent - 1e-3 * abs(incumbent):
            self.length *= factor
            self.length_continuous *= factor
        else:
            self.length = min(self.length / factor, self.dim)
            self.length_continuous = min(self.length_continuous / factor, self.max_continuous)
        self.terminated = (self.length - 1e-4 <= 1
                           or self.length_continuous - 1e-4 <= self.min_continuous)


class Bounce(Optimizer):
    """Bounce behind bodi's ask/tell interface (see the module docstring for the algorithm).

    Args:
        space, seed, direction, directions, outcome_constraints, allow_repeats:
            see :class:`bodi.optimizers.Optimizer`.
        budget: the evaluations Bounce plans its stages for (``maximum_number_evaluations``;
            ``bodi bench`` passes its ``--budget``).
        n_init: Bounce's initial points per (re)start (5).
        initial_target_dim: the target dimension of the first stage (5).
        new_bins_on_split: bins added per bin at a split (2; adjusted as Bounce does).
        evaluations_until_input_dim: the evaluations after which the input dimension should
            be reached (100).
    """

    takes_budget: ClassVar[bool] = True
    keeps_state: ClassVar[bool] = True
    #: ``bodi bench`` does not give Bounce the shared design: it samples its own embedding
    brings_own_design: ClassVar[bool] = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        budget: int = 200,
        n_init: int = 5,
        initial_target_dim: int = 5,
        new_bins_on_split: int = 2,
        evaluations_until_input_dim: int = 100,
        **kwargs: Any,
    ) -> None:
        for name, value in (("budget", budget), ("n_init", n_init),
                            ("initial_target_dim", initial_target_dim),
                            ("new_bins_on_split", new_bins_on_split),
                            ("evaluations_until_input_dim", evaluations_until_input_dim)):
            check_integer(name, value)
        self.budget = budget
        self.n_init = n_init
        self.initial_target_dim = initial_target_dim
        self.new_bins_on_split = new_bins_on_split
        self.evaluations_until_input_dim = min(evaluations_until_input_dim, budget)
        self._state: _State | None = None
        super().__init__(space, **kwargs)

    def settings(self) -> dict[str, Any]:
        return {"budget": self.budget, "n_init": self.n_init,
                "initial_target_dim": self.initial_target_dim,
                "new_bins_on_split": self.new_bins_on_split,
                "evaluations_until_input_dim": self.evaluations_until_input_dim}

    @classmethod
    def retired_settings(cls, settings: Mapping[str, Any], space: SearchSpace
                         ) -> dict[str, Any]:
        return {**super().retired_settings(settings, space), "kernel": "bounce",
                "dictionary_size": None}

    # ------------------------------------------------------------------ the replayed state
    def _new_state(self) -> _State:
        d0 = min(self.initial_target_dim, self.space.dim)
        rng = np.random.default_rng(derive_seed(self.seed, 0xB0))
        embedding = Embedding(self.space, d0, rng)
        D = self.space.dim
        b = self.new_bins_on_split
        n_splits = math.ceil(math.log(D / d0, b + 1)) if d0 < D else 0
        sizes = np.arange(1, max(2, math.floor(math.log2(D))))  # Bounce's adjustment of b
        b = int(sizes[np.argmin(np.abs(d0 * (1 + sizes) ** n_splits - D))])
        n_splits = math.ceil(math.log(D / d0, b + 1)) if d0 < D else 0
        state = _State(embedding, BounceTrustRegion(embedding.target_dim), d0, b, n_splits)
        state.budgets = {d0 * (1 + b) ** i: self._stage_budget(state, d0 * (1 + b) ** i)
                         for i in range(n_splits + 1)}
        state.queue = self._initial_sample(state)
        state.restarts += 1
        return state

    def _stage_budget(self, state: _State, target_dim: int) -> int:
        """Bounce's ``_split_budget``: evaluations for the stage of ``target_dim``."""
        if target_dim >= self.space.dim:
            return min(10 * target_dim, self.budget - state.n_evals)
        total = self.evaluations_until_input_dim - self.n_init
        b, d0 = state.new_bins, state.d0
        share = round(-(b * total * target_dim) / (d0 * (1 - (b + 1) ** (state.n_splits + 1))))
        return min(2**target_dim, share)

    def _initial_sample(self, state: _State) -> list[Tensor]:
        """``n_init`` uniform target points of the current embedding (Bounce's sample_init),
        drawn from the seed and the number of restarts so far."""
        g = torch.Generator().manual_seed(derive_seed(self.seed, state.restarts, 0xB1))
        emb = state.embedding
        Y = torch.empty(self.n_init, emb.target_dim, dtype=DTYPE)
        for b, cols in zip(emb.bins, emb.columns(), strict=True):
            if b.kind == BINARY:
                Y[:, cols] = torch.randint(0, 2, (self.n_init, 1), generator=g) * 2.0 - 1
            elif b.kind == CONTINUOUS:
                Y[:, cols] = torch.rand(self.n_init, 1, generator=g, dtype=DTYPE) * 2 - 1
            else:
                k = torch.randint(0, b.size, (self.n_init,), generator=g)
                Y[:, cols] = -1.0
                Y[torch.arange(self.n_init), cols.start + k] = 1.0
        return list(Y)

    def _catch_up(self, history: History) -> _State:
        """Tell the state the finished trials of ``history`` it has not seen, in trial order;
        a pending trial holds back the trials after it (Bounce is sequential)."""
        if self._state is None:
            self._state = self._new_state()
        state, losses = self._state, history.finished_losses()
        for trial in history.trials[state.consumed :]:
            if trial.state == "pending":
                break
            state.consumed += 1
            loss = losses.get(trial.number)
            if loss is None:  # failed before any value was known
                continue
            y = state.embedding.project_down(trial.x.unsqueeze(0))[0]
            if state.queue:  # an initial point (Bounce's sample_init)
                state.queue.pop(0)
                state.add(y, loss)
                continue
            self._observe(state, y, loss)
        return state

    def _observe(self, state: _State, y: Tensor, loss: float) -> None:
        """One evaluation of the model phase: the trust region update, then a split or a
        restart when it collapsed (Bounce's ``run`` loop after the evaluation)."""
        tr_dim = state.d0 * (1 + state.new_bins) ** state.splits
        left = max(1, min(state.budgets.get(tr_dim, 1), self.budget - state.n_evals))
        factor = max((1 / state.region.length) ** (1 / left), 1e-10)
        state.region.update(loss, min(state.losses), factor)
        state.budgets[tr_dim] = state.budgets.get(tr_dim, 1) - 1
        state.add(y, loss)
        if not state.region.terminated:
            return
        emb = state.embedding
        if emb.target_dim < emb.input_dim and any(len(b.params) > 1 for b in emb.bins):
            rng = np.random.default_rng(derive_seed(self.seed, state.splits_done, 0xB2))
            mapping = emb.split(state.new_bins, rng)
            state.Y = [row for row in _join(torch.stack(state.Y), mapping, emb.target_dim)]
            state.region = BounceTrustRegion(emb.target_dim)
            state.splits_done += 1
            state.splits = min(state.splits + 1, state.n_splits)
        else:  # full dimension: restart with a new initial sample, keeping the embedding
            state.budgets[tr_dim] = self._stage_budget(state, self.space.dim)
            state.Y, state.losses = [], []
            state.region.reset()
            state.queue = self._initial_sample(state)
            state.restarts += 1

    # ------------------------------------------------------------------ suggestions
    def _suggest(self, history: History, n: int) -> Tensor:
        state = self._catch_up(history)
        pending = len(history.rows("pending"))
        rows = [row for row in state.queue[pending : pending + n]]
        if len(rows) < n and state.Y:
            rows += self._candidates(history, state, n - len(rows))
        while len(rows) < n:  # nothing to model yet: uniform points of the embedding
            rows += self._initial_sample(state)[: n - len(rows)]
        return state.embedding.project_up(torch.stack(rows))

    def _candidates(self, history: History, state: _State, q: int) -> list[Tensor]:
        from botorch.acquisition import ExpectedImprovement

        emb = state.embedding
        Y = torch.stack(state.Y)
        losses = torch.tensor(state.losses, dtype=DTYPE)
        std = losses.std() if len(losses) > 1 else torch.tensor(0.0, dtype=DTYPE)
        scaled = (losses - losses.mean()) / (std if std > 0 else 1.0)
        X = (Y + 1) / 2
        center = X[int(scaled.argmin())].clone()
        model = _fit_gp(X, -scaled, emb)
        acq = ExpectedImprovement(model, best_f=float((-scaled).max()))
        g = torch.Generator().manual_seed(derive_seed(self.seed, len(history.trials), 0xB3))
        discrete = emb.kind_columns(BINARY, CATEGORICAL)
        continuous = emb.kind_columns(CONTINUOUS)
        taken = torch.cat([X, (emb.project_down(history.X_pending) + 1) / 2])
        if not continuous:
            found = _discrete_search(acq, center, center, state, taken, g)
        elif not discrete:
            found = _continuous_search(acq, model, center, center, continuous, state)
        else:  # Bounce's interleaved steps
            best = center.clone()
            for _ in range(5):
                best = _discrete_search(acq, center, best, state, taken, g)[0]
                best[continuous] = center[continuous]
                best = _continuous_search(acq, model, center, best, continuous, state)[0]
            found = [best]
        return [row * 2 - 1 for row in found[:q]]


@dataclass
class _State:
    embedding: Embedding
    region: BounceTrustRegion
    d0: int
    new_bins: int
    n_splits: int
    budgets: dict[int, int] = field(default_factory=dict)
    queue: list[Tensor] = field(default_factory=list)  # initial points not evaluated yet
    Y: list[Tensor] = field(default_factory=list)  # the stage's target points
    losses: list[float] = field(default_factory=list)
    n_evals: int = 0
    splits: int = 0  # Bounce's tr_splits (capped at n_splits)
    splits_done: int = 0
    restarts: int = 0
    consumed: int = 0  # trials told so far

    def add(self, y: Tensor, loss: float) -> None:
        self.Y.append(y)
        self.losses.append(float(loss))
        self.n_evals += 1


def _fit_gp(X: Tensor, y: Tensor, emb: Embedding):
    """Bounce's ``get_gp`` + ``fit_mll`` on ``[0, 1]`` target points and standardized values.

    The model is BoTorch's ``SingleTaskGP`` with Bounce's kernel, priors and likelihood, as the
    subclass :class:`~bodi.models.single_task.FastSingleTaskGP`: the same marginal likelihood and
    posterior, with the posterior of the ``b x 1 x dim`` candidates computed in one pass
    instead of ``b`` separate GPyTorch problems (docs/speed.md).
    """
    from botorch.exceptions import ModelFittingError
    from botorch.fit import fit_gpytorch_mll
    from gpytorch.kernels import MaternKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from gpytorch.priors import GammaPrior

    from bodi.models.baseline_kernels import MixtureKernel
    from bodi.models.single_task import FastSingleTaskGP

    continuous = emb.kind_columns(CONTINUOUS)
    discrete = emb.kind_columns(BINARY, CATEGORICAL)
    if not continuous:
        base = MaternKernel(nu=2.5, lengthscale_prior=GammaPrior(1.5, 0.1))
    elif not discrete:
        base = MaternKernel(nu=2.5, ard_num_dims=len(continuous),
                            lengthscale_prior=GammaPrior(1.5, 0.1))
    else:
        base = MixtureKernel(discrete, continuous, GammaPrior(1.5, 0.1), GammaPrior(1.5, 0.1))
    model = FastSingleTaskGP(
        X, y.unsqueeze(-1),
        covar_module=ScaleKernel(base, outputscale_prior=GammaPrior(1.5, 0.5)),
        likelihood=GaussianLikelihood(noise_prior=GammaPrior(1.1, 0.05)),
        outcome_transform=None,
    )
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    try:
        fit_gpytorch_mll(mll)
    except ModelFittingError:  # Bounce's fallback: 100 Adam steps
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
        for _ in range(100):
            optimizer.zero_grad()
            loss = -mll(model(X), y)
            loss.backward()
            optimizer.step()
    return model.eval()


def _hamming(X: Tensor, center: Tensor) -> Tensor:
    return (center != X).sum(-1)


def _neighbours(x: Tensor, center: Tensor, length: int, emb: Embedding) -> Tensor:
    """Points one move from ``x`` (a bit flipped, a category changed) within the trust region."""
    moves = []
    for b, cols in zip(emb.bins, emb.columns(), strict=True):
        if b.kind == BINARY:
            row = x.clone()
            row[cols.start] = 1 - row[cols.start]
            moves.append(row.unsqueeze(0))
        elif b.kind == CATEGORICAL:
            for c in range(cols.start, cols.stop):
                if x[c] == 0:
                    row = x.clone()
                    row[cols] = 0
                    row[c] = 1
                    moves.append(row.unsqueeze(0))
    if not moves:
        return x.new_zeros(0, len(x))
    rows = torch.cat(moves)
    return rows[_hamming(rows, center) <= length]


def _discrete_search(acq, center: Tensor, start: Tensor, state: _State, taken: Tensor,
                     g: torch.Generator) -> list[Tensor]:
    """Bounce's ``create_candidates_discrete`` with analytic EI; returns candidates, best first."""
    emb, length = state.embedding, state.region.length_discrete
    base = center.clone()
    continuous = emb.kind_columns(CONTINUOUS)
    base[continuous] = start[continuous]
    n = min(5000, max(2000, 200 * emb.target_dim))
    X = base.repeat(n, 1)
    binary = torch.tensor(emb.kind_columns(BINARY), dtype=torch.long)
    if len(binary):
        k = min(length - 1, len(binary))
        if k > 0:
            chosen = torch.rand(n, len(binary), generator=g).argsort(-1)[:, :k]
            X.scatter_(1, binary[chosen], torch.randint(0, 2, (n, k), generator=g).to(DTYPE))
    blocks = [cols for b, cols in zip(emb.bins, emb.columns(), strict=True)
              if b.kind == CATEGORICAL]
    if blocks:
        count = min(length, len(blocks))
        picks = torch.rand(n, len(blocks), generator=g).argsort(-1)[:, :count]
        for j, cols in enumerate(blocks):
            rows = (picks == j).any(-1) if len(blocks) > length else torch.ones(n, dtype=bool)
            index = torch.randint(cols.start, cols.stop, (n,), generator=g)
            X[rows, cols] = 0.0
            X[rows.nonzero().squeeze(-1), index[rows]] = 1.0
    X = torch.unique(X, dim=0)
    X = X[(base != X).any(-1)]
    inside = X[_hamming(X, base) <= length]
    X = inside if len(inside) else X
    X = torch.cat([X, _neighbours(base, base, length, emb)])
    if len(X) == 0:
        return [base]
    with torch.no_grad():
        values = acq(X.unsqueeze(1))
    results: list[tuple[float, Tensor]] = []
    for top in values.topk(min(3, len(values))).indices.tolist():
        x, value = X[top].clone(), float(values[top])
        results.append((value, x))
        while True:
            moves = _neighbours(x, base, length, emb)
            if len(taken):
                moves = moves[~(moves.unsqueeze(1) == taken.unsqueeze(0)).all(-1).any(-1)]
            if len(moves) == 0:
                break
            with torch.no_grad():
                scores = acq(moves.unsqueeze(1))
            best = int(scores.argmax())
            if float(scores[best]) <= value:
                break
            x, value = moves[best], float(scores[best])
            results.append((value, x.clone()))
    results.sort(key=lambda r: -r[0])
    out: list[Tensor] = []
    for _, x in results:
        if not any(torch.equal(x, o) for o in out):
            out.append(x)
    return out


def _continuous_search(acq, model, center: Tensor, start: Tensor, continuous: list[int],
                       state: _State) -> list[Tensor]:
    """Bounce's ``create_candidates_continuous``: EI in the lengthscale-shaped box."""
    from botorch.optim import optimize_acqf

    kernel = model.covar_module.base_kernel
    lengthscale = getattr(kernel, "continuous_kernel", kernel).lengthscale.detach().reshape(-1)
    weights = lengthscale / lengthscale.mean()
    weights = weights / torch.prod(weights.pow(1 / len(weights)))
    half = state.region.length_continuous * weights / 2
    dim = len(center)
    lower, upper = torch.zeros(dim, dtype=DTYPE), torch.ones(dim, dtype=DTYPE)
    lower[continuous] = (center[continuous] - half).clamp(0, 1)
    upper[continuous] = (center[continuous] + half).clamp(0, 1)
    fixed = {i: float(start[i]) for i in range(dim) if i not in set(continuous)}
    x, _ = optimize_acqf(acq, torch.stack([lower, upper]), q=1, num_restarts=10,
                         raw_samples=512, fixed_features=fixed or None)
    return [x.reshape(-1).detach()]
