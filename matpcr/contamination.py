"""Contamination check: chains that state source-specific metadata never shown to the model.

Loaders keep such metadata (sample ids, database ids, localities) in ``reference["sidecar"]``; it never
enters a prompt. A chain that states one of those values is a sign of memorised source data.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from matpcr.rundir import RunDir


def _needles(sidecar: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, value in sidecar.items():
        text = str(value).strip()
        if len(text) < 4 or text.lower() in ("rruff", "none", "unknown"):
            continue
        out.append((key, text))
        if "," in text:  # a locality: its most specific part is enough
            head = text.split(",")[0].strip()
            if len(head) >= 6:
                out.append((key, head))
    return out


def contamination(run_dir: str | Path) -> dict[str, Any]:
    run = RunDir(run_dir)
    items = run.items()
    hits, checked = [], 0
    for record in run.records():
        item = items.get(f"{record.task}/{record.item_id}")
        if item is None or not record.chain:
            continue
        sidecar = item.reference.get("sidecar") or {}
        if not sidecar:
            continue
        checked += 1
        shown = " ".join(p.get("text", "") for m in record.prompt for p in m.get("content", []))
        for key, needle in _needles(sidecar):
            if needle.lower() in shown.lower():
                continue  # shown to the model, so stating it proves nothing
            if re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", record.chain, re.I):
                hits.append({"record_key": record.key, "field": key, "value": needle})
                break
    return {"records_checked": checked, "contaminated": len(hits), "hits": hits}
