"""``mp_multifidelity_gaps`` and the Alexandria/OQMD files of ``computed_materials_devsets``, rebuilt from their
upstream files (SOURCES.md §9, §2a, §2b).

The staged files are conversions, not upstream bytes: two CSVs from megnet's gzipped JSON of band gaps, and a JSON
and a CSV from each of two matsciml devset LMDB files (pickled dicts). This module repeats those conversions on the
downloaded files, so a pull fetches the sets from their origins; the manifest digest checks what comes out.

Upstream formats, as the upstream code writes and reads them:

* megnet ``multifidelity/data_no_structs.json.gz``: one gzipped JSON object
  ``{"pbe"|"hse"|"gllb-sc"|"scan": {mp_id: gap}, "ordered_exp"|"disordered_exp": {icsd_id: gap}}``
  (``multifidelity/README.md`` and ``train.py``).
* matsciml devsets: one LMDB environment per file, opened with ``subdir=False`` (a single ``*.lmdb`` file beside its
  ``*.lmdb-lock``); keys are the ASCII decimal index of the entry (a ``metadata`` key may sit beside them), values
  ``pickle.dumps(entry, protocol=-1)`` (``matsciml/datasets/utils.py``: ``write_lmdb_data``, ``connect_db_read``).
  Alexandria entries are ``{structure, force, entry_id, natoms, magmoms, targets: {regression, classification}}``
  with ``force``/``magmoms`` numpy arrays and single-atom entries skipped (``alexandria/api.py``); OQMD entries are
  OQMD REST records plus ``atomic_numbers``, ``cart_coords`` (fractional in fact) and ``cell``
  (``oqmd/oqmd_api.py``, ``oqmd/dataset.py``).
"""

from __future__ import annotations

import gzip
import io
import json
import math
import pickle
import struct
import zlib
from collections import Counter
from functools import reduce
from pathlib import Path
from typing import Any, Callable

import numpy as np

from matpcr.errors import DataError
from matpcr_plugins.datasources.indexes import csv_bytes

RAW = "https://raw.githubusercontent.com"
MEGNET = ("materialsvirtuallab/megnet", "6b7ad60acae97daa005ddaaf425c8d9089694c55")
MATSCIML = "IntelLabs/matsciml"
ALEXANDRIA_COMMIT = "312941d0d2f79256de4ad0c8f568645089ab2ef6"
OQMD_COMMIT = "b29b53e6d670b5be473b101324eb87ba3381e047"

GAPS_SET = "mp_multifidelity_gaps"
DEVSETS_SET = "computed_materials_devsets"
#: where the pull puts the downloaded upstream files, inside each set's folder
MEGNET_JSON = "upstream/data_no_structs.json.gz"
ALEXANDRIA_LMDB = "upstream/alexandria/data_000.lmdb"
OQMD_LMDB = "upstream/oqmd/data.lmdb"

#: set -> [(path in the set folder, upstream raw URL pinned to a commit)]: downloaded only to build from
INPUTS: dict[str, list[tuple[str, str]]] = {
    GAPS_SET: [(MEGNET_JSON, f"{RAW}/{MEGNET[0]}/{MEGNET[1]}/multifidelity/data_no_structs.json.gz")],
    DEVSETS_SET: [
        (ALEXANDRIA_LMDB, f"{RAW}/{MATSCIML}/{ALEXANDRIA_COMMIT}/matsciml/datasets/alexandria/devset/data_000.lmdb"),
        (OQMD_LMDB, f"{RAW}/{MATSCIML}/{OQMD_COMMIT}/matsciml/datasets/oqmd/devset/data.lmdb"),
    ],
}

# --- megnet multi-fidelity band gaps --------------------------------------------------------------------------

#: staged column -> fidelity key of the upstream JSON
COMPUTED_COLUMNS = {"pbe_gap_eV": "pbe", "hse_gap_eV": "hse", "gllbsc_gap_eV": "gllb-sc", "scan_gap_eV": "scan"}
#: upstream key -> staged ``ordered`` value, in the order the staged file lists the groups
EXPERIMENTAL_GROUPS = {"ordered_exp": "true", "disordered_exp": "false"}


def _pull_again(set_name: str) -> str:
    return f"delete it and run `matpcr data pull {set_name}` again"


