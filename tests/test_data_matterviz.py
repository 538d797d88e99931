"""``alexandria_ternary_hull`` and ``mp_chemsys_hull_entries`` rebuilt from matterviz's ``*.json.gz`` files.

No real upstream bytes are here (they are gzip, and no copy was kept): the upstream files are written from the
staged files in the format the upstream scripts write (``fetch-alexandria-ternaries.py``: a compact JSON list of slim
entries sorted by arity then hull distance; ``fetch-mp-pd-data.py``: an indented JSON list of pymatgen
``ComputedStructureEntry.as_dict()`` plus three hull fields, in no particular order). Numbers the staged CSVs rounded
are written a few 1e-9 off, so the rounding is exercised. This checks the conversion (columns, rounding, merge,
ordering), not matterviz's own bytes.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import random
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA_DIR
from matpcr.errors import DataError
from matpcr_plugins.datasources import matterviz

ALEX = DATA_DIR / matterviz.ALEXANDRIA_SET
MP = DATA_DIR / matterviz.MP_SET
needs_alexandria = pytest.mark.skipif(not (ALEX / "alexandria_ternaries.csv").is_file(),
                                      reason=f"staged {ALEX} missing (set MATPCR_DATA_DIR)")
needs_mp = pytest.mark.skipif(not (MP / "entries_summary.csv").is_file(),
                              reason=f"staged {MP} missing (set MATPCR_DATA_DIR)")


def _off(value: float) -> float:
    """A value that rounds back to ``value`` at 6 decimals, but is not it (away from zero keeps ``-0.0``)."""
    return value + math.copysign(3e-9, value)


def _write_gz(path: Path, payload: Any, **dump: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(payload, handle, **dump)


def write_alexandria_upstream(folder: Path) -> None:
    """The twelve ``<A-B-C>.json.gz`` files as ``fetch-alexandria-ternaries.py`` writes them, from the staged CSV
    (each merged binary row goes into every system its ``chemsys`` names)."""
    with open(ALEX / "alexandria_ternaries.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    per_system: dict[str, list[dict[str, Any]]] = {s: [] for s in matterviz.ALEXANDRIA_SYSTEMS}
    for r in rows:
        composition = {el: int(n) for el, n in re.findall(r"([A-Z][a-z]?)(\d+)", r["composition_cell"])}
        entry = {"entry_id": r["entry_id"], "composition": composition,
                 "energy": _off(float(r["energy_formation_per_cell_eV"])),
                 "e_form_per_atom": _off(float(r["e_form_per_atom_eV"])),
                 "e_above_hull": _off(float(r["e_above_hull_eV_per_atom"])),
                 "is_stable": r["is_stable"] == "true",
                 "volume_per_atom": _off(float(r["volume_per_atom_A3"])),
                 "data": {"source": "Alexandria PBE", "space_group": int(r["space_group_number"]),
                          "band_gap": _off(float(r["band_gap_eV"])),
                          "magnetization": _off(float(r["magnetization_muB_per_cell"])),
                          "total_energy_corrected": _off(float(r["total_energy_corrected_eV"]))}}
        for system in r["chemsys"].split(";"):
            per_system[system].append(entry)
    for system, entries in per_system.items():
        entries.sort(key=lambda e: (len(e["composition"]), e["e_above_hull"]))
        _write_gz(folder / matterviz.local_path(system), entries, separators=(",", ":"))


def write_mp_upstream(folder: Path) -> None:
    """The two quaternary ``.json.gz`` files as ``fetch-mp-pd-data.py`` writes them: pymatgen's own
    ``ComputedStructureEntry.as_dict()`` (MP-style ``data``/``parameters``) plus the hull fields, shuffled, indent=2.
    Li-Co-Ni-O carries ``last_updated`` as a datetime (MontyEncoder form), Na-Fe-P-O as a string (newer emmet)."""
    from pymatgen.core import Lattice, Structure
    from pymatgen.entries.computed_entries import ComputedStructureEntry

    for system in matterviz.MP_SYSTEMS:
        staged = json.loads((MP / f"{system}_entries.json").read_text(encoding="utf-8"))
        out = []
        for e in staged:
            structure = Structure(Lattice(e["lattice_matrix_A"]), e["species"], e["frac_coords"])
            updated: Any = (datetime.fromisoformat(e["mp_last_updated"]) if system == "Li-Co-Ni-O"
                            else e["mp_last_updated"])
            entry = ComputedStructureEntry(
                structure, e["energy_uncorrected_eV"], correction=e["correction_eV"], entry_id=e["entry_id"],
                parameters={"potcar_spec": [], "run_type": e["run_type"], "is_hubbard": e["is_hubbard"],
                            "hubbards": {}},
                data={"oxide_type": "oxide", "aspherical": True, "last_updated": updated, "task_id": e["task_id"],
                      "material_id": e["material_id"], "oxidation_states": e["oxidation_states"],
                      "license": e["license"], "run_type": e["run_type"]})
            out.append(entry.as_dict() | {"e_above_hull": e["e_above_hull_eV_per_atom"], "is_stable": e["is_stable"],
                                          "e_form_per_atom": e["e_form_per_atom_eV"]})
        random.Random(system).shuffle(out)
        _write_gz(folder / matterviz.local_path(system), out, indent=2)


@pytest.fixture(scope="module")
def alexandria_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("alex") / matterviz.ALEXANDRIA_SET
    write_alexandria_upstream(folder)
    return folder


@pytest.fixture(scope="module")
def mp_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mp") / matterviz.MP_SET
    write_mp_upstream(folder)
    return folder


@needs_alexandria
def test_alexandria_csv_is_the_staged_file(alexandria_folder: Path) -> None:
    built = matterviz.OUTPUTS[(matterviz.ALEXANDRIA_SET, "alexandria_ternaries.csv")](alexandria_folder, {})
    assert built == (ALEX / "alexandria_ternaries.csv").read_bytes()


@needs_mp
@pytest.mark.parametrize("name", ["Li-Co-Ni-O_entries.json", "Na-Fe-P-O_entries.json", "entries_summary.csv"])
def test_mp_files_are_the_staged_files(mp_folder: Path, name: str) -> None:
    built = matterviz.OUTPUTS[(matterviz.MP_SET, name)](mp_folder, {})
    assert built == (MP / name).read_bytes()


def test_inputs_are_pinned_raw_urls_under_upstream() -> None:
    assert set(matterviz.INPUTS) == {matterviz.ALEXANDRIA_SET, matterviz.MP_SET}
    assert len(matterviz.INPUTS[matterviz.ALEXANDRIA_SET]) == 12 and len(matterviz.INPUTS[matterviz.MP_SET]) == 2
    for files in matterviz.INPUTS.values():
        for path, url in files:
            assert path.startswith("upstream/") and path.endswith(".json.gz")
            assert url.startswith(f"https://raw.githubusercontent.com/janosh/matterviz/{matterviz.COMMIT}/src/site/")
            assert url.rsplit("/", 1)[1] == path.rsplit("/", 1)[1]
    assert {set_name for set_name, _ in matterviz.OUTPUTS} == set(matterviz.INPUTS)


def test_truncated_gzip_is_a_data_error_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / matterviz.MP_SET
    path = folder / matterviz.local_path("Li-Co-Ni-O")
    _write_gz(path, [{"entry_id": "mp-1-GGA"}] * 200, indent=2)
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(DataError, match=r"Li-Co-Ni-O\.json\.gz: not a complete gzip file.*matpcr data pull"):
        matterviz.li_co_ni_o_entries(folder, {})


def test_missing_file_or_key_is_a_data_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / matterviz.ALEXANDRIA_SET
    with pytest.raises(DataError, match=r"Ba-Ti-O\.json\.gz: missing; run `matpcr data pull alexandria_ternary_hull`"):
        matterviz.alexandria_ternaries(folder, {})
    entry = {"entry_id": "agm1", "composition": {"Ba": 1, "O": 1}, "energy": -5.0, "e_form_per_atom": -2.5,
             "e_above_hull": 0.0, "is_stable": True, "volume_per_atom": 20.0,
             "data": {"space_group": 225, "band_gap": 2.0, "magnetization": 0.0}}
    for system in matterviz.ALEXANDRIA_SYSTEMS:
        _write_gz(folder / matterviz.local_path(system), [entry])
    with pytest.raises(DataError, match=r"Ba-Ti-O\.json\.gz: entry agm1: missing key 'total_energy_corrected'"):
        matterviz.alexandria_ternaries(folder, {})


def test_shared_binary_that_disagrees_between_files_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / matterviz.ALEXANDRIA_SET
    entry = {"entry_id": "agm1", "composition": {"Ti": 1, "O": 2}, "energy": -9.0, "e_form_per_atom": -3.0,
             "e_above_hull": 0.0, "is_stable": True, "volume_per_atom": 10.0,
             "data": {"space_group": 136, "band_gap": 2.0, "magnetization": 0.0, "total_energy_corrected": -26.0}}
    for system in matterviz.ALEXANDRIA_SYSTEMS:
        changed = entry | {"e_above_hull": 0.01, "is_stable": False} if system == "Ti-N-O" else entry
        _write_gz(folder / matterviz.local_path(system), [changed])
    with pytest.raises(DataError, match=r"Ti-N-O\.json\.gz: entry agm1 differs .*e_above_hull_eV_per_atom"):
        matterviz.alexandria_ternaries(folder, {})
    _write_gz(folder / matterviz.local_path("Ti-N-O"), [entry])
    text = matterviz.alexandria_ternaries(folder, {}).decode()
    assert text.splitlines()[1].startswith("agm1," + ";".join(sorted(matterviz.ALEXANDRIA_SYSTEMS)) + ",TiO2,Ti1 O2,3,")
