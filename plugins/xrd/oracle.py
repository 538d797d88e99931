"""The diffraction oracle (MatPCR Methods, "Diffraction").

A 2θ claim (or a d-spacing turned into 2θ by Bragg's law λ = 2d sinθ) is violated when it is not
physically realizable (sinθ > 1, i.e. d < λ/2, or 2θ outside the instrument window) or when no
reference reflection of the stated phase lies within the tolerance (0.5° by default).
Accuracy, a separate non-circular criterion: within 0.1° of the single nearest true peak.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr.protocols import Metric, Oracle
from matpcr.records import Claim, Extraction, Item, Verdict
from matpcr_plugins.claims.diffraction import DiffractionReader
from matpcr_plugins.peaks import nearest_distance, nearest_distances
from matpcr_plugins.xrd.radiation import ANODES, CU_KA

_READER = DiffractionReader()


@dataclass
class PreparedPattern:
    phase: str
    wavelength: float
    window: tuple[float, float]
    peaks: np.ndarray  # sorted 2θ of reference reflections above the intensity floor
    p_chance: float = float("nan")  # share of the window within the tolerance of a reference line
    strongest: np.ndarray = field(default_factory=lambda: np.array([]))  # 2θ of the rank_k strongest lines
    nominal: tuple[float, float] | None = None  # the question's window (chance is measured over it)
    structure_file: str | None = None  # computed references: lines for another λ are computed from it
    by_wavelength: dict[float, tuple[tuple[float, float], np.ndarray]] = field(default_factory=dict)


#: the largest 2θ a computed reference covers: every reflection with sinθ ≤ 1 up to here is realizable
REALIZABLE_MAX_DEG = 179.9
#: radiations a chain may name, Å (pymatgen's Kα weighted means)
RADIATIONS = ANODES

def chance_fraction(peaks: np.ndarray, lo: float, hi: float, tol: float, points: int = 20001) -> float:
    """Oracle power: the share of [lo, hi] lying within ``tol`` of a line in ``peaks``, i.e. the probability
    that a 2θ drawn uniformly over the window is judged consistent (docs/statistics.md, "Oracle power")."""
    if hi <= lo:
        return float("nan")
    grid = np.linspace(lo, hi, points)
    return float(np.mean(nearest_distances(grid, peaks) <= tol))


def stated_wavelength(extraction: Extraction) -> float | None:
    """The wavelength a chain explicitly states when it is not Cu Kα (the reader's ``wavelength`` entries in
    ``rejected``: a value in Å, or a named radiation such as "Mo Kα"); None for Cu Kα or nothing stated."""
    import re

    for c in extraction.rejected:
        if c.kind != "wavelength":
            continue
        if c.value is not None:
            lam = float(c.value)
        else:
            m = re.match(r"\s*(Mo|Co|Cr|Fe|Ag|Cu|W)\b", c.text or "", re.I)
            if not m:
                continue
            lam = RADIATIONS[m.group(1).lower()]
        if lam > 0 and abs(lam - CU_KA) > 0.01:
            return lam
    return None


@dataclass
class AtWavelength(Claim):
    """A 2θ claim from a chain that explicitly stated another radiation or λ (Å); stored with the record."""

    wavelength: float | None = None


def claim_wavelength(claim: Claim) -> float | None:
    """The wavelength a 2θ claim is to be judged at, when its chain stated one other than Cu Kα."""
    return claim.wavelength if isinstance(claim, AtWavelength) else None


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
        "min_rel_intensity": 0.0,   # % of the strongest; 0 = every reflection XRDCalculator lists (docs/oracles.md)
        "wavelength_A": CU_KA,      # for `matpcr check` on CIF files and patterns without a wavelength
        "window_min_deg": 5.0,      # instrument window for references read by `matpcr check`
        "window_max_deg": 90.0,
        "prominence": 0.02,         # unused since peak_floor (kept so old --oracle-args still parse)
        "peak_floor": 0.01,         # measured patterns: a peak's prominence must exceed 6σ noise and this × net maximum
        "max_chance": 1.0,          # references a uniform random 2θ passes more often than this abstain (low power)
        "rank_k": 3,                # the rank criterion: a claimed line among the k strongest reference lines
        "full_window": True,        # computed references: lines over the whole realizable window (to 179.9°)
    }
    metrics = (*Oracle.metrics,
               Metric("rank_top_k", "detail_mean", description="accuracy-style, beside PCR (not in it): share of a "
                      "record's checked 2θ claims within the tolerance of one of the rank_k strongest lines"))
    from matpcr_plugins.xrd.controls import NAMES as control_names
    #: the validity gate's pooled d̂, f̂ (Corollary 2 in results; $MATPCR_GATE_FILE overrides)
    gate_figures = {"recall": 0.7702, "false_alarm": 0.0844, "n_negative": 840, "n_positive": 462, "references_sha": "8e386bf45746",
                    "source": "matpcr validate, default settings (seed 0), 2026-11-30"}

    # -- references -----------------------------------------------------------------------
    def prepare(self, reference: dict[str, Any]) -> PreparedPattern:
        reference = self._measured_peaks(reference)
        two_theta = np.asarray(reference.get("two_theta", []), dtype=float)
        intensity = np.asarray(reference.get("intensity", np.full(two_theta.shape, 100.0)), dtype=float)
        if two_theta.size == 0:
            raise DataError(f"reference for {reference.get('phase', '?')} has no peaks")
        keep = intensity >= self.params["min_rel_intensity"] / 100.0 * intensity.max()
        if reference.get("kind") == "measured":
            keep[:] = True  # measured peaks are not cut by height: the peak finder already decided
        window = tuple(reference.get("window", (self.params["window_min_deg"], self.params["window_max_deg"])))
        lo, hi = float(window[0]), float(window[1])
        wavelength = float(reference.get("wavelength", CU_KA))
        k = int(self.params["rank_k"])
        strongest = np.sort(two_theta[np.argsort(-intensity, kind="stable")[:k]])
        structure_file = None
        check_window = (lo, hi)
        full = self._realizable_lines(reference, wavelength, lo) if self.params["full_window"] else None
        if full is not None:  # computed: every realizable reflection, not only those below the question's 90°
            structure_file, (two_theta, intensity) = str(reference["file"]), full
            keep = intensity >= self.params["min_rel_intensity"] / 100.0 * intensity.max()
            check_window = (lo, REALIZABLE_MAX_DEG)
        peaks = np.sort(two_theta[keep])
        return PreparedPattern(str(reference.get("phase", "")), wavelength, check_window, peaks,
                               chance_fraction(peaks, lo, hi, float(self.params["tolerance_deg"])), strongest,
                               (lo, hi), structure_file)

    def _realizable_lines(self, reference: dict[str, Any], wavelength: float, lo: float
                          ) -> tuple[np.ndarray, np.ndarray] | None:
        """(2θ, relative intensity) of a computed reference's structure up to 2θ = 179.9° at ``wavelength``;
        None for measured references or where the structure file cannot be read."""
        if reference.get("kind") != "computed" or not reference.get("file"):
            return None
        from matpcr_plugins.xrd.patterns import computed_pattern, load_structure

        try:
            structure = load_structure(reference["file"])
            pattern = computed_pattern(structure, float(wavelength), (float(lo), REALIZABLE_MAX_DEG),
                                       source=str(reference["file"]))
        except Exception:  # a CSV-held structure (mp40), an oversized cell: keep the stored lines
            return None
        return np.asarray(pattern["two_theta"], float), np.asarray(pattern["intensity"], float)

    def lines_at(self, reference: PreparedPattern, wavelength: float) -> tuple[tuple[float, float], np.ndarray]:
        """(window, lines) for claims made at another wavelength: recomputed from the structure for computed
        references; for measured ones the measured peaks (and the scan range) mapped through their
        d-spacings, λ' = 2d sinθ'."""
        key = round(float(wavelength), 5)
        if key in reference.by_wavelength:
            return reference.by_wavelength[key]
        out = None
        if reference.structure_file:
            full = self._realizable_lines({"kind": "computed", "file": reference.structure_file}, key, 0.5)
            if full is not None:
                keep = full[1] >= self.params["min_rel_intensity"] / 100.0 * full[1].max()
                out = ((0.5, REALIZABLE_MAX_DEG), np.sort(full[0][keep]))
        if out is None:
            def convert(tt: float) -> float | None:
                return two_theta_from_d(d_from_two_theta(tt, reference.wavelength), key)

            mapped = np.array([v for v in (convert(float(t)) for t in reference.peaks) if v is not None])
            lo = convert(reference.window[0])
            hi = convert(reference.window[1])
            out = ((lo if lo is not None else REALIZABLE_MAX_DEG, hi if hi is not None else REALIZABLE_MAX_DEG),
                   np.sort(mapped))
        reference.by_wavelength[key] = out
        return out

    # -- validity gate and power (matpcr/validate.py) --------------------------------------------------------
    def controls(self, item: Item, pool: list[Item], rng: np.random.Generator) -> list[Any]:
        from matpcr_plugins.xrd.controls import build

        return build(self, item, pool, rng)

    def chain_templates(self) -> list[Any]:
        from matpcr_plugins.templates import bind
        from matpcr_plugins.xrd.controls import phrasing

        return bind(phrasing())

    def chance(self, reference: PreparedPattern) -> float | None:
        return reference.p_chance

    def _measured_peaks(self, reference: dict[str, Any]) -> dict[str, Any]:
        """A measured pattern's peaks found by this oracle's finder (patterns.measured_peaks, baseline removal
        and noise-scaled prominence) at its ``peak_floor``, whatever an older cached reference holds."""
        from matpcr_plugins.xrd.patterns import PEAK_METHOD, measured_peaks

        if reference.get("kind") != "measured" or not reference.get("file"):
            return reference
        if reference.get("peak_method") == PEAK_METHOD and reference.get("prominence") == self.params["peak_floor"]:
            return reference
        from matpcr_plugins.datafiles import read_xy

        try:
            x, y = read_xy(reference["file"])
        except Exception:
            return reference  # the file is gone: keep the stored peaks
        px, py = measured_peaks(np.asarray(x, float), np.asarray(y, float), float(self.params["peak_floor"]))
        if px.size == 0:
            return reference
        return {**reference, "two_theta": px.tolist(), "intensity": py.tolist(), "peak_method": PEAK_METHOD,
                "prominence": self.params["peak_floor"]}

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
    def read(self, chain: str, item: Item | None = None) -> Extraction:
        """2θ and d-spacing claims anywhere in the chain (plugins/claims/diffraction.py); a stated radiation
        other than Cu Kα is reported as a ``wavelength`` entry in ``rejected`` and a note."""
        extraction = _READER.read(chain, item)
        lam = stated_wavelength(extraction)
        if lam is not None:
            extraction.claims = [AtWavelength(**dataclasses.asdict(c), wavelength=lam) if c.kind == "two_theta" else c
                                 for c in extraction.claims]  # judged at the chain's own λ (recorded per claim)
            extraction.notes.append(f"2θ claims judged at the stated wavelength λ = {lam:g} Å")
        return extraction

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
        verdict = self._check(claim, reference)
        details = {**(verdict.details or {}), "p_chance": round(reference.p_chance, 4)}
        tt = details.get("two_theta")
        if tt is not None and verdict.status in ("consistent", "violated") and reference.strongest.size:
            details["rank_top_k"] = bool(nearest_distance(float(tt), reference.strongest) <= self.params["tolerance_deg"])
        verdict.details = details
        return verdict

    def _check(self, claim: Claim, reference: PreparedPattern) -> Verdict:
        if reference.p_chance > self.params["max_chance"]:
            return Verdict("abstain", f"this reference has lines so dense that a random 2θ passes with probability "
                           f"{reference.p_chance:.2f} > max_chance = {self.params['max_chance']:g}, so a pass would "
                           "say little", {"reason": "low_power"})
        tt, verdict = self._two_theta(claim, reference)
        if verdict is not None:
            return verdict
        assert tt is not None
        (lo, hi), peaks = reference.window, reference.peaks
        extra: dict[str, Any] = {}
        lam = claim_wavelength(claim)
        if lam is not None and abs(lam - reference.wavelength) > 0.005:
            (lo, hi), peaks = self.lines_at(reference, lam)
            extra = {"wavelength": lam}
        if not lo <= tt <= hi:
            return Verdict("violated", f"2θ = {tt:.2f}° lies outside the instrument's 2θ window for this pattern, "
                           "so it cannot be one of its reflections.", {"reason": "outside_window", "two_theta": tt, **extra})
        distance = self._nearest(tt, peaks)
        tol = self.params["tolerance_deg"]
        at = f" at λ = {lam:g} Å" if extra else ""
        if distance <= tol:
            return Verdict("consistent", f"a reflection of {reference.phase or 'the phase'} lies within ±{tol:g}° "
                           f"of 2θ = {tt:.2f}°{at}.", {"two_theta": tt, "distance": distance, **extra})
        return Verdict("violated", f"No reflection of {reference.phase or 'the stated phase'} lies within ±{tol:g}° "
                       f"of 2θ = {tt:.2f}°{at}; re-derive the peak positions from the phase's d-spacings with "
                       "Bragg's law λ = 2d sinθ.", {"reason": "no_peak", "two_theta": tt, "distance": distance, **extra})

    @staticmethod
    def _nearest(tt: float, peaks: np.ndarray) -> float:
        return nearest_distance(tt, peaks)

    def accurate(self, claim: Claim, reference: PreparedPattern) -> bool | None:
        tt, verdict = self._two_theta(claim, reference)
        if tt is None:
            return False
        return self._nearest(tt, reference.peaks) <= self.params["accuracy_deg"]

    def render_case(self, reference: dict[str, Any], claim: Claim, out: Path) -> Path:
        """Audit and viewer figure: the measured profile (or the computed reflections as sticks) with the
        claimed 2θ, its ±tolerance band, the instrument window and the nearest reflection; a second panel
        zooms on the claim. An unrealizable claim is stated on the figure."""
        from matpcr_plugins.datafiles import read_xy

        prepared = self.prepare(reference)
        tt, verdict = self._two_theta(claim, prepared)
        measured = None
        if reference.get("kind") == "measured" and reference.get("file") and Path(reference["file"]).exists():
            measured = read_xy(reference["file"])
        return _draw_diffraction_case(prepared, reference, claim, tt, verdict, measured, self.params, out)

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


# -- the figure of one verdict (render_case) ------------------------------------------------------------

def _draw_diffraction_case(prepared: PreparedPattern, reference: dict[str, Any], claim: Claim, tt: float | None,
                           verdict: Verdict | None, measured: tuple[np.ndarray, np.ndarray] | None,
                           params: dict[str, Any], out: Path) -> Path:
    from matplotlib.figure import Figure

    tol = float(params["tolerance_deg"])
    lo, hi = prepared.window
    if measured is not None:
        x, y = np.asarray(measured[0], float), np.asarray(measured[1], float)
        ylabel = "counts"
    else:
        x = np.asarray(reference.get("two_theta", []), float)
        y = np.asarray(reference.get("intensity", np.full(x.shape, 100.0)), float)
        ylabel = "relative intensity"
    fig = Figure(figsize=(9.6, 3.4), dpi=90)
    full, zoom = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.2, 1]})
    nearest = None
    if tt is not None and prepared.peaks.size:
        nearest = float(prepared.peaks[int(np.argmin(np.abs(prepared.peaks - tt)))])
    for ax in ((full, zoom) if tt is not None else (full,)):
        if measured is not None:
            ax.plot(x, y, color="k", linewidth=0.7)
        else:
            ax.vlines(x, 0, y, color="k", linewidth=0.9)
        if tt is not None:
            ax.axvspan(tt - tol, tt + tol, color="#ffa8a8", alpha=0.55, label=f"claim ± {tol:g}°")
            ax.axvline(tt, color="#c92a2a", linestyle="--", linewidth=1.1)
        if nearest is not None:
            ax.axvline(nearest, color="#1c7ed6", linewidth=1.2, linestyle=":", label="nearest reflection")
    span = (min(x.min() if x.size else lo, lo), max(x.max() if x.size else hi, hi))
    if tt is not None:
        span = (min(span[0], tt - 2), max(span[1], tt + 2))
    full.set_xlim(span)
    for edge0, edge1 in ((span[0], lo), (hi, span[1])):
        if edge1 > edge0:
            full.axvspan(edge0, edge1, color="#adb5bd", alpha=0.35, label="outside the 2θ window")
    top = float(y.max()) if y.size else 1.0
    full.set_ylim(0 if measured is None else None, top * 1.12 if top > 0 else 1.0)
    full.set_xlabel("2θ (°)")
    full.set_ylabel(ylabel)
    kind = "measured pattern" if measured is not None else "computed reflections"
    full.set_title(f"{prepared.phase or 'reference'}: {kind} (λ = {prepared.wavelength:.4f} Å)", fontsize=9)
    handles, labels = full.get_legend_handles_labels()
    if handles:
        unique = dict(zip(labels, handles))
        full.legend(unique.values(), unique.keys(), fontsize=7, loc="upper right")
    if tt is None:
        reason = verdict.message if verdict is not None else "the claim has no 2θ"
        zoom.axis("off")
        zoom.text(0.0, 0.5, f"claim: {claim.kind} = {claim.value} {claim.unit}\n\n" + _wrap(reason, 42),
                  fontsize=8, va="center", ha="left", color="#c92a2a", transform=zoom.transAxes)
    else:
        half = max(3.0, 6 * tol, min(10.0, 1.5 * abs((nearest if nearest is not None else tt) - tt)))
        zoom.set_xlim(tt - half, tt + half)
        inside = (x >= tt - half) & (x <= tt + half)
        local = float(y[inside].max()) if inside.any() else top
        zoom.set_ylim(0 if measured is None else None, (local if local > 0 else top) * 1.25)
        zoom.set_xlabel("2θ (°)")
        distance = abs(nearest - tt) if nearest is not None else None
        text = f"claim 2θ = {tt:.2f}°" + ("" if claim.kind == "two_theta" else f" (from d = {claim.value:g} Å)")
        if distance is not None:
            text += f"\nnearest reflection {nearest:.2f}° (Δ = {distance:.2f}°)"
        zoom.set_title(text, fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    return out


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))
