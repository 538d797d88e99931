"""Validity-gate controls for the diffraction oracle, built independently of its prepared reference.

Computed references (a crystal structure): lines are recomputed here with pymatgen's XRDCalculator from
the structure file, never taken from the oracle's prepared peak list.
- negative ``random``: three 2θ drawn uniformly over the instrument window;
- negative ``other_phase``: another staged phase's three strongest lines;
- negative ``lattice_strain``: the three strongest lines of the structure with its lattice scaled by ±1–5%;
- negative ``near_miss``: the three strongest lines with the strongest moved by (1.1–2.0) × tolerance
  (0.55–1.0° at the default 0.5°);
- negative ``wrong_wavelength``: the three strongest lines computed for another anode (Mo, Co, Cr, Fe, Ag
  Kα) and claimed for Cu Kα;
- positive ``true_jitter``: the three strongest Cu Kα lines moved by up to ±0.8 × tolerance;
- positive ``weak_reflection``: one real reflection weaker than 5% of the strongest (pymatgen lists
  reflections down to 0.1%);
- positive ``kalpha1``: the three strongest lines computed for Cu Kα1 only.
Measured references (a powder pattern): ``random`` and ``near_miss`` as above, and positive ``honest_top3``:
the three highest peaks found here after a rolling-quantile baseline and Savitzky–Golay smoothing.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from matpcr.protocols import Control
from matpcr.records import Item
from matpcr_plugins.xrd.radiation import CU_KA1_NAME, CU_KA_NAME

ANODES = ("MoKa", "CoKa", "CrKa", "FeKa", "AgKa")
NAMES = {"random": "negative", "other_phase": "negative", "lattice_strain": "negative", "near_miss": "negative",
         "wrong_wavelength": "negative", "true_jitter": "positive", "weak_reflection": "positive",
         "kalpha1": "positive", "honest_top3": "positive"}


@lru_cache(maxsize=64)
def _structure(path: str) -> Any:
    from matpcr_plugins.xrd.patterns import load_structure

    return load_structure(path)


@lru_cache(maxsize=512)
def lines(path: str, wavelength: str | float, window: tuple[float, float], strain: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(2θ, relative intensity %) of the structure in ``path`` computed by XRDCalculator, optionally with
    its lattice scaled by (1 + strain) in every direction."""
    import warnings

    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    structure = _structure(path)
    if strain:
        structure = structure.copy()
        structure.scale_lattice(structure.volume * (1.0 + strain) ** 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pattern = XRDCalculator(wavelength=wavelength).get_pattern(structure, two_theta_range=window)
    return np.asarray(pattern.x, float), np.asarray(pattern.y, float)


def strongest(x: np.ndarray, y: np.ndarray, k: int = 3, separation: float = 0.3) -> list[float]:
    """The k strongest lines, each at least ``separation`` degrees from a stronger one already taken."""
    out: list[float] = []
    for i in np.argsort(-y, kind="stable"):
        if all(abs(x[i] - v) >= separation for v in out):
            out.append(float(x[i]))
        if len(out) == k:
            break
    return out


def measured_top(x: np.ndarray, y: np.ndarray, k: int = 3) -> list[float]:
    """The k highest peaks of a measured pattern, found independently of the oracle: a rolling 10%-quantile
    baseline (over 3°) removed, Savitzky–Golay smoothing, prominence above 5 × the noise (robust σ of the
    smoothed-minus-raw residual) and 2% of the net maximum."""
    from scipy.ndimage import percentile_filter
    from scipy.signal import find_peaks, savgol_filter

    step = float(np.median(np.diff(x)))
    width = max(5, int(round(3.0 / step)) | 1)
    base = percentile_filter(y, 10, size=width, mode="nearest")
    net = y - base
    win = max(5, int(round(0.15 / step)) | 1)
    smooth = savgol_filter(net, win, 2) if net.size > win else net
    sigma = 1.4826 * float(np.median(np.abs(net - smooth - np.median(net - smooth)))) or 1e-9
    idx, props = find_peaks(smooth, prominence=max(5 * sigma, 0.02 * float(smooth.max())),
                            distance=max(1, int(round(0.2 / step))))
    order = idx[np.argsort(-smooth[idx])]
    return strongest(x[order], smooth[order], k)


def _fmt(values: list[float]) -> list[float]:
    return [round(float(v), 2) for v in values]


def build(oracle: Any, item: Item, pool: list[Item], rng: np.random.Generator) -> list[Control]:
    ref = item.reference
    tol = float(oracle.params["tolerance_deg"])
    out: list[Control] = []
    if ref.get("kind") == "measured":
        from matpcr_plugins.datafiles import read_xy

        x, y = read_xy(ref["file"])
        x, y = np.asarray(x, float), np.asarray(y, float)
        lo, hi = float(x[0]), float(x[-1])
        top = measured_top(x, y)
        out.append(Control("random", "negative", _fmt(sorted(rng.uniform(lo, hi, 3))), "°"))
        if top:
            out.append(Control("honest_top3", "positive", _fmt(top), "°"))
            shift = float(rng.choice([-1, 1]) * rng.uniform(1.1, 2.0) * tol)
            out.append(Control("near_miss", "negative", _fmt([top[0] + shift, *top[1:]]), "°", {"shift_deg": shift}))
        return out
    path = str(ref["file"])
    window = tuple(float(v) for v in ref.get("window", (5.0, 90.0)))
    lo, hi = window
    x, y = lines(path, CU_KA_NAME, window)
    top = strongest(x, y)
    out.append(Control("random", "negative", _fmt(sorted(rng.uniform(lo, hi, 3))), "°"))
    others = [p for p in pool if p.reference.get("kind") == "computed" and p.reference.get("formula") != ref.get("formula")
              and p.reference.get("two_theta")]
    if others:
        other = others[int(rng.integers(len(others)))]
        ox = np.asarray(other.reference["two_theta"], float)
        oy = np.asarray(other.reference["intensity"], float)
        out.append(Control("other_phase", "negative", _fmt(strongest(ox, oy)), "°", {"other": other.id}))
    strain = float(rng.choice([-1, 1]) * rng.uniform(0.01, 0.05))
    sx, sy = lines(path, CU_KA_NAME, window, round(strain, 4))
    if sx.size:
        out.append(Control("lattice_strain", "negative", _fmt(strongest(sx, sy)), "°", {"strain": round(strain, 4)}))
    if top:
        shift = float(rng.choice([-1, 1]) * rng.uniform(1.1, 2.0) * tol)
        out.append(Control("near_miss", "negative", _fmt([top[0] + shift, *top[1:]]), "°", {"shift_deg": shift}))
    anode = str(rng.choice(ANODES))
    wx, wy = lines(path, anode, window)
    if wx.size:
        out.append(Control("wrong_wavelength", "negative", _fmt(strongest(wx, wy)), "°", {"anode": anode}))
    if top:
        out.append(Control("true_jitter", "positive", _fmt([v + rng.uniform(-0.8, 0.8) * tol for v in top]), "°"))
    weak = x[(y < 5.0)]
    if weak.size:
        out.append(Control("weak_reflection", "positive", _fmt([float(rng.choice(weak))]), "°"))
    kx, ky = lines(path, CU_KA1_NAME, window)
    if kx.size:
        out.append(Control("kalpha1", "positive", _fmt(strongest(kx, ky)), "°"))
    return out


def phrasing() -> Any:
    from matpcr_plugins.templates import Phrasing

    return Phrasing(
        label="2θ", intro="The three strongest reflections lie at", noun="reflection", latex_label="2\\theta",
        header="2θ (°)",
        reasoning=("Using Bragg's law with Cu Kα radiation and the lattice given, the most intense reflections follow.",
                   "The structure factor is largest for the low-index planes, so those reflections dominate.",
                   "I index the pattern from the cell and estimate relative intensities from the atomic form factors."),
        distractors=("The pattern was recorded with Cu Kα (λ = 1.5406 Å), a step size of 0.02° and a counting time of 1 s.",
                     "The cubic cell has a = 5.431 Å and Z = 4, giving a density of 2.33 g/cm3.",
                     "Typical bond lengths are about 2.35 Å and the crystallite size from the Scherrer equation is 35 nm.",
                     "The FWHM of the main peak is about 0.12°, and the measurement was done at 25 °C.",
                     "The generator ran at 40 kV and 40 mA with a 0.5° divergence slit."))
