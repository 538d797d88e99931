"""``alexandria_ternary_hull`` and ``mp_chemsys_hull_entries`` rebuilt from ``janosh/matterviz``'s gzipped JSON files.

The staged files are conversions (SOURCES.md §10–11), not upstream bytes: matterviz ships its demo data as
``*.json.gz`` and the staging flattened them into a CSV (Alexandria, with the binaries shared by several ternary
systems merged) and into compact JSON lists plus a CSV (the two Materials Project quaternaries). This module redoes
those conversions on the files a pull downloads from the pinned commit into the set's ``upstream/`` folder, so both
sets come from their origin; the shipped manifest checks the result.

Upstream formats, as the code that wrote them documents them (janosh/matterviz):

* ``src/site/phase-diagrams/ternary/<A-B-C>.json.gz`` (``fetch-alexandria-ternaries.py`` next to them): a JSON list,
  one object per Alexandria PBE entry: ``entry_id``, ``composition`` ({element: sites}, in the order of the
  structure's ``species_at_sites``), ``energy`` (formation energy per cell), ``e_form_per_atom``, ``e_above_hull``,
  ``is_stable``, ``volume_per_atom`` and ``data`` {``source``, ``space_group``, ``band_gap``, ``magnetization``,
  ``total_energy_corrected``}.
* ``src/site/convex-hull/quaternaries/<A-B-C-D>.json.gz`` (``fetch-mp-pd-data.py``): a JSON list of pymatgen
  ``ComputedStructureEntry.as_dict()`` objects from ``MPRester.get_entries_in_chemsys``, each merged with
  ``e_above_hull``, ``is_stable`` and ``e_form_per_atom`` from a pymatgen ``PhaseDiagram`` of the whole system.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import reduce
from pathlib import Path
from typing import Any

from matpcr.errors import DataError
from matpcr_plugins.datasources.indexes import csv_bytes

REPOSITORY = "janosh/matterviz"
COMMIT = "e45d1bad399d4d518a19d4f2e91c812873ae9eed"
UPSTREAM_FOLDER = "upstream"

ALEXANDRIA_SET = "alexandria_ternary_hull"
ALEXANDRIA_DIR = "src/site/phase-diagrams/ternary"
ALEXANDRIA_SYSTEMS = ("Ba-Ti-O", "Ca-C-O", "Cu-Zn-O", "Fe-Cr-O", "Li-Co-O", "Li-Mn-O", "Li-Ni-O", "Li-P-S",
                      "Li-Ti-O", "Mg-Si-O", "Na-Fe-O", "Ti-N-O")
ALEXANDRIA_FIELDS = ["entry_id", "chemsys", "formula_reduced", "composition_cell", "nsites", "space_group_number",
                     "e_form_per_atom_eV", "e_above_hull_eV_per_atom", "is_stable", "band_gap_eV",
                     "magnetization_muB_per_cell", "volume_per_atom_A3", "energy_formation_per_cell_eV",
                     "total_energy_corrected_eV"]

MP_SET = "mp_chemsys_hull_entries"
MP_DIR = "src/site/convex-hull/quaternaries"
MP_SYSTEMS = ("Li-Co-Ni-O", "Na-Fe-P-O")
#: the structure-free columns of the entries, in order: the staged ``entries_summary.csv``
MP_SUMMARY_FIELDS = ["material_id", "entry_id", "task_id", "chemsys", "formula_reduced", "nsites", "run_type",
                     "is_hubbard", "energy_uncorrected_eV", "correction_eV", "energy_corrected_per_atom_eV",
                     "e_form_per_atom_eV", "e_above_hull_eV_per_atom", "is_stable", "mp_last_updated", "license"]


def local_path(system: str) -> str:
    """Where a system's downloaded ``.json.gz`` lies inside its set's folder."""
    return f"{UPSTREAM_FOLDER}/{system}.json.gz"


def _raw(path: str) -> str:
    return f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/{path}"


#: data set -> [(path in the set folder, upstream raw URL pinned to the commit)]: downloaded only to build from
INPUTS: dict[str, list[tuple[str, str]]] = {
    ALEXANDRIA_SET: [(local_path(s), _raw(f"{ALEXANDRIA_DIR}/{s}.json.gz")) for s in ALEXANDRIA_SYSTEMS],
    MP_SET: [(local_path(s), _raw(f"{MP_DIR}/{s}.json.gz")) for s in MP_SYSTEMS],
}


def inputs() -> dict[str, list[dict[str, str]]]:
    """``INPUTS`` in the form ``build.inputs()`` returns (``path``/``url`` dicts per set)."""
    return {name: [{"path": path, "url": url} for path, url in files] for name, files in INPUTS.items()}


# --- reading -----------------------------------------------------------------------------------------------------

def _read_json_gz(folder: Path, system: str) -> list[dict[str, Any]]:
    """The JSON list in ``folder/upstream/<system>.json.gz``; every way the download can be damaged (missing,
    truncated or not gzip, not JSON, not a list of objects) is a DataError that names the file."""
    path = folder / local_path(system)
    again = f"delete it and run `matpcr data pull {folder.name}` to download it anew"
    if not path.is_file():
        raise DataError(f"{path}: missing; run `matpcr data pull {folder.name}` to download matterviz's {system} file")
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError; truncation raises EOFError
        raise DataError(f"{path}: not a complete gzip file ({exc}); {again}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not valid JSON ({exc}); {again}") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise DataError(f"{path}: expected a JSON list of entry objects; {again}")
    if not data:
        raise DataError(f"{path}: holds no entries; {again}")
    return data


@contextmanager
def _entry_errors(folder: Path, system: str, index: int, entry: dict[str, Any]) -> Iterator[None]:
    """Turn a missing key or a wrongly typed value in one upstream entry into a DataError naming file and entry."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"missing key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        label = entry.get("entry_id", f"#{index}") if isinstance(entry, dict) else f"#{index}"
        raise DataError(f"{folder / local_path(system)}: entry {label}: {what}; not the matterviz format this "
                        f"build expects (delete the file and run `matpcr data pull {folder.name}` again)") from None


