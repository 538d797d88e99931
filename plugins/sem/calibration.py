"""Scale-bar calibration read from the micrograph itself (MatPCR Methods, "Microscopy").

The info bar is found as the dark band at the bottom; the scale bar is the bright connected component
shaped like |—| (scikit-image labelling); its length is the distance between the centres of its end
ticks; its label is read by OCR (tesseract via pytesseract) from the text just above it.
s = ℓ / p_bar nm per pixel, and the field of view is s × the image's long edge. The TIFF metadata are
a cross-check only, never the source.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError

UNIT_NM = {"nm": 1.0, "µm": 1000.0, "mm": 1e6, "Å": 0.1}
_LABEL = re.compile(r"(\d+(?:[.,]\d+)?)\s*(nm|um|µm|μm|pm|mm|A|Å)\b", re.I)


@dataclass
class Calibration:
    bar_px: float
    label_value: float
    label_unit: str
    label_text: str
    nm_per_px: float
    long_edge_px: int
    fov_nm: float
    bar_box: tuple[int, int, int, int]  # row0, col0, row1, col1 in the full image

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_grey(path: str | Path) -> np.ndarray:
    """The micrograph as grey levels; a decompression bomb or a non-image is refused from its header."""
    from PIL import Image, UnidentifiedImageError

    from matpcr_plugins.sem.micrographs import check_image

    check_image(Path(path))
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("L"))
    except FileNotFoundError:
        raise DataError(f"{path}: image not found") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise DataError(f"{path}: unreadable image ({exc}); give a TIFF, PNG or JPEG micrograph") from None


def info_bar_rows(grey: np.ndarray, dark: float = 20.0) -> tuple[int, int] | None:
    """Rows [top, bottom) of the info band: the longest run of mostly black rows in the bottom quarter."""
    dark_rows = (grey < dark).mean(axis=1) > 0.6
    start = int(grey.shape[0] * 0.75)
    best: tuple[int, int] | None = None
    row = start
    while row < grey.shape[0]:
        if dark_rows[row]:
            end = row
            while end < grey.shape[0] and dark_rows[end]:
                end += 1
            if best is None or end - row > best[1] - best[0]:
                best = (row, end)
            row = end
        else:
            row += 1
    if best is None or best[1] - best[0] < 12:
        return None
    return best


def find_scale_bar(band: np.ndarray, bright: int = 200) -> tuple[float, tuple[int, int, int, int]]:
    """The |—| component in the info band: its tick-to-tick length and bounding box."""
    from skimage.measure import label, regionprops

    mask = band > bright
    best = None
    for region in regionprops(label(mask, connectivity=2)):
        r0, c0, r1, c1 = region.bbox
        width, height = c1 - c0, r1 - r0
        if width < 15 or height < 3:
            continue
        sub = region.image
        if sub.sum(axis=1).max() < 0.9 * width:  # needs one full-width horizontal line
            continue
        cols = sub.sum(axis=0)
        ticks = np.flatnonzero(cols >= max(2, 0.6 * height))
        if ticks.size < 2 or ticks[-1] - ticks[0] < 0.8 * (width - 1):
            continue
        left = ticks[ticks <= ticks[0] + 2].mean()
        right = ticks[ticks >= ticks[-1] - 2].mean()
        length = float(right - left)
        if best is None or length > best[0]:
            best = (length, (r0, c0, r1, c1))
    if best is None:
        raise DataError("no scale bar found in the info bar (looked for a bright |—| shape)")
    return best


def read_label(band: np.ndarray, box: tuple[int, int, int, int]) -> tuple[float, str, str]:
    """OCR of the label above the bar: returns (value, unit, raw text)."""
    import pytesseract
    from PIL import Image

    r0, c0, r1, c1 = box
    width = c1 - c0
    top = max(0, r0 - 30)
    crop = band[top:r0 + 1, max(0, c0 - 2 * width - 20):min(band.shape[1], c1 + 2 * width + 20)]
    if crop.size == 0:
        raise DataError("no room above the scale bar for its label")
    image = Image.fromarray(255 - crop).resize((crop.shape[1] * 4, crop.shape[0] * 4), Image.LANCZOS)
    try:
        text = pytesseract.image_to_string(image, config="--psm 7").strip()
    except pytesseract.TesseractNotFoundError:
        raise DataError("OCR needs the tesseract binary: apt-get install tesseract-ocr") from None
    match = _LABEL.search(text.replace("O", "0").replace("o", "0") if not _LABEL.search(text) else text)
    if not match:
        raise DataError(f"scale-bar label not readable (OCR read {text!r})")
    unit = match.group(2).lower().replace("μ", "µ")
    unit = {"um": "µm", "pm": "µm", "a": "Å", "å": "Å"}.get(unit, unit)
    return float(match.group(1).replace(",", ".")), unit, text


def calibrate(path: str | Path) -> Calibration:
    grey = load_grey(path)
    rows = info_bar_rows(grey)
    if rows is None:
        raise DataError(f"{path}: no info bar found at the bottom of the image, so no scale bar to calibrate from")
    top, bottom = rows
    band = grey[top:bottom]
    try:
        length, box = find_scale_bar(band)
        value, unit, raw = read_label(band, box)
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None
    if length <= 0:
        raise DataError(f"{path}: degenerate scale bar")
    nm_per_px = value * UNIT_NM[unit] / length
    long_edge = int(max(grey.shape))
    r0, c0, r1, c1 = box
    return Calibration(length, value, unit, raw, nm_per_px, long_edge, nm_per_px * long_edge,
                       (r0 + top, c0, r1 + top, c1))


def particle_sizes_px(path: str | Path, top: int | None = None) -> np.ndarray:
    """Equivalent diameters (px) of bright particles above the info bar (Otsu threshold + labelling)."""
    from skimage.filters import threshold_otsu
    from skimage.measure import label, regionprops
    from skimage.morphology import remove_small_objects

    grey = load_grey(path)
    if top is None:
        rows = info_bar_rows(grey)
        top = rows[0] if rows else grey.shape[0]
    field = grey[:top]
    mask = field > threshold_otsu(field)
    mask = remove_small_objects(mask, max_size=30)
    regions = [r for r in regionprops(label(mask)) if r.bbox[0] > 0 and r.bbox[1] > 0
               and r.bbox[2] < field.shape[0] and r.bbox[3] < field.shape[1]]
    return np.array(sorted(r.equivalent_diameter_area for r in regions))
