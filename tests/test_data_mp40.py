"""The MP-40 union (``mp40_chemeleon/mp40_union.csv``) rebuilt from Chemeleon's four upstream CSVs.

Real bytes: the first four rows of the upstream ``data/mp-40/mineral/test.csv`` (commit b10bc249, read from a stored
public copy) are in ``tests/data/upstream/``; they convert to the staged rows byte for byte. The other upstream
files are not here: :func:`chemeleon_like` writes them from the staged union (upstream columns, upstream value text
where the union kept it), which checks the merge, ordering and the ``_alt_`` columns, not Chemeleon's own bytes.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from matpcr.errors import DataError
from matpcr_plugins.datasources import mp40

UPSTREAM = Path(__file__).parent / "data" / "upstream"
REAL_HEAD = UPSTREAM / "chemeleon_mp40_mineral_test_head.csv"
UPSTREAM_COLUMNS = ["material_id", "energy_above_hull", "band_gap", "cif", "composition", "volume", "density",
                    "atomic_density", "crystal_system", "space_group_symbol", "space_group_number", "created_at",
                    "created_at_datetime", "prompt", "mineral"]


def _staged(data_dir: Path) -> list[dict[str, str]]:
    with open(data_dir / "mp40_chemeleon" / "mp40_union.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def chemeleon_like(data_dir: Path, label: str) -> bytes:
    """One upstream MP-40 CSV written from the staged union: the entries that name ``label`` in ``subsets``,
    with the other subset's value text where the union recorded a disagreement (the v0.2 file has no dates)."""
    columns = [c for c in UPSTREAM_COLUMNS if not (label == "v0.2_test1000" and c.startswith("created_at"))]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in _staged(data_dir):
        if label not in row["subsets"].split(";"):
            continue

        def value(column: str, staged: str) -> str:
            alt = row[f"{column}_alt_other_subset"]
            return alt.rsplit(" (", 1)[0] if alt.endswith(f"({label})") else row[staged]

        record = {"material_id": row["material_id"], "energy_above_hull": value("e_above_hull", "e_above_hull_eV_per_atom"),
                  "band_gap": value("band_gap", "band_gap_eV"), "cif": row["cif"],
                  "composition": row["formula_reduced_alphabetical"], "volume": row["volume_A3"],
                  "density": row["density_g_cm3"], "atomic_density": row["density_g_cm3"],
                  "crystal_system": row["crystal_system"], "space_group_symbol": row["space_group_symbol"],
                  "space_group_number": row["space_group_number"], "created_at": row["created_at"],
                  "created_at_datetime": row["created_at"][:19], "prompt": "a GPT-written caption, dropped",
                  "mineral": row["structure_type_name"]}
        writer.writerow({c: record[c] for c in columns})
    return out.getvalue().encode("utf-8")


def _write(folder: Path, files: dict[str, bytes]) -> None:
    for label, content in files.items():
        path = folder / mp40.local_path(label)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def test_real_upstream_rows_convert_to_the_staged_rows(data_dir: Path, tmp_path: Path) -> None:
    header = REAL_HEAD.read_bytes().split(b"\n", 1)[0] + b"\n"
    files = {label: header for label, _, _ in mp40.SUBSETS}
    files["mineral_subset537"] = REAL_HEAD.read_bytes()
    _write(tmp_path, files)
    built = {r["material_id"]: r for r in csv.DictReader(io.StringIO(mp40.union_csv(tmp_path, {}).decode()))}
    staged = {r["material_id"]: r for r in _staged(data_dir)}
    assert list(built) == ["mp-5407", "mp-7591", "mp-578610", "mp-1078613"]  # ordered by the id's number
    for mid, row in built.items():
        expected = staged[mid]
        if expected["subsets"] == "mineral_subset537":  # held by this file only: the whole row
            assert row == expected, mid
        else:  # mp-1078613 is also in the random split, which comes first in the union
            assert {k: v for k, v in row.items() if k != "subsets"} == {k: v for k, v in expected.items()
                                                                        if k != "subsets"}
    # the staged line itself, bytes and quoting included
    line = next(l for l in (data_dir / "mp40_chemeleon" / "mp40_union.csv").read_text(encoding="utf-8")
                .split("\nmp-") if l.startswith("7591,"))
    assert ("\nmp-" + line + "\n") in "\n" + mp40.union_csv(tmp_path, {}).decode()


def test_union_of_the_four_files_is_the_staged_file(data_dir: Path, tmp_path: Path) -> None:
    _write(tmp_path, {label: chemeleon_like(data_dir, label) for label, _, _ in mp40.SUBSETS})
    assert mp40.union_csv(tmp_path, {}) == (data_dir / "mp40_chemeleon" / "mp40_union.csv").read_bytes()


def test_site_count_reads_the_atom_loop() -> None:
    cif = REAL_HEAD.read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(cif)))
    assert [mp40.count_sites(r["cif"]) for r in rows] == [4, 2, 8, 4]
    with pytest.raises(DataError, match="no _atom_site_ loop"):
        mp40.count_sites("data_x\n_cell_length_a 1\n")


def test_missing_or_wrong_upstream_file_is_named(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"v0.2_test1000.csv: missing; run `matpcr data pull mp40_chemeleon`"):
        mp40.union_csv(tmp_path, {})
    _write(tmp_path, {label: b"id,formula\nmp-1,Si\n" for label, _, _ in mp40.SUBSETS})
    with pytest.raises(DataError, match="not an MP-40 CSV"):
        mp40.union_csv(tmp_path, {})
    files = {label: REAL_HEAD.read_bytes() for label, _, _ in mp40.SUBSETS}
    files["v0.2_test1000"] = REAL_HEAD.read_bytes().replace(b"mp-7591,0.1054438066666687", b"mp-7591,n/a")
    _write(tmp_path, files)
    with pytest.raises(DataError, match=r"v0.2_test1000.csv line \d+ \(mp-7591\): 'n/a' is not a number"):
        mp40.union_csv(tmp_path, {})
