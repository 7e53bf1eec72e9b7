"""Model-fit study: how well each surrogate predicts held-out points (paper, Sec. 5.3, Fig. 5).

For every seed, ``n_train`` training and ``n_test`` test configurations are drawn uniformly at
random from the problem's space (all distinct; the same points for every model of that seed),
the problem's own values are computed (no sign flip: a GP regression does not care about the
direction), and each surrogate of :data:`SURROGATES` is fitted
(:func:`bodi.models.gp.fit_model`) and predicts the test points. Metrics per (model, seed):

* ``rmse``: root mean squared error of the posterior mean; ``nrmse`` divides it by the standard
  deviation of the test values (predicting their mean scores 1);
* ``nlpd``: mean negative log density of the test values under the Gaussian predictive
  ``N(mean, var + noise)`` (lower is better);
* ``coverage95``: fraction of test values inside the 95% predictive interval (incl. noise);
* ``spearman``: rank correlation of predicted mean and true value;
* ``n_ls_below_10``: for HED models, how many of the ``m`` ARD lengthscales of the embedding
  are below 10 (the paper reports 4 of 128 on MaxSAT60). Embedding coordinates are Hamming
  distances divided by ``d``, in ``[0, 1]``, as in the authors' code. With bodi's
  dimension-scaled LogNormal prior the MAP of a lengthscale the data do not constrain is the
  prior's mode (2.3 for ``m = 128``), below 10, so this count is ``m`` by construction; hence
* ``n_ls_shrunk``: how many embedding lengthscales the fit moved below their starting value
  (the prior's mode), i.e. the dictionary elements the data made relevant.

Outputs in ``out``: ``modelfit.csv`` (one row per model and seed), ``modelfit.md`` (mean ± standard
error over seeds, and the command) and ``modelfit.png`` (predicted mean with 95% intervals
against the truth for the first seed, one panel per model, as in the paper's figure).
"""

from __future__ import annotations

import csv
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr
from torch import Tensor

from bodi.models.gp import fit_model, lengthscales
from bodi.models.registry import make_surrogate, surrogate_available
from bodi.problems import Problem, get_problem
from bodi.seeding import derive_seed, seeded
from bodi.space import DTYPE, SearchSpace

#: the surrogates fitted unless others are named (:func:`bodi.models.registry.make_surrogate`)
SURROGATES = ("hed-diverse", "hed-naive", "hed-wavelet", "hed-gaussian", "overlap", "diffusion")
CSV_NAME = "modelfit.csv"
MD_NAME = "modelfit.md"
PNG_NAME = "modelfit.png"
LENGTHSCALE_THRESHOLD = 10.0
#: (column, header, lower is better) of the summary table.
METRICS = (
    ("rmse", "RMSE", True),
    ("nrmse", "RMSE / std", True),
    ("nlpd", "NLPD", True),
    ("coverage95", "95% coverage", False),
    ("spearman", "Spearman", False),
    ("n_ls_below_10", "#ls < 10", True),
    ("n_ls_shrunk", "#ls shrunk", True),
    ("fit_seconds", "fit s", True),
)
FIELDS = ("problem", "model", "seed", "n_train", "n_test", "rmse", "nrmse", "nlpd",
          "coverage95", "spearman", "n_ls_below_10", "n_ls_shrunk", "m", "fit_seconds", "error")
_DATA_KEY = 0x40DE1  # sub-seed keys (bodi.seeding.derive_seed)
_DICTIONARY_KEY = 0xD1C7
_FIT_KEY = 0xF17


@dataclass
class Prediction:
    """Test values and a model's predictive mean and variance (incl. noise) for one seed."""

    y: np.ndarray
    mean: np.ndarray
    variance: np.ndarray


@dataclass
class ModelFitStudy:
    """The results of :func:`run_modelfit`."""

    problem: str
    rows: list[dict] = field(default_factory=list)
    #: ``model -> Prediction`` for the first seed (the figure).
    first_seed: dict[str, Prediction] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0


def draw_points(space: SearchSpace, n: int, seed: int) -> Tensor:
    """``n`` distinct configurations drawn uniformly at random (``n x dim``, seeded)."""
    if n > space.cardinality:
        raise ValueError(f"cannot draw {n} distinct points from a space of {space.cardinality:g}")
    generator = torch.Generator().manual_seed(derive_seed(seed, _DATA_KEY) % 2**63)
    rows: dict[tuple[float, ...], Tensor] = {}
    for _ in range(1000):
        for row in space.sample(max(n - len(rows), 8), generator=generator):
            if len(rows) < n:
                rows.setdefault(tuple(row.tolist()), row)
        if len(rows) == n:
            return torch.stack(list(rows.values()))
    raise ValueError(f"could not draw {n} distinct points")  # pragma: no cover


