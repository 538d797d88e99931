"""Distances from claimed positions to the nearest reference feature (peaks, reflections), by bisection."""

from __future__ import annotations

import math

import numpy as np


def nearest_distance(x: float, peaks: np.ndarray) -> float:
    """|x − nearest peak| for sorted ``peaks`` (inf when there is none); the oracles' hot path."""
    if peaks.size == 0:
        return math.inf
    i = int(np.searchsorted(peaks, x))
    best = math.inf
    if i < peaks.size:
        best = float(peaks[i]) - x
    if i > 0:
        best = min(best, x - float(peaks[i - 1]))
    return float(best)


def nearest_distances(points: np.ndarray, peaks: np.ndarray) -> np.ndarray:
    """The same for many points at once."""
    points = np.asarray(points, dtype=float)
    if peaks.size == 0:
        return np.full(points.shape, np.inf)
    i = np.searchsorted(peaks, points)
    left = np.abs(points - peaks[np.clip(i - 1, 0, peaks.size - 1)])
    right = np.abs(peaks[np.clip(i, 0, peaks.size - 1)] - points)
    return np.minimum(left, right)
