"""The DFT reference store: one SQLite database of computed materials properties.

One row per (material id, source): formula, number of sites, structure, energy above hull (eV/atom),
is_stable where the source gives it, band gap (eV), total magnetization (µB per cell) and provenance.
These are standardized computational references, never experimental truth. Rows come from the staged
files (Materials Project snapshots, Alexandria, OQMD), from CSV/JSON with a column mapping, or from the
Materials Project API (``matpcr refs pull mp``).
"""

from __future__ import annotations

import logging

import csv
import hashlib
import json
import os
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from matpcr.errors import DataError, MatpcrError

log = logging.getLogger("matpcr.dft")

SCHEMA = """
CREATE TABLE IF NOT EXISTS materials (
    material_id TEXT NOT NULL,
    source TEXT NOT NULL,
    source_version TEXT,
    retrieved TEXT,
    formula TEXT,
    reduced_formula TEXT,
    nsites INTEGER,
    space_group TEXT,
    structure TEXT,
    e_above_hull REAL,
    is_stable INTEGER,
    band_gap REAL,
    total_magnetization REAL,
    provenance TEXT,
    PRIMARY KEY (material_id, source)
);
CREATE INDEX IF NOT EXISTS materials_id ON materials (material_id);
CREATE TABLE IF NOT EXISTS imports (
    root TEXT PRIMARY KEY,
    fingerprint TEXT,
    at TEXT
);
"""
FIELDS = ("material_id", "source", "source_version", "retrieved", "formula", "reduced_formula", "nsites",
          "space_group", "structure", "e_above_hull", "is_stable", "band_gap", "total_magnetization", "provenance")


@dataclass
class Material:
    material_id: str
    source: str
    source_version: str = ""
    retrieved: str = ""
    formula: str = ""
    reduced_formula: str = ""
    nsites: int | None = None
    space_group: str = ""
    structure: str | None = None  # CIF text
    e_above_hull: float | None = None
    is_stable: bool | None = None
    band_gap: float | None = None
    total_magnetization: float | None = None  # µB per cell
    provenance: dict[str, Any] = field(default_factory=dict)

    def reference(self) -> dict[str, Any]:
        """The JSON reference the oracles read (Materials Project field names)."""
        return {"material_id": self.material_id, "source": self.source, "formula": self.reduced_formula or self.formula,
                "nsites": self.nsites, "energy_above_hull": self.e_above_hull, "is_stable": self.is_stable,
                "band_gap": self.band_gap, "total_magnetization": self.total_magnetization,
                "formula_cell": self.formula, "space_group": self.space_group}


def default_store_path() -> Path:
    import platformdirs

    return Path(os.environ.get("MATPCR_REFSTORE", Path(platformdirs.user_data_dir("matpcr")) / "references.sqlite"))


