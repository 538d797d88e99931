"""The diffraction oracle (MatPCR Methods, "Diffraction").

A 2θ claim (or a d-spacing turned into 2θ by Bragg's law λ = 2d sinθ) is violated when it is not
physically realizable (sinθ > 1, i.e. d < λ/2, or 2θ outside the instrument window) or when no
reference reflection of the stated phase lies within the tolerance (0.5° by default).
Accuracy, a separate non-circular criterion: within 0.1° of the single nearest true peak.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr.protocols import Oracle
from matpcr.records import Claim, Item, Verdict
from matpcr_plugins.peaks import nearest_distance, nearest_distances
from matpcr_plugins.quantities import context_before, find_quantities

CU_KA = 1.54184  # Å, pymatgen's "CuKa" (Kα1/Kα2 weighted mean)
_ANGLE_CONTEXT = re.compile(r"(?:α|β|γ|alpha|beta|gamma|angle between|lattice angle|tilt)\s*[=:≈]?\s*$", re.I)
_THETA_ONLY = re.compile(r"(?<!two)θ\s*[=:≈]?\s*(?:of\s*)?$", re.I)
_D_CONTEXT = re.compile(r"(?:\bd\s*(?:\(\s*\d[\d\s]*\))?\s*(?:_\s*\w+)?\s*[=:≈]|d-spacing|d spacing|interplanar|spacing|"
                        r"\bd_?\{?hkl\}?|\bd\(\w+\))[^.\n]{0,25}$", re.I)


@dataclass
class PreparedPattern:
    phase: str
    wavelength: float
    window: tuple[float, float]
    peaks: np.ndarray  # sorted 2θ of reference reflections above the intensity floor


def two_theta_from_d(d: float, wavelength: float) -> float | None:
    """Bragg's law, first order; None where sinθ would exceed 1 (d < λ/2)."""
    s = wavelength / (2.0 * d) if d > 0 else math.inf
    if s > 1.0:
        return None
    return math.degrees(2.0 * math.asin(s))


def d_from_two_theta(two_theta: float, wavelength: float) -> float:
    return wavelength / (2.0 * math.sin(math.radians(two_theta) / 2.0))