def _megnet(folder: Path) -> dict[str, dict[str, Any]]:
    """The decoded megnet JSON, checked to hold the six fidelity tables (each id -> number), so that a bad
    download fails here with its path rather than later as a wrong digest."""
    path = folder / MEGNET_JSON
    try:
        with gzip.open(path, "rb") as handle:
            data = json.loads(handle.read())
    except FileNotFoundError:
        raise DataError(f"{path}: missing; run `matpcr data pull {GAPS_SET}` to download megnet's "
                        "data_no_structs.json.gz") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: not a complete gzipped JSON file ({exc}); {_pull_again(GAPS_SET)}") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object of fidelities; {_pull_again(GAPS_SET)}")
    for key in [*COMPUTED_COLUMNS.values(), *EXPERIMENTAL_GROUPS]:
        table = data.get(key)
        if not isinstance(table, dict):
            raise DataError(f"{path}: no {key!r} table of band gaps; {_pull_again(GAPS_SET)}")
        for ident, gap in table.items():
            if gap is not None and (isinstance(gap, bool) or not isinstance(gap, (int, float))):
                raise DataError(f"{path}: {key} gap of {ident} is {gap!r}, not a number; {_pull_again(GAPS_SET)}")
    return data


def _id_number(ident: str, path: Path) -> tuple[str, int]:
    """``mp-1234`` -> ("mp", 1234): the staged files order ids by prefix, then by number."""
    prefix, _, number = ident.rpartition("-")
    if not prefix or not number.isdigit():
        raise DataError(f"{path}: unexpected id {ident!r}; {_pull_again(GAPS_SET)}")
    return prefix, int(number)


def _gap_text(value: int | float | None) -> str:
    """The JSON number as Python prints it (``0`` stays ``0``, ``0.0`` stays ``0.0``: values are unchanged)."""
    return "" if value is None else str(value)


def _csv(fields: list[str], rows: list[dict[str, Any]], lineterminator: str) -> bytes:
    return csv_bytes(rows, lineterminator, fields)


def computed_gaps_csv(folder: Path, origin: dict[str, str]) -> bytes:
    """``computed_gaps_by_mpid.csv``: one row per MP id of any of the four computed fidelities, its gap at each
    (empty where not computed), ids ordered by prefix then number (``mp-`` before ``mvc-``)."""
    data = _megnet(folder)
    path = folder / MEGNET_JSON
    ids = set().union(*(data[key] for key in COMPUTED_COLUMNS.values()))
    rows = []
    for ident in sorted(ids, key=lambda i: _id_number(i, path)):
        rows.append({"material_id": ident,
                     **{column: _gap_text(data[key].get(ident)) for column, key in COMPUTED_COLUMNS.items()}})
    return _csv(["material_id", *COMPUTED_COLUMNS], rows, "\n")


def _icsd_id(key: str, path: Path) -> str:
    """The staged ``icsd-N`` form of an experimental key: kept when the JSON already writes it so, prefixed when
    the JSON gives the bare collection code."""
    ident = key if key.startswith("icsd-") else f"icsd-{key}"
    _id_number(ident, path)
    return ident


def experimental_gaps_csv(folder: Path, origin: dict[str, str]) -> bytes:
    """``experimental_gaps_by_icsd.csv``: the ordered compounds, then the disordered ones, each by ICSD number."""
    data = _megnet(folder)
    path = folder / MEGNET_JSON
    rows = []
    for key, ordered in EXPERIMENTAL_GROUPS.items():
        group = [(_icsd_id(k, path), gap) for k, gap in data[key].items()]
        for ident, gap in sorted(group, key=lambda item: _id_number(item[0], path)[1]):
            rows.append({"icsd_id": ident, "exp_gap_eV": _gap_text(gap), "ordered": ordered})
    return _csv(["icsd_id", "exp_gap_eV", "ordered"], rows, "\n")


# --- matsciml devset LMDB files ---------------------------------------------------------------------------------

LMDB_MAGIC = 0xBEEFC0DE


def _frombuffer(buffer: Any, dtype: np.dtype, shape: tuple[int, ...], order: str) -> np.ndarray:
    """What numpy's pickles (protocol 5) call to rebuild an array from its raw bytes."""
    return np.frombuffer(buffer, dtype=dtype).reshape(shape, order=order)


def _numpy_reconstruct() -> Callable[..., Any]:
    try:
        from numpy._core.multiarray import _reconstruct  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core.multiarray import _reconstruct
    return _reconstruct


