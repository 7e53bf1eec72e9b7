"""SVM feature selection + hyperparameters ("SVM53", minimize the test RMSE).

Variables: 50 include/exclude bits ``f1 .. f50`` (one per prepared feature) and three
``Continuous(0, 1)`` positions ``u_epsilon, u_C, u_gamma`` mapped log-uniformly to

    epsilon = 0.01 * 10^(2 u1) in [0.01, 1],   C = 0.01 * 10^(4 u2) in [0.01, 100],
    gamma = (0.1 / 50) * 10^(2 u3) in [0.002, 0.2].

Objective: RMSE on the test half of ``sklearn.svm.SVR(kernel="rbf", epsilon, C, gamma)`` fitted
on the selected columns of the training half. An all-zero mask selects no feature; its value is
the RMSE of predicting the training mean for every test row (a finite, poor score). Each point
fits its own SVR, so a batch is evaluated one row at a time.

Data preparation (:func:`prepare_data`, the paper's protocol; ``seed`` defaults to 0):

1. draw ``min(10000, rows)`` rows without replacement with ``numpy.random.RandomState(seed)``
   (``.choice``);
2. drop constant columns; scale each column of ``X`` to ``[-1, 1]`` (min-max); standardize ``y``
   (population std);
3. keep the 50 columns with the largest ``feature_importances_`` of
   ``sklearn.ensemble.GradientBoostingRegressor(max_depth=8, random_state=seed)`` fitted on all
   drawn rows (ties broken by column order), in decreasing order of importance;
4. split 50/50: a fresh ``RandomState(seed).permutation`` of the rows, the first ``rows // 2``
   are the training half, the rest the test half.

Data sets:

- ``csv_path``: the UCI "relative location of CT slices on axial axis" file
  (``slice_localization_data.csv``: header ``patientId,value0..value383,reference``; 53,500
  rows). The last column is the target; a first column named ``patientId`` (or, without a
  header, the first of 386 columns) is dropped. Any other numeric CSV with the target last works.
- default: scikit-learn's bundled handwritten digits (``sklearn.datasets.load_digits``, 1,797
  8x8 images of 64 pixel intensities 0..16, no download), as a regression of the digit value
  0..9 on the pixels. All 1,797 rows are used (fewer than 10,000), 3 constant pixels are dropped
  (61 remain) and the 50 most important are kept, as above: 898 training and 899 test rows.
  No bundled data set of a regression task has >= 50 features (diabetes 10, california housing
  needs a download), so this is the closest real stand-in.

Prepared data sets are cached (``functools.lru_cache``). Needs scikit-learn.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from bodi.problems.base import Problem
from bodi.space import DTYPE, Binary, Continuous, SearchSpace

N_FEATURES = 50
N_ROWS = 10_000
HYPERPARAMETERS = ("u_epsilon", "u_C", "u_gamma")


@dataclass(frozen=True)
class SVMData:
    """A prepared data set: train/test halves and the original columns kept."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    columns: tuple[int, ...]
    source: str


def hyperparameters(u: Tensor | np.ndarray) -> tuple[float, float, float]:
    """``(epsilon, C, gamma)`` from the three positions ``u`` in ``[0, 1]``."""
    u1, u2, u3 = (min(max(float(v), 0.0), 1.0) for v in u)
    return (0.01 * 10 ** (2 * u1), 0.01 * 10 ** (4 * u2), (0.1 / N_FEATURES) * 10 ** (2 * u3))


