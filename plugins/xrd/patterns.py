"""Reference diffraction patterns: computed from crystal structures with pymatgen's XRDCalculator,
or measured, with peaks found by scipy.signal.find_peaks.

Input limits: a computed pattern enumerates every reciprocal-lattice point inside the limiting sphere,
about (4/3)·π·(2·sin θmax/λ)³·V of them, each against every site. A tiny CIF declaring a 150 Å cell
asks for ~10⁷ reflections (gigabytes), so the estimate is checked first: at most
``MATPCR_MAX_REFLECTIONS`` (default 200,000) reflections and ``MATPCR_MAX_REFLECTION_SITES``
(default 20,000,000, about 300 MB and 15 s) reflection × site pairs; larger structures end in a DataError naming the file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr_plugins.datafiles import read_xy
from matpcr_plugins.xrd.radiation import CU_KA_NAME



def load_structure(path: str | Path) -> Any:
    """A pymatgen Structure from a CIF or pymatgen JSON file, with a clear error for malformed input."""
    from pymatgen.core import Structure

    path = Path(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if path.suffix == ".json":
                return Structure.from_dict(json.loads(path.read_text()))
            return Structure.from_file(str(path))
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except Exception as exc:
        raise DataError(f"{path}: not a readable crystal structure ({type(exc).__name__}: {str(exc)[:160]}); "
                        "check the CIF's cell and atom-site loops") from None


def _env_limit(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        raise DataError(f"${name} must be a whole number (got {os.environ[name]!r})") from None


def check_pattern_size(structure: Any, wavelength: float, window: tuple[float, float], source: str = "") -> int:
    """The estimated number of reflections of ``structure`` up to the window's end; a DataError naming
    ``source`` when it (or reflections × sites) is over the limit, before anything is allocated."""
    where = f"{source}: " if source else ""
    if not wavelength > 0 or not math.isfinite(wavelength):
        raise DataError(f"{where}wavelength must be a positive number of Å (got {wavelength!r})")
    low, high = float(window[0]), float(window[1])
    if not (math.isfinite(low) and math.isfinite(high) and 0 <= low < high <= 180):
        raise DataError(f"{where}2θ window must satisfy 0 ≤ min < max ≤ 180° (got {window!r})")
    volume = float(structure.lattice.volume)
    if not volume > 0 or not math.isfinite(volume):
        raise DataError(f"{where}the cell has no volume (check the cell lengths and angles)")
    radius = 2 * math.sin(math.radians(high / 2)) / wavelength
    reflections = int(4 / 3 * math.pi * radius ** 3 * volume) + 1
    sites = max(1, len(structure))
    max_reflections = _env_limit("MATPCR_MAX_REFLECTIONS", 200_000)
    max_pairs = _env_limit("MATPCR_MAX_REFLECTION_SITES", 20_000_000)
    lat = structure.lattice
    if reflections > max_reflections or reflections * sites > max_pairs:
        raise DataError(f"{where}cell {lat.a:.1f} × {lat.b:.1f} × {lat.c:.1f} Å (volume {volume:,.0f} Å³, {sites} sites) "
                        f"would give about {reflections:,} reflections up to 2θ = {high:g}° at λ = {wavelength:g} Å, "
                        f"over the limit of {max_reflections:,} reflections and {max_pairs:,} reflection × site pairs "
                        "($MATPCR_MAX_REFLECTIONS, $MATPCR_MAX_REFLECTION_SITES); check the cell, or raise the limits "
                        "if the structure is genuine")
    return reflections


def computed_pattern(structure: Any, wavelength: str | float = CU_KA_NAME,
                     window: tuple[float, float] = (5.0, 90.0), source: str = "") -> dict[str, Any]:
    """Peaks (2θ, relative intensity, hkl, d) of a structure; cached on disk by structure and settings.
    Structures too large to compute (see the module docstring) raise DataError naming ``source``."""
    import platformdirs

    key = hashlib.sha256(json.dumps([structure.as_dict(), wavelength, window, "v1"], sort_keys=True,
                                    default=str).encode()).hexdigest()[:24]
    cache = Path(platformdirs.user_cache_dir("matpcr")) / "xrd_patterns" / f"{key}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    from pymatgen.analysis.diffraction.xrd import WAVELENGTHS, XRDCalculator

    if isinstance(wavelength, str) and wavelength not in WAVELENGTHS:
        raise DataError(f"{source or 'pattern'}: unknown X-ray source {wavelength!r} (known: {', '.join(WAVELENGTHS)})")
    lam = WAVELENGTHS[wavelength] if isinstance(wavelength, str) else float(wavelength)
    check_pattern_size(structure, lam, window, source or structure.composition.reduced_formula)
    calc = XRDCalculator(wavelength=wavelength)
    try:
        pattern = calc.get_pattern(structure, two_theta_range=window)
    except (ValueError, IndexError) as exc:  # e.g. a cell so small it has no reflection in the window
        raise DataError(f"no diffraction pattern for {structure.composition.reduced_formula} in 2θ {window} "
                        f"({type(exc).__name__}: {exc})") from None
    if len(pattern.x) == 0:
        raise DataError(f"{structure.composition.reduced_formula} has no reflection in 2θ {window}")
    ref = {
        "kind": "computed",
        "wavelength": lam,
        "window": list(window),
        "two_theta": [round(float(x), 4) for x in pattern.x],
        "intensity": [round(float(y), 3) for y in pattern.y],
        "hkl": [" ".join("".join(str(i) for i in h["hkl"]) for h in hk) for hk in pattern.hkls],
        "d": [round(float(d), 5) for d in pattern.d_hkls],
    }
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(ref))
    os.replace(tmp, cache)
    return ref


#: the measured-pattern peak finder's name, stored in each measured reference (``peak_method``)
PEAK_METHOD = "baseline-noise-v1"


def measured_peaks(two_theta: np.ndarray, intensity: np.ndarray, prominence: float = 0.02,
                   min_distance_deg: float = 0.1, noise_k: float = 6.0, baseline_deg: float = 3.0,
                   smooth_deg: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Peaks of a measured pattern that hold on noisy thin films (docs/oracles.md, "Measured patterns"):

    1. baseline: a rolling 10th percentile over ``baseline_deg`` (3°), smoothed by a moving mean of the same
       width, subtracted (amorphous humps, fluorescence and substrate background go);
    2. the net pattern is smoothed with a Savitzky–Golay filter over ``smooth_deg`` (0.2°, quadratic);
    3. the noise σ is the robust (MAD) scale of the raw-minus-smoothed residual;
    4. a peak is a local maximum of the smoothed net pattern whose prominence exceeds both ``noise_k`` σ
       (6σ) and ``prominence`` × the net maximum, at least ``min_distance_deg`` from a higher one.
    The old rule (prominence above 2% of the raw dynamic range) found ≤ 3 peaks on 11 and ≥ 100 on 8 of the
    85 staged autoXRD thin films; this one, with the oracle's ``peak_floor`` of 1%, finds 3–33 (none ≥ 100;
    the five with 3 are strongly oriented films whose maximum is 700–2900 × the median)."""
    from scipy.ndimage import percentile_filter, uniform_filter1d
    from scipy.signal import find_peaks, savgol_filter

    x = np.asarray(two_theta, float)
    y = np.asarray(intensity, float)
    if y.size < 5 or float(y.max() - y.min()) <= 0:
        return np.array([]), np.array([])
    step = float(np.median(np.diff(x)))
    width = max(3, int(round(baseline_deg / step)) | 1)
    base = uniform_filter1d(percentile_filter(y, 10, size=width, mode="nearest"), width, mode="nearest")
    net = y - base
    win = max(5, int(round(smooth_deg / step)) | 1)
    smooth = savgol_filter(net, win, 2) if net.size > win else net
    resid = net - smooth
    sigma = 1.4826 * float(np.median(np.abs(resid - np.median(resid))))
    top = float(smooth.max())
    if top <= 0:
        return np.array([]), np.array([])
    idx, _ = find_peaks(smooth, prominence=max(noise_k * sigma, prominence * top),
                        distance=max(1, int(round(min_distance_deg / step))))
    return x[idx], y[idx]


