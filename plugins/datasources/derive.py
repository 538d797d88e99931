"""Files matpcr rebuilds locally after a pull, so that every set comes whole from its origin (index tables,
summaries, unions and format conversions: ``indexes``, ``xrdml``, ``mp40``, ``devsets``, ``matterviz``).

Each builder reproduces the staged file byte for byte from the files downloaded from the origin; the
result is checked against the shipped manifest like a download.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
from fnmatch import fnmatch
from functools import partial
from pathlib import Path
from typing import Callable

from matpcr.errors import DataError
from matpcr_plugins.datasources import devsets, indexes, matterviz, mp40, xrdml


def raman_index(folder: Path, origin: dict[str, str]) -> bytes:
    """``raman_rruff/index.csv`` from the RRUFF spectrum headers (``##NAMES=`` …) and their data rows."""
    rows = []
    for path in sorted((folder / "spectra").glob("*.txt")):
        header: dict[str, str] = {}
        xs: list[float] = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("##"):
                key, _, value = line[2:].partition("=")
                header[key.strip()] = value.strip()
                continue
            parts = line.replace(",", " ").split()
            if len(parts) >= 2:
                try:
                    xs.append(float(parts[0]))
                except ValueError:
                    pass
        if not xs:
            raise DataError(f"{path}: no spectrum rows")
        fields = path.name.split("__")
        rows.append({"file": path.name, "mineral": header.get("NAMES", fields[0]),
                     "rruff_id": header.get("RRUFFID", fields[1] if len(fields) > 1 else ""),
                     "laser_wavelength_nm": fields[3] if len(fields) > 3 else "",
                     "ideal_chemistry": header.get("IDEAL CHEMISTRY", ""), "n_points": len(xs),
                     "wavenumber_min_cm1": min(xs), "wavenumber_max_cm1": max(xs),
                     "locality": header.get("LOCALITY", ""), "status": header.get("STATUS", "")})
    rows.sort(key=lambda r: r["file"].split("__")[0])
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def thermomagnetic_summary(folder: Path, origin: dict[str, str]) -> bytes:
    """``mp_thermomagnetic_summary.csv`` from the upstream ``800_thermomagnetic_materials_data.csv``
    (renamed columns, units, per-site moment counts; see SOURCES.md §7)."""
    with open(folder / "800_thermomagnetic_materials_data.csv", newline="", encoding="utf-8") as handle:
        raw = list(csv.DictReader(handle))

    def r6(value: str | float) -> float:
        return round(float(value), 6)

    rows = []
    for x in raw:
        mags = [float(m) for m in x["magmom"].split(";") if m.strip()]
        counts = [float(n or 1) for n in re.findall(r"[A-Z][a-z]?(\d*\.?\d*)", x["compound"].replace(" ", ""))]
        nsites = len(mags)
        ehull = r6(x["e_above_hull"])
        rows.append({"material_id": x["ID"], "formula_pretty": x["pretty_formula"],
                     "formula_cell": x["compound"].replace(" ", ""), "nsites": nsites,
                     "atoms_in_formula_compound": int(sum(counts)) if all(c.is_integer() for c in counts) else sum(counts),
                     "lattice_system": x["lattice_system"], "spacegroup": x["spacegroup"],
                     "volume_cell_A3": r6(x["volume_cell"]), "moment_cell_muB": r6(x["moment_cell"]),
                     "moment_muB_per_atom": r6(float(x["moment_cell"]) / nsites) if nsites else "",
                     "n_sites_abs_magmom_ge_0p5": sum(abs(m) >= 0.5 for m in mags),
                     "sum_abs_site_magmom_muB": round(sum(abs(m) for m in mags), 1), "mag_type": x["mag_type"],
                     "e_above_hull_eV_per_atom": ehull, "is_on_hull": "true" if ehull <= 1e-6 else "false",
                     "energy_atom_eV": r6(x["energy_atom"]), "magnetization_norm_vol": r6(x["magnetization_norm_vol"])})
    rows.sort(key=lambda r: (r["material_id"].split("-")[0], int(r["material_id"].split("-")[1])))
    return indexes.csv_bytes(rows)


PIEZO_FIELDS = ["material_id", "formula_pretty", "formula_cell", "nsites", "nelements", "spacegroup_number",
          "point_group", "crystal_symmetry", "volume_A3", "density_g_cm3", "final_energy_eV",
          "energy_per_atom_eV", "formation_energy_per_atom_eV", "e_above_hull_eV_per_atom", "is_on_hull",
          "band_gap_eV", "total_magnetization_muB_per_cell", "total_magnetization_muB_per_fu",
          "piezo_modulus_C_m2"]


def piezo_summary(folder: Path, origin: dict[str, str]) -> bytes:
    """``mp_piezo_summary.csv``: one row per material of ``piezo_features.csv`` (renamed columns, values
    rounded to 6 decimals, atoms per cell summed from ``full_formula``, ``is_on_hull`` from ``e_above_hull``,
    "false" where it is missing), joined on ``mp_id`` with the crystal system and piezoelectric modulus of
    ``Piezoelectric_renewed.csv``; rows ordered by the number of the id (``mp-``/``mvc-`` ties keep the
    upstream order)."""
    with open(folder / "piezo_features.csv", newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        # the header repeats ``final_energy`` (identical columns); a DictReader keeps the last, same value
        raw = [dict(zip(header, row)) for row in reader]
    with open(folder / "Piezoelectric_renewed.csv", newline="", encoding="utf-8-sig") as handle:
        piezo = {r["mp_id"]: r for r in csv.DictReader(handle)}

    def r6(value: str) -> float | str:
        return round(float(value), 6) if value.strip() else ""

    rows = []
    for x in raw:
        mid = x["material_id"]
        if mid not in piezo:
            raise DataError(f"mp_piezo_features: {mid} has no row in Piezoelectric_renewed.csv")
        p = piezo[mid]
        counts = [int(n or 1) for n in re.findall(r"[A-Z][a-z]?(\d*)", x["full_formula"])]
        ehull = r6(x["e_above_hull"])
        rows.append({"material_id": mid, "formula_pretty": x["pretty_formula"],
                     "formula_cell": x["full_formula"], "nsites": sum(counts),
                     "nelements": x["nelements"], "spacegroup_number": x["spacegroup.number"],
                     "point_group": x["spacegroup.point_group"], "crystal_symmetry": p["Crystal_Symmetry"],
                     "volume_A3": r6(x["volume"]), "density_g_cm3": r6(x["density"]),
                     "final_energy_eV": r6(x["final_energy"]),
                     "energy_per_atom_eV": r6(x["final_energy_per_atom"]),
                     "formation_energy_per_atom_eV": r6(x["formation_energy_per_atom"]),
                     "e_above_hull_eV_per_atom": ehull,
                     "is_on_hull": "true" if ehull != "" and ehull <= 1e-6 else "false",
                     "band_gap_eV": r6(x["band_gap"]),
                     "total_magnetization_muB_per_cell": r6(x["magnetism.total_magnetization"]),
                     "total_magnetization_muB_per_fu": r6(x["total_magnetization"]),
                     "piezo_modulus_C_m2": r6(p["Piezoelectric_Modulus"])})
    rows.sort(key=lambda r: int(r["material_id"].split("-")[1]))  # stable: ties keep file order
    return indexes.csv_bytes(rows, fields=PIEZO_FIELDS)


#: (data set, file) -> builder(set folder, {downloaded path: origin URL}) -> the file's bytes
BUILDERS: dict[tuple[str, str], Callable[[Path, dict[str, str]], bytes]] = {
    ("raman_rruff", "index.csv"): raman_index,
    ("mp_thermomagnetic_fm", "mp_thermomagnetic_summary.csv"): thermomagnetic_summary,
    ("mp_piezo_features", "mp_piezo_summary.csv"): piezo_summary,
    ("cif_reference_phases", "amcsd_minerals/index.csv"): indexes.amcsd_index,
    ("cif_reference_phases", "dans_diffraction/index.csv"): indexes.dans_index,
    ("xrd_autoxrd_thinfilm", "index.csv"): indexes.autoxrd_index,
    ("xrd_autoanalyzer_limntiof", "spectra_index.csv"): indexes.autoanalyzer_spectra_index,
    ("xrd_autoanalyzer_limntiof", "reference_index.csv"): indexes.autoanalyzer_reference_index,
    ("sem_bam_tio2", "metadata.csv"): indexes.sem_metadata,
    ("xrd_dara_precursor_mixtures", "index.csv"): xrdml.index_csv,
    ("mp40_chemeleon", "mp40_union.csv"): mp40.union_csv,
    **devsets.OUTPUTS,
    **matterviz.OUTPUTS,
}
#: (data set, glob) -> builder(set folder, origin, file path): one conversion per file
CONVERTERS: dict[tuple[str, str], Callable[[Path, dict[str, str], str], bytes]] = {
    ("xrd_dara_precursor_mixtures", "patterns/*.xy"): xrdml.pattern_xy,
}


def builder(name: str, path: str) -> Callable[[Path, dict[str, str]], bytes] | None:
    """What rebuilds ``name/path`` locally, or None when the file is downloaded."""
    if (name, path) in BUILDERS:
        return BUILDERS[(name, path)]
    for (set_name, pattern), convert in CONVERTERS.items():
        if set_name == name and fnmatch(path, pattern):
            return partial(convert, path=path)
    return None


def write_verified(folder: Path, path: str, data: bytes, sha256: str | None) -> None:
    """Write ``folder/path`` through a temporary name, refusing content whose digest is not the manifest's."""
    got = hashlib.sha256(data).hexdigest()
    if sha256 and got != sha256:
        raise DataError(f"{folder.name}/{path}: the locally built file has sha256 {got}, expected {sha256} "
                        "(the downloaded inputs differ from the pinned origin); nothing was written")
    dest = folder / path
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    tmp.write_bytes(data)
    os.replace(tmp, dest)
