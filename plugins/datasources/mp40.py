"""``mp40_chemeleon/mp40_union.csv`` rebuilt from Chemeleon's four MP-40 CSVs (SOURCES.md §8).

The union cannot be fetched from one upstream file: Chemeleon's train/val files are large, and the test splits
changed between commits, so the staging took four test files at four commits and merged them by ``material_id``.
This module repeats that merge on the downloaded files, so the set comes from its origin and not from a mirror.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from matpcr.errors import DataError
from matpcr_plugins.datasources.indexes import csv_bytes

REPOSITORY = "hspark1212/chemeleon"
UPSTREAM_FOLDER = "upstream"
#: (subset label written in ``subsets``, commit, path in the repository), in the order the union prefers them
SUBSETS: list[tuple[str, str, str]] = [
    ("v0.2_test1000", "bab5a88231477f269d2a8433773b93d34fe663ed", "data/mp-40/test.csv"),
    ("time_split_test708", "df4c67449265f5dfad66b1300ba438b35b9fcb7c", "data/mp-40/test.csv"),
    ("random_split_test708", "243d0285c8a8b5de80042a5b5d9604949d021780", "data/mp-40/random_split/test.csv"),
    ("mineral_subset537", "b10bc2493c8f4ffde5ced8e0f64b1d5f5e4b8fc7", "data/mp-40/mineral/test.csv"),
]
FIELDS = ["material_id", "formula_reduced_alphabetical", "nsites", "e_above_hull_eV_per_atom", "is_on_hull",
          "band_gap_eV", "crystal_system", "space_group_symbol", "space_group_number", "volume_A3", "density_g_cm3",
          "structure_type_name", "created_at", "subsets", "e_above_hull_alt_other_subset",
          "band_gap_alt_other_subset", "cif"]
#: union column -> upstream column, for the columns copied as text (the first subset that has a value wins)
COPIED = {"formula_reduced_alphabetical": "composition", "crystal_system": "crystal_system",
          "space_group_symbol": "space_group_symbol", "space_group_number": "space_group_number",
          "structure_type_name": "mineral", "created_at": "created_at", "cif": "cif"}


def local_path(label: str) -> str:
    """Where the subset's downloaded CSV lies inside the set's folder."""
    return f"{UPSTREAM_FOLDER}/{label}.csv"


def inputs() -> list[dict[str, str]]:
    """The four upstream CSVs (for ``build.inputs``): downloaded only to build the union from."""
    return [{"path": local_path(label), "url": f"https://raw.githubusercontent.com/{REPOSITORY}/{commit}/{path}"}
            for label, commit, path in SUBSETS]


def count_sites(cif: str) -> int:
    """Atoms in a pymatgen P1 CIF: the rows of its ``_atom_site_`` loop (every site is fully occupied)."""
    lines = cif.splitlines()
    try:
        start = max(i for i, line in enumerate(lines) if line.strip().startswith("_atom_site_"))
    except ValueError:
        raise DataError("a CIF in the MP-40 files has no _atom_site_ loop") from None
    count = 0
    for line in lines[start + 1:]:
        text = line.strip()
        if not text or text.startswith(("_", "loop_", "data_", "#")):
            break
        count += 1
    return count


def _round6(text: str, where: str) -> float:
    try:
        return round(float(text), 6)
    except ValueError:
        raise DataError(f"{where}: {text!r} is not a number") from None


def _read(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise DataError(f"{path}: missing; run `matpcr data pull mp40_chemeleon` to download Chemeleon's MP-40 CSVs")
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # a CIF is one (multi-line) field
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    if not {"material_id", "cif", "energy_above_hull", "band_gap"} <= set(reader.fieldnames or ()):
        raise DataError(f"{path}: not an MP-40 CSV (no material_id/cif columns); delete it and pull again")
    return rows


def union_csv(folder: Path, origin: dict[str, str]) -> bytes:
    """The union by ``material_id`` of the four subsets, ordered by the id's number. The first subset (in
    ``SUBSETS`` order) that holds an entry gives its hull energy and gap; a later subset whose value differs
    after rounding to 6 decimals is named in the ``_alt_other_subset`` columns with its upstream text. Text
    columns a subset leaves empty (the v0.2 file has no creation date) are filled from a later subset."""
    merged: dict[str, dict[str, object]] = {}
    for label, _commit, _path in SUBSETS:
        path = folder / local_path(label)
        for n, row in enumerate(_read(path), start=2):
            mid = row["material_id"]
            where = f"{path.name} line {n} ({mid})"
            ehull, gap = _round6(row["energy_above_hull"], where), _round6(row["band_gap"], where)
            entry = merged.get(mid)
            if entry is None:
                entry = merged[mid] = {"material_id": mid, "e_above_hull_eV_per_atom": ehull, "band_gap_eV": gap,
                                       "is_on_hull": "true" if ehull <= 1e-6 else "false", "subsets": [label],
                                       "e_above_hull_alt_other_subset": "", "band_gap_alt_other_subset": "",
                                       "volume_A3": _round6(row["volume"], where),
                                       "density_g_cm3": _round6(row["density"], where),
                                       "nsites": count_sites(row["cif"])}
            else:
                entry["subsets"].append(label)  # type: ignore[union-attr]
                if ehull != entry["e_above_hull_eV_per_atom"] and not entry["e_above_hull_alt_other_subset"]:
                    entry["e_above_hull_alt_other_subset"] = f"{row['energy_above_hull']} ({label})"
                if gap != entry["band_gap_eV"] and not entry["band_gap_alt_other_subset"]:
                    entry["band_gap_alt_other_subset"] = f"{row['band_gap']} ({label})"
            for column, upstream in COPIED.items():
                value = (row.get(upstream) or "").strip() if column != "cif" else row["cif"]
                if column == "space_group_number" and value.endswith(".0"):
                    value = value[:-2]
                if value and not entry.get(column):
                    entry[column] = value
    rows = sorted(merged.values(), key=lambda e: int(str(e["material_id"]).split("-")[1]))
    return csv_bytes([{**entry, "subsets": ";".join(entry["subsets"])} for entry in rows],  # type: ignore[arg-type]
                     fields=FIELDS)
