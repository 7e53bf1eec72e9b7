"""The BODi surrogate: the HED kernel (or the Hamming-distance kernel) in a ``SingleTaskGP``,
fitted with ``fit_gpytorch_mll``.

Kernel (paper, "Representation of mixed input spaces"):

    k(x, x') = k_HED(z, z') * k_ord(u, u')

where ``z`` are the binary/categorical columns, embedded by the dictionary, and ``u`` the
continuous and integer columns (already in ``[0, 1]``). Both factors are Matérn-5/2 with ARD.

Priors: BoTorch's defaults for ``SingleTaskGP`` (Hvarfner et al., 2024): a LogNormal lengthscale
prior ``LN(sqrt(2) + log(D) / 2, sqrt(3))`` with ``D = m + #ordinal`` the number of kernel inputs,
a LogNormal(-4, 1) noise prior, no outputscale (the outcome is standardised). The prior's
median
lengthscale grows like ``sqrt(D)``, so with ``m = 128`` embedding coordinates an ARD lengthscale
only shrinks where the data ask for it: the data-driven pruning the paper credits for the
cardinality reduction (Prop. 3, Theorem 1).
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import torch
from botorch.exceptions.warnings import InputDataWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.model import Model, ModelList
from botorch.models.transforms.outcome import Standardize
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import AdditiveKernel, Kernel, MaternKernel, ProductKernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import LogNormalPrior
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from bodi.hed.dictionaries import Dictionary
from bodi.hed.kernel import FirstOrderKernel, HammingDistanceKernel, HammingEmbeddingKernel
from bodi.models.fit_loss import is_embedding_kernel
from bodi.models.single_task import FastSingleTaskGP, scaled_sum
from bodi.space import SearchSpace

FIT_MAXITER = 100
#: the GPs whose hyperparameters the next fits start from (see :func:`warm_started_fits`)
_WARM_STARTS: ContextVar[_WarmStarts | None] = ContextVar(
    "warm_starts", default=None)


def matern_with_dim_scaled_prior(
    ard_num_dims: int | None, prior_dims: int, active_dims: list[int] | None = None
) -> MaternKernel:
    """Matérn-5/2 ARD kernel (one lengthscale if ``ard_num_dims`` is ``None``) with BoTorch's
    dimension-scaled LogNormal lengthscale prior."""
    prior = LogNormalPrior(loc=math.sqrt(2) + 0.5 * math.log(prior_dims), scale=math.sqrt(3))
    return MaternKernel(
        nu=2.5,
        ard_num_dims=ard_num_dims,
        active_dims=active_dims,
        lengthscale_prior=prior,
        lengthscale_constraint=GreaterThan(2.5e-2, transform=None, initial_value=prior.mode),
    )


def make_hed_kernel(space: SearchSpace, dictionary: Dictionary | None) -> Kernel:
    """The product kernel ``k_HED * k_ord`` for ``space`` (either factor may be absent)."""
    discrete, ordinal = space.discrete_dims, space.ordinal_dims
    m = dictionary.m if discrete and dictionary is not None else 0
    if discrete and dictionary is None:
        raise ValueError("a space with binary/categorical parameters needs a dictionary")
    if discrete and dictionary.d != len(discrete):
        raise ValueError(
            f"dictionary has {dictionary.d} columns but the space has {len(discrete)} "
            "binary/categorical parameters"
        )
    prior_dims = m + len(ordinal)
    factors: list[Kernel] = []
    if discrete:
        base = matern_with_dim_scaled_prior(m, prior_dims)
        # A kernel on every column takes no active_dims: GPyTorch would copy each input
        # (``N x dim``, an index_select) on every call, the costliest step at large ``dim``.
        columns = None if list(discrete) == list(range(space.dim)) else discrete
        factors.append(HammingEmbeddingKernel(dictionary, base, active_dims=columns))
    if ordinal:
        factors.append(matern_with_dim_scaled_prior(len(ordinal), prior_dims, ordinal))
    return factors[0] if len(factors) == 1 else ProductKernel(*factors)


def _hamming_factor(space: SearchSpace, prior_dims: int) -> Kernel:
    """The Hamming-distance factor of the discrete columns (one lengthscale)."""
    discrete = space.discrete_dims
    columns = None if list(discrete) == list(range(space.dim)) else discrete
    base = matern_with_dim_scaled_prior(None, prior_dims)
    return HammingDistanceKernel(space.cardinalities, base, active_dims=columns)


def make_hed_hamming_kernel(space: SearchSpace, dictionary: Dictionary | None) -> Kernel:
    """``k_HED * k_H`` (with ``k_ord`` once): the product of :func:`make_hed_kernel` and the
    Hamming-distance factor of :func:`make_hamming_kernel`. Either discrete factor can fit to
    a constant (a long lengthscale), so the product holds both models and the marginal
    likelihood weighs them."""
    if not space.discrete_dims:
        return make_hed_kernel(space, dictionary)
    hed, hamming, ordinal = _discrete_factors(space, dictionary)
    return ProductKernel(hed, hamming, *ordinal)


def make_hed_plus_hamming_kernel(space: SearchSpace, dictionary: Dictionary | None) -> Kernel:
    """``(s_1 k_HED + s_2 k_H) * k_ord``: the sum of the HED factor of
    :func:`make_hed_kernel` and the Hamming-distance factor, each with its own output scale
    (``s_i``; no prior), times the ordinal factor where there is one. Where the product
    :func:`make_hed_hamming_kernel` multiplies the two (so the HED factor's variation between
    neighbours scales every covariance), the sum lets each explain its own part of the
    function."""
    if not space.discrete_dims:
        return make_hed_kernel(space, dictionary)
    hed, hamming, ordinal = _discrete_factors(space, dictionary)
    discrete = AdditiveKernel(ScaleKernel(hed), ScaleKernel(hamming))
    return ProductKernel(discrete, *ordinal) if ordinal else discrete


def _discrete_factors(space: SearchSpace, dictionary: Dictionary | None
                      ) -> tuple[Kernel, Kernel, list[Kernel]]:
    """The HED factor and the Hamming-distance factor of the discrete columns of ``space``
    (which has some) and the ordinal factor (a list of at most one)."""
    hed = make_hed_kernel(space, dictionary)
    factors = list(hed.kernels) if isinstance(hed, ProductKernel) else [hed]
    hamming = _hamming_factor(space, len(space.discrete_dims) + len(space.ordinal_dims))
    return factors[0], hamming, factors[1:]


def make_hamming_kernel(space: SearchSpace) -> Kernel:
    """The product kernel ``k_H * k_ord`` for ``space`` (either factor may be absent):
    ``k_H`` a Matérn-5/2 of the Hamming distance of the discrete columns with one lengthscale
    (:class:`~bodi.hed.kernel.HammingDistanceKernel`), ``k_ord`` as in
    :func:`make_hed_kernel`; the lengthscale priors are BoTorch's, scaled with
    ``d + #ordinal``."""
    discrete, ordinal = space.discrete_dims, space.ordinal_dims
    prior_dims = len(discrete) + len(ordinal)
    factors: list[Kernel] = []
    if discrete:
        factors.append(_hamming_factor(space, prior_dims))
    if ordinal:
        factors.append(matern_with_dim_scaled_prior(len(ordinal), prior_dims, ordinal))
    return factors[0] if len(factors) == 1 else ProductKernel(*factors)