class XRDOracle(Oracle):
    name = "xrd"
    constraint = "diffraction"
    tolerance_param = "tolerance_deg"
    defaults = {
        "tolerance_deg": 0.5,       # paper default: a claim must lie within 0.5° of a reference peak
        "accuracy_deg": 0.1,        # non-circular accuracy: within 0.1° of the nearest true peak
        "min_rel_intensity": 1.0,   # % of the strongest reflection; weaker computed lines are not counted
        "wavelength_A": CU_KA,      # for `matpcr check` on CIF files and patterns without a wavelength
        "window_min_deg": 5.0,      # instrument window for references read by `matpcr check`
        "window_max_deg": 90.0,
        "prominence": 0.02,         # for measured patterns read by `matpcr check` (fraction of dynamic range)
    }

    # -- references -----------------------------------------------------------------------
    def prepare(self, reference: dict[str, Any]) -> PreparedPattern:
        two_theta = np.asarray(reference.get("two_theta", []), dtype=float)
        intensity = np.asarray(reference.get("intensity", np.full(two_theta.shape, 100.0)), dtype=float)
        if two_theta.size == 0:
            raise DataError(f"reference for {reference.get('phase', '?')} has no peaks")
        keep = intensity >= self.params["min_rel_intensity"] / 100.0 * intensity.max()
        window = tuple(reference.get("window", (self.params["window_min_deg"], self.params["window_max_deg"])))
        return PreparedPattern(str(reference.get("phase", "")), float(reference.get("wavelength", CU_KA)),
                               (float(window[0]), float(window[1])), np.sort(two_theta[keep]))

    def read_reference(self, spec: str) -> dict[str, Any]:
        from matpcr_plugins.xrd.patterns import reference_from_file

        path = Path(spec)
        if path.suffix == ".json":
            return self.read_json_reference(path)
        return reference_from_file(path, self.params)


    def render_claim(self, claim: Claim) -> str:
        if claim.kind == "d_spacing":
            return f"The reflection comes from planes with d = {claim.value:g} Å.\nAnswer: d = {claim.value:g} Å"
        return f"The strongest reflection sits at 2θ = {claim.value:g}°.\nAnswer: 2θ = {claim.value:g}°"

    # -- claims ---------------------------------------------------------------------------
    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        text, found = find_quantities(chain, units={"°", "Å"}, answer_default_unit="°")
        claims = []
        for q in found:
            before = context_before(text, q.start)
            if q.unit == "°":
                if _ANGLE_CONTEXT.search(before) or _THETA_ONLY.search(before):
                    continue  # lattice angles and bare θ are not 2θ claims
                claims.append(Claim("two_theta", q.value, "deg", (q.start, q.end), q.text))
            elif q.unit == "Å" and _D_CONTEXT.search(before):
                claims.append(Claim("d_spacing", q.value, "angstrom", (q.start, q.end), q.text))
        return claims

    def _two_theta(self, claim: Claim, ref: PreparedPattern) -> tuple[float | None, Verdict | None]:
        value = float(claim.value)
        if claim.kind == "d_spacing":
            if value <= 0:
                return None, Verdict("violated", "A lattice-plane spacing must be positive.")
            tt = two_theta_from_d(value, ref.wavelength)
            if tt is None:
                return None, Verdict("violated", f"d = {value:g} Å is smaller than half the X-ray wavelength, so "
                                     "Bragg's law would need sinθ > 1: no such reflection can be observed.",
                                     {"reason": "unrealizable"})
            return tt, None
        if not 0.0 < value < 180.0:
            return None, Verdict("violated", f"2θ = {value:g}° is not a realizable scattering angle: Bragg's law "
                                 "needs sinθ ≤ 1, so 2θ must lie strictly between 0° and 180°.", {"reason": "unrealizable"})
        return value, None

    def check(self, claim: Claim, reference: PreparedPattern) -> Verdict:
        tt, verdict = self._two_theta(claim, reference)
        if verdict is not None:
            return verdict
        assert tt is not None
        lo, hi = reference.window
        if not lo <= tt <= hi:
            return Verdict("violated", f"2θ = {tt:.2f}° lies outside the instrument's 2θ window for this pattern, "
                           "so it cannot be one of its reflections.", {"reason": "outside_window", "two_theta": tt})
        distance = self._nearest(tt, reference.peaks)
        tol = self.params["tolerance_deg"]
        if distance <= tol:
            return Verdict("consistent", f"a reflection of {reference.phase or 'the phase'} lies within ±{tol:g}° "
                           f"of 2θ = {tt:.2f}°.", {"two_theta": tt, "distance": distance})
        return Verdict("violated", f"No reflection of {reference.phase or 'the stated phase'} lies within ±{tol:g}° "
                       f"of 2θ = {tt:.2f}°; re-derive the peak positions from the phase's d-spacings with "
                       "Bragg's law λ = 2d sinθ.", {"reason": "no_peak", "two_theta": tt, "distance": distance})

    @staticmethod
    def _nearest(tt: float, peaks: np.ndarray) -> float:
        return nearest_distance(tt, peaks)

    def accurate(self, claim: Claim, reference: PreparedPattern) -> bool | None:
        tt, verdict = self._two_theta(claim, reference)
        if tt is None:
            return False
        return self._nearest(tt, reference.peaks) <= self.params["accuracy_deg"]

    def render_case(self, reference: dict[str, Any], claim: Claim, out: Path) -> Path:
        """Audit figure: the measured profile (or computed sticks) with the claim and its tolerance band."""
        from matpcr_plugins.datafiles import plot_case, read_xy

        prepared = self.prepare(reference)
        tt, _ = self._two_theta(claim, prepared)
        marks = [(tt, self.params["tolerance_deg"])] if tt is not None else []
        if reference.get("kind") == "measured" and reference.get("file") and Path(reference["file"]).exists():
            x, y = read_xy(reference["file"])
            return plot_case(x, y, marks, xlabel="2θ (°)", ylabel="counts", out=out, peaks=prepared.peaks,
                             title=f"{prepared.phase}: measured pattern")
        return plot_case(reference["two_theta"], reference["intensity"], marks, xlabel="2θ (°)", ylabel="relative intensity",
                         out=out, sticks=True, title=f"{prepared.phase}: computed pattern")

    # -- the validity gate ----------------------------------------------------------------
    def plant_violation(self, reference: PreparedPattern, rng: np.random.Generator) -> Claim:
        """A 2θ inside the window but more than twice the tolerance from every reflection, or, where the
        pattern leaves no such gap, an unrealizable angle or d-spacing."""
        lo, hi = reference.window
        margin = 2.0 * self.params["tolerance_deg"]
        grid = np.linspace(lo, hi, 4001)
        free = grid[nearest_distances(grid, reference.peaks) > margin]
        if free.size and rng.random() < 0.8:
            return Claim("two_theta", round(float(rng.choice(free)), 2), "deg")
        if rng.random() < 0.5:
            return Claim("two_theta", round(float(rng.uniform(181.0, 260.0)), 1), "deg")
        return Claim("d_spacing", round(float(rng.uniform(0.2, 0.49) * reference.wavelength), 3), "angstrom")

    def plant_consistent(self, reference: PreparedPattern, rng: np.random.Generator) -> Claim:
        inside = reference.peaks[(reference.peaks >= reference.window[0]) & (reference.peaks <= reference.window[1])]
        peak = float(rng.choice(inside if inside.size else reference.peaks))
        jitter = rng.uniform(-0.5, 0.5) * self.params["tolerance_deg"]
        value = min(max(peak + jitter, reference.window[0]), reference.window[1])  # stay inside the window
        return Claim("two_theta", round(value, 2), "deg")
