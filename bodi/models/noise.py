"""Observation noise at the training inputs, and which rows are given points exactly."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def exact_matches(X: Tensor, points: Tensor) -> Tensor:
    """``... x n x r`` booleans: whether row ``i`` of ``X`` (``... x n x dim``) equals point
    ``j`` of ``points`` (``r x dim``) exactly."""
    return torch.cdist(X, points.expand(*X.shape[:-2], *points.shape), p=1) == 0


def observation_noise(likelihood: Any, X: Tensor) -> Tensor:
    """``n`` observation-noise variances of a Gaussian likelihood at the training inputs
    ``X`` (``n x dim``): ``sigma^2`` each (every likelihood of bodi's GPs is homoskedastic)."""
    return likelihood.noise.reshape(-1).expand(X.shape[-2])
