"""Reference diffraction patterns: computed from crystal structures with pymatgen's XRDCalculator,
or measured, with peaks found by scipy.signal.find_peaks."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr_plugins.datafiles import read_xy

CU_KA_NAME = "CuKa"


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


def computed_pattern(structure: Any, wavelength: str | float = CU_KA_NAME,
                     window: tuple[float, float] = (5.0, 90.0)) -> dict[str, Any]:
    """Peaks (2θ, relative intensity, hkl, d) of a structure; cached on disk by structure and settings."""
    import platformdirs

    key = hashlib.sha256(json.dumps([structure.as_dict(), wavelength, window, "v1"], sort_keys=True,
                                    default=str).encode()).hexdigest()[:24]
    cache = Path(platformdirs.user_cache_dir("matpcr")) / "xrd_patterns" / f"{key}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    from pymatgen.analysis.diffraction.xrd import WAVELENGTHS, XRDCalculator

    calc = XRDCalculator(wavelength=wavelength)
    try:
        pattern = calc.get_pattern(structure, two_theta_range=window)
    except (ValueError, IndexError) as exc:  # e.g. a cell so small it has no reflection in the window
        raise DataError(f"no diffraction pattern for {structure.composition.reduced_formula} in 2θ {window} "
                        f"({type(exc).__name__}: {exc})") from None
    if len(pattern.x) == 0:
        raise DataError(f"{structure.composition.reduced_formula} has no reflection in 2θ {window}")
    lam = WAVELENGTHS[wavelength] if isinstance(wavelength, str) else float(wavelength)
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


def measured_peaks(two_theta: np.ndarray, intensity: np.ndarray, prominence: float = 0.02,
                   min_distance_deg: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Peaks of a measured pattern: local maxima with prominence above a fraction of the dynamic range."""
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
    px, py = measured_peaks(x, y, prominence)
    if px.size == 0:
        raise DataError(f"{path}: no peaks found (flat pattern?)")
    return {"kind": "measured", "phase": phase, "wavelength": wavelength, "window": [float(x[0]), float(x[-1])],
            "two_theta": [round(float(v), 4) for v in px], "intensity": [round(float(v), 2) for v in py],
            "prominence": prominence, "file": str(path)}


def reference_from_file(path: Path, params: dict[str, Any]) -> dict[str, Any]:
    """What `matpcr check xrd` reads: a CIF/structure JSON (computed pattern) or an x-y pattern file."""
    if not path.exists():
        raise DataError(f"{path}: file not found")
    window = (params["window_min_deg"], params["window_max_deg"])
    if path.suffix.lower() in (".cif", ".mcif", ".vasp") or path.name.startswith(("POSCAR", "CONTCAR")):
        structure = load_structure(path)
        ref = computed_pattern(structure, float(params["wavelength_A"]), window)
        return {**ref, "phase": structure.composition.reduced_formula, "file": str(path)}
    return measured_reference(path, path.stem, float(params["wavelength_A"]), float(params["prominence"]))
