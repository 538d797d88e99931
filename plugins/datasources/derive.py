"""Files matpcr rebuilds locally after a pull, for data sets whose terms do not let matpcr mirror them.

Each builder reproduces the staged file byte for byte from the files downloaded from the origin; the
result is checked against the shipped manifest like a download.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
from pathlib import Path

from matpcr.errors import DataError


def raman_index(folder: Path) -> bytes:
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


def thermomagnetic_summary(folder: Path) -> bytes:
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
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


BUILDERS = {("raman_rruff", "index.csv"): raman_index,
            ("mp_thermomagnetic_fm", "mp_thermomagnetic_summary.csv"): thermomagnetic_summary}


def write_verified(folder: Path, path: str, data: bytes, sha256: str | None) -> None:
    """Write ``folder/path`` through a temporary name, refusing content whose digest is not the manifest's."""
    got = hashlib.sha256(data).hexdigest()
    if sha256 and got != sha256:
        raise DataError(f"{folder.name}/{path}: the locally built file has sha256 {got}, expected {sha256} "
                        "(the downloaded inputs differ from the pinned origin); nothing was written")
    dest = folder / path
    tmp = dest.with_name(dest.name + ".part")
    tmp.write_bytes(data)
    os.replace(tmp, dest)
