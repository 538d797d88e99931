"""The microscopy oracle (MatPCR Methods, "Microscopy").

A claimed feature size is violated when it exceeds the field of view s × p_img, where the calibration
s = ℓ / p_bar comes from the micrograph's own scale bar. A necessary, not sufficient, condition: a model
that copies the pixel count as nanometres ("26 px" → "26 nm") passes it. So where the question itself
states the particle's size in pixels (the text task), ``accurate`` compares the claim with that size
times the calibration (within ``accuracy_rel``); image items have no non-circular criterion (None).
Verdict messages never state the calibration or the field of view: that would hand the model the answer.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr.protocols import Oracle
from matpcr.records import Claim, Extraction, Item, Verdict
from matpcr_plugins.claims.microscopy import MicroscopyReader

LENGTH_UNITS = {"nm": "nanometer", "µm": "micrometer", "mm": "millimeter", "Å": "angstrom", "pm": "picometer"}
_READER = MicroscopyReader()


@lru_cache(maxsize=1)
def _registry() -> Any:
    import pint

    return pint.UnitRegistry()


def to_nm(value: float, unit: str) -> float:
    """Normalise a length with pint (Å, nm, µm/um/μm, mm all arrive here as canonical symbols)."""
    ureg = _registry()
    return float((value * ureg(LENGTH_UNITS[unit])).to(ureg.nanometer).magnitude)


class SEMOracle(Oracle):
    name = "sem"
    constraint = "microscopy"
    tolerance_param = "fov_margin"
    #: a feature may be at most fov_margin × the field of view; an answer is accurate within accuracy_rel of
    #: the size the question's pixel counts give (pixel counts are rounded to whole pixels in the question)
    defaults = {"fov_margin": 1.0, "accuracy_rel": 0.15}
    from matpcr_plugins.sem.controls import NAMES as control_names
    #: the validity gate's pooled d̂, f̂ (Corollary 2 in results; $MATPCR_GATE_FILE overrides)
    gate_figures = {"recall": 0.7125, "false_alarm": 0.0000, "n_negative": 80, "n_positive": 80, "references_sha": "0a8b37d2d764",
                    "source": "matpcr validate, default settings (seed 0), 2026-11-30"}
    #: the plausible range of a feature size for oracle power: log-uniform over [1 nm, 1 mm]
    CHANCE_RANGE_NM = (1.0, 1e6)

    def controls(self, item: Item, pool: list[Item], rng: np.random.Generator) -> list[Any]:
        from matpcr_plugins.sem.controls import build

        return build(self, item, pool, rng)

    def chain_templates(self) -> list[Any]:
        from matpcr_plugins.sem.controls import phrasing
        from matpcr_plugins.templates import bind

        return bind(phrasing())

    def chance(self, reference: dict[str, Any]) -> float | None:
        """The share of sizes, log-uniform over 1 nm – 1 mm, that fit in the field of view."""
        import math

        lo, hi = self.CHANCE_RANGE_NM
        limit = self.params["fov_margin"] * float(reference["fov_nm"])
        return min(1.0, max(0.0, math.log(limit / lo) / math.log(hi / lo))) if limit > 0 else 0.0

    def prepare(self, reference: dict[str, Any]) -> dict[str, Any]:
        if "fov_nm" not in reference:
            raise DataError("micrograph reference has no calibrated field of view")
        return reference

    def read_reference(self, spec: str) -> dict[str, Any]:
        path = Path(spec)
        if path.suffix == ".json":
            return self.read_json_reference(path)
        from matpcr_plugins.sem.calibration import calibrate

        return {**calibrate(path).to_dict(), "file": str(path)}

    def read(self, chain: str, item: Item | None = None) -> Extraction:
        """Feature sizes (any length, in nm, sign kept) anywhere in the chain (plugins/claims/microscopy.py)."""
        return _READER.read(chain, item)

    def check(self, claim: Claim, reference: dict[str, Any]) -> Verdict:
        verdict = self._check(claim, reference)
        verdict.details = {**(verdict.details or {}), "p_chance": round(float(self.chance(reference) or 0.0), 4)}
        return verdict

    def _check(self, claim: Claim, reference: dict[str, Any]) -> Verdict:
        size = float(claim.value)
        if size <= 0:
            return Verdict("violated", "A feature size must be a positive length.", {"reason": "non_positive"})
        if size > self.params["fov_margin"] * float(reference["fov_nm"]):
            return Verdict("violated", f"A feature of {size:g} nm is larger than the whole field of view of this "
                           "micrograph, so it cannot be a feature in it; re-measure it against the scale bar.",
                           {"reason": "exceeds_fov"})
        return Verdict("consistent", "the stated size fits inside the micrograph's field of view.")

    def accurate(self, claim: Claim, reference: dict[str, Any]) -> bool | None:
        """Text items only: the question gives the particle in pixels and the scale bar, so the right size is
        particle_px × nm_per_px (the oracle's own scale-bar calibration)."""
        if "particle_px" not in reference or not reference.get("nm_per_px"):
            return None
        expected = float(reference["particle_px"]) * float(reference["nm_per_px"])
        return abs(float(claim.value) - expected) <= self.params["accuracy_rel"] * expected

    def render_case(self, reference: dict[str, Any], claim: Claim, out: Path) -> Path:
        """Audit and viewer figure: the micrograph with the detected scale bar outlined, the calibration
        it gives (nm per pixel), the field of view, and the claimed size drawn to the same scale."""
        return _draw_micrograph_case(reference, claim, self.params, out)

    def plant_violation(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        size = float(reference["fov_nm"]) * rng.uniform(1.5, 50.0)
        return Claim("feature_size", round(size, 1), "nm")

    def plant_consistent(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        size = float(reference["fov_nm"]) * rng.uniform(0.001, 0.9)
        return Claim("feature_size", round(size, 2), "nm")


# -- the figure of one verdict (render_case) ------------------------------------------------------------

def _draw_micrograph_case(reference: dict[str, Any], claim: Claim, params: dict[str, Any], out: Path) -> Path:
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrow, Rectangle
    from PIL import Image

    with Image.open(reference["file"]) as image:
        if image.mode.startswith("I") or image.mode == "F":
            arr = np.asarray(image, dtype=float)
        else:
            arr = np.asarray(image.convert("L"), dtype=float)
    height, width = arr.shape[:2]
    step = max(1, int(np.ceil(max(height, width) / 900)))  # draw at most ~900 px across
    shown = arr[::step, ::step]
    fov = float(reference["fov_nm"])
    nm_per_px = float(reference.get("nm_per_px") or fov / max(width, height))
    size = float(claim.value)
    limit = float(params["fov_margin"]) * fov
    fig = Figure(figsize=(7.2, 6.4), dpi=90)
    ax = fig.add_axes((0.01, 0.16, 0.98, 0.76))
    ax.imshow(shown, cmap="gray", extent=(0, width, height, 0), interpolation="antialiased")
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_xticks([])
    ax.set_yticks([])
    box = reference.get("bar_box")
    if box:
        r0, c0, r1, c1 = (float(v) for v in box)
        pad = 6
        ax.add_patch(Rectangle((c0 - pad, r0 - pad), c1 - c0 + 2 * pad, r1 - r0 + 2 * pad, fill=False,
                               edgecolor="#ffd43b", linewidth=2.0))
        ax.annotate("detected scale bar", (c1 + pad, r0 - pad), xytext=(0, 6), textcoords="offset points",
                    color="#ffd43b", fontsize=8, ha="right", va="bottom")
    # the claimed size at the micrograph's own scale, from the top-left corner
    claimed_px = size / nm_per_px if size > 0 else 0.0
    y0, x0 = 0.06 * height, 0.03 * width
    room = width - 2 * x0
    if claimed_px > room:
        ax.add_patch(FancyArrow(x0, y0, room, 0, width=0.012 * height, head_width=0.04 * height,
                                head_length=0.03 * width, length_includes_head=True, color="#ff6b6b"))
        label = f"claimed {size:g} nm = {claimed_px:,.0f} px: beyond the image"
    elif claimed_px > 0:
        ax.add_patch(Rectangle((x0, y0 - 0.006 * height), max(claimed_px, 1.0), 0.012 * height, color="#ff6b6b"))
        label = f"claimed {size:g} nm = {claimed_px:,.1f} px"
    else:
        label = f"claimed size {size:g} nm is not a positive length"
    ax.text(x0, y0 + 0.035 * height, label, color="#ff6b6b", fontsize=9, va="top",
            bbox={"facecolor": "black", "alpha": 0.55, "edgecolor": "none", "pad": 2})
    name = Path(str(reference["file"])).name
    ax.set_title(f"{name}: micrograph with its detected scale bar", fontsize=9)
    calib = (f"calibration: scale bar \u201c{reference.get('label_text', '')}\u201d read as "
             f"{reference.get('label_value', '?')} {reference.get('label_unit', '')} over "
             f"{float(reference.get('bar_px') or 0):.1f} px  \u2192  {nm_per_px:.4g} nm/px")
    view = (f"field of view: {int(reference.get('long_edge_px') or max(width, height))} px \u00d7 {nm_per_px:.4g} nm/px "
            f"= {fov:,.0f} nm;  the claim is violated above {limit:,.0f} nm (fov_margin {params['fov_margin']:g})")
    fig.text(0.02, 0.09, calib, fontsize=8)
    fig.text(0.02, 0.04, view, fontsize=8, color="#c92a2a" if size > limit or size <= 0 else "#2b8a3e")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    return out