def measured_peaks_range_rule(two_theta: np.ndarray, intensity: np.ndarray, prominence: float = 0.02,
                              min_distance_deg: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """The previous rule (kept for comparison in docs/oracles.md): prominence above a fraction of the raw
    dynamic range."""
    from scipy.signal import find_peaks

    span = float(intensity.max() - intensity.min())
    if span <= 0:
        return np.array([]), np.array([])
    step = float(np.median(np.diff(two_theta)))
    distance = max(1, int(round(min_distance_deg / step)))
    idx, _ = find_peaks(intensity, prominence=prominence * span, distance=distance)
    return two_theta[idx], intensity[idx]


def measured_reference(path: Path, phase: str, wavelength: float, prominence: float) -> dict[str, Any]:
    x, y = read_xy(path)
    px, py = measured_peaks(np.asarray(x, float), np.asarray(y, float), prominence)
    if px.size == 0:
        raise DataError(f"{path}: no peaks found (flat pattern?)")
    return {"kind": "measured", "phase": phase, "wavelength": wavelength, "window": [float(x[0]), float(x[-1])],
            "two_theta": [round(float(v), 4) for v in px], "intensity": [round(float(v), 2) for v in py],
            "prominence": prominence, "peak_method": PEAK_METHOD, "file": str(path)}


def reference_from_file(path: Path, params: dict[str, Any]) -> dict[str, Any]:
    """What `matpcr check xrd` reads: a CIF/structure JSON (computed pattern) or an x-y pattern file."""
    if not path.exists():
        raise DataError(f"{path}: file not found")
    window = (params["window_min_deg"], params["window_max_deg"])
    if path.suffix.lower() in (".cif", ".mcif", ".vasp") or path.name.startswith(("POSCAR", "CONTCAR")):
        structure = load_structure(path)
        ref = computed_pattern(structure, float(params["wavelength_A"]), window, source=str(path))
        return {**ref, "phase": structure.composition.reduced_formula, "file": str(path)}
    return measured_reference(path, path.stem, float(params["wavelength_A"]), float(params["prominence"]))