def gaussian_metrics(y: np.ndarray, mean: np.ndarray, variance: np.ndarray) -> dict[str, float]:
    """RMSE, RMSE / std(y), NLPD, 95% coverage and Spearman correlation of a Gaussian
    predictive ``N(mean, variance)`` for the values ``y``."""
    y, mean = np.asarray(y, float), np.asarray(mean, float)
    variance = np.maximum(np.asarray(variance, float), 1e-12)
    rmse = float(np.sqrt(np.mean((mean - y) ** 2)))
    std = float(np.std(y))
    nlpd = float(np.mean(0.5 * np.log(2 * math.pi * variance) + 0.5 * (y - mean) ** 2 / variance))
    coverage = float(np.mean(np.abs(y - mean) <= 1.959964 * np.sqrt(variance)))
    constant = np.ptp(mean) == 0 or np.ptp(y) == 0
    rho = math.nan if constant else float(spearmanr(mean, y).statistic)
    return {
        "rmse": rmse,
        "nrmse": rmse / std if std > 0 else math.nan,
        "nlpd": nlpd,
        "coverage95": coverage,
        "spearman": rho,
    }


def _fit_and_predict(
    name: str, X: Tensor, Y: Tensor, X_test: Tensor, space: SearchSpace, seed: int, m: int
) -> tuple[Prediction, dict[str, int | None]]:
    model = make_surrogate(name, X, Y.unsqueeze(-1), space,
                           seed=derive_seed(seed, _DICTIONARY_KEY), dictionary_size=m)
    hed = name.startswith("hed-") and bool(space.discrete_dims)
    start = lengthscales(model)["embedding"].clone() if hed else None
    with seeded(derive_seed(seed, _FIT_KEY)), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # optimizer warnings; a failed fit raises
        fit_model(model)
    with torch.no_grad():
        posterior = model.posterior(X_test, observation_noise=True)
        mean = posterior.mean.reshape(-1).numpy()
        variance = posterior.variance.reshape(-1).numpy()
    counts: dict[str, int | None] = {"n_ls_below_10": None, "n_ls_shrunk": None}
    if hed:
        fitted = lengthscales(model)["embedding"]
        counts["n_ls_below_10"] = int((fitted < LENGTHSCALE_THRESHOLD).sum())
        counts["n_ls_shrunk"] = int((fitted < start).sum())
    return Prediction(np.empty(0), mean, variance), counts