def _round6(value: Any) -> float:
    """Numbers in the staged CSVs are rounded to 6 decimals (``round``, so a tiny negative stays ``-0.0``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{value!r} is not a number")
    return round(float(value), 6)


def _number(value: Any) -> float:
    """A JSON number as a float (the staged JSON writes every measured number as a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{value!r} is not a number")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{value!r} is not true/false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def _reduced_formula(counts: dict[str, int]) -> str:
    """Counts divided by their gcd, elements in the given order, a count of 1 left out (``Ba2O4Ti``,
    ``Ba3Ti5O12``): how the staging wrote ``formula_reduced`` (no electronegativity sort, no ``O2``/``Li2O2``
    special cases, unlike pymatgen's ``reduced_formula``)."""
    divisor = reduce(math.gcd, counts.values())
    return "".join(el + ("" if n // divisor == 1 else str(n // divisor)) for el, n in counts.items())


def _csv(fields: list[str], rows: list[dict[str, Any]]) -> bytes:
    """The staged CSV dialect: ``csv`` defaults, ``\\n`` line ends, booleans as ``true``/``false``."""
    return csv_bytes([{k: ("true" if v else "false") if isinstance(v, bool) else v for k, v in row.items()}
                      for row in rows], fields=fields)


# --- alexandria_ternary_hull -------------------------------------------------------------------------------------

def _alexandria_row(entry: dict[str, Any]) -> dict[str, Any]:
    """One CSV row (without ``chemsys``) from a slim matterviz entry."""
    composition = entry["composition"]
    if not isinstance(composition, dict) or not composition:
        raise TypeError("composition is not an {element: count} object")
    counts: dict[str, int] = {}
    for element, amount in composition.items():
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount != int(amount) or amount <= 0:
            raise ValueError(f"composition count {element}: {amount!r} is not a positive whole number")
        counts[element] = int(amount)
    data = entry["data"]
    space_group = data["space_group"]
    if isinstance(space_group, bool) or not isinstance(space_group, int):
        raise TypeError(f"space_group {space_group!r} is not an integer")
    return {"entry_id": _text(entry["entry_id"]),
            "formula_reduced": _reduced_formula(counts),
            "composition_cell": " ".join(f"{el}{n}" for el, n in counts.items()),
            "nsites": sum(counts.values()),
            "space_group_number": space_group,
            "e_form_per_atom_eV": _round6(entry["e_form_per_atom"]),
            "e_above_hull_eV_per_atom": _round6(entry["e_above_hull"]),
            "is_stable": _flag(entry["is_stable"]),
            "band_gap_eV": _round6(data["band_gap"]),
            "magnetization_muB_per_cell": _round6(data["magnetization"]),
            "volume_per_atom_A3": _round6(entry["volume_per_atom"]),
            "energy_formation_per_cell_eV": _round6(entry["energy"]),
            "total_energy_corrected_eV": _round6(data["total_energy_corrected"])}


def alexandria_ternaries(folder: Path, origin: dict[str, str]) -> bytes:
    """``alexandria_ternaries.csv`` from the twelve ternary files: one row per entry id; a binary entry that
    several systems hold (Ti-O, Fe-O, Li-O) is one row whose ``chemsys`` joins those systems, sorted, with ``;``
    (its values must agree in every file, else DataError); rows ordered by the first system, then entry id."""
    merged: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for system in ALEXANDRIA_SYSTEMS:
        for index, entry in enumerate(_read_json_gz(folder, system)):
            with _entry_errors(folder, system, index, entry):
                row = _alexandria_row(entry)
            key = row["entry_id"]
            if key not in merged:
                merged[key] = ([system], row)
                continue
            systems, first = merged[key]
            if first != row:
                changed = sorted(k for k in row if row[k] != first[k])
                raise DataError(f"{folder / local_path(system)}: entry {key} differs from the same entry in "
                                f"{systems[0]} ({', '.join(changed)}); the downloaded files are not one snapshot "
                                f"(delete {folder / UPSTREAM_FOLDER} and run `matpcr data pull {folder.name}` again)")
            if system not in systems:
                systems.append(system)
    ordered = sorted(((sorted(systems), row) for systems, row in merged.values()),
                     key=lambda item: (item[0][0], item[1]["entry_id"]))  # first system, then entry id
    rows = [{"entry_id": row["entry_id"], "chemsys": ";".join(names),
             **{k: v for k, v in row.items() if k != "entry_id"}} for names, row in ordered]
    return _csv(ALEXANDRIA_FIELDS, rows)


# --- mp_chemsys_hull_entries -------------------------------------------------------------------------------------

def _last_updated(value: Any) -> str:
    """``data.last_updated`` as the staged text: a plain string (newer emmet writes ``str(datetime)``) or the
    MontyEncoder form of a datetime, ``{"@module": "datetime", "@class": "datetime", "string": str(datetime)}``."""
    if isinstance(value, dict) and value.get("@class") == "datetime":
        return _text(value["string"])
    return _text(value)


def _mp_entry(entry: dict[str, Any], system: str) -> dict[str, Any]:
    """One staged object from a ``ComputedStructureEntry.as_dict()`` with matterviz's three hull fields."""
    data, parameters, structure = entry["data"], entry["parameters"], entry["structure"]
    sites = structure["sites"]
    if not isinstance(sites, list) or not sites:
        raise ValueError("structure has no sites")
    species: list[str] = []
    for site in sites:
        occupants = site["species"]
        if len(occupants) != 1 or occupants[0].get("occu", 1) != 1:
            raise ValueError("a disordered site (the staged format has one element per site)")
        species.append(_text(occupants[0]["element"]))
    counts: dict[str, int] = {}
    for element in species:
        counts[element] = counts.get(element, 0) + 1
    nsites = len(species)
    energy, correction = _number(entry["energy"]), _number(entry["correction"])
    lattice = [[_number(x) for x in row] for row in structure["lattice"]["matrix"]]
    if len(lattice) != 3 or any(len(row) != 3 for row in lattice):
        raise ValueError("lattice matrix is not 3x3")
    coords = [[_number(x) for x in site["abc"]] for site in sites]
    if any(len(xyz) != 3 for xyz in coords):
        raise ValueError("a site's abc is not three numbers")
    oxidation = data["oxidation_states"]
    if not isinstance(oxidation, dict):
        raise TypeError("oxidation_states is not an object")
    run_type = data.get("run_type", parameters.get("run_type"))
    return {"material_id": _text(data["material_id"]), "entry_id": _text(entry["entry_id"]),
            "task_id": _text(data["task_id"]), "chemsys": system, "formula_reduced": _reduced_formula(counts),
            "nsites": nsites, "run_type": _text(run_type), "is_hubbard": _flag(parameters["is_hubbard"]),
            "energy_uncorrected_eV": energy, "correction_eV": correction,
            "energy_corrected_per_atom_eV": (energy + correction) / nsites,
            "e_form_per_atom_eV": _number(entry["e_form_per_atom"]),
            "e_above_hull_eV_per_atom": _number(entry["e_above_hull"]), "is_stable": _flag(entry["is_stable"]),
            "oxidation_states": {_text(el): _number(v) for el, v in oxidation.items()},
            "mp_last_updated": _last_updated(data["last_updated"]), "license": _text(data["license"]),
            "lattice_matrix_A": lattice, "species": species, "frac_coords": coords}


def _id_order(material_id: str) -> tuple[str, int, str]:
    """``mp-23`` < ``mp-102``: by prefix, then the number of the id."""
    prefix, _, number = material_id.partition("-")
    return (prefix, int(number), "") if number.isdigit() else (prefix, -1, number)


def mp_entries(folder: Path, system: str) -> list[dict[str, Any]]:
    """A quaternary's entries in the staged form, ordered by material id number (unique ids required)."""
    out = []
    for index, entry in enumerate(_read_json_gz(folder, system)):
        with _entry_errors(folder, system, index, entry):
            out.append(_mp_entry(entry, system))
    ids = [e["material_id"] for e in out]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise DataError(f"{folder / local_path(system)}: material ids occur twice ({', '.join(twice)}); the staging "
                        f"kept one entry per material (GGA/GGA+U mixed scheme); pull the pinned file again")
    out.sort(key=lambda e: _id_order(e["material_id"]))
    return out


def _entries_json(folder: Path, system: str) -> bytes:
    return json.dumps(mp_entries(folder, system), separators=(",", ":")).encode("utf-8")


def li_co_ni_o_entries(folder: Path, origin: dict[str, str]) -> bytes:
    """``Li-Co-Ni-O_entries.json``: the compact staged list of the Li-Co-Ni-O entries (structure included)."""
    return _entries_json(folder, "Li-Co-Ni-O")


def na_fe_p_o_entries(folder: Path, origin: dict[str, str]) -> bytes:
    """``Na-Fe-P-O_entries.json``: the compact staged list of the Na-Fe-P-O entries (structure included)."""
    return _entries_json(folder, "Na-Fe-P-O")


def entries_summary(folder: Path, origin: dict[str, str]) -> bytes:
    """``entries_summary.csv``: both systems' entries (Li-Co-Ni-O first) without oxidation states and structure,
    numbers rounded to 6 decimals; same order as the JSON files."""
    rows = [{k: _round6(e[k]) if isinstance(e[k], float) else e[k] for k in MP_SUMMARY_FIELDS}
            for system in MP_SYSTEMS for e in mp_entries(folder, system)]
    return _csv(MP_SUMMARY_FIELDS, rows)


#: (data set, staged file) -> builder(set folder, {downloaded path: origin URL}) -> the file's bytes
OUTPUTS: dict[tuple[str, str], Callable[[Path, dict[str, str]], bytes]] = {
    (ALEXANDRIA_SET, "alexandria_ternaries.csv"): alexandria_ternaries,
    (MP_SET, "Li-Co-Ni-O_entries.json"): li_co_ni_o_entries,
    (MP_SET, "Na-Fe-P-O_entries.json"): na_fe_p_o_entries,
    (MP_SET, "entries_summary.csv"): entries_summary,
}