def with_first_order(space: SearchSpace, covar: Kernel) -> Kernel:
    """``s_0 * covar + s_1 * k_1``: ``covar`` (any kernel of ``space``) plus the first-order
    kernel of the binary/categorical columns (:class:`~bodi.hed.kernel.FirstOrderKernel`,
    ``1 - H / d``), each with its own output scale (no prior): the GP of ``g(x) + sum_i
    w_i(x_i)``, whose parts the marginal likelihood sizes (``s_1`` near 0 where the variables
    act only together, ``s_0`` where they act alone). Both scales are needed: with ``covar``'s
    variance fixed at 1 the fit stays at ``s_1 = 0`` even where the first-order kernel alone
    explains the data far better (measured on maxsat-frb1002-shifted's stored runs, docs/results.md
    §5). ``covar`` alone for a space without discrete parameters."""
    discrete = space.discrete_dims
    if not discrete:
        return covar
    columns = None if list(discrete) == list(range(space.dim)) else discrete
    first_order = ScaleKernel(FirstOrderKernel(space.cardinalities, active_dims=columns))
    return AdditiveKernel(ScaleKernel(covar), first_order)


def without_first_order(model: SingleTaskGP, train_X: Tensor, train_Y: Tensor
                        ) -> FastSingleTaskGP:
    """The fitted sum ``s_0 k + s_1 k_1`` (:func:`with_first_order`; on ``train_X``,
    ``train_Y`` as :func:`make_gp` takes them) without its first-order term, rescaled to the
    kernel alone's unit prior variance: ``k`` with the sum's hyperparameters, noise
    ``sigma^2 / s_0`` and the same mean, not refitted (the fitted sum is its ``fitted_sum``,
    the start of a later warm-started fit of the sum). Its posterior mean is that of
    ``s_0 k + sigma^2 I``; its variance is that model's divided by ``s_0``."""
    main = model.covar_module.kernels[0]
    alone = make_gp(train_X, train_Y, copy.deepcopy(main.base_kernel))
    copy_hyperparameters(model, alone)  # the mean (the noise is rescaled below)
    with torch.no_grad():
        scale = main.outputscale.detach()
        noise, target = model.likelihood.noise_covar, alone.likelihood.noise_covar
        target.noise = noise.noise.detach() / scale
    # what a later fit of the sum starts from (warm_started_fits): a plain attribute, not a
    # submodule whose parameters would count as the model's own
    vars(alone)["fitted_sum"] = model
    return alone.eval()


