"""Build the embedded default set (``matpcr_plugins/embedded_data``) from a staged data directory.

    python -m matpcr_plugins.datasources.embed /path/to/data

A small, licence-clean slice per task family, laid out like the data directory so the same loaders read
it: measured XRD patterns (Apache-2.0, MIT), structure CIFs (Apache-2.0, MIT), computed Materials Project
records (CC-BY-4.0), a handful of RRUFF Raman spectra (with attribution; see NOTICE.md), and synthetic SEM
micrographs that matpcr renders itself (the real ones are CC BY-NC-ND). The selection is fixed here, so
re-running it reproduces the folder.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import shutil
from pathlib import Path

from matpcr_plugins.datasources.catalog import EMBEDDED

PICK = {
    "raman_rruff": ["Rutile__R050031", "Fluorite__R050045", "Gypsum__R040029", "Dolomite__R040030"],
    # measured patterns whose text table (0.25° bins, rows above 5 % of the maximum) stays short: a long
    # prompt costs the embedded CPU model minutes and gigabytes (attention over thousands of tokens)
    "xrd_autoxrd_thinfilm": ["pm-3m__MAPbBr3_2-Theta_Omega.xy", "P3m1__Cs3Bi2Br9_a200_Rat21_2-Theta_Omega.xy",
                             "I4Imcm__MASnI3_5centCa_2-Theta_Omega.xy"],
    "xrd_dara_precursor_mixtures": ["patterns/ZnO_0p4006-In2O3_0p6008--2min.xy",
                                    "patterns/V2O5_0p3015-TiO2_0p6998--2min.xy"],
    "autoanalyzer_spectra": ["spectra/MnO2.xy"],
    "autoanalyzer_cifs": ["reference_cifs/TiO2_141.cif", "reference_cifs/TiO2_136.cif", "reference_cifs/MnO_225.cif",
                          "reference_cifs/LiF_225.cif"],
    "dans": ["Silicon.cif", "Copper.cif", "Rutile.cif", "ZnO.cif", "KCl.cif", "Diamond.cif"],
}
SEM_SEEDS = (1, 2, 3)


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]], str]:
    raw = path.read_bytes()
    newline = "\r\n" if b"\r\n" in raw[:4096] else "\n"
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader), newline


def _write(path: Path, fields: list[str], rows: list[dict[str, str]], newline: str = "\n") -> None:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator=newline)
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue(), encoding="utf-8", newline="")


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def _order(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def build(data: Path, out: Path = EMBEDDED) -> None:
    if out.exists():
        for child in out.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
    out.mkdir(parents=True, exist_ok=True)

    # Raman: a few RRUFF spectra, unmodified
    fields, rows, nl = _rows(data / "raman_rruff" / "index.csv")
    keep = [r for r in rows if any(r["file"].startswith(p + "__") for p in PICK["raman_rruff"])]
    for r in keep:
        _copy(data / "raman_rruff" / "spectra" / r["file"], out / "raman_rruff" / "spectra" / r["file"])
    _write(out / "raman_rruff" / "index.csv", fields, keep, nl)

    # measured XRD patterns
    fields, rows, nl = _rows(data / "xrd_autoxrd_thinfilm" / "index.csv")
    keep = [r for r in rows if r["file"] in PICK["xrd_autoxrd_thinfilm"]]
    for r in keep:
        _copy(data / "xrd_autoxrd_thinfilm" / "patterns" / r["file"], out / "xrd_autoxrd_thinfilm" / "patterns" / r["file"])
    _write(out / "xrd_autoxrd_thinfilm" / "index.csv", fields, keep, nl)
    fields, rows, nl = _rows(data / "xrd_dara_precursor_mixtures" / "index.csv")
    keep = [r for r in rows if r["file"] in PICK["xrd_dara_precursor_mixtures"]]
    for r in keep:
        _copy(data / "xrd_dara_precursor_mixtures" / r["file"], out / "xrd_dara_precursor_mixtures" / r["file"])
    _write(out / "xrd_dara_precursor_mixtures" / "index.csv", fields, keep, nl)
    base = data / "xrd_autoanalyzer_limntiof"
    fields, rows, nl = _rows(base / "spectra_index.csv")
    keep = [r for r in rows if r["file"] in PICK["autoanalyzer_spectra"]]
    for r in keep:
        _copy(base / r["file"], out / "xrd_autoanalyzer_limntiof" / r["file"])
    _write(out / "xrd_autoanalyzer_limntiof" / "spectra_index.csv", fields, keep, nl)
    fields, rows, nl = _rows(base / "reference_index.csv")
    keep = [r for r in rows if r["file"] in PICK["autoanalyzer_cifs"]]
    for r in keep:
        _copy(base / r["file"], out / "xrd_autoanalyzer_limntiof" / r["file"])
    _write(out / "xrd_autoanalyzer_limntiof" / "reference_index.csv", fields, keep, nl)

    # structures (Dans_Diffraction, Apache-2.0)
    base = data / "cif_reference_phases" / "dans_diffraction"
    fields, rows, nl = _rows(base / "index.csv")
    keep = [r for r in rows if r["file"] in PICK["dans"]]
    for r in keep:
        _copy(base / r["file"], out / "cif_reference_phases" / "dans_diffraction" / r["file"])
    _write(out / "cif_reference_phases" / "dans_diffraction" / "index.csv", fields, keep, nl)

    # computed Materials Project records (CC-BY-4.0): magnetic and non-magnetic, metals and insulators
    fields, rows, nl = _rows(data / "mp_piezo_features" / "mp_piezo_summary.csv")
    rows = [r for r in rows if r["e_above_hull_eV_per_atom"] and r["band_gap_eV"] and r["total_magnetization_muB_per_cell"]]
    rows.sort(key=lambda r: _order(r["material_id"]))
    magnetic = [r for r in rows if abs(float(r["total_magnetization_muB_per_cell"])) > 0.5][:14]
    other = [r for r in rows if abs(float(r["total_magnetization_muB_per_cell"])) <= 0.5][:26]
    _write(out / "mp_piezo_features" / "mp_piezo_summary.csv", fields,
           sorted(magnetic + other, key=lambda r: r["material_id"]), nl)
    fields, rows, nl = _rows(data / "mp40_chemeleon" / "mp40_union.csv")
    rows = [r for r in rows if int(r["nsites"]) <= 12 and r["band_gap_eV"] and r["e_above_hull_eV_per_atom"]]
    rows.sort(key=lambda r: _order(r["material_id"]))
    metals = [r for r in rows if float(r["band_gap_eV"]) == 0][:12]
    gapped = [r for r in rows if float(r["band_gap_eV"]) > 0][:18]
    _write(out / "mp40_chemeleon" / "mp40_union.csv", fields, sorted(metals + gapped, key=lambda r: r["material_id"]), nl)

    # synthetic SEM micrographs, rendered here
    from matpcr_plugins.datasources.synthetic_sem import render

    sem_rows = []
    for seed in SEM_SEEDS:
        m = render(out / "sem_synthetic" / "images" / f"synthetic_{seed:02d}.png", seed=seed)
        sem_rows.append({"file": m.file, "width_px": m.width, "height_px": m.height, "pixel_size": f"{m.nm_per_px:g}",
                         "pixel_size_unit": "nm", "field_width": f"{m.nm_per_px * m.width / 1000:g}",
                         "field_width_unit": "µm", "magnification": "", "eht": "", "wd": "", "signal_a": "",
                         "date": "", "store_resolution": f"{m.width} * {m.height}", "scale_bar_label_transcribed": m.label,
                         "scale_bar_length_px_measured": m.bar_px + 3, "label_div_pixel_size_px": f"{m.bar_px:g}",
                         "median_particle_diameter_px": f"{sorted(m.particle_diameters_px)[len(m.particle_diameters_px) // 2]:g}",
                         "sample": "synthetic particles", "dataset": "matpcr synthetic SEM (rendered by "
                         "matpcr_plugins.datasources.synthetic_sem)", "licence": "Apache-2.0 (matpcr)"})
    _write(out / "sem_synthetic" / "metadata.csv", list(sem_rows[0]), sem_rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, default=EMBEDDED)
    args = parser.parse_args()
    build(args.data, args.out)
    files = [p for p in args.out.rglob("*") if p.is_file()]
    print(f"{args.out}: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
