"""Index tables of pulled data sets, rebuilt locally from the files downloaded from their origin.

``cif_reference_phases/*/index.csv``, ``xrd_autoxrd_thinfilm/index.csv``,
``xrd_autoanalyzer_limntiof/{spectra,reference}_index.csv`` and ``sem_bam_tio2/metadata.csv`` (SOURCES.md §4, §5,
§12, §15) hold what the downloaded CIFs, patterns and TIFF headers say, the upstream path (from the origin URL), and
a few facts no downloaded file states (the constants below). Rebuilding them here, rather than fetching matpcr's
copies, lets those sets come whole from their origin; each result is checked against the shipped manifest.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from matpcr.errors import DataError

# Upstream byte-identical copies of a downloaded AMCSD CIF that were not downloaded, keyed by the downloaded
# file's upstream path (SOURCES.md §12): they are not in the pull, so they cannot be read off it.
AMCSD_DUPLICATES = {
    "mineralsdata/Al-Perovskite/Al-Perovskite.cif": "mineralsdata/CIF/Al-Perovskite.cif",
    "mineralsdata/Al-Post-Perovskite/Al-Post-Perovskite.cif": "mineralsdata/CIF/Al-Post-Perovskite.cif",
    "mineralsdata/Al-Rh2O3(II)/Al-Rh2O3(II).cif": "mineralsdata/CIF/Al-Rh2O3(II).cif",
    "mineralsdata/Albite/Albite AMS_DATA.cif": "mineralsdata/Low Albite/Low Albite AMS_DATA.cif",
    "mineralsdata/CIF/Clinoenstatite.cif": "mineralsdata/Clinoenstatite/Clinoenstatite.cif",
    "mineralsdata/CIF/Coesite.cif": "mineralsdata/Coesite/Coesite.cif",
    "mineralsdata/CIF/Fe-Wadsleyite.cif": "mineralsdata/Fe-Wadsleyite/Fe-Wadsleyite.cif",
    "mineralsdata/CIF/Majorite.cif": "mineralsdata/Majorite/Majorite.cif",
    "mineralsdata/CIF/Mg-Perovskite Bridgmanite.cif":
        "mineralsdata/Mg-Perovskite Bridgmanite/Mg-Perovskite Bridgmanite.cif",
    "mineralsdata/CIF/Mg-Post-Perovskite.cif": "mineralsdata/Mg-Post-Perovskite/Mg-Post-Perovskite.cif",
    "mineralsdata/CIF/Stishovite.cif": "mineralsdata/Stishovite/Stishovite.cif",
}

# Dans_Diffraction's generic test cells (BCC, FCC, HCP, unit cube, triclinic): a judgement on the file's role in
# that package, not something a CIF states (BCC/FCC/HCP are byte copies of Iron/Copper/Cobalt).
DANS_GENERIC_TEST_CELLS = frozenset({"BCC.cif", "Cubic.cif", "FCC.cif", "HCP.cif", "triclinic.cif"})

#: Scale-bar label read by eye from the burned-in bar of each SEM image (no TIFF header records it):
#: "200 nm" on every image except those listed.
SEM_SCALE_BAR_LABEL = "200 nm"
SEM_SCALE_BAR_LABEL_EXCEPTIONS = {"1908264.tif": "300 nm"}

_CIF_SUFFIXES = (".cif", ".mcif")


def upstream_path(url: str) -> str:
    """The repository path of a ``raw.githubusercontent.com/OWNER/REPO/COMMIT/<quoted path>`` URL, unquoted."""
    return unquote(urlsplit(url).path.split("/", 4)[4])


def csv_bytes(rows: list[dict[str, Any]], lineterminator: str = "\n", fields: list[str] | None = None) -> bytes:
    """The staged files' CSV dialect (``csv`` defaults, UTF-8); the columns are the first row's unless named."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields if fields is not None else list(rows[0]), lineterminator=lineterminator)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _cif_values(text: str) -> dict[str, str]:
    """First value of every non-looped CIF tag (quotes stripped, ``?`` kept); loops and text fields are skipped.

    Not pymatgen's ``CifBlock``: its dict keeps the last of a repeated tag (Sapphire.cif states its formula, then
    an empty one) and one block per ``data_`` (Sr3LiRuO6.cif puts its cell in the second); the tables keep the
    first value in the file."""
    values: dict[str, str] = {}
    lines = text.splitlines()
    i, n = 0, len(lines)
    while i < n:
        line = lines[i].strip()
        if line.startswith(";"):  # a text field that is not a tag's value: skip to its closing ';'
            i += 1
            while i < n and not lines[i].startswith(";"):
                i += 1
            i += 1
            continue
        if line.lower() == "loop_":
            i += 1
            while i < n and lines[i].strip().startswith("_"):  # loop header
                i += 1
            while i < n:  # loop rows, up to the next tag, loop or data block
                row = lines[i].strip()
                if row.startswith("_") or row.lower() == "loop_" or row.lower().startswith("data_"):
                    break
                if row.startswith(";"):
                    i += 1
                    while i < n and not lines[i].startswith(";"):
                        i += 1
                i += 1
            continue
        if line.startswith("_"):
            tag, _, value = line.partition(" ")
            value = value.strip()
            if not value:  # the value is on the next non-blank line, unless a tag/loop follows
                j = i + 1
                while j < n and not lines[j].strip():
                    j += 1
                nxt = lines[j].strip() if j < n else ""
                if nxt and not nxt.startswith(("_", ";")) and nxt.lower() != "loop_":
                    value, i = nxt, j
            if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
                value = value[1:-1]
            values.setdefault(tag.lower(), value)
        i += 1
    return values


