"""What the viewer reads: run directories (possibly still being written), their records and items.

Everything here is generic: records, verdicts and items as the core stores them. Physics stays in the
oracles; a figure is whatever an oracle's ``render_case`` draws (see :mod:`matpcr.view.figures`).
Files are re-read when they change on disk (size and modification time), so a run that is still being
written shows its new records on refresh.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matpcr.errors import MatpcrError
from matpcr.records import Claim, Item, Record
from matpcr.rundir import RunDir

log = logging.getLogger("matpcr.view")

#: first-answer status order in tables (the core's statuses; anything else is appended)
STATUS_ORDER = ("consistent", "violated", "abstain", "unparsable", "error", "scored", "unscored")
_CLAIM_FIELDS = {f.name for f in dataclasses.fields(Claim)}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def is_rate(value: Any) -> bool:
    """A rate as results.json stores it (``stats.Rate.to_dict``)."""
    return isinstance(value, dict) and "value" in value and "ci_low" in value and "ci_high" in value


def claim_from_dict(data: dict[str, Any]) -> Claim:
    fields = {k: v for k, v in data.items() if k in _CLAIM_FIELDS}
    if "span" in fields:
        fields["span"] = tuple(fields["span"] or (0, 0))
    return Claim(**fields)


def number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def record_distance(record: Record) -> float | None:
    """The smallest distance to a reference feature any verdict of ``record`` reports (``details.distance``)."""
    values = [number((v.get("details") or {}).get("distance")) for v in record.verdicts]
    found = [v for v in values if v is not None]
    return min(found) if found else None


def chain_segments(record: Record) -> list[dict[str, Any]]:
    """The chain cut into plain text and marked spans: each claim where it was read (with its verdict) and
    each number the reader saw and rejected (with the reason). Text stays text: the template escapes it."""
    chain = record.chain or ""
    marks: list[tuple[int, int, dict[str, Any]]] = []
    for k, claim in enumerate(record.claims):
        span = claim.get("span") or (0, 0)
        verdict = record.verdicts[k] if k < len(record.verdicts) else {}
        status = str(verdict.get("status", ""))
        marks.append((int(span[0]), int(span[1]), {"kind": "claim", "index": k, "status": status,
                                                    "title": f"claim {k + 1}: {claim.get('kind')} = {claim.get('value')} "
                                                             f"{claim.get('unit', '')} → {status}"}))
    for j, rej in enumerate(record.rejected):
        span = rej.get("span") or (0, 0)
        marks.append((int(span[0]), int(span[1]), {"kind": "rejected", "index": j, "status": "rejected",
                                                    "title": f"not a claim: {rej.get('reason') or 'rejected'}"}))
    segments: list[dict[str, Any]] = []
    pos = 0
    for start, end, mark in sorted(marks, key=lambda m: (m[0], m[2]["kind"] != "claim", -m[1])):
        if not (0 <= start < end <= len(chain)) or start < pos:
            continue  # no span, out of range, or overlapping an earlier mark
        if start > pos:
            segments.append({"text": chain[pos:start], "kind": None})
        segments.append({"text": chain[start:end], **mark})
        pos = end
    if pos < len(chain):
        segments.append({"text": chain[pos:], "kind": None})
    return segments


def abbreviate(obj: Any, max_list: int = 8, max_str: int = 400, depth: int = 0) -> Any:
    """A reference made small enough to read: long arrays cut to their first values with a count."""
    if depth > 6:
        return "…"
    if isinstance(obj, dict):
        return {str(k): abbreviate(v, max_list, max_str, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        head = [abbreviate(v, max_list, max_str, depth + 1) for v in list(obj)[:max_list]]
        if len(obj) > max_list:
            head.append(f"… ({len(obj)} values)")
        return head
    if isinstance(obj, str) and len(obj) > max_str:
        return obj[:max_str] + f"… ({len(obj)} characters)"
    if isinstance(obj, float):
        return round(obj, 6)
    return obj


def pretty(obj: Any) -> str:
    return json.dumps(abbreviate(obj), indent=2, ensure_ascii=False, default=str)


@dataclass
class Cached:
    stamp: Any = None
    value: Any = None


@dataclass
class RunView:
    """One run directory as the viewer sees it."""

    path: Path
    index: int = 0
    _records: Cached = field(default_factory=Cached)
    _items: Cached = field(default_factory=Cached)
    _results: Cached = field(default_factory=Cached)
    _config: Cached = field(default_factory=Cached)
    _live: Cached = field(default_factory=Cached)
    _judges: Any = None
    judges_error: str | None = None
    _lock: Any = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.path = Path(self.path).resolve()
        self.run = RunDir(self.path)
        if not self.run.config_path.exists():
            raise MatpcrError(f"{self.path}: not a run directory (no config.json); pass a folder `matpcr run` wrote")

    @property
    def label(self) -> str:
        return self.path.name

    def _cached(self, slot: Cached, path: Path, load: Any) -> Any:
        stamp = _stamp(path)
        with self._lock:
            if slot.stamp != stamp or slot.value is None:
                slot.value, slot.stamp = load(), stamp
            return slot.value

    def config(self) -> dict[str, Any]:
        return self._cached(self._config, self.run.config_path, self.run.read_config)

    def records(self) -> list[Record]:
        return self._cached(self._records, self.run.samples_path, self.run.records)

    def records_by_key(self) -> dict[str, Record]:
        return {r.key: r for r in self.records()}

    def items(self) -> dict[str, Item]:
        return self._cached(self._items, self.run.items_path, self.run.items)

    def item_of(self, record: Record) -> Item | None:
        return self.items().get(f"{record.task}/{record.item_id}")

    def results(self) -> dict[str, Any] | None:
        """results.json, or None while the run has not written one (or it is unreadable)."""
        def load() -> dict[str, Any]:
            try:
                return self.run.read_results()
            except MatpcrError as exc:
                return {"_missing": str(exc)}
        data = self._cached(self._results, self.run.results_path, load)
        return None if "_missing" in data else data

    def judges(self) -> dict[str, Any]:
        """``{task: TaskJudge}`` rebuilt from the run's config (``matpcr.scoring.run_judges``)."""
        if self._judges is None:
            from matpcr.scoring import run_judges

            try:
                self._judges = run_judges(self.config())[0]
            except Exception as exc:  # a missing plugin: records still show, figures do not
                self.judges_error = f"{type(exc).__name__}: {exc}"
                log.warning("%s: cannot rebuild the run's oracles: %s", self.path, self.judges_error)
                self._judges = {}
        return self._judges

    def oracle_for(self, task: str) -> Any:
        judge = self.judges().get(task)
        return judge.instance if judge is not None and judge.kind == "oracle" else None

    def status(self) -> str:
        results = self.results()
        return str(results.get("status", "?")) if results else "in progress (no results.json yet)"

    def metrics(self) -> tuple[dict[str, Any] | None, bool]:
        """(metrics, live): results.json's when the run finished, else aggregated now from the records so
        far (a smaller bootstrap), so a run in progress shows figures too."""
        results = self.results()
        if results and results.get("status") != "started" and results.get("metrics"):
            return results["metrics"], False

        def load() -> dict[str, Any] | None:
            from matpcr.results import aggregate, declared_metrics

            records = self.records()
            if not records:
                return None
            return aggregate(records, declared_metrics(self.judges()), n_boot=2000)

        return self._cached(self._live, self.run.samples_path, load), True

    def siblings(self, record: Record) -> list[Record]:
        """Every round of the same (task, item, seed, sample), first round first."""
        same = [r for r in self.records() if (r.task, r.item_id, r.seed, r.sample) ==
                (record.task, record.item_id, record.seed, record.sample)]
        return sorted(same, key=lambda r: r.round)