#: the only globals a devset pickle may name: numpy arrays and their dtypes, under numpy 1.x and 2.x module names
_PICKLE_GLOBALS: dict[tuple[str, str], Callable[[], Any]] = {
    ("numpy", "dtype"): lambda: np.dtype,
    ("numpy", "ndarray"): lambda: np.ndarray,
    ("numpy.core.numeric", "_frombuffer"): lambda: _frombuffer,
    ("numpy._core.numeric", "_frombuffer"): lambda: _frombuffer,
    ("numpy.core.multiarray", "_reconstruct"): _numpy_reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _numpy_reconstruct,
}


class _DevsetUnpickler(pickle.Unpickler):
    """Unpickler for the LMDB values, which come from the network: it builds numpy arrays and refuses to import
    anything else (an arbitrary global in a pickle can run arbitrary code)."""

    def find_class(self, module: str, name: str) -> Any:
        found = _PICKLE_GLOBALS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        return found()


def _plain(value: Any) -> Any:
    """JSON-ready copy: arrays and tuples become lists (numpy floats become Python floats, ``-0.0`` kept)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _check_lmdb_file(path: Path, set_name: str) -> None:
    """Refuse a file that is not a whole LMDB data file before mapping it: LMDB reads pages through a memory map,
    and a truncated file makes the process die on SIGBUS instead of raising. The newer of the two meta pages
    (page 0 and 1) names the last page in use; the file must reach past it."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(16 + 136)
            magic, version = struct.unpack_from("<II", head, 16)
            psize = struct.unpack_from("<I", head, 16 + 24)[0]
            if head.startswith(b"version https://git-lfs"):
                raise DataError(f"{path}: a Git LFS pointer, not the LMDB file (the origin serves LFS objects "
                                "elsewhere); report it, or set $MATPCR_DATA_BASE_URL to a copy of the files")
            if magic != LMDB_MAGIC or version != 1 or psize < 512 or psize & (psize - 1):
                raise DataError(f"{path}: not an LMDB data file; {_pull_again(set_name)}")
            handle.seek(psize)
            second = handle.read(16 + 136)
    except FileNotFoundError:
        raise DataError(f"{path}: missing; run `matpcr data pull {set_name}` to download the matsciml devset") from None
    except (OSError, struct.error) as exc:
        raise DataError(f"{path}: cannot read it as an LMDB file ({exc}); {_pull_again(set_name)}") from None
    metas = []
    for page in (head, second):
        if len(page) == 16 + 136 and struct.unpack_from("<I", page, 16)[0] == LMDB_MAGIC:
            last_page, txnid = struct.unpack_from("<QQ", page, 16 + 120)
            metas.append((txnid, last_page))
    if not metas:
        raise DataError(f"{path}: the LMDB meta pages are missing; {_pull_again(set_name)}")
    needed = (max(metas)[1] + 1) * psize
    if size < needed:
        raise DataError(f"{path}: truncated LMDB file ({size} of at least {needed} bytes); {_pull_again(set_name)}")


def read_lmdb(path: Path, set_name: str) -> list[tuple[str, dict[str, Any]]]:
    """(key, entry) for every data entry of a matsciml LMDB file, in numeric key order (the order matsciml
    reads them); non-numeric keys such as ``metadata`` are skipped, as matsciml skips them."""
    _check_lmdb_file(path, set_name)
    try:
        import lmdb
    except ImportError:
        raise DataError(f"{path}: reading the matsciml devsets needs the `lmdb` package (pip install lmdb)") from None
    try:
        env = lmdb.open(str(path), subdir=False, readonly=True, lock=False, readahead=False, meminit=False)
    except lmdb.Error as exc:
        raise DataError(f"{path}: not a readable LMDB file ({exc}); {_pull_again(set_name)}") from None
    try:
        with env.begin() as txn:
            raw = [(key.decode("ascii", "replace"), bytes(value)) for key, value in txn.cursor()]
    except lmdb.Error as exc:
        raise DataError(f"{path}: not a readable LMDB file ({exc}); {_pull_again(set_name)}") from None
    finally:
        env.close()
    entries = []
    for key, value in sorted(((k, v) for k, v in raw if k.isdigit()), key=lambda item: int(item[0])):
        try:
            entry = _DevsetUnpickler(io.BytesIO(value)).load()
        except Exception as exc:  # noqa: BLE001 - any failure to decode the value is a bad download
            raise DataError(f"{path}: entry {key} is not a readable devset pickle ({exc}); "
                            f"{_pull_again(set_name)}") from None
        if not isinstance(entry, dict):
            raise DataError(f"{path}: entry {key} is a {type(entry).__name__}, not a dict; {_pull_again(set_name)}")
        entries.append((key, entry))
    if not entries:
        raise DataError(f"{path}: the LMDB file holds no entries; {_pull_again(set_name)}")
    return entries


