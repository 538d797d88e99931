"""The data directory: which data sets it holds, which tasks read them, and a manifest check.

Fetching is left to each data set's owner (most staged sets come from public repositories with their own
terms; see the data directory's SOURCES.md); matpcr only lists and verifies.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Any

from matpcr.errors import MatpcrError

log = logging.getLogger("matpcr.data")


def resolve_data_dir(data_dir: str | None) -> Path | None:
    """``--data-dir`` or ``$MATPCR_DATA_DIR`` as an existing folder, or None when neither is set."""
    value = data_dir or os.environ.get("MATPCR_DATA_DIR")
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        raise MatpcrError(f"data directory {path} does not exist; pass --data-dir DIR or set MATPCR_DATA_DIR "
                          "(see `matpcr data ls`)")
    return path.resolve()


def data_sets(data_dir: Path | None) -> list[dict[str, Any]]:
    if data_dir is None:
        raise MatpcrError("no data directory: pass --data-dir DIR or set MATPCR_DATA_DIR")
    from matpcr.plugins import get_manager
    from matpcr.protocols import as_loader
    from matpcr.tasks import discover

    registry = get_manager().registry
    readers: dict[str, list[str]] = {}
    for t in discover().values():
        try:
            declared = as_loader(registry.get("tasks", t.loader).factory()).data_sets
        except MatpcrError as exc:  # a task whose loader is missing still lets the others be listed
            log.warning("task %s: %s", t.task, exc)
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
