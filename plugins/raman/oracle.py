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
from matpcr.records import Claim, Extraction, Item, Verdict
from matpcr_plugins.claims.spectra import SpectraReader
from matpcr_plugins.peaks import nearest_distance, nearest_distances

_READER = SpectraReader()


@dataclass
class PreparedSpectrum:
    name: str
    lo: float
    hi: float
    peaks: np.ndarray        # positions (cm⁻¹) of genuine peaks, sorted
    prominences: np.ndarray  # in units of the dynamic range
    shift: np.ndarray
    intensity: np.ndarray
    p_chance: float = float("nan")  # share of the measured range within the tolerance of a genuine peak


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
        "max_chance": 1.0,            # spectra a uniform random shift passes more often than this abstain
    }
    from matpcr_plugins.raman.controls import NAMES as control_names
    #: the validity gate's pooled d̂, f̂ (Corollary 2 in results; $MATPCR_GATE_FILE overrides)
    gate_figures = {"recall": 0.9139, "false_alarm": 0.0000, "n_negative": 546, "n_positive": 238, "references_sha": "c968d4a74022",
                    "source": "matpcr validate, default settings (seed 0), 2026-11-30"}

    def prepare(self, reference: dict[str, Any]) -> PreparedSpectrum:
        shift = np.asarray(reference.get("shift", []), dtype=float)
        intensity = np.asarray(reference.get("intensity", []), dtype=float)
        if shift.size < 5 or shift.size != intensity.size:
            raise DataError(f"spectrum {reference.get('name', '?')} is empty or malformed")
        if np.any(np.diff(shift) <= 0):
            raise DataError(f"spectrum {reference.get('name', '?')}: Raman shifts are not strictly increasing")
        peaks, prom = genuine_peaks(shift, intensity, self.params["prominence_fraction"])
        lo, hi = float(shift[0]), float(shift[-1])
        grid = np.linspace(lo, hi, 20001)
        chance = float(np.mean(nearest_distances(grid, peaks) <= self.params["tolerance_cm1"])) if peaks.size else 0.0
        return PreparedSpectrum(str(reference.get("name", "")), lo, hi, peaks, prom, shift, intensity, chance)

    # -- validity gate and power (matpcr/validate.py) --------------------------------------------------------
    def controls(self, item: Item, pool: list[Item], rng: np.random.Generator) -> list[Any]:
        from matpcr_plugins.raman.controls import build

        return build(self, item, pool, rng)

    def chain_templates(self) -> list[Any]:
        from matpcr_plugins.raman.controls import phrasing
        from matpcr_plugins.templates import bind

        return bind(phrasing())

    def chance(self, reference: PreparedSpectrum) -> float | None:
        return reference.p_chance

    def read_reference(self, spec: str) -> dict[str, Any]:
        from matpcr_plugins.raman.spectra import read_spectrum

        path = Path(spec)
        if path.suffix == ".json":
            return self.read_json_reference(path)
        return read_spectrum(path)

    def read(self, chain: str, item: Item | None = None) -> Extraction:
        """Raman-shift claims anywhere in the chain (plugins/claims/spectra.py)."""
        return _READER.read(chain, item)

    @staticmethod
    def _nearest(x: float, peaks: np.ndarray) -> float:
        return nearest_distance(x, peaks)

    def check(self, claim: Claim, reference: PreparedSpectrum) -> Verdict:
        verdict = self._check(claim, reference)
        verdict.details = {**(verdict.details or {}), "p_chance": round(reference.p_chance, 4)}
        return verdict

    def _check(self, claim: Claim, reference: PreparedSpectrum) -> Verdict:
        if reference.p_chance > self.params["max_chance"]:
            return Verdict("abstain", f"a random shift in this spectrum's range passes with probability "
                           f"{reference.p_chance:.2f} > max_chance = {self.params['max_chance']:g}",
                           {"reason": "low_power"})
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
        """Audit and viewer figure: the measured spectrum, its genuine peaks with their prominence (the
        drop to the higher flanking valley), the measured range, and the claimed band with its ±tolerance
        window; a second panel zooms on the claim."""
        prepared = self.prepare(reference)
        return _draw_spectrum_case(prepared, claim, self.params, out)

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


# -- the figure of one verdict (render_case) ------------------------------------------------------------

def _draw_spectrum_case(prepared: PreparedSpectrum, claim: Claim, params: dict[str, Any], out: Path) -> Path:
    from matplotlib.figure import Figure

    x, y = prepared.shift, prepared.intensity
    tol = float(params["tolerance_cm1"])
    claimed = float(claim.value)
    span = float(y.max() - y.min()) or 1.0
    idx = np.searchsorted(x, prepared.peaks).clip(0, len(x) - 1)
    heights = y[idx]
    fig = Figure(figsize=(9.6, 3.4), dpi=90)
    full, zoom = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.2, 1]})
    nearest = float(prepared.peaks[int(np.argmin(np.abs(prepared.peaks - claimed)))]) if prepared.peaks.size else None
    for ax in (full, zoom):
        ax.plot(x, y, color="k", linewidth=0.7)
        ax.vlines(prepared.peaks, heights - prepared.prominences * span, heights, color="#1c7ed6", linewidth=1.0,
                  label=f"genuine peaks (prominence ≥ {params['prominence_fraction']:g} of range)")
        ax.plot(prepared.peaks, heights, "v", color="#1c7ed6", markersize=4)
        ax.axvspan(claimed - tol, claimed + tol, color="#ffa8a8", alpha=0.55, label=f"claim ± {tol:g} cm⁻¹")
        ax.axvline(claimed, color="#c92a2a", linestyle="--", linewidth=1.1)
    lo, hi = min(prepared.lo, claimed - 3 * tol), max(prepared.hi, claimed + 3 * tol)
    full.set_xlim(lo, hi)
    for edge0, edge1 in ((lo, prepared.lo), (prepared.hi, hi)):
        if edge1 > edge0:
            full.axvspan(edge0, edge1, color="#adb5bd", alpha=0.35, label="outside the measured range")
    full.set_xlabel("Raman shift (cm⁻¹)")
    full.set_ylabel("intensity")
    full.set_title(f"{prepared.name or 'reference'}: measured Raman spectrum, {prepared.peaks.size} genuine peaks",
                   fontsize=9)
    handles, labels = full.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    full.legend(unique.values(), unique.keys(), fontsize=7, loc="upper right")
    half = max(40.0, 8 * tol, min(150.0, 1.5 * abs((nearest if nearest is not None else claimed) - claimed)))
    zoom.set_xlim(claimed - half, claimed + half)
    inside = (x >= claimed - half) & (x <= claimed + half)
    if inside.any():
        low, high = float(y[inside].min()), float(y[inside].max())
        pad = 0.1 * (high - low or span)
        zoom.set_ylim(low - pad, high + 3 * pad)
    for peak, height, prom in zip(prepared.peaks, heights, prepared.prominences):
        if claimed - half <= peak <= claimed + half:
            zoom.annotate(f"{peak:.1f}\nprom. {prom:.2f}", (peak, height), fontsize=6.5, ha="center",
                          xytext=(0, 4), textcoords="offset points", color="#1c7ed6")
    zoom.set_xlabel("Raman shift (cm⁻¹)")
    text = f"claim {claimed:g} cm⁻¹"
    if nearest is not None:
        text += f"\nnearest genuine peak {nearest:.1f} (Δ = {abs(nearest - claimed):.1f} cm⁻¹)"
    else:
        text += "\nno genuine peak in this spectrum"
    zoom.set_title(text, fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    return out