def _cif_rows(folder: Path, origin: dict[str, str], subdir: str) -> list[tuple[str, str, dict[str, str], str]]:
    """(file name, upstream path, CIF values, sha256) of every downloaded CIF under ``subdir``, by upstream path."""
    rows = []
    for rel, url in origin.items():
        sub, _, name = rel.partition("/")
        if sub != subdir or "/" in name or not name.endswith(_CIF_SUFFIXES):
            continue
        data = (folder / rel).read_bytes()
        rows.append((name, upstream_path(url), _cif_values(data.decode("utf-8", errors="replace")),
                     hashlib.sha256(data).hexdigest()))
    rows.sort(key=lambda r: r[1])
    return rows


def _space_group(cif: dict[str, str]) -> str:
    return cif.get("_symmetry_space_group_name_h-m", cif.get("_space_group_name_h-m_alt", ""))


def amcsd_index(folder: Path, origin: dict[str, str]) -> bytes:
    """``amcsd_minerals/index.csv``: one row per downloaded mineral-lib CIF (cell, codes, citation, upstream path)."""
    rows = []
    for name, path, cif, sha in _cif_rows(folder, origin, "amcsd_minerals"):
        parts = path.split("/")
        rows.append({"file": name, "mineral_folder": Path(parts[-1]).stem if parts[1] == "CIF" else parts[1],
                     "mineral": cif.get("_chemical_name_mineral", ""),
                     "formula_sum": cif.get("_chemical_formula_sum", ""), "space_group_HM": _space_group(cif),
                     **{k: cif.get(f"_cell_length_{k}", "") for k in "abc"},
                     **{k: cif.get(f"_cell_angle_{k}", "") for k in ("alpha", "beta", "gamma")},
                     "volume": cif.get("_cell_volume", ""), "amcsd_code": cif.get("_database_code_amcsd", ""),
                     "journal": cif.get("_journal_name_full", ""), "year": cif.get("_journal_year", ""),
                     "original_path": path, "duplicate_paths": AMCSD_DUPLICATES.get(path, ""), "sha256": sha})
    return csv_bytes(rows)


def dans_index(folder: Path, origin: dict[str, str]) -> bytes:
    """``dans_diffraction/index.csv``: one row per downloaded Dans_Diffraction structure (.cif and magnetic .mcif)."""
    rows = []
    for name, path, cif, sha in _cif_rows(folder, origin, "dans_diffraction"):
        rows.append({"file": name, "formula_sum": cif.get("_chemical_formula_sum", ""),
                     "space_group_HM": _space_group(cif),
                     **{k: cif.get(f"_cell_length_{k}", "") for k in "abc"},
                     **{k: cif.get(f"_cell_angle_{k}", "") for k in ("alpha", "beta", "gamma")},
                     "magnetic_cif": str(name.endswith(".mcif")),
                     "generic_test_cell": str(name in DANS_GENERIC_TEST_CELLS),
                     "amcsd_code": cif.get("_database_code_amcsd", ""), "cod_code": cif.get("_cod_database_code", ""),
                     "journal": cif.get("_journal_name_full", ""), "year": cif.get("_journal_year", ""),
                     "original_path": path, "sha256": sha})
    return csv_bytes(rows)


