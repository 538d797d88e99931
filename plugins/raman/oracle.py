"""The Raman spectrum oracle (MatPCR Methods, "Spectra", revised form).

A claimed band position is consistent only if a *genuine* interior local maximum of the measured
spectrum lies within the tolerance (5 cm⁻¹ by default): a point higher than both flanks down to their
nearest valleys (scipy's prominence), with prominence above a fraction of the spectrum's dynamic range.
A monotonic rise, a shoulder on a nearby peak or a noise wiggle does not count.

Default ``prominence_fraction`` = 0.03, chosen on the 400 staged RRUFF spectra (docs/oracles.md):
the noise (robust σ of the second difference) is below 0.0037 of the dynamic range in 99% of them,
so 0.03 is about 8σ there, and it leaves a median of 10 bands per spectrum (90th percentile 24),
in line with the number of Raman-active bands of typical minerals.
Accuracy: within 2 cm⁻¹ of the nearest genuine measured peak.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr.protocols import Oracle
from matpcr.records import Claim, Item, Verdict
from matpcr_plugins.peaks import nearest_distance, nearest_distances
from matpcr_plugins.quantities import find_quantities


@dataclass
class PreparedSpectrum:
    name: str
    lo: float
    hi: float
    peaks: np.ndarray        # positions (cm⁻¹) of genuine peaks, sorted
    prominences: np.ndarray  # in units of the dynamic range
    shift: np.ndarray
    intensity: np.ndarray


def genuine_peaks(shift: np.ndarray, intensity: np.ndarray, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    from scipy.signal import find_peaks

    span = float(intensity.max() - intensity.min())
    if span <= 0:
        return np.array([]), np.array([])
    idx, props = find_peaks(intensity, prominence=fraction * span)
    return shift[idx], props["prominences"] / span


class RamanOracle(Oracle):
    name = "raman"
    constraint = "spectra"
    tolerance_param = "tolerance_cm1"
    defaults = {
        "tolerance_cm1": 5.0,         # paper default
        "accuracy_cm1": 2.0,          # non-circular accuracy
        "prominence_fraction": 0.03,  # of the dynamic range; justified above and in docs/oracles.md
    }

    def prepare(self, reference: dict[str, Any]) -> PreparedSpectrum:
        shift = np.asarray(reference.get("shift", []), dtype=float)
        intensity = np.asarray(reference.get("intensity", []), dtype=float)
        if shift.size < 5 or shift.size != intensity.size:
            raise DataError(f"spectrum {reference.get('name', '?')} is empty or malformed")
        if np.any(np.diff(shift) <= 0):
            raise DataError(f"spectrum {reference.get('name', '?')}: Raman shifts are not strictly increasing")
        peaks, prom = genuine_peaks(shift, intensity, self.params["prominence_fraction"])
        return PreparedSpectrum(str(reference.get("name", "")), float(shift[0]), float(shift[-1]), peaks, prom,
                                shift, intensity)

    def read_reference(self, spec: str) -> dict[str, Any]:
        from matpcr_plugins.raman.spectra import read_spectrum

        path = Path(spec)
        if path.suffix == ".json":
            return self.read_json_reference(path)
        return read_spectrum(path)

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        _, found = find_quantities(chain, units={"cm-1"}, answer_default_unit="cm-1")
        claims = []
        for q in found:
            claims.append(Claim("raman_shift", q.value, "cm-1", (q.start, q.end), q.text))
        return claims

    @staticmethod
    def _nearest(x: float, peaks: np.ndarray) -> float:
        return nearest_distance(x, peaks)

    def check(self, claim: Claim, reference: PreparedSpectrum) -> Verdict:
        x = float(claim.value)
        tol = self.params["tolerance_cm1"]
        if not reference.lo - tol <= x <= reference.hi + tol:
            return Verdict("violated", f"{x:g} cm⁻¹ lies outside the measured Raman-shift range of this spectrum, so "
                           "no band there can be read from it.", {"reason": "outside_range"})
        distance = self._nearest(x, reference.peaks)
        if distance <= tol:
            return Verdict("consistent", f"the spectrum has a genuine local maximum within ±{tol:g} cm⁻¹ of {x:g} cm⁻¹.",
                           {"distance": distance})
        return Verdict("violated", f"The measured spectrum has no genuine peak (a local maximum standing clearly above "
                       f"both neighbouring valleys) within ±{tol:g} cm⁻¹ of {x:g} cm⁻¹; a rising background or "
                       "a shoulder is not a band.", {"reason": "no_peak", "distance": distance})

    def accurate(self, claim: Claim, reference: PreparedSpectrum) -> bool | None:
        return self._nearest(float(claim.value), reference.peaks) <= self.params["accuracy_cm1"]

    def render_case(self, reference: dict[str, Any], claim: Claim, out: Path) -> Path:
        """Audit figure: the spectrum, its genuine peaks, and the claim with its tolerance band."""
        from matpcr_plugins.datafiles import plot_case

        prepared = self.prepare(reference)
        return plot_case(prepared.shift, prepared.intensity, [(float(claim.value), self.params["tolerance_cm1"])],
                         xlabel="Raman shift (cm⁻¹)", ylabel="intensity", out=out, peaks=prepared.peaks,
                         title=f"{prepared.name}: measured Raman spectrum")

    def plant_violation(self, reference: PreparedSpectrum, rng: np.random.Generator) -> Claim:
        """A shift inside the measured range but more than three tolerances from every genuine peak."""
        tol = self.params["tolerance_cm1"]
        grid = np.linspace(reference.lo + tol, reference.hi - tol, 2000)
        dist = nearest_distances(grid, reference.peaks)
        free = grid[dist > 3 * tol]
        if free.size == 0:
            return Claim("raman_shift", round(reference.hi + 50 + 100 * rng.random(), 1), "cm-1")
        return Claim("raman_shift", round(float(rng.choice(free)), 1), "cm-1")

    def plant_consistent(self, reference: PreparedSpectrum, rng: np.random.Generator) -> Claim:
        if reference.peaks.size == 0:
            raise DataError(f"spectrum {reference.name} has no genuine peak to plant a consistent claim on")
        peak = float(rng.choice(reference.peaks))
        return Claim("raman_shift", round(peak + rng.uniform(-0.5, 0.5) * self.params["tolerance_cm1"], 1), "cm-1")

