"""Acquisition functions and their optimization over mixed discrete/continuous spaces."""

from bodi.acquisition.factory import ACQUISITIONS, make_acquisition
from bodi.acquisition.optimize import AvoidPoints, optimize_acquisition
from bodi.novelty import SearchSpaceExhaustedError

__all__ = [
    "ACQUISITIONS",
    "AvoidPoints",
    "SearchSpaceExhaustedError",
    "make_acquisition",
    "optimize_acquisition",
]
