"""SEM micrograph items and the calibration agreement report.

Images are checked before they are decoded: at most ``MATPCR_MAX_IMAGE_PIXELS`` pixels (default
50,000,000, e.g. 7,000 × 7,000; a real SEM frame is about 1 M) and a format Pillow recognises. A
decompression bomb (a small PNG declaring a huge canvas) ends in a DataError naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.protocols import TaskLoader
from matpcr.records import Item, file_sha256
from matpcr.tasks import TaskConfig
from matpcr.errors import DataError
from matpcr_plugins.datafiles import confine, read_csv, render_dir, require_dir
from matpcr_plugins.datasources.locate import dataset_dir

IMAGE_QUESTION = ("The image is a scanning electron micrograph of {sample} particles. What is the typical diameter "
                  "of the particles? Use the scale bar.")
TEXT_QUESTION = ("A {w} × {h} px scanning electron micrograph of {sample} particles has a scale bar labelled "
                 "\"{label}\" that spans {bar:.0f} px. A typical particle in it measures {d:.0f} px across. "
                 "What is the particle's diameter?")
SIDECAR_FIELDS = ("date", "eht", "wd", "magnification", "pixel_size")


def max_image_pixels() -> int:
    try:
        return int(os.environ.get("MATPCR_MAX_IMAGE_PIXELS", 50_000_000))
    except ValueError:
        raise DataError("$MATPCR_MAX_IMAGE_PIXELS must be a whole number "
                        f"(got {os.environ['MATPCR_MAX_IMAGE_PIXELS']!r})") from None


def check_image(path: Path) -> tuple[int, int]:
    """(width, height) read from the header only; a DataError naming the file for anything that is not an
    image Pillow can read, or whose pixel count is over ``MATPCR_MAX_IMAGE_PIXELS``."""
    from PIL import Image, UnidentifiedImageError

    limit = max_image_pixels()
    try:
        with Image.open(path) as image:  # lazy: reads the header, decodes nothing
            width, height = image.size
    except FileNotFoundError:
        raise DataError(f"{path}: image not found") from None
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError, SyntaxError) as exc:
        raise DataError(f"{path}: not a readable image ({type(exc).__name__}: {str(exc)[:160]})") from None
    if width <= 0 or height <= 0 or width * height > limit:
        raise DataError(f"{path}: image declares {width} × {height} = {width * height:,} pixels, over the limit of "
                        f"{limit:,} ($MATPCR_MAX_IMAGE_PIXELS; a decompression bomb?)")
    return width, height


def as_png(path: Path) -> Path:
    """Models and APIs take PNG, not palette TIFF; convert once into the render cache."""
    from PIL import Image

    out = render_dir() / f"sem-{path.stem}.png"
    if not out.exists():
        check_image(path)
        tmp = out.with_suffix(f".{os.getpid()}.png")
        with Image.open(path) as image:
            image.convert("L").save(tmp)
        os.replace(tmp, out)
    return out


class MicrographLoader(TaskLoader):
    data_sets = ("sem_bam_tio2",)

    def load(self, config: TaskConfig, data_dir: Path | None) -> list[Item]:
        folder = dataset_dir(data_dir, "sem_bam_tio2", f"task {config.task}")
        items = []
        for n, row in enumerate(read_csv(folder / "metadata.csv"), 2):
            path = confine(folder / "images", row["file"], folder / "metadata.csv", n)
            items.append(Item(id=Path(row["file"]).stem, task=config.task, constraint=config.constraint,
                              modality=config.modality, text="", reference={"file": str(path)},
                              source_id=Path(row["file"]).stem,
                              meta={"dataset": row.get("dataset") or "BAM TiO2 SEM (BAMresearch/automatic-sem-image-segmentation)",
                                    "licence": row.get("licence") or "CC BY-NC-ND 4.0", "file": str(path),
                                    "sample": row.get("sample") or "TiO2",
                                    "sidecar": {k: row.get(k, "") for k in SIDECAR_FIELDS}}))
        return items

    def cache_key(self, item: Item) -> str | None:
        """Calibration and particle sizing depend only on the micrograph's bytes (and this code's version)."""
        return f"sem-v1:{file_sha256(item.reference['file'])}"

    def complete(self, item: Item) -> Item:
        from matpcr_plugins.sem.calibration import calibrate, particle_sizes_px

        path = Path(item.reference["file"])
        w, h = check_image(path)  # before anything decodes it
        cal = calibrate(path)
        item.reference = {**cal.to_dict(), "file": str(path)}
        sample = item.meta["sample"]
        if item.modality == "image":
            item.images = [str(as_png(path))]
            item.text = IMAGE_QUESTION.format(sample=sample)
        else:
            sizes = particle_sizes_px(path, top=cal.bar_box[0] - 30)
            d = float(np.median(sizes)) if sizes.size else 40.0
            item.reference["particle_px"] = d
            # the info bar is not shown in text items, so its file name and date are hidden source metadata
            item.reference["sidecar"] = {"file_name": path.name, "date": item.meta["sidecar"].get("date", "")}
            item.text = TEXT_QUESTION.format(w=w, h=h, sample=sample, label=f"{cal.label_value:g} {cal.label_unit}",
                                             bar=cal.bar_px, d=d)
        return item


def calibration_report(data_dir: Path, tolerance: float = 0.05) -> dict[str, Any]:
    """How often scale-bar detection and OCR agree with metadata.csv over all staged images."""
    import time

    from matpcr_plugins.sem.calibration import calibrate

    folder = require_dir(data_dir, "sem_bam_tio2", "sem calibration report")
    rows = []
    for n, row in enumerate(read_csv(folder / "metadata.csv"), 2):
        t0 = time.perf_counter()
        try:
            image = confine(folder / "images", row["file"], folder / "metadata.csv", n)
            check_image(image)
            cal = calibrate(image)
            label = f"{cal.label_value:g} {cal.label_unit}"
            true_s = float(row["pixel_size"])
            rows.append({"file": row["file"], "label_ocr": label, "label_metadata": row["scale_bar_label_transcribed"],
                         "label_ok": label == row["scale_bar_label_transcribed"].replace("um", "µm"),
                         "bar_px": cal.bar_px, "bar_px_metadata": float(row["label_div_pixel_size_px"]),
                         "nm_per_px": cal.nm_per_px, "nm_per_px_metadata": true_s,
                         "calibration_ok": abs(cal.nm_per_px - true_s) / true_s <= tolerance,
                         "seconds": time.perf_counter() - t0, "error": None})
        except Exception as exc:
            rows.append({"file": row["file"], "label_ok": False, "calibration_ok": False, "error": str(exc),
                         "seconds": time.perf_counter() - t0})
    n = len(rows)
    return {"n_images": n, "label_agree": sum(r["label_ok"] for r in rows),
            "calibration_agree": sum(r["calibration_ok"] for r in rows), "tolerance": tolerance,
            "max_relative_error": max((abs(r["nm_per_px"] - r["nm_per_px_metadata"]) / r["nm_per_px_metadata"]
                                       for r in rows if r.get("nm_per_px")), default=None),
            "rows": rows}