def first_order_share(model: Model) -> float:
    """``s_1 / (s_0 + s_1)``: the first-order term's share of the prior variance of a GP whose
    kernel :func:`with_first_order` built (0 for any other kernel)."""
    parts = scaled_sum(model.covar_module)
    if parts is None or not isinstance(parts[1].base_kernel, FirstOrderKernel):
        return 0.0
    main, first_order = (float(k.outputscale.detach()) for k in parts)
    return first_order / (main + first_order)


def make_gp(train_X: Tensor, train_Y: Tensor, covar_module: Kernel) -> FastSingleTaskGP:
    """An (unfitted) GP with ``covar_module``, a constant mean, a Gaussian likelihood with
    BoTorch's noise prior LogNormal(-4, 1) and standardized outcomes; ``train_X`` is
    ``n x dim`` (encoded), ``train_Y`` ``n x 1`` (larger is better). Every surrogate of bodi
    (HED, overlap, diffusion) is one."""
    with warnings.catch_warnings():
        # Categorical indices lie outside [0, 1] by design; the kernels handle them.
        warnings.simplefilter("ignore", InputDataWarning)
        model = FastSingleTaskGP(
            train_X, train_Y, covar_module=covar_module, outcome_transform=Standardize(m=1),
        )
    return model


def make_hed_model(
    train_X: Tensor, train_Y: Tensor, space: SearchSpace, dictionary: Dictionary | None
) -> FastSingleTaskGP:
    """An (unfitted) GP on the HED embedding.

    Args:
        train_X: ``n x dim`` encoded inputs (see :mod:`bodi.space`).
        train_Y: ``n x 1`` outcomes, larger is better.
        space: the search space the inputs encode.
        dictionary: dictionary over ``space.discrete_dims`` (``None`` for purely ordinal spaces).
    """
    return make_gp(train_X, train_Y, make_hed_kernel(space, dictionary))


