"""Validity-gate controls for the Raman oracle, built from the measured spectrum with scipy, independently
of the oracle's own peak list (its prominence rule is not used here).

Bands are found here on a Savitzky–Golay-smoothed spectrum with prominence above 5% of its dynamic range
("clear bands"); a second, looser list (1%) marks anything peak-like, to keep flank points away from it.
- negative ``random``: a shift drawn uniformly over the measured range;
- negative ``off_peak``: one of the three clearest bands moved by ±6–15 cm⁻¹;
- negative ``shoulder``: a point on the side of one of the three clearest bands, more than 1.2 × the
  tolerance from its top, where the signal is still above 30% of the band's height;
- negative ``flank``: a point where the smoothed spectrum rises or falls monotonically over ±20 cm⁻¹,
  above the spectrum's median, at least 2 × tolerance from anything peak-like;
- negative ``other_mineral``: the three clearest bands of another staged mineral's spectrum;
- positive ``true_jitter``: the three clearest bands moved by up to ±0.8 × tolerance;
- positive ``weak_band``: one band of prominence 3–10% of the range, moved by up to ±0.3 × tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from matpcr.protocols import Control
from matpcr.records import Item

NAMES = {"random": "negative", "off_peak": "negative", "shoulder": "negative", "flank": "negative",
         "other_mineral": "negative", "true_jitter": "positive", "weak_band": "positive"}


def smoothed(shift: np.ndarray, intensity: np.ndarray) -> np.ndarray:
    from scipy.signal import savgol_filter

    win = 7 if intensity.size > 7 else (intensity.size // 2) * 2 - 1
    return savgol_filter(intensity, win, 2) if win >= 3 else intensity


def bands(shift: np.ndarray, intensity: np.ndarray, lo: float = 0.05, hi: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Band positions (sorted by prominence, largest first) with prominence in [lo, hi) of the range."""
    from scipy.signal import find_peaks

    s = smoothed(shift, intensity)
    span = float(s.max() - s.min()) or 1.0
    idx, props = find_peaks(s, prominence=lo * span)
    prom = props["prominences"] / span
    keep = prom < hi
    idx, prom = idx[keep], prom[keep]
    order = np.argsort(-prom)
    return shift[idx[order]], prom[order]


def _r(v: float) -> float:
    return round(float(v), 1)


def build(oracle: Any, item: Item, pool: list[Item], rng: np.random.Generator) -> list[Control]:
    ref = item.reference
    x = np.asarray(ref["shift"], float)
    y = np.asarray(ref["intensity"], float)
    tol = float(oracle.params["tolerance_cm1"])
    lo, hi = float(x[0]), float(x[-1])
    clear, _ = bands(x, y)
    top = list(clear[:3])
    out = [Control("random", "negative", [_r(rng.uniform(lo, hi))], "cm⁻¹")]
    if top:
        band = float(rng.choice(top))
        delta = float(rng.choice([-1, 1]) * rng.uniform(6, 15))
        out.append(Control("off_peak", "negative", [_r(band + delta)], "cm⁻¹", {"delta": delta}))
        out.append(Control("true_jitter", "positive", [_r(v + rng.uniform(-0.8, 0.8) * tol) for v in top], "cm⁻¹"))
        s = smoothed(x, y)
        base = float(np.median(s))
        candidates = []
        for b in top:
            i = int(np.argmin(np.abs(x - b)))
            height = s[i] - base
            if height <= 0:
                continue
            side = (np.abs(x - b) > 1.2 * tol) & (np.abs(x - b) < 60) & (s - base > 0.3 * height)
            candidates.extend(x[side].tolist())
        if candidates:
            out.append(Control("shoulder", "negative", [_r(rng.choice(candidates))], "cm⁻¹"))
    anything, _ = bands(x, y, 0.01)
    s = smoothed(x, y)
    d = np.sign(np.diff(s))
    step = float(np.median(np.diff(x)))
    half = max(1, int(round(20.0 / step)))
    flank = []
    med = float(np.median(s))
    for i in range(half, len(d) - half, max(1, half // 4)):
        seg = d[i - half:i + half]
        if (np.all(seg > 0) or np.all(seg < 0)) and s[i] > med and \
                (anything.size == 0 or np.min(np.abs(anything - x[i])) > 2 * tol):
            flank.append(float(x[i]))
    if flank:
        out.append(Control("flank", "negative", [_r(rng.choice(flank))], "cm⁻¹"))
    others = [p for p in pool if p.reference.get("name") != ref.get("name") and p.reference.get("shift")]
    if others:
        other = others[int(rng.integers(len(others)))]
        ob, _ = bands(np.asarray(other.reference["shift"], float), np.asarray(other.reference["intensity"], float))
        ob = [v for v in ob[:3] if lo <= v <= hi]
        if ob:
            out.append(Control("other_mineral", "negative", [_r(v) for v in ob], "cm⁻¹", {"other": other.id}))
    weak, _ = bands(x, y, 0.03, 0.10)
    if weak.size:
        out.append(Control("weak_band", "positive", [_r(float(rng.choice(weak)) + rng.uniform(-0.3, 0.3) * tol)], "cm⁻¹"))
    return out


def phrasing() -> Any:
    from matpcr_plugins.templates import Phrasing

    return Phrasing(
        label="Raman shift", intro="The main Raman bands are at", noun="band", latex_label="\\tilde{\\nu}", decimals=1,
        header="Raman shift (cm⁻¹)",
        reasoning=("Reading the spectrum, the clearest local maxima stand well above the background.",
                   "The strongest bands come from the symmetric stretching modes of the anion groups.",
                   "I look for local maxima that rise clearly above both neighbouring valleys."),
        distractors=("The spectrum was excited with a 532 nm laser at 10 mW, with a spectral resolution of 2 cm⁻¹.",
                     "The grating had 1800 lines/mm and the acquisition took 30 s at 295 K.",
                     "Bands narrower than a FWHM of 4 cm⁻¹ were not resolved; the calibration used the silicon line.",
                     "The laser spot was about 1 µm across with a 50× objective."))