class ReferenceStore:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=60)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(SCHEMA)

    def upsert(self, materials: Iterable[Material]) -> int:
        rows = []
        for m in materials:
            d = asdict(m)
            d["provenance"] = json.dumps(d["provenance"])
            d["is_stable"] = None if m.is_stable is None else int(bool(m.is_stable))
            rows.append(tuple(d[f] for f in FIELDS))
        with self.conn:
            self.conn.executemany(f"INSERT OR REPLACE INTO materials VALUES ({','.join('?' * len(FIELDS))})", rows)
        return len(rows)

    def _material(self, row: tuple) -> Material:
        d = dict(zip(FIELDS, row))
        d["provenance"] = json.loads(d["provenance"] or "{}")
        d["is_stable"] = None if d["is_stable"] is None else bool(d["is_stable"])
        return Material(**d)

    def get(self, material_id: str, source: str | None = None) -> Material:
        query = f"SELECT {','.join(FIELDS)} FROM materials WHERE material_id = ?"
        args: list[Any] = [material_id]
        if source:
            query += " AND source = ?"
            args.append(source)
        rows = self.conn.execute(query + " ORDER BY source", args).fetchall()
        if not rows:
            raise DataError(f"material {material_id!r} is not in the reference store {self.path} "
                            "(import with `matpcr refs import` or `matpcr refs pull mp`)")
        return self._material(rows[0])

    def iter(self, sources: list[str] | None = None, where: str = "") -> Iterator[Material]:
        query = f"SELECT {','.join(FIELDS)} FROM materials"
        clauses, args = [], []
        if sources:
            clauses.append("(" + " OR ".join("source LIKE ?" for _ in sources) + ")")
            args += [s.replace("*", "%") for s in sources]
        if where:
            clauses.append(where)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        for row in self.conn.execute(query + " ORDER BY source, material_id", args):
            yield self._material(row)

    def ids(self, source: str) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT material_id FROM materials WHERE source = ?", (source,))}

    def imported(self, root: Path) -> bool:
        """Whether the staged sets under ``root`` (as they are now) were imported already."""
        row = self.conn.execute("SELECT fingerprint FROM imports WHERE root = ?", (str(root),)).fetchone()
        return row is not None and row[0] == _root_fingerprint(root)

    def mark_imported(self, root: Path) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO imports VALUES (?, ?, ?)",
                              (str(root), _root_fingerprint(root), time.strftime("%Y-%m-%dT%H:%M:%S")))

    def sources(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT source, COUNT(*) FROM materials GROUP BY source ORDER BY source"))

    def close(self) -> None:
        self.conn.close()


# -- staged files -----------------------------------------------------------------------------

def _f(value: Any) -> float | None:
    if value in (None, "", "nan", "None"):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _b(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in (None, ""):
        return None
    return str(value).strip().lower() in ("true", "1", "yes")


def _reduced(formula: str) -> str:
    from pymatgen.core import Composition

    try:
        return Composition(formula).reduced_formula
    except Exception as exc:  # pymatgen raises several types for unreadable formulas; keep the text as given
        log.debug("formula %r kept as written: %s", formula, exc)
        return formula


def _structure_cif(structure_dict: dict[str, Any]) -> str | None:
    from pymatgen.core import Structure

    try:
        return Structure.from_dict(structure_dict).to(fmt="cif")
    except Exception as exc:  # an entry without a usable structure is stored without its CIF
        log.debug("structure not converted to CIF: %s: %s", type(exc).__name__, exc)
        return None


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _root_fingerprint(root: Path) -> str:
    """Names, sizes and times of the files under ``root`` that hold DFT sets: changes when a set is pulled."""
    parts = []
    for path in sorted(Path(root).glob("*/*")):
        try:
            stat = path.stat()
        except OSError:
            continue
        parts.append(f"{path.relative_to(root)}:{stat.st_size}:{int(stat.st_mtime)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16] if parts else ""


def import_staged(store: ReferenceStore, data_dir: Path, only: list[str] | None = None) -> dict[str, int]:
    """Import every staged DFT set found under ``data_dir`` (see shared/data/SOURCES.md)."""
    counts: dict[str, int] = {}

    def want(name: str) -> bool:
        return only is None or any(name.startswith(o) for o in only)

    path = data_dir / "mp_piezo_features" / "mp_piezo_summary.csv"
    if path.exists() and want("mp:piezo"):
        counts["mp:piezo"] = store.upsert(Material(
            r["material_id"], "mp:piezo", "MP legacy API (about 2023)", "", r["formula_cell"], r["formula_pretty"],
            int(r["nsites"]), r["spacegroup_number"], None, _f(r["e_above_hull_eV_per_atom"]), None,
            _f(r["band_gap_eV"]), _f(r["total_magnetization_muB_per_cell"]),
            {"file": str(path), "repo": "jeffreyhusc/PiezoelectricML", "licence": "MP data CC-BY-4.0"}) for r in _rows(path))
    path = data_dir / "mp_thermomagnetic_fm" / "mp_thermomagnetic_summary.csv"
    if path.exists() and want("mp:thermomagnetic"):
        counts["mp:thermomagnetic"] = store.upsert(Material(
            r["material_id"], "mp:thermomagnetic", "MP via mp-api (date not recorded)", "", r["formula_cell"],
            r["formula_pretty"], int(r["nsites"]), r["spacegroup"], None, _f(r["e_above_hull_eV_per_atom"]), None,
            None, _f(r["moment_cell_muB"]),
            {"file": str(path), "repo": "amakagyemang/Database_of_Thermomagnetic_materials", "mag_type": r["mag_type"],
             "licence": "no licence upstream; MP data CC-BY-4.0"}) for r in _rows(path))
    path = data_dir / "mp40_chemeleon" / "mp40_union.csv"
    if path.exists() and want("mp:mp40"):
        counts["mp:mp40"] = store.upsert(Material(
            r["material_id"], "mp:mp40", "MP (late 2024 / Jan 2025)", r.get("created_at", ""),
            r["formula_reduced_alphabetical"].replace(" ", ""), _reduced(r["formula_reduced_alphabetical"]),
            int(r["nsites"]), f"{r['space_group_symbol']} ({r['space_group_number']})", r["cif"],
            _f(r["e_above_hull_eV_per_atom"]), None, _f(r["band_gap_eV"]), None,
            {"file": str(path), "repo": "hspark1212/chemeleon", "licence": "MP data CC-BY-4.0"}) for r in _rows(path))
    for path in sorted((data_dir / "mp_chemsys_hull_entries").glob("*_entries.json")) if want("mp:chemsys") else []:
        from pymatgen.core import Lattice, Structure

        mats = []
        for e in json.loads(path.read_text()):
            try:
                cif = Structure(Lattice(e["lattice_matrix_A"]), e["species"], e["frac_coords"]).to(fmt="cif")
            except Exception as exc:  # stored without its CIF; the entry's energies are still usable
                log.debug("%s: no CIF (%s: %s)", e.get("material_id"), type(exc).__name__, exc)
                cif = None
            mats.append(Material(e["material_id"], f"mp:chemsys:{e['chemsys']}", "MP2020-corrected, late 2024",
                                 e.get("mp_last_updated", ""), e["formula_reduced"], e["formula_reduced"], int(e["nsites"]),
                                 "", cif, _f(e["e_above_hull_eV_per_atom"]), _b(e["is_stable"]), None, None,
                                 {"file": str(path), "repo": "janosh/matterviz", "run_type": e["run_type"],
                                  "licence": e.get("license", "")}))
        counts[f"mp:chemsys:{path.stem.split('_')[0]}"] = store.upsert(mats)
    path = data_dir / "alexandria_ternary_hull" / "alexandria_ternaries.csv"
    if path.exists() and want("alexandria:ternary"):
        counts["alexandria:ternary"] = store.upsert(Material(
            r["entry_id"], "alexandria:ternary", "Alexandria PBE (OPTIMADE)", "", r["composition_cell"].replace(" ", ""),
            r["formula_reduced"], int(r["nsites"]), r["space_group_number"], None, _f(r["e_above_hull_eV_per_atom"]),
            _b(r["is_stable"]), _f(r["band_gap_eV"]), _f(r["magnetization_muB_per_cell"]),
            {"file": str(path), "repo": "janosh/matterviz", "chemsys": r["chemsys"], "licence": "CC-BY-4.0"})
            for r in _rows(path))
    path = data_dir / "computed_materials_devsets" / "alexandria_pbe_devset.json"
    if path.exists() and want("alexandria:devset"):
        mats = []
        for e in json.loads(path.read_text()):
            t = e["targets"]
            mats.append(Material(e["entry_id"], "alexandria:devset", "Alexandria PBE 3D (matsciml devset)", "",
                                 e["reduced_formula"], e["reduced_formula"], int(e["natoms"]), "",
                                 _structure_cif(e["structure"]), _f(t.get("e_above_hull")), None, _f(t.get("band_gap_ind")),
                                 _f(t.get("total_mag")), {"file": str(path), "repo": "IntelLabs/matsciml", "licence": "CC-BY-4.0"}))
        counts["alexandria:devset"] = store.upsert(mats)
    path = data_dir / "computed_materials_devsets" / "oqmd_devset.json"
    if path.exists() and want("oqmd:devset"):
        from pymatgen.core import Lattice, Structure
        from pymatgen.core.periodic_table import Element

        mats = []
        for e in json.loads(path.read_text()):
            try:
                species = [Element.from_Z(z).symbol for z in e["atomic_numbers"]]
                cif = Structure(Lattice(e["cell"]), species, e["frac_coords"]).to(fmt="cif")
            except Exception as exc:  # stored without its CIF; the entry's energies are still usable
                log.debug("oqmd-%s: no CIF (%s: %s)", e.get("entry_id"), type(exc).__name__, exc)
                cif = None
            mats.append(Material(f"oqmd-{e['entry_id']}", "oqmd:devset", "OQMD REST (matsciml devset)", "",
                                 e["composition"].replace(" ", ""), _reduced(e["composition"]), int(e["natoms"]),
                                 e.get("spacegroup", ""), cif, _f(e.get("stability")), None, _f(e.get("band_gap")), None,
                                 {"file": str(path), "repo": "IntelLabs/matsciml", "licence": "CC-BY-4.0"}))
        counts["oqmd:devset"] = store.upsert(mats)
    if not counts:
        raise DataError(f"{data_dir}: none of the staged DFT reference sets were found (see SOURCES.md)")
    return counts


# -- CSV / JSON with a column mapping -------------------------------------------------------------

DEFAULT_MAPPING = {
    "material_id": ["material_id", "entry_id", "id", "mpid"],
    "formula": ["formula", "formula_pretty", "formula_cell", "composition", "pretty_formula"],
    "nsites": ["nsites", "natoms", "num_sites"],
    "e_above_hull": ["energy_above_hull", "e_above_hull", "e_above_hull_eV_per_atom", "ehull"],
    "is_stable": ["is_stable"],
    "band_gap": ["band_gap", "band_gap_eV", "gap"],
    "total_magnetization": ["total_magnetization", "total_magnetization_muB_per_cell", "magmom_cell"],
    "space_group": ["space_group", "spacegroup", "spacegroup_number", "symmetry.symbol"],
    "structure": ["cif", "structure_cif"],
}


def import_table(store: ReferenceStore, path: Path, source: str, mapping: dict[str, str] | None = None,
                 source_version: str = "") -> int:
    """Import a CSV or JSON (list of objects) file. ``mapping`` maps store fields to the file's column
    names; unmapped fields are looked up under the usual names (DEFAULT_MAPPING)."""
    if not path.exists():
        raise DataError(f"{path}: file not found")
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        rows = data if isinstance(data, list) else data.get("data", [])
    else:
        rows = _rows(path)
    mapping = mapping or {}
    mats = []
    for n, row in enumerate(rows, 1):
        def col(fieldname: str) -> Any:
            names = [mapping[fieldname]] if fieldname in mapping else DEFAULT_MAPPING.get(fieldname, [fieldname])
            for name in names:
                if name in row and row[name] not in (None, ""):
                    return row[name]
            return None

        mid = col("material_id")
        if mid is None:
            raise DataError(f"{path}: row {n} has no material id (map it with material_id=COLUMN)")
        formula = str(col("formula") or "")
        nsites = col("nsites")
        mats.append(Material(str(mid), source, source_version, time.strftime("%Y-%m-%d"), formula, _reduced(formula) if formula else "",
                             int(float(nsites)) if nsites is not None else None, str(col("space_group") or ""),
                             col("structure"), _f(col("e_above_hull")), _b(col("is_stable")), _f(col("band_gap")),
                             _f(col("total_magnetization")), {"file": str(path), "mapping": mapping}))
    return store.upsert(mats)


# -- the Materials Project (mp-api) ----------------------------------------------------------------

SUMMARY_FIELDS = ["material_id", "formula_pretty", "nsites", "structure", "energy_above_hull", "is_stable", "band_gap",
                  "total_magnetization", "symmetry", "database_IDs", "last_updated"]


def from_summary_doc(doc: Any, database_version: str = "") -> Material:
    """Convert an emmet ``SummaryDoc`` (or a dict with its field names) into a store row."""
    get = (lambda k: doc.get(k)) if isinstance(doc, dict) else (lambda k: getattr(doc, k, None))
    structure = get("structure")
    cif = None
    if structure is not None:
        cif = structure.to(fmt="cif") if hasattr(structure, "to") else _structure_cif(structure)
    symmetry = get("symmetry")
    symbol = getattr(symmetry, "symbol", None) if symmetry is not None and not isinstance(symmetry, dict) else \
        (symmetry or {}).get("symbol")
    formula = str(get("formula_pretty") or "")
    cell_formula = structure.composition.formula.replace(" ", "") if hasattr(structure, "composition") else formula
    updated = get("last_updated")
    return Material(str(get("material_id")), "mp:api", database_version, str(updated or time.strftime("%Y-%m-%d")),
                    cell_formula, formula, get("nsites"), symbol or "", cif, _f(get("energy_above_hull")),
                    get("is_stable"), _f(get("band_gap")), _f(get("total_magnetization")),
                    {"api": "mp-api summary", "licence": "CC-BY-4.0"})


def pull_mp(store: ReferenceStore, ids: list[str] | None = None, chemsys: list[str] | None = None,
            formulas: list[str] | None = None, batch_size: int = 500, api_key_env: str = "MP_API_KEY") -> int:
    """Fill the store from the Materials Project summary endpoint (resumable: ids already stored are skipped)."""
    key = os.environ.get(api_key_env)
    if not key:
        raise MatpcrError(f"set ${api_key_env} to your Materials Project API key (it is read from the environment only)")
    try:
        from mp_api.client import MPRester
    except ImportError as exc:
        raise MatpcrError("`matpcr refs pull mp` needs mp-api: pip install 'matpcr[mp]'") from exc
    done = store.ids("mp:api")
    total = 0
    with MPRester(key) as mpr:
        version = str(getattr(mpr, "get_database_version", lambda: "")() or "")
        if ids:
            todo = [i for i in ids if i not in done]
            for start in range(0, len(todo), batch_size):
                docs = mpr.materials.summary.search(material_ids=todo[start:start + batch_size], fields=SUMMARY_FIELDS)
                total += store.upsert(from_summary_doc(d, version) for d in docs)
        for system in chemsys or []:
            docs = mpr.materials.summary.search(chemsys=system, fields=SUMMARY_FIELDS)
            total += store.upsert(from_summary_doc(d, version) for d in docs if str(d.material_id) not in done)
        for formula in formulas or []:
            docs = mpr.materials.summary.search(formula=formula, fields=SUMMARY_FIELDS)
            total += store.upsert(from_summary_doc(d, version) for d in docs if str(d.material_id) not in done)
    return total
