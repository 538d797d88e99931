"""RRUFF Raman spectra: reading the files and turning them into task items."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from matpcr.protocols import TaskLoader
from matpcr.errors import DataError
from matpcr.records import Item
from matpcr.tasks import TaskConfig
from matpcr_plugins.datafiles import confine, downsample_table, plot_xy, read_csv, read_xy
from matpcr_plugins.datasources.locate import dataset_dir

QUESTION = "At which Raman shifts (in cm⁻¹) are the main bands of this spectrum?"
#: header fields that identify the sample; never shown to models (the contamination check looks for them)
SIDECAR_FIELDS = ("RRUFFID", "LOCALITY", "OWNER", "SOURCE", "DESCRIPTION", "URL")


def read_header(path: Path) -> dict[str, str]:
    header = {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.startswith("##"):
                break
            key, _, value = line[2:].partition("=")
            header[key.strip()] = value.strip()
    return header


def read_spectrum(path: str | Path) -> dict[str, Any]:
    """A spectrum file (RRUFF or any two-column x, y text) as an oracle reference."""
    path = Path(path)
    x, y = read_xy(path)
    header = read_header(path) if path.exists() else {}
    return {"name": header.get("NAMES", path.stem), "shift": x.tolist(), "intensity": y.tolist(), "file": str(path)}


def pretty_chemistry(text: str) -> str:
    """RRUFF markup (``Ca_2_``, ``Fe^2+^``, ``&#931;``) to plain text."""
    text = html.unescape(text)
    text = re.sub(r"_([^_]*)_", r"\1", text)
    return re.sub(r"\^([^^]*)\^", r"\1", text)


class SpectrumLoader(TaskLoader):
    data_sets = ("raman_rruff",)

    def load(self, config: TaskConfig, data_dir: Path | None) -> list[Item]:
        folder = dataset_dir(data_dir, "raman_rruff", f"task {config.task}")
        items = []
        for n, row in enumerate(read_csv(folder / "index.csv"), start=2):
            path = confine(folder / "spectra", row["file"], folder / "index.csv", n)
            items.append(Item(
                id=row["rruff_id"] + ":" + row["mineral"], task=config.task, constraint=config.constraint,
                modality=config.modality, text="",
                reference={"file": str(path), "name": row["mineral"]}, source_id=row["rruff_id"],
                meta={"dataset": "RRUFF excellent_unoriented (charlesll/RaMin)", "licence": "RRUFF terms (cite Lafuente et al. 2015)",
                      "file": str(path), "mineral": row["mineral"], "chemistry": pretty_chemistry(row["ideal_chemistry"]),
                      "laser_nm": row["laser_wavelength_nm"]}))
        return items

    def complete(self, item: Item) -> Item:
        path = Path(item.reference["file"])
        ref = read_spectrum(path)
        header = read_header(path)
        item.reference = {**ref, "name": item.meta["mineral"],
                          "sidecar": {k: header[k] for k in SIDECAR_FIELDS if k in header}}
        x, y = read_xy(path)
        if y.max() - y.min() <= 0:
            raise DataError(f"{path}: the spectrum is flat")
        what = f"{item.meta['mineral']} ({item.meta['chemistry']}), excited at {item.meta['laser_nm']} nm"
        if item.modality == "image":
            item.images = [str(plot_xy(x, y, xlabel="Raman shift (cm⁻¹)", ylabel="Intensity (arb. units)",
                                       title=f"Raman spectrum: {item.meta['mineral']}",
                                       key=f"raman-{item.source_id}"))]
            item.text = f"The image shows the measured Raman spectrum of {what}. {QUESTION}"
        else:
            rows = downsample_table(x, y, bin_width=4.0, floor_fraction=0.05, decimals=1)
            table = "\n".join(f"{a:.1f} {b:.0f}" for a, b in rows)
            item.text = (f"Measured Raman spectrum of {what}. Columns: Raman shift (cm⁻¹) and intensity; the spectrum was "
                         "max-pooled into 4 cm⁻¹ bins (each row gives the shift of the bin's highest point) and rows below "
                         f"5% of the maximum were omitted:\n{table}\n\n{QUESTION}")
        return item
