"""The data directory: which data sets it holds, which tasks read them, and a manifest check.

Fetching is left to each data set's owner (most staged sets come from public repositories with their own
terms; see the data directory's SOURCES.md); matpcr only lists and verifies.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from matpcr.errors import MatpcrError


def data_sets(data_dir: Path | None) -> list[dict[str, Any]]:
    if data_dir is None:
        raise MatpcrError("no data directory: pass --data-dir DIR or set MATPCR_DATA_DIR")
    from matpcr.plugins import get_manager
    from matpcr.tasks import discover

    registry = get_manager().registry
    readers: dict[str, list[str]] = {}
    for t in discover().values():
        try:
            declared = getattr(registry.get("tasks", t.loader).factory(), "data_sets", ())
        except Exception:
            declared = ()
        for name in declared:
            readers.setdefault(name, []).append(t.task)
    out = []
    for folder in sorted(p for p in data_dir.iterdir() if p.is_dir()):
        files = [f for f in folder.rglob("*") if f.is_file()]
        users = sorted(readers.get(folder.name, []))
        out.append({"name": folder.name, "files": len(files), "bytes": sum(f.stat().st_size for f in files),
                    "tasks": users})
    return out


def verify_manifest(data_dir: Path | None) -> dict[str, Any]:
    if data_dir is None:
        raise MatpcrError("no data directory: pass --data-dir DIR or set MATPCR_DATA_DIR")
    manifest = data_dir / "MANIFEST.sha256"
    if not manifest.exists():
        raise MatpcrError(f"{manifest} not found; nothing to verify against")
    ok, missing, changed = 0, [], []
    for line in manifest.read_text().splitlines():
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        path = data_dir / name.strip().lstrip("./")
        if not path.exists():
            missing.append(str(path))
            continue
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest.strip():
            changed.append(str(path))
        else:
            ok += 1
    return {"ok": ok, "missing": missing, "changed": changed}