def _field(entry: dict[str, Any], name: str, path: Path, key: str) -> Any:
    if name not in entry:
        raise DataError(f"{path}: entry {key} has no {name!r}; {_pull_again(DEVSETS_SET)}")
    return entry[name]


def _json_bytes(records: list[dict[str, Any]]) -> bytes:
    """The staged JSON layout: a list, one-space indent, no final newline."""
    return json.dumps(records, indent=1).encode("utf-8")


def _lattice(matrix: Any, path: Path, key: str) -> dict[str, float]:
    """a, b, c (Å, 5 decimals), α, β, γ (°, 4 decimals) and volume (Å³, 5 decimals) of a lattice, as the staging
    computed them: pymatgen's ``Lattice`` and numpy's rounding (half to even on the scaled value)."""
    from pymatgen.core import Lattice

    try:
        lattice = Lattice(matrix)
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{path}: entry {key} has no usable lattice ({exc}); {_pull_again(DEVSETS_SET)}") from None
    a, b, c = (float(np.round(x, 5)) for x in lattice.abc)
    alpha, beta, gamma = (float(np.round(x, 4)) for x in lattice.angles)
    return {"a_A": a, "b_A": b, "c_A": c, "alpha_deg": alpha, "beta_deg": beta, "gamma_deg": gamma,
            "volume_A3": float(np.round(lattice.volume, 5))}