class Library:
    """The runs being viewed (by position on the command line), plus runs an audit sheet points at."""

    def __init__(self, run_dirs: list[str | Path]):
        self.runs: list[RunView] = []
        for d in run_dirs:
            self.add(d)

    def add(self, path: str | Path) -> RunView:
        resolved = Path(path).resolve()
        for run in self.runs:
            if run.path == resolved:
                return run
        run = RunView(resolved, len(self.runs))
        self.runs.append(run)
        return run

    def get(self, index: int) -> RunView:
        if not 0 <= index < len(self.runs):
            raise KeyError(index)
        return self.runs[index]


# -- pages' data ------------------------------------------------------------------------------------

def compare(runs: list[RunView]) -> dict[str, Any]:
    """The runs side by side: per task, each run's declared metrics with intervals and status counts."""
    columns = []
    tasks: dict[str, None] = {}
    for run in runs:
        metrics, live = run.metrics()
        results = run.results() or {}
        config = run.config()
        by_task = (metrics or {}).get("tasks", {})
        for task in by_task:
            tasks.setdefault(task, None)
        columns.append({"run": run, "metrics": metrics, "live": live, "results": results, "config": config,
                        "model": (results.get("model") or {}).get("model") or config.get("model", "?"),
                        "intervention": config.get("intervention"),
                        "records": len(run.records()), "by_task": by_task,
                        "intervention_summary": (metrics or {}).get("intervention")})
    rows = []
    for task in tasks:
        cells = []
        for col in columns:
            m = col["by_task"].get(task)
            if m is None:
                cells.append(None)
                continue
            rates = []
            for name in ("pcr", "claim_violation_rate", "accuracy"):
                if is_rate(m.get(name)):
                    rates.append((name, m[name]))
            for name, rate in sorted((m.get("scores") or {}).items()):
                if is_rate(rate):
                    rates.append((name, rate))
            known = {"pcr", "claim_violation_rate", "accuracy", "scores", "scores_by_group", "status_counts"}
            for name, value in sorted(m.items()):  # figures a plugin added (e.g. chance-corrected ones)
                if name not in known and is_rate(value):
                    rates.append((name, value))
            counts = {s: c for s, c in (m.get("status_counts") or {}).items() if c}
            cells.append({"n": m.get("n_records", 0), "rates": rates, "counts": counts,
                          "errors": m.get("errors") or [], "generation_errors": m.get("generation_errors", 0),
                          "four_cells": m.get("accuracy_vs_consistency")})
        rows.append({"task": task, "cells": cells})
    return {"columns": columns, "rows": rows}