def _read_xy(path: Path) -> tuple[list[float], list[float], int]:
    """2θ and intensity of the rows with at least two numeric columns, and the widest row's column count."""
    xs: list[float] = []
    ys: list[float] = []
    ncols = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) < 2:  # a few upstream files have rows that lost their intensity
            continue
        xs.append(float(parts[0]))
        ys.append(float(parts[1]))
        ncols = max(ncols, len(parts))
    if not xs:
        raise DataError(f"{path}: no pattern rows")
    return xs, ys, ncols


def _scan_stats(xs: list[float], ys: list[float]) -> dict[str, object]:
    lo, hi = min(xs), max(xs)
    return {"n_points": len(xs), "two_theta_min_deg": lo, "two_theta_max_deg": hi,
            "step_deg": round((hi - lo) / (len(xs) - 1), 5) if len(xs) > 1 else "", "intensity_max": max(ys)}


def _scan_mode(name: str) -> str:
    """The scan mode the upstream file name states: GIXD, 2Theta-Omega, 2Theta, or unspecified."""
    lower = name.lower()
    if "gixd" in lower or "gixrd" in lower:
        return "GIXD"
    if "2-theta_omega" in lower:
        return "2Theta-Omega"
    if "2-theta" in lower:
        return "2Theta"
    return "unspecified"


def _downloaded_scans(folder: Path, origin: dict[str, str], prefix: str) -> list[tuple[str, str, tuple[list[float], list[float], int]]]:
    """(local path, upstream path, ``_read_xy``) of every downloaded pattern under ``prefix``, by upstream path."""
    scans = sorted((rel, upstream_path(url)) for rel, url in origin.items() if rel.startswith(prefix))
    if not scans:
        raise DataError(f"{folder}: no {prefix.rstrip('/')} in the origin list")
    return sorted(((rel, original, _read_xy(folder / rel)) for rel, original in scans), key=lambda s: s[1])


def autoxrd_index(folder: Path, origin: dict[str, str]) -> bytes:
    """``xrd_autoxrd_thinfilm/index.csv``: one row per pattern, with the upstream path that the sanitised
    file name no longer spells (``%``, spaces, ``#``, brackets), sorted by that path."""
    rows = [{"file": rel.split("/", 1)[1], "space_group_label": original.split("/")[-2], "original_path": original,
             "scan_mode_from_filename": _scan_mode(original.rsplit("/", 1)[1]), **_scan_stats(xs, ys)}
            for rel, original, (xs, ys, _) in _downloaded_scans(folder, origin, "patterns/")]
    return csv_bytes(rows, "\r\n")


def autoanalyzer_spectra_index(folder: Path, origin: dict[str, str]) -> bytes:
    """``xrd_autoanalyzer_limntiof/spectra_index.csv``: the phases come from the upstream file name
    (``Mn2O3+LiF.xy``), which the staged name spells with ``_``; sorted by upstream path."""
    rows = [{"file": rel, "labelled_phases": ";".join(original.rsplit("/", 1)[1].rsplit(".", 1)[0].split("+")),
             **_scan_stats(xs, ys), "n_columns": ncols, "original_path": original}
            for rel, original, (xs, ys, ncols) in _downloaded_scans(folder, origin, "spectra/")]
    return csv_bytes(rows, "\n")


def autoanalyzer_reference_index(folder: Path, origin: dict[str, str]) -> bytes:
    """``xrd_autoanalyzer_limntiof/reference_index.csv``: formula and cell as written in each pymatgen CIF
    (all are P1 exports), space group number from the ``<formula>_<number>.cif`` name."""
    keys = {"formula": "_chemical_formula_structural", **{k: f"_cell_length_{k}" for k in "abc"},
            **{k: f"_cell_angle_{k}" for k in ("alpha", "beta", "gamma")}, "volume": "_cell_volume"}
    rows = []
    for rel in origin:
        if not (rel.startswith("reference_cifs/") and rel.endswith(".cif")):
            continue
        cif = _cif_values((folder / rel).read_text(encoding="utf-8"))
        found = {k: cif[tag] for k, tag in keys.items() if tag in cif}
        missing = [k for k in keys if k not in found]
        if missing:
            raise DataError(f"{folder / rel}: no {', '.join(missing)}")
        number = re.fullmatch(r".*_(\d+)\.cif", rel)
        if not number:
            raise DataError(f"{rel}: no space group number in the file name")
        rows.append({"file": rel, "formula": found["formula"], "space_group_number": number.group(1),
                     **{k: found[k] for k in ("a", "b", "c", "alpha", "beta", "gamma", "volume")}})
    if not rows:
        raise DataError(f"{folder}: no reference CIFs in the origin list")
    rows.sort(key=lambda r: f"{r['formula']}_{r['space_group_number']}")
    return csv_bytes(rows, "\n")


