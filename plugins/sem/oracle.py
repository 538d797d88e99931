"""The microscopy oracle (MatPCR Methods, "Microscopy").

A claimed feature size is violated when it exceeds the field of view s × p_img, where the calibration
s = ℓ / p_bar comes from the micrograph's own scale bar. A necessary, not sufficient, condition; there
is no non-circular accuracy criterion for it, so ``accurate`` returns None. Verdict messages never
state the calibration or the field of view: that would hand the model the answer.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr.protocols import Oracle
from matpcr.records import Claim, Item, Verdict
from matpcr_plugins.quantities import find_quantities

LENGTH_UNITS = {"nm": "nanometer", "µm": "micrometer", "mm": "millimeter", "Å": "angstrom", "pm": "picometer"}


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
    defaults = {"fov_margin": 1.0}  # a feature may be at most fov_margin × the field of view

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

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        _, found = find_quantities(chain, units=set(LENGTH_UNITS), answer_default_unit=None)
        claims = []
        for q in found:
            claims.append(Claim("feature_size", round(to_nm(q.value, q.unit), 6), "nm", (q.start, q.end), q.text))
        return claims

    def check(self, claim: Claim, reference: dict[str, Any]) -> Verdict:
        size = float(claim.value)
        if size <= 0:
            return Verdict("violated", "A feature size must be a positive length.", {"reason": "non_positive"})
        if size > self.params["fov_margin"] * float(reference["fov_nm"]):
            return Verdict("violated", f"A feature of {size:g} nm is larger than the whole field of view of this "
                           "micrograph, so it cannot be a feature in it; re-measure it against the scale bar.",
                           {"reason": "exceeds_fov"})
        return Verdict("consistent", "the stated size fits inside the micrograph's field of view.")

    def render_case(self, reference: dict[str, Any], claim: Claim, out: Path) -> Path:
        """Audit figure: the micrograph itself, with the claimed size written on it for the reviewer."""
        from PIL import Image, ImageDraw

        with Image.open(reference["file"]) as image:
            canvas = image.convert("RGB")
        ImageDraw.Draw(canvas).text((10, 10), f"claimed feature size: {claim.value:g} nm "
                                    f"(field of view {reference['fov_nm']:.0f} nm)", fill=(255, 60, 60))
        out.parent.mkdir(parents=True, exist_ok=True)
        canvas.save(out)
        return out

    def plant_violation(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        size = float(reference["fov_nm"]) * rng.uniform(1.5, 50.0)
        return Claim("feature_size", round(size, 1), "nm")

    def plant_consistent(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        size = float(reference["fov_nm"]) * rng.uniform(0.001, 0.9)
        return Claim("feature_size", round(size, 2), "nm")