def prepare_data(X: np.ndarray, y: np.ndarray, seed: int = 0, source: str = "") -> SVMData:
    """Apply the paper's preparation protocol (see the module docstring) to ``X``, ``y``."""
    from sklearn.ensemble import GradientBoostingRegressor

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"expected X (rows x features) and y (rows), got {X.shape}, {y.shape}")
    rows = np.random.RandomState(seed).choice(len(X), size=min(N_ROWS, len(X)), replace=False)
    X, y = X[rows], y[rows]
    varying = np.flatnonzero(X.max(0) > X.min(0))
    if len(varying) < N_FEATURES:
        raise ValueError(
            f"{source or 'data'}: only {len(varying)} non-constant features, needs {N_FEATURES}"
        )
    X = X[:, varying]
    low, high = X.min(0), X.max(0)
    X = 2.0 * (X - low) / (high - low) - 1.0
    if not y.std() > 0:
        raise ValueError(f"{source or 'data'}: the target is constant")
    y = (y - y.mean()) / y.std()
    booster = GradientBoostingRegressor(max_depth=8, random_state=seed).fit(X, y)
    top = np.argsort(-booster.feature_importances_, kind="stable")[:N_FEATURES]
    X = X[:, top]
    order = np.random.RandomState(seed).permutation(len(X))
    train, test = order[: len(X) // 2], order[len(X) // 2 :]
    return SVMData(
        np.ascontiguousarray(X[train]), y[train], np.ascontiguousarray(X[test]), y[test],
        tuple(int(c) for c in varying[top]), source,
    )


def _read_csv(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with path.open() as handle:
        first = handle.readline().strip().split(",")
    try:
        [float(v) for v in first]
        header = None
    except ValueError:
        header = [name.strip().strip('"') for name in first]
    try:
        data = np.loadtxt(path, delimiter=",", skiprows=0 if header is None else 1, ndmin=2)
    except ValueError as err:
        raise ValueError(f"{path}: not a numeric CSV file: {err}") from err
    X, y = data[:, :-1], data[:, -1]
    if (header is not None and header[0].lower() == "patientid") or (
        header is None and data.shape[1] == 386
    ):
        X = X[:, 1:]
    return X, y


@functools.lru_cache(maxsize=4)
def load_csv_data(csv_path: str, seed: int = 0) -> SVMData:
    """The prepared slice-localization data (or another CSV with the target last)."""
    path = Path(csv_path)
    if not path.is_file():
        raise FileNotFoundError(
            f"SVM data file {path} not found (the UCI slice localization data, "
            "slice_localization_data.csv)"
        )
    X, y = _read_csv(path)
    return prepare_data(X, y, seed, source=str(path))


@functools.lru_cache(maxsize=4)
def load_default_data(seed: int = 0) -> SVMData:
    """The prepared bundled digits data (regression of the digit value on the 64 pixels)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return prepare_data(X, y.astype(np.float64), seed, source="sklearn load_digits")


def svm_rmse(data: SVMData, X: Tensor) -> Tensor:
    """Test RMSE for each row of an ``n x 53`` encoded tensor."""
    from sklearn.svm import SVR

    X = torch.as_tensor(X, dtype=DTYPE)
    if X.shape[-1] != N_FEATURES + 3:
        raise ValueError(f"expected ... x {N_FEATURES + 3} inputs, got shape {tuple(X.shape)}")
    flat = X.reshape(-1, N_FEATURES + 3).numpy()
    values = []
    for row in flat:  # one SVR fit per point
        mask = row[:N_FEATURES] > 0.5
        if not mask.any():
            prediction = np.full_like(data.y_test, data.y_train.mean())
        else:
            epsilon, C, gamma = hyperparameters(row[N_FEATURES:])
            model = SVR(kernel="rbf", epsilon=epsilon, C=C, gamma=gamma)
            model.fit(data.X_train[:, mask], data.y_train)
            prediction = model.predict(data.X_test[:, mask])
        values.append(math.sqrt(float(np.mean((prediction - data.y_test) ** 2))))
    return torch.tensor(values, dtype=DTYPE).reshape(X.shape[:-1])


def svm53(csv_path: str | Path | None = None, seed: int = 0) -> Problem:
    """SVM53 on the slice-localization CSV at ``csv_path``, or on bundled digits (minimize)."""
    space = SearchSpace(
        [Binary(f"f{i + 1}") for i in range(N_FEATURES)]
        + [Continuous(name, 0.0, 1.0) for name in HYPERPARAMETERS]
    )

    def data() -> SVMData:  # prepared on first evaluation, then cached
        if csv_path is None:
            return load_default_data(seed)
        return load_csv_data(str(Path(csv_path).resolve()), seed)

    if csv_path is not None and not Path(csv_path).is_file():
        raise FileNotFoundError(
            f"SVM data file {csv_path} not found (the UCI slice localization data, "
            "slice_localization_data.csv)"
        )

    def evaluate(X: Tensor) -> Tensor:
        return svm_rmse(data(), X)

    return Problem("svm53", space, evaluate, "minimize")