def _cz_sem(text: str) -> dict[str, str]:
    """``AP_…``/``DP_…`` tag → value from a Zeiss ``CZ_SEM`` block (a tag line, then ``Name = value``)."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: dict[str, str] = {}
    for tag, entry in zip(lines, lines[1:]):
        if re.fullmatch(r"[AD]P_[A-Z0-9_]+", tag):
            match = re.match(r"[^=:]*[=:](.*)", entry)
            if match:
                out[tag] = match.group(1).strip()
    return out


def _number_unit(value: str) -> tuple[float, str]:
    number, _, unit = value.partition(" ")
    return float(number), unit.strip()


def _scale_bar_px(image: Any) -> int:
    """Longest horizontal run of grey level > 200 in the bottom-right box of the info bar (the scale bar)."""
    import numpy as np

    grey = np.asarray(image.convert("L"))
    height, width = grey.shape
    bright = grey[height - height // 14:, width * 3 // 4:] > 200
    best = 0
    for row in bright:  # run lengths from the edges of each row's bright stretches
        edges = np.flatnonzero(np.diff(np.concatenate(([0], row.astype(np.int8), [0]))))
        if edges.size:
            best = max(best, int((edges[1::2] - edges[::2]).max()))
    return best


def sem_metadata(folder: Path, origin: dict[str, str]) -> bytes:
    """``sem_bam_tio2/metadata.csv``: Zeiss ``CZ_SEM`` (TIFF tag 34118) values, the measured scale bar,
    and the transcribed scale-bar label, which no header records (see the constants above)."""
    from PIL import Image

    rows = []
    for rel in sorted(origin):
        if not (rel.startswith("images/") and rel.endswith(".tif")):
            continue
        name = rel.split("/", 1)[1]
        with Image.open(folder / rel) as image:
            raw = image.tag_v2.get(34118)
            if raw is None:
                raise DataError(f"{folder / rel}: no CZ_SEM tag (34118)")
            meta = _cz_sem(raw if isinstance(raw, str) else bytes(raw).decode("latin-1"))
            width, height = image.size
            bar_px = _scale_bar_px(image)
        pixel, pixel_unit = _number_unit(meta["AP_IMAGE_PIXEL_SIZE"])
        field, field_unit = _number_unit(meta["AP_WIDTH"])
        eht, eht_unit = _number_unit(meta["AP_ACTUALKV"])
        wd, wd_unit = _number_unit(meta["AP_WD"])
        label = SEM_SCALE_BAR_LABEL_EXCEPTIONS.get(name, SEM_SCALE_BAR_LABEL)
        label_value, label_unit = _number_unit(label)
        if label_unit != pixel_unit:
            raise DataError(f"{rel}: scale-bar unit {label_unit!r} differs from pixel-size unit {pixel_unit!r}")
        rows.append({"file": name, "width_px": width, "height_px": height, "pixel_size": pixel,
                     "pixel_size_unit": pixel_unit, "field_width": field, "field_width_unit": field_unit,
                     "magnification": meta["AP_MAG"], "eht": f"{eht} {eht_unit}", "wd": f"{wd} {wd_unit}",
                     "signal_a": meta["DP_DETECTOR_CHANNEL"], "date": meta["AP_DATE"],
                     "store_resolution": meta["DP_IMAGE_STORE"], "scale_bar_label_transcribed": label,
                     "scale_bar_length_px_measured": bar_px,
                     "label_div_pixel_size_px": round(label_value / pixel, 1)})
    if not rows:
        raise DataError(f"{folder}: no images in the origin list")
    return csv_bytes(rows, "\r\n")