def run_modelfit(
    problem: str | Problem,
    *,
    n_train: int = 50,
    n_test: int = 50,
    seeds: Sequence[int] = (0,),
    models: Sequence[str] | None = None,
    dictionary_size: int = 128,
    wcnf: str | Path | None = None,
    log: Callable[[str], None] | None = print,
) -> ModelFitStudy:
    """Fit every model on every seed's training points and score it on its test points.

    Models not defined on the problem's space (``hed-wavelet``/``hed-gaussian`` with categorical
    parameters) are skipped, logged and listed in ``skipped`` (an error if no model is left).
    ``problem`` is a name for :func:`bodi.problems.get_problem` (``wcnf`` for ``maxsat60``) or
    a :class:`~bodi.problems.Problem`. Returns a :class:`ModelFitStudy`.
    """
    if n_train < 2 or n_test < 1:
        raise ValueError(f"need at least 2 training and 1 test point, got {n_train}, {n_test}")
    if not seeds:
        raise ValueError("no seeds given")
    if isinstance(problem, str):
        problem = get_problem(problem, wcnf=wcnf)
    space = problem.space
    names = list(SURROGATES if models is None else models)
    for name in names:
        if name not in SURROGATES:
            raise ValueError(f"unknown model {name!r}; choose from {list(SURROGATES)}")
    study = ModelFitStudy(problem.name)
    study.skipped = [n for n in names if not surrogate_available(n, space)]
    names = [n for n in names if n not in study.skipped]
    if study.skipped and log:
        log(f"skipping {', '.join(study.skipped)}: defined for binary parameters only "
            f"({problem.name} has categorical parameters)")
    if not names:
        raise ValueError(f"none of the models is defined on {problem.name}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny GPs: threads only add overhead (and contention on 2 cores)
    try:
        _fit_surrogates(study, problem, names, n_train, n_test, seeds, dictionary_size, log)
    finally:
        torch.set_num_threads(threads)
    return study


def _fit_surrogates(study: ModelFitStudy, problem: Problem, names: list[str], n_train: int,
                    n_test: int, seeds: Sequence[int], dictionary_size: int,
                    log: Callable[[str], None] | None) -> None:
    space = problem.space
    start = time.perf_counter()
    for seed in seeds:
        X_all = draw_points(space, n_train + n_test, int(seed))
        y_all = problem.evaluate_encoded(X_all).to(DTYPE).reshape(-1)
        if not torch.isfinite(y_all).all():
            raise ValueError(f"{problem.name} returned non-finite values")
        X, Y, X_test = X_all[:n_train], y_all[:n_train], X_all[n_train:]
        y_test = y_all[n_train:].numpy()
        summary = []
        for name in names:
            row = {"problem": problem.name, "model": name, "seed": int(seed),
                   "n_train": n_train, "n_test": n_test,
                   "m": dictionary_size if name.startswith("hed-") else None}
            tic = time.perf_counter()
            try:
                prediction, counts = _fit_and_predict(
                    name, X, Y, X_test, space, int(seed), dictionary_size
                )
            except Exception as err:  # a failed fit is a result, not a crash of the study
                row.update(dict.fromkeys(("rmse", "nrmse", "nlpd", "coverage95", "spearman"),
                                         math.nan))
                row.update(n_ls_below_10=None, n_ls_shrunk=None,
                           error=f"{type(err).__name__}: {err}")
            else:
                prediction.y = y_test
                row.update(gaussian_metrics(y_test, prediction.mean, prediction.variance))
                row.update(counts, error="")
                if seed == seeds[0]:
                    study.first_seed[name] = prediction
            row["fit_seconds"] = time.perf_counter() - tic
            study.rows.append(row)
            summary.append(f"{name} {row['nrmse']:.2f}")
        if log:
            log(f"seed {seed}: RMSE / std  " + ", ".join(summary))
    study.seconds = time.perf_counter() - start


# --------------------------------------------------------------------------- outputs
def write_modelfit_csv(study: ModelFitStudy, path: str | Path) -> Path:
    path = Path(path)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        for row in study.rows:
            writer.writerow({k: _csv_value(row.get(k)) for k in FIELDS})
    return path


def _csv_value(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return value


def read_csv(path: str | Path) -> list[dict]:
    """Rows of a ``modelfit.csv`` with numbers parsed (empty cells are ``None``)."""
    rows = []
    with Path(path).open(newline="") as handle:
        for raw in csv.DictReader(handle):
            row: dict = {}
            for key, value in raw.items():
                if key in ("problem", "model", "error"):
                    row[key] = value
                elif value == "":
                    row[key] = None
                else:
                    number = float(value)
                    row[key] = int(number) if key in ("seed", "n_train", "n_test", "m",
                                                      "n_ls_below_10", "n_ls_shrunk") else number
            rows.append(row)
    return rows


def _summary(values: list[float]) -> tuple[float, float, int]:
    x = np.array([v for v in values if v is not None and not math.isnan(v)], float)
    if not len(x):
        return math.nan, math.nan, 0
    se = float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0
    return float(np.mean(x)), se, len(x)


def summary_table(rows: Sequence[dict]) -> str:
    """Markdown table: per model, mean ± standard error over seeds of every metric; the best
    mean of each column is bold."""
    models = list(dict.fromkeys(r["model"] for r in rows))
    cells: dict[str, dict[str, tuple[float, float, int]]] = {}
    for model in models:
        mine = [r for r in rows if r["model"] == model]
        cells[model] = {col: _summary([r.get(col) for r in mine]) for col, _, _ in METRICS}
    best = {}
    for col, _, lower in METRICS:
        if col in ("fit_seconds", "n_ls_below_10", "n_ls_shrunk"):
            continue
        means = [cells[m][col][0] for m in models if not math.isnan(cells[m][col][0])]
        if means:
            best[col] = min(means) if lower else max(means)
    lines = ["| model | seeds | " + " | ".join(h for _, h, _ in METRICS) + " |",
             "|---|---" + "|---" * len(METRICS) + "|"]
    for model in models:
        seeds = len({r["seed"] for r in rows if r["model"] == model})
        failed = sum(1 for r in rows if r["model"] == model and r.get("error"))
        out = []
        for col, _, _ in METRICS:
            mean, se, n = cells[model][col]
            if n == 0:
                out.append("-")
                continue
            digits = 2 if col == "fit_seconds" else (1 if col.startswith("n_ls") else 3)
            text = f"{mean:.{digits}f} ± {se:.{digits}f}"
            if col in best and mean == best[col]:
                text = f"**{text}**"
            out.append(text)
        label = f"{model} ({failed} failed)" if failed else model
        lines.append(f"| {label} | {seeds} | " + " | ".join(out) + " |")
    return "\n".join(lines)


def write_markdown(study: ModelFitStudy, path: str | Path, command: str | None = None) -> Path:
    rows = study.rows
    seeds = sorted({r["seed"] for r in rows})
    first = rows[0]
    m = next((r["m"] for r in rows if r.get("m")), None)
    lines = [
        f"# Model fit on {study.problem}",
        "",
        f"{first['n_train']} training and {first['n_test']} test points drawn uniformly at "
        f"random (distinct) per seed, {len(seeds)} seeds ({_seed_text(seeds)}); the same points "
        "for every model of a seed. Mean ± standard error over seeds. RMSE / std: RMSE "
        "divided by the test values' standard deviation (1 = predicting their mean); NLPD: mean "
        "negative log predictive density (Gaussian, incl. noise); coverage of the 95% "
        f"predictive interval; Spearman rank correlation; #ls < 10: HED embedding lengthscales "
        f"below 10 (of m = {m}; the prior's mode, where unconstrained lengthscales stay, is "
        "2.3 for m = 128); #ls shrunk: HED embedding lengthscales the fit moved below their "
        "start (the prior's mode); fit s: seconds per fit and prediction. Bold: best mean.",
        "",
        summary_table(rows),
        "",
    ]
    if study.skipped:
        lines += [f"Skipped (defined for binary parameters only): {', '.join(study.skipped)}.",
                  ""]
    errors = [r for r in rows if r.get("error")]
    for r in errors[:10]:
        lines.append(f"- {r['model']} seed {r['seed']} failed: {r['error']}")
    if errors:
        lines.append("")
    lines += [f"Figure: `{PNG_NAME}` (seed {seeds[0]}). Wall time {study.seconds:.0f} s.", ""]
    if command:
        lines += ["Command:", "", "```", command, "```", ""]
    path = Path(path)
    path.write_text("\n".join(lines))
    return path


def _seed_text(seeds: Sequence[int]) -> str:
    if len(seeds) > 2 and list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)


def plot_predictions(study: ModelFitStudy, path: str | Path) -> Path:
    """One panel per model: predicted mean with 95% predictive intervals against the true
    value (first seed), the diagonal, and the RMSE in the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(study.first_seed)
    if not names:
        raise ValueError("no successful fit to plot")
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.8 * cols, 3.7 * rows), squeeze=False)
    seed = study.rows[0]["seed"]
    values = np.concatenate([p.y for p in study.first_seed.values()])
    low, high = float(values.min()), float(values.max())
    pad = 0.05 * (high - low or 1.0)
    for ax, name in zip(axes.flat, names, strict=False):
        p = study.first_seed[name]
        half = 1.959964 * np.sqrt(p.variance)
        ax.errorbar(p.y, p.mean, yerr=half, fmt="o", markersize=3, elinewidth=0.8,
                    capsize=1.5, alpha=0.8)
        ax.plot([low - pad, high + pad], [low - pad, high + pad], "k--", linewidth=1)
        ax.set_xlim(low - pad, high + pad)
        rmse = float(np.sqrt(np.mean((p.mean - p.y) ** 2)))
        ax.set_title(f"{name} (RMSE {rmse:.3g})", fontsize=10)
        ax.set_xlabel("true value")
        ax.set_ylabel("predicted (95% interval)")
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    first = study.rows[0]
    fig.suptitle(f"{study.problem}: {first['n_train']} train, {first['n_test']} test points, "
                 f"seed {seed}", fontsize=11)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_outputs(study: ModelFitStudy, out: str | Path, command: str | None = None
                  ) -> dict[str, Path]:
    """``modelfit.csv``, ``modelfit.md`` and ``modelfit.png`` in ``out`` (created)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"csv": write_modelfit_csv(study, out / CSV_NAME),
             "md": write_markdown(study, out / MD_NAME, command)}
    if study.first_seed:
        paths["png"] = plot_predictions(study, out / PNG_NAME)
    return paths


__all__ = [
    "ModelFitStudy",
    "draw_points",
    "gaussian_metrics",
    "plot_predictions",
    "read_csv",
    "run_modelfit",
    "summary_table",
    "write_outputs",
]