def _reduced_formula(structure: dict[str, Any], path: Path, key: str) -> str:
    """Elements in alphabetical order with their site counts divided by the common divisor, a count of 1 left out
    (``Ac10Bi3Pb3``). This is not pymatgen's ``reduced_formula``, which orders by electronegativity."""
    counts: Counter[str] = Counter()
    try:
        for site in structure["sites"]:
            for species in site["species"]:
                counts[species["element"]] += species["occu"]
    except (KeyError, TypeError):
        raise DataError(f"{path}: entry {key} has no readable sites; {_pull_again(DEVSETS_SET)}") from None
    if not counts or any(float(n) != int(n) for n in counts.values()):
        raise DataError(f"{path}: entry {key} has no sites or a partial occupancy; {_pull_again(DEVSETS_SET)}")
    whole = {element: int(n) for element, n in counts.items()}
    divisor = reduce(math.gcd, whole.values())
    return "".join(element + ("" if n // divisor == 1 else str(n // divisor)) for element, n in sorted(whole.items()))


ALEXANDRIA_TARGETS = ["energy_total", "total_mag", "dos_ef", "band_gap_ind", "e_form", "e_above_hull"]
ALEXANDRIA_CSV_FIELDS = ["entry_id", "reduced_formula", "natoms", "e_above_hull_eV_per_atom", "e_form_eV_per_atom",
                         "band_gap_ind_eV", "total_mag_muB_per_cell", "energy_total_eV", "dos_ef", "a_A", "b_A", "c_A",
                         "alpha_deg", "beta_deg", "gamma_deg", "volume_A3"]


def _alexandria(folder: Path) -> list[dict[str, Any]]:
    """The staged JSON records: key, id, atom count, formula, the regression targets, per-site magnetic moments
    and forces, and the pymatgen structure dict as stored."""
    path = folder / ALEXANDRIA_LMDB
    records = []
    for key, entry in read_lmdb(path, DEVSETS_SET):
        targets = _field(entry, "targets", path, key)
        regression = targets.get("regression") if isinstance(targets, dict) else None
        if not isinstance(regression, dict) or any(t not in regression for t in ALEXANDRIA_TARGETS):
            raise DataError(f"{path}: entry {key} lacks the regression targets {ALEXANDRIA_TARGETS}; "
                            f"{_pull_again(DEVSETS_SET)}")
        structure = _field(entry, "structure", path, key)
        records.append({"lmdb_key": key, "entry_id": _field(entry, "entry_id", path, key),
                        "natoms": _field(entry, "natoms", path, key),
                        "reduced_formula": _reduced_formula(structure, path, key),
                        "targets": _plain(regression), "magmoms": _plain(_field(entry, "magmoms", path, key)),
                        "forces": _plain(_field(entry, "force", path, key)), "structure": _plain(structure)})
    return records


def alexandria_json(folder: Path, origin: dict[str, str]) -> bytes:
    """``alexandria_pbe_devset.json`` from matsciml's Alexandria devset LMDB."""
    return _json_bytes(_alexandria(folder))


def alexandria_csv(folder: Path, origin: dict[str, str]) -> bytes:
    """``alexandria_pbe_devset.csv``: one row per entry, the targets as stored and the rounded lattice."""
    path = folder / ALEXANDRIA_LMDB
    rows = []
    for record in _alexandria(folder):
        t = record["targets"]
        try:
            matrix = record["structure"]["lattice"]["matrix"]
        except (KeyError, TypeError):
            raise DataError(f"{path}: entry {record['lmdb_key']} has no lattice matrix; "
                            f"{_pull_again(DEVSETS_SET)}") from None
        rows.append({"entry_id": record["entry_id"], "reduced_formula": record["reduced_formula"],
                     "natoms": record["natoms"], "e_above_hull_eV_per_atom": t["e_above_hull"],
                     "e_form_eV_per_atom": t["e_form"], "band_gap_ind_eV": t["band_gap_ind"],
                     "total_mag_muB_per_cell": t["total_mag"], "energy_total_eV": t["energy_total"],
                     "dos_ef": t["dos_ef"], **_lattice(matrix, path, record["lmdb_key"])})
    return _csv(ALEXANDRIA_CSV_FIELDS, rows, "\r\n")


#: the staged OQMD fields in their order; upstream ``cart_coords`` (fractional in fact) is staged as ``frac_coords``
OQMD_FIELDS = ["name", "entry_id", "calculation_id", "icsd_id", "formationenergy_id", "duplicate_entry_id",
               "composition", "composition_generic", "prototype", "spacegroup", "volume", "ntypes", "natoms", "sites",
               "band_gap", "delta_e", "stability", "fit", "calculation_label", "atomic_numbers", "cell", "frac_coords"]
OQMD_RENAMED = {"frac_coords": "cart_coords"}
OQMD_CSV_FIELDS = ["entry_id", "name", "composition", "spacegroup", "prototype", "natoms",
                   "stability_hull_distance_eV_per_atom", "delta_e_formation_eV_per_atom", "band_gap_eV", "volume_A3",
                   "icsd_id", "a_A", "b_A", "c_A", "alpha_deg", "beta_deg", "gamma_deg"]


def _oqmd(folder: Path) -> list[dict[str, Any]]:
    """The staged JSON records: the OQMD REST fields of each entry, coordinates renamed ``frac_coords``."""
    path = folder / OQMD_LMDB
    return [{"lmdb_key": key, **{field: _plain(_field(entry, OQMD_RENAMED.get(field, field), path, key))
                                 for field in OQMD_FIELDS}}
            for key, entry in read_lmdb(path, DEVSETS_SET)]


def oqmd_json(folder: Path, origin: dict[str, str]) -> bytes:
    """``oqmd_devset.json`` from matsciml's OQMD devset LMDB."""
    return _json_bytes(_oqmd(folder))


def oqmd_csv(folder: Path, origin: dict[str, str]) -> bytes:
    """``oqmd_devset.csv``: identity, hull distance, formation energy, gap, volume and the rounded lattice of
    ``cell`` (empty cells for missing prototype or ICSD id)."""
    path = folder / OQMD_LMDB
    rows = [{"entry_id": r["entry_id"], "name": r["name"], "composition": r["composition"],
             "spacegroup": r["spacegroup"], "prototype": r["prototype"], "natoms": r["natoms"],
             "stability_hull_distance_eV_per_atom": r["stability"], "delta_e_formation_eV_per_atom": r["delta_e"],
             "band_gap_eV": r["band_gap"], "volume_A3": r["volume"], "icsd_id": r["icsd_id"],
             **{k: v for k, v in _lattice(r["cell"], path, r["lmdb_key"]).items() if k != "volume_A3"}}
            for r in _oqmd(folder)]
    return _csv(OQMD_CSV_FIELDS, rows, "\r\n")


#: (data set, staged file) -> builder(set folder, {downloaded path: origin URL}) -> the staged file's bytes
OUTPUTS: dict[tuple[str, str], Callable[[Path, dict[str, str]], bytes]] = {
    (GAPS_SET, "computed_gaps_by_mpid.csv"): computed_gaps_csv,
    (GAPS_SET, "experimental_gaps_by_icsd.csv"): experimental_gaps_csv,
    (DEVSETS_SET, "alexandria_pbe_devset.json"): alexandria_json,
    (DEVSETS_SET, "alexandria_pbe_devset.csv"): alexandria_csv,
    (DEVSETS_SET, "oqmd_devset.json"): oqmd_json,
    (DEVSETS_SET, "oqmd_devset.csv"): oqmd_csv,
}