def sample_rows(run: RunView, filters: dict[str, str], sort: str) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Records matching ``filters`` (task, status, kind, seed, round), as table rows, and the choices each
    filter offers. ``sort``: ``distance`` / ``-distance`` (records without a distance last) or the order
    the run wrote them."""
    records = run.records()
    options = {
        "task": sorted({r.task for r in records}),
        "status": sorted({r.status for r in records},
                         key=lambda s: (STATUS_ORDER.index(s) if s in STATUS_ORDER else 99, s)),
        "kind": sorted({str(c.get("kind")) for r in records for c in r.claims}),
        "seed": sorted({str(r.seed) for r in records}, key=int),
        "round": sorted({str(r.round) for r in records}, key=int),
    }
    out = []
    for r in records:
        if filters.get("task") and r.task != filters["task"]:
            continue
        if filters.get("status") and r.status != filters["status"]:
            continue
        if filters.get("kind") and not any(str(c.get("kind")) == filters["kind"] for c in r.claims):
            continue
        if filters.get("seed") and str(r.seed) != filters["seed"]:
            continue
        if filters.get("round") and str(r.round) != filters["round"]:
            continue
        claims = []
        for k, c in enumerate(r.claims):
            v = r.verdicts[k] if k < len(r.verdicts) else {}
            claims.append({"text": f"{c.get('kind')} = {c.get('value')} {c.get('unit') or ''}".strip(),
                           "status": v.get("status", "")})
        chain = " ".join((r.chain or "").split())
        out.append({"record": r, "claims": claims, "distance": record_distance(r),
                    "snippet": chain[:140] + ("…" if len(chain) > 140 else "")})
    if sort in ("distance", "-distance"):
        with_d = [x for x in out if x["distance"] is not None]
        without = [x for x in out if x["distance"] is None]
        with_d.sort(key=lambda x: x["distance"], reverse=sort.startswith("-"))
        out = with_d + without
    return out, options


def prompt_view(record: Record) -> list[dict[str, Any]]:
    """The messages the model saw: role, text and the index of each image part (served by the app)."""
    out = []
    for m, message in enumerate(record.prompt or []):
        parts = message.get("content") or []
        texts = [str(p.get("text", "")) for p in parts if p.get("type") == "text"]
        images = [{"m": m, "p": p} for p, part in enumerate(parts) if part.get("type") == "image"]
        out.append({"role": message.get("role", ""), "text": "".join(texts), "images": images})
    return out


def image_path(record: Record, m: int, p: int) -> Path | None:
    """The file behind one image part of the record's prompt (only files the prompt names are served)."""
    try:
        part = (record.prompt[m].get("content") or [])[p]
    except (IndexError, AttributeError, TypeError):
        return None
    if part.get("type") != "image" or not part.get("path"):
        return None
    path = Path(str(part["path"]))
    return path if path.is_file() else None


def feedback_of(record: Record) -> list[str]:
    """What the model was told before this round: the intervention's stored feedback, else the last user
    message of the prompt (the follow-up turn)."""
    stored = record.meta.get("feedback")
    if isinstance(stored, list) and stored:
        return [str(s) for s in stored]
    if isinstance(stored, str) and stored:
        return [stored]
    if record.round > 0:
        users = [m for m in (record.prompt or []) if m.get("role") == "user"]
        if users:
            text = "".join(str(p.get("text", "")) for p in users[-1].get("content") or [] if p.get("type") == "text")
            return [text] if text else []
    return []
