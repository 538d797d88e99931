"""Loading MSQA (Materials Science QA; arXiv 2505.23982) and turning it into items.

Sources: the upstream ``MSQA_Dataset.json`` (1,757 items) from a local file or folder, a URL, or a
dataset on a hub through the ``datasets`` library (``hf:OWNER/NAME``). The staged folder holds items
0–135 in two files (``MSQA_Dataset.first6.json`` and ``MSQA_Dataset.subset.json``); a folder is read
as the union of its JSON files, ordered by the ``index`` field where present.
Items missing a field a task needs are reported (count and indices on stderr and in the run's data
provenance), never silently dropped.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from matpcr.errors import DataError
from matpcr.protocols import TaskLoader
from matpcr.records import Item
from matpcr.tasks import TaskConfig
from matpcr_plugins.datasources.locate import optional_dir

log = logging.getLogger("matpcr.msqa")

FIELDS = ("question", "answer", "topic", "source", "source_section", "question_type", "true_false_question",
          "true_false_question_answer")
NEEDS = {"binary": ("true_false_question", "true_false_question_answer", "question_type"),
         "long": ("question", "answer", "question_type")}


def read_msqa(spec: str | Path) -> list[dict[str, Any]]:
    """Rows of MSQA from a path (file or folder), an http(s) URL, or ``hf:NAME`` (datasets library)."""
    spec = str(spec)
    if spec.startswith(("http://", "https://")):
        import httpx

        try:
            reply = httpx.get(spec, timeout=60, follow_redirects=True)
            reply.raise_for_status()
            rows = reply.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise DataError(f"MSQA: could not fetch {spec} ({exc}); download it and pass the local path") from None
    elif spec.startswith("hf:"):
        try:
            import datasets
        except ImportError as exc:
            raise DataError("MSQA: reading from a hub needs `pip install datasets`") from exc
        rows = [dict(r) for r in datasets.load_dataset(spec[3:], split="train")]
    else:
        path = Path(spec)
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        if not files or not all(f.exists() for f in files):
            raise DataError(f"MSQA: {path} not found; run `matpcr data pull msqa`, or pass the folder or MSQA_Dataset.json (see `matpcr data ls`)")
        rows = []
        for f in files:
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise DataError(f"MSQA: {f} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
            if not isinstance(data, list):
                raise DataError(f"MSQA: {f} must hold a JSON array of items")
            rows.extend(data)
    if not isinstance(rows, list):
        raise DataError(f"MSQA: {spec} must hold a JSON array of items")
    for n, row in enumerate(rows):
        row.setdefault("index", n)
    rows.sort(key=lambda r: r["index"])
    return rows


class MSQALoader(TaskLoader):
    """``loader_args``: ``path`` (default: DATA_DIR/msqa), ``kind`` (binary | long), ``mode`` (direct | cot | rag),
    ``corpus`` (JSONL of paragraphs for rag)."""

    data_sets = ("msqa",)

    def __init__(self) -> None:
        self.report: dict[str, Any] = {}

    def load(self, config: TaskConfig, data_dir: Path | None) -> list[Item]:
        args = config.loader_args
        kind = args.get("kind", "binary")
        if kind not in NEEDS:
            raise DataError(f"task {config.task}: loader_args.kind must be binary or long")
        spec = args.get("path") or (data_dir / "msqa" if data_dir else optional_dir(None, "msqa"))
        if spec is None:
            raise DataError(f"task {config.task} needs the MSQA data: --data-dir DIR (holding msqa/) or loader_args.path")
        rows = read_msqa(spec)
        missing: dict[str, list[int]] = {}
        items = []
        for row in rows:
            lacking = [f for f in NEEDS[kind] if not row.get(f)]
            if lacking:
                for f in lacking:
                    missing.setdefault(f, []).append(row["index"])
                continue
            items.append(Item(id=f"msqa-{row['index']}", task=config.task, constraint="msqa", modality="text",
                              text=row["true_false_question"] if kind == "binary" else row["question"],
                              reference={"label": row.get("true_false_question_answer"), "answer": row.get("answer"),
                                         "question": row.get("question"), "source": row.get("source", "")},
                              source_id=row.get("source") or f"msqa-{row['index']}",
                              meta={"dataset": "MSQA (jerry3027/MSQA)", "licence": "none declared upstream; research use",
                                    "group": row["question_type"], "index": row["index"]}))
        self.report = {"rows": len(rows), "items": len(items),
                       "skipped_missing_fields": {f: {"count": len(v), "indices": v[:50]} for f, v in missing.items()}}
        if missing:
            lines = ", ".join(f"{len(v)} lack {f!r}" for f, v in missing.items())
            log.warning("task %s: %d of %d MSQA items skipped (%s)", config.task, len(rows) - len(items), len(rows), lines)
        mode = args.get("mode", "direct")
        if mode == "rag":
            from matpcr_plugins.msqa.retrieval import Retriever

            retriever = Retriever.from_args(args, rows)
            for item in items:
                passages = retriever.context(item.reference["question"] or item.text, exclude_source=item.source_id)
                item.meta["context_ids"] = ",".join(p["id"] for p in passages)
                item.meta["context_text"] = "\n".join(f"[{n}] {p['text']}" for n, p in enumerate(passages, 1))
        return items