def fit_model(model: SingleTaskGP, maxiter: int | None = FIT_MAXITER) -> SingleTaskGP:
    """Fit hyperparameters by maximising the marginal log likelihood (MAP under the priors).

    Uses ``fit_gpytorch_mll`` (L-BFGS-B) with at most ``maxiter`` iterations (``None``: scipy's
    default). With ``m = 128`` ARD lengthscales most of them sit in flat directions of the
    likelihood, and L-BFGS-B spends >1000 evaluations crawling along them; the cap keeps a fit
    well under a second (see docs/speed.md). Inside :func:`warm_started_fits` a model with the
    same hyperparameters as one of the given GPs starts from that GP's values instead, with
    fewer iterations, unless its loss there is worse than at its own start.
    """
    warm = _WARM_STARTS.get()
    source = None if warm is None else next(
        (gp for gp in warm.sources if _same_hyperparameters(gp, model)), None)
    if source is not None:
        warm.sources.remove(source)
        if _start_from(source, model, warm.same_inputs):
            maxiter = warm.maxiter if maxiter is None else min(maxiter, warm.maxiter)
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    kwargs = {} if maxiter is None else {"optimizer_kwargs": {"options": {"maxiter": maxiter}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        fit_gpytorch_mll(mll, **kwargs)
    model.eval()
    return model


def _start_from(source: Model, model: SingleTaskGP, same_inputs: bool) -> bool:
    """Move ``model``'s hyperparameters to ``source``'s (:func:`copy_hyperparameters`; with
    ``same_inputs=False``, each embedding kernel's ARD lengthscales to the median of
    ``source``'s, as its dictionary's rows are other random rows) if the fit's loss is no worse
    there than at ``model``'s own values; whether it moved."""
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    own = _fit_loss(model)
    copy_hyperparameters(source, model)
    if not same_inputs:
        given, own_parameters = dict(source.named_parameters()), dict(model.named_parameters())
        with torch.no_grad():
            for name in _embedding_lengthscales(model):
                if name in given:
                    own_parameters[name].fill_(given[name].median())
    if _fit_loss(model) <= own:
        return True
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            parameter.copy_(before[name])
    return False


def _fit_loss(model: SingleTaskGP) -> float:
    """The loss that :func:`fit_model` minimises, at ``model``'s current hyperparameters."""
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        loss = (model.compute_custom_loss(mll) if hasattr(model, "compute_custom_loss")
                else -mll(model(*model.train_inputs), model.train_targets))
    return float(loss)


def _embedding_lengthscales(model: Model) -> list[str]:
    """The names of the raw ARD lengthscales of ``model``'s HED kernels (one per dictionary
    row)."""
    return [f"{path}.base_kernel.raw_lengthscale" for path, module in model.named_modules()
            if isinstance(module, HammingEmbeddingKernel)]


def copy_hyperparameters(source: Model, target: Model) -> None:
    """Set ``target``'s hyperparameters to ``source``'s where their names and shapes agree
    (raw, constrained-space values; the others keep theirs)."""
    given = dict(source.named_parameters())
    with torch.no_grad():
        for name, parameter in target.named_parameters():
            if name in given and given[name].shape == parameter.shape:
                parameter.copy_(given[name])


def _same_hyperparameters(source: Model, target: Model) -> bool:
    """Whether ``source`` has each of ``target``'s hyperparameters, by name and shape."""
    given = {name: p.shape for name, p in source.named_parameters()}
    return all(given.get(name) == p.shape for name, p in target.named_parameters())


@dataclass
class _WarmStarts:
    sources: list[SingleTaskGP]
    maxiter: int
    same_inputs: bool


@contextmanager
def warm_started_fits(source: Model, maxiter: int, *, same_inputs: bool = True
                      ) -> Iterator[None]:
    """Within the block, each :func:`fit_model` of a GP with the same hyperparameters as one of
    ``source``'s (a GP, or the GPs of a ``ModelList``, each used once, in order) starts from
    that GP's values and runs at most ``maxiter`` iterations: a cheap refit of a model on data
    close to ``source``'s. ``same_inputs=False``: the models' HED kernels embed with other
    dictionaries (their lengthscales start at the median of ``source``'s). Other fits (another
    kernel) run as usual."""
    models = source.models if isinstance(source, ModelList) else [source]
    models = [getattr(m, "fitted_sum", m) for m in models]  # see without_first_order
    token = _WARM_STARTS.set(_WarmStarts([m for m in models if isinstance(m, SingleTaskGP)],
                                         maxiter, same_inputs))
    try:
        yield
    finally:
        _WARM_STARTS.reset(token)


def leave_one_out_log_densities(model: Model) -> Tensor:
    """``n`` leave-one-out log predictive densities of a fitted GP's training targets, in the
    outcomes' own units (so fits on different subsets of the data compare on common rows).

    With ``K = k(X, X) + sigma^2 I`` (``n x n``, standardized targets ``y``),
    ``alpha = K^{-1} (y - m)`` and ``c_i = [K^{-1}]_ii`` (Rasmussen & Williams, 2006,
    Sec. 5.4.2):

        log p(y_i | X, y_{-i}) = -log(2 pi) / 2 + log(c_i) / 2 - alpha_i^2 / (2 c_i) - log(s)

    where ``s`` is the outcome's standardization scale; from one Cholesky factor, ``O(n^3)``.
    Unlike GPyTorch's ``LeaveOneOutPseudoLikelihood`` no hyperparameter prior is added, so
    models with different kernels compare on held-out fit alone. A ``ModelList`` (several
    outcomes on the same rows) gives the sum over its GPs, known objectives contributing
    nothing. The model stays in eval mode.
    """
    if isinstance(model, ModelList):
        densities = [leave_one_out_log_densities(m) for m in model.models
                     if isinstance(m, SingleTaskGP)]
        if not densities:
            raise ValueError("the model list has no GP")
        return torch.stack(densities).sum(0)
    X, y = model.train_inputs[0], model.train_targets
    with torch.no_grad():
        K = model.covar_module(X).to_dense()
        K = K + model.likelihood.noise.reshape(-1).expand(len(X)).diag_embed()
        L = psd_safe_cholesky(K)
        K_inv = torch.cholesky_inverse(L)
        alpha = K_inv @ (y - model.mean_module(X))
        c = K_inv.diagonal()
        transform = getattr(model, "outcome_transform", None)
        log_scale = transform.stdvs.reshape(-1)[0].log() if transform is not None else 0.0
        return -0.5 * math.log(2 * math.pi) + 0.5 * c.log() - alpha**2 / (2 * c) - log_scale


def leave_one_out_log_likelihood(model: SingleTaskGP) -> Tensor:
    """Mean of :func:`leave_one_out_log_densities` (a scalar tensor): how well a fitted GP
    predicts each of its training targets from the others."""
    return leave_one_out_log_densities(model).mean()


def lengthscales(model: SingleTaskGP) -> dict[str, Tensor]:
    """Lengthscales of the fitted HED (``"embedding"``), Hamming-distance (``"hamming"``) and
    ordinal (``"ordinal"``) factors."""
    out: dict[str, Tensor] = {}
    covar = model.covar_module
    factors = covar.kernels if isinstance(covar, ProductKernel) else [covar]
    for kernel in factors:
        if is_embedding_kernel(kernel):
            key = "hamming" if isinstance(kernel, HammingDistanceKernel) else "embedding"
            out[key] = kernel.base_kernel.lengthscale.detach().reshape(-1)
        else:
            out["ordinal"] = kernel.lengthscale.detach().reshape(-1)
    return out


__all__ = [
    "FastSingleTaskGP",
    "copy_hyperparameters",
    "fit_model",
    "leave_one_out_log_densities",
    "leave_one_out_log_likelihood",
    "lengthscales",
    "make_gp",
    "make_hed_kernel",
    "make_hed_model",
    "matern_with_dim_scaled_prior",
    "warm_started_fits",
]
