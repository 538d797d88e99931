"""A synthetic SEM micrograph with a burned-in info bar and scale bar, rendered by matpcr itself.

The embedded default set cannot ship the BAM TiO2 micrographs (CC BY-NC-ND 4.0), so it ships images drawn
here: bright, separated, roughly round particles on a darker textured field, and below them a black info bar
holding a white |—| scale bar with its label ("500 nm") above it, laid out like a Zeiss SmartSEM info bar so
that ``matpcr_plugins.sem.calibration`` reads the bar (scikit-image) and the label (tesseract) exactly as it
reads a real micrograph. Everything is deterministic for a given seed; the true values (nm per pixel, the
particle diameters drawn) are returned so tests can compare the calibration against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class SyntheticMicrograph:
    file: str
    width: int
    height: int
    label: str  # e.g. "500 nm"
    bar_px: int  # tick-centre to tick-centre
    nm_per_px: float
    particle_diameters_px: list[float] = field(default_factory=list)


def _font(size: int):
    """DejaVu Sans from matplotlib's bundled fonts (the same glyphs everywhere), else Pillow's default."""
    from PIL import ImageFont

    try:
        import matplotlib

        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        return ImageFont.truetype(str(path), size)
    except Exception:  # pragma: no cover - matplotlib is a dependency; keep a fallback anyway
        return ImageFont.load_default(size=size)


def render(out: Path, seed: int = 0, width: int = 1024, height: int = 768, band: int = 68,
           label_nm: int = 500, bar_px: int = 125, mean_diameter_px: float = 38.0, n_particles: int = 45,
           info: str = "matpcr synthetic micrograph   not a measurement") -> SyntheticMicrograph:
    """Draw one micrograph to ``out`` (PNG, 8-bit grey) and return what was drawn."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    field_h = height - band
    # a smooth, low-contrast background texture (coarse noise, bilinearly upsampled: compresses well)
    coarse = rng.normal(0.0, 1.0, (field_h // 32 + 2, width // 32 + 2))
    texture = np.asarray(Image.fromarray(((coarse - coarse.min()) / np.ptp(coarse) * 255).astype(np.uint8))
                         .resize((width, field_h), Image.BILINEAR), dtype=float) / 255.0
    grey = 55.0 + 25.0 * texture
    yy, xx = np.mgrid[0:field_h, 0:width]
    placed: list[tuple[float, float, float]] = []
    tries = 0
    while len(placed) < n_particles and tries < 20000:
        tries += 1
        d = float(np.clip(rng.normal(mean_diameter_px, 0.12 * mean_diameter_px), 0.6 * mean_diameter_px,
                          1.5 * mean_diameter_px))
        r = d / 2
        cx, cy = rng.uniform(r + 6, width - r - 6), rng.uniform(r + 6, field_h - r - 6)
        if any((cx - x) ** 2 + (cy - y) ** 2 < (r + rr + 8) ** 2 for x, y, rr in placed):
            continue
        placed.append((cx, cy, r))
        dist = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
        inside = dist <= r
        # brighter rim, as secondary-electron images show edges
        shade = 175.0 + 45.0 * (dist / r) ** 3
        grey[inside] = np.maximum(grey[inside], shade[inside])
    image = np.zeros((height, width), dtype=np.uint8)
    image[:field_h] = np.clip(grey, 0, 255).astype(np.uint8)
    canvas = Image.fromarray(image, mode="L")
    draw = ImageDraw.Draw(canvas)
    # the scale bar |—|: a 3 px line with 3 px wide end ticks, white on the black info bar
    x0 = width - 40 - bar_px
    x1 = x0 + bar_px + 2  # tick centres at x0 + 1 and x1 - 1: bar_px apart
    y_line = field_h + band - 20
    draw.rectangle([x0, y_line - 1, x1, y_line + 1], fill=255)
    draw.rectangle([x0, y_line - 7, x0 + 2, y_line + 7], fill=255)
    draw.rectangle([x1 - 2, y_line - 7, x1, y_line + 7], fill=255)
    label = f"{label_nm} nm"
    font = _font(20)
    left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
    tx = (x0 + x1) / 2 - (right - left) / 2 - left
    ty = y_line - 7 - 6 - bottom  # text ends 6 px above the ticks
    draw.text((tx, ty), label, fill=255, font=font)
    draw.text((16, field_h + band // 2 - 10), info, fill=200, font=_font(16))
    out.parent.mkdir(parents=True, exist_ok=True)
    canvas.save(out, optimize=True)
    return SyntheticMicrograph(out.name, width, height, label, bar_px, label_nm / bar_px,
                               [round(2 * r, 2) for _, _, r in placed])
