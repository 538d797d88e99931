"""Validity-gate controls for the microscopy oracle, built from the micrograph's own calibration as the
instrument recorded it (metadata.csv: pixel size in nm, image size from the file header), not from the
oracle's OCR'd scale bar.

- negative ``over_fov``: a size of 1.05–3 × the field of view (in µm when above 1 µm);
- negative ``unit_slip``: a true feature size with its unit slipped: the number in nm written with µm
  (1000 × too large) or the number in µm written with nm (1000 × too small); ``details["direction"]``
  says which, so the report can show that the oracle (a field-of-view bound) can only see the first;
- positive ``feature``: a true feature size (the text question's typical particle in pixels, else
  1–30% of the field) × the recorded pixel size, in nm or µm;
- positive ``large_feature``: 50–95% of the field of view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from matpcr.protocols import Control
from matpcr.records import Item

NAMES = {"over_fov": "negative", "unit_slip": "negative", "feature": "positive", "large_feature": "positive"}


def _size(nm: float) -> tuple[float, str]:
    return (round(nm / 1000.0, 3), "µm") if nm >= 1000 else (round(nm, 1), "nm")


def field_of_view_nm(item: Item) -> tuple[float, float]:
    """(field of view, nm per pixel) from the recorded pixel size and the image header."""
    from matpcr_plugins.sem.micrographs import check_image

    side = item.meta.get("sidecar") or {}
    pixel = float(side["pixel_size"])  # KeyError/ValueError: no recorded calibration, no control
    width, height = check_image(Path(item.reference["file"]))
    return pixel * max(width, height), pixel


def build(oracle: Any, item: Item, pool: list[Item], rng: np.random.Generator) -> list[Control]:
    fov, pixel = field_of_view_nm(item)
    particle_px = item.reference.get("particle_px")
    true_nm = float(particle_px) * pixel if particle_px else fov * float(rng.uniform(0.01, 0.3))
    out = []
    value, unit = _size(fov * float(rng.uniform(1.05, 3.0)))
    out.append(Control("over_fov", "negative", [value], unit, {"fov_nm": fov}))
    if rng.random() < 0.5:
        out.append(Control("unit_slip", "negative", [round(true_nm, 1)], "µm", {"direction": "nm_as_um", "true_nm": true_nm}))
    else:
        out.append(Control("unit_slip", "negative", [round(true_nm / 1000.0, 3)], "nm",
                           {"direction": "um_as_nm", "true_nm": true_nm}))
    value, unit = _size(true_nm * float(rng.uniform(0.8, 1.2)))
    out.append(Control("feature", "positive", [value], unit))
    value, unit = _size(fov * float(rng.uniform(0.5, 0.95)))
    out.append(Control("large_feature", "positive", [value], unit))
    return out


def phrasing() -> Any:
    from matpcr_plugins.templates import Phrasing

    return Phrasing(
        label="feature size", intro="The typical particle diameter is", noun="particle", latex_label="d", decimals=1,
        header="diameter",
        reasoning=("Measuring the particles against the scale bar gives their size.",
                   "I compare the particle outlines with the scale bar's length in pixels.",
                   "The particles are roughly spherical and fairly uniform."),
        distractors=("The micrograph was recorded at 20 kV with a working distance of 2.8 mm and a magnification of 50000×.",
                     "The image is 1024 px wide and the InLens detector was used.",
                     "The sample was dried at 80 °C before imaging.",
                     "The spot size setting was 3 and the probe current 100 pA."))
