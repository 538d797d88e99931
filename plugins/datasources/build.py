"""Build ``manifest.json`` (the per-file catalog shipped with the package) from a staged data directory.

    python -m matpcr_plugins.datasources.build /path/to/data [--out plugins/datasources/manifest.json]

For every file of the staged directory's ``MANIFEST.sha256`` it records the sha256 and size, and where
``matpcr data pull`` gets the file: its public origin (a raw URL pinned to a commit) when the staged file
is the unmodified upstream file, a member of an upstream zip archive, ``derive`` when matpcr rebuilds it
locally from the downloaded files (``derive.BUILDERS``: index tables, summaries and format conversions). A
staged file with no rule is an error: every file must come from its origin.
The rules below follow SOURCES.md of the staged directory, set by set.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
from pathlib import Path
from typing import Any

from matpcr_plugins.datasources.catalog import RAW
from matpcr_plugins.datasources.derive import builder
from matpcr_plugins.datasources import devsets, matterviz, mp40, xrdml
from matpcr_plugins.datasources.xrdml import XRDML_FOLDER

# the commit each origin is pinned to (SOURCES.md)
COMMITS = {
    "RaMin": ("charlesll/RaMin", "11c5314f703d8b3af301b0412571baf53d86bbdc"),
    "autoXRD": ("PV-Lab/autoXRD", "2fc398059ff16a5cab67b0afcbc69f68748586b8"),
    "BAM": ("BAMresearch/automatic-sem-image-segmentation", "8c88052e2320062d6de4d20cf7d67a1cdd20a9e7"),
    "piezo": ("jeffreyhusc/PiezoelectricML", "1c4987c1acfc478eaba2f488ba6d012c3f067912"),
    "thermo": ("amakagyemang/Database_of_Thermomagnetic_materials", "e7268b0bf0a3028dfbba0c125f346f6920610001"),
    "mptime": ("sparks-baird/mp-time-split", "11d4a128165897782c88b2e491a2ba544fae98ea"),
    "amcsd": ("jappoker/mineral-lib-jekyll", "52071ba3d30b4ea7490f5c27c63f654909c1a0d1"),
    "dans": ("DanPorter/Dans_Diffraction", "092b63ed70fe7bb49e37b04fb56352103beae5e2"),
    "autoanalyzer": ("njszym/XRD-AutoAnalyzer", "bf32082521e45c0fcf5cf9ae9bd1321e76bf9012"),
    "sp8rks": ("sp8rks/MaterialsInformatics", "f61eb24e6355545df25625e47599562d14391136"),
    "dara": (xrdml.REPOSITORY, xrdml.COMMIT),  # the converted files name it in their header
}
REFINEMENT = "HW/HW_spring_2026/HW3/data/powderXRD"


def raw(key: str, path: str) -> str:
    from matpcr.datadir import quote_path

    repo, commit = COMMITS[key]
    return f"{RAW}/{repo}/{commit}/{quote_path(path)}"


def _index(data: Path, rel: str, key: str = "file") -> dict[str, dict[str, str]]:
    with open(data / rel, newline="", encoding="utf-8") as handle:
        return {r[key]: r for r in csv.DictReader(handle)}


def source_of(data: Path, name: str, path: str) -> dict[str, Any]:
    """Where ``name/path`` comes from: ``{"url": ...}``, ``{"url": ZIP, "member": ...}`` or ``{"derive": True}``."""
    if builder(name, path) is not None:
        return {"derive": True}
    if name == "raman_rruff":
        return {"url": raw("RaMin", "data/excellent_unoriented/" + path.split("/", 1)[1])}
    if name == "xrd_autoxrd_thinfilm" and path.startswith("patterns/"):
        row = _index(data / name, "index.csv")[path.split("/", 1)[1]]
        return {"url": raw("autoXRD", row["original_path"])}
    if name == "sem_bam_tio2" and path.startswith("images/"):
        return {"url": raw("BAM", "Datasets/Electron Microscopy Images/SEM/" + path.split("/", 1)[1])}
    if name == "mp_piezo_features" and path == "piezo_features.csv":
        return {"url": raw("piezo", "piezo_features.csv")}
    if name == "mp_thermomagnetic_fm" and path == "800_thermomagnetic_materials_data.csv":
        return {"url": raw("thermo", path)}
    if name == "computed_materials_devsets" and path == "mp_time_split_dummy_11.json":
        return {"url": raw("mptime", "src/mp_time_split/utils/mp_dummy_time_summary.json")}
    if name == "cif_reference_phases" and path.endswith((".cif", ".mcif")):
        sub, file = path.split("/", 1)
        row = _index(data / name / sub, "index.csv")[file]
        return {"url": raw("amcsd" if sub == "amcsd_minerals" else "dans", row["original_path"])}
    if name == "xrd_autoanalyzer_limntiof":
        if path.startswith("spectra/"):
            return {"url": raw("autoanalyzer", _index(data / name, "spectra_index.csv")[path]["original_path"])}
        if path.startswith("reference_cifs/"):
            return {"url": raw("autoanalyzer", "Example/References/" + path.split("/", 1)[1])}
    if name == "xrd_rruff_powder_refinement":
        if path == "index.csv":
            return {}  # RRUFF's refined cells, tabulated by the staging: not rebuilt, and no loader reads it
        archive = "Refinement_Data.zip" if path.startswith("cell_refinement_data/") else "Refinement_Output_Data.zip"
        return {"url": raw("sp8rks", f"{REFINEMENT}/{archive}"), "member": path.split("/", 1)[1]}
    if name == "msqa":
        return {}  # pulled whole from its origin through `datasets` (see catalog.fetch_msqa)
    raise SystemExit(f"{name}/{path}: no origin and no local build for this staged file; add one to build.py "
                     "or derive.py")


def inputs(data: Path) -> dict[str, list[dict[str, Any]]]:
    """Upstream files that are downloaded only to build others from them and are not staged, so no digest pins
    them: the commit in their URL does, and the digest of what is built from them is checked."""
    piezo = [{"path": "Piezoelectric_renewed.csv", "url": raw("piezo", "Piezoelectric_renewed.csv")}]
    dara = [{"path": f"{XRDML_FOLDER}/{row['original_file'].rsplit('/', 1)[1]}", "url": raw("dara", row["original_file"])}
            for row in _index(data / "xrd_dara_precursor_mixtures", "index.csv").values()]
    local = {name: [{"path": p, "url": u} for p, u in files] for name, files in devsets.INPUTS.items()}
    return {"mp_piezo_features": piezo, "xrd_dara_precursor_mixtures": dara, "mp40_chemeleon": mp40.inputs(), **local,
            **matterviz.inputs()}


def build(data: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for line in (data / "MANIFEST.sha256").read_text().splitlines():
        if not line.strip():
            continue
        digest, _, rel = line.partition("  ")
        rel = rel.strip().removeprefix("./")
        name, path = rel.split("/", 1)
        src = source_of(data, name, path)
        if not src:
            continue
        size = (data / rel).stat().st_size
        assert hashlib.sha256((data / rel).read_bytes()).hexdigest() == digest, rel
        out.setdefault(name, []).append({"path": path, "sha256": digest, "size": size, **src})
    for name, files in inputs(data).items():
        out[name] += [{"path": f["path"], "sha256": None, "size": None, "url": f["url"]} for f in files]
    for files in out.values():
        files.sort(key=lambda f: f["path"])
    return dict(sorted(out.items()))


def compact(manifest: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The shipped form: per set, the URL folders once (``bases``) and one row per file:
    ``[path, sha256, size, base, name]`` (+ ``member`` for archive members); ``base`` -1 means built
    locally (``derive``); an empty ``name`` means the file's own name."""
    out: dict[str, Any] = {}
    for name, files in manifest.items():
        bases: list[str] = []
        rows = []
        for f in files:
            if f.get("derive"):
                rows.append([f["path"], f["sha256"], f["size"], -1, ""])
                continue
            folder, _, leaf = f["url"].rpartition("/")
            if folder + "/" not in bases:
                bases.append(folder + "/")
            row = [f["path"], f["sha256"], f["size"], bases.index(folder + "/"),
                   "" if leaf == f["path"].rsplit("/", 1)[-1] else leaf]
            if f.get("member"):
                row.append(f["member"])
            rows.append(row)
        out[name] = {"bases": bases, "files": rows}
    return out


def expand(compacted: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for name, entry in compacted.items():
        files = []
        for row in entry["files"]:
            path, sha256, size, base, leaf = row[:5]
            f: dict[str, Any] = {"path": path, "sha256": sha256, "size": size}
            if base < 0:
                f["derive"] = True
            else:
                f["url"] = entry["bases"][base] + (leaf or path.rsplit("/", 1)[-1])
            if len(row) > 5:
                f["member"] = row[5]
            files.append(f)
        out[name] = files
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("manifest.json"))
    args = parser.parse_args()
    manifest = build(args.data)
    compacted = compact(manifest)
    assert expand(compacted) == manifest
    lines = ["{"]
    for n, (name, entry) in enumerate(compacted.items()):
        lines.append(f"{json.dumps(name)}: {{\"bases\": {json.dumps(entry['bases'], ensure_ascii=False)}, \"files\": [")
        lines.append(",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in entry["files"]))
        lines.append("]}" + ("," if n < len(compacted) - 1 else ""))
    lines.append("}")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{args.out}: {sum(len(v) for v in manifest.values())} files in {len(manifest)} data sets")


if __name__ == "__main__":
    main()
