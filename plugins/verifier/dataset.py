"""Building the verifier's training data, from three origins kept apart in every file and figure.

- ``real``: chains models wrote in runs (every round, so CGSV revisions count), labelled by the oracle
  (1 = violated). Only oracle-checked records (consistent/violated) are used.
- ``control``: chains written by the validity gate (``Oracle.controls`` rendered through the oracle's
  ``chain_templates``): realistic wrong and right answers about real references, labelled by construction
  (negative control = 1). Only chains the reader could check are kept, so each states a claim.
- ``audit``: audited oracle-fired cases with people's labels (``real`` = 1, ``false positive`` = 0; the
  majority of reviewers, ties and ``unsure`` left out).

Every example keeps its ``source_id`` (the reference it is about), and the train/test split is by source
across all origins, so no reference is on both sides (the MatPCR paper's leak fix). One held-out-constraint
split per constraint type as well. Evaluation reads real chains only (``origin == "real"``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

from matpcr.errors import MatpcrError
from matpcr.rundir import RunDir, write_atomic

log = logging.getLogger("matpcr.verifier")

MAX_QUESTION_CHARS = 600
MAX_CHAIN_CHARS = 700
ORIGINS = ("real", "control", "audit")


def example_text(constraint: str, question: str, chain: str) -> str:
    """The chain first and the question after it: the encoder's window (128–256 tokens) then holds the chain's
    claims and its Answer line (a long chain keeps its end), and the tokenizer's right truncation cuts the question,
    not the answer. With the question first, a 600-character prompt left the chain a few dozen tokens."""
    tail = chain if len(chain) <= MAX_CHAIN_CHARS else "…" + chain[-MAX_CHAIN_CHARS:]
    return f"[{constraint}] Answer: {tail}\nQuestion: {question[:MAX_QUESTION_CHARS]}"


def in_test(source_id: str, test_fraction: float, seed: int) -> bool:
    """A stable hash of the source decides its side, whatever origin the example has."""
    digest = hashlib.sha256(f"{seed}:{source_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2**64 < test_fraction


def real_examples(run_dirs: list[str | Path]) -> list[dict[str, Any]]:
    """Every oracle-checked record of the runs, all rounds and samples, labelled by the oracle. A record that
    two runs share (a CGSV run re-uses the plain run's first answers) is counted once."""
    examples = []
    seen: set[tuple[str, str]] = set()
    for d in run_dirs:
        run = RunDir(d)
        items = run.items()
        for r in run.iter_records():
            if r.status not in ("consistent", "violated") or (r.model, r.key) in seen:
                continue
            seen.add((r.model, r.key))
            item = items.get(f"{r.task}/{r.item_id}")
            question = item.text if item is not None else ""
            examples.append({"text": example_text(r.constraint, question, r.chain), "label": int(r.status == "violated"),
                             "origin": "real", "constraint": r.constraint, "source_id": r.source_id, "task": r.task,
                             "record": r.key, "round": r.round, "run": str(run.path), "model": r.model})
    return examples


def control_examples(oracles: dict[str, str], data_dir: Path | None, max_refs: int, per_reference: int,
                     seed: int) -> list[dict[str, Any]]:
    """The validity gate's controls for each oracle (``{oracle: constraint}``), rendered through its chain
    templates and judged by the reader and oracle; kept when the chain states a checkable claim."""
    from matpcr.plugins import get_manager
    from matpcr.validate import references_for, run_controls

    registry = get_manager().registry
    out = []
    for name, constraint in sorted(oracles.items()):
        oracle = registry.get("oracles", name).factory()
        if not oracle.control_names:
            continue
        items = references_for(name, data_dir, max_refs, seed)
        questions = {i.id: i.text for i in items}
        outcomes, skipped = run_controls(name, oracle, items, per_reference, seed)
        if skipped:
            log.info("%s: %d references gave no controls", name, skipped)
        for k, o in enumerate(outcomes):
            if o.status not in ("consistent", "violated"):
                continue  # the reader found nothing checkable: not an example of a claim
            out.append({"text": example_text(constraint, questions.get(o.reference, ""), o.chain),
                        "label": int(o.kind == "negative"), "oracle_status": o.status, "origin": "control",
                        "constraint": constraint, "source_id": o.source, "task": f"gate:{name}",
                        "record": f"control:{name}:{o.reference}:{o.control}:{o.template}:{k}", "round": 0,
                        "run": "", "model": f"control:{o.control}"})
    return out


def audit_examples(sheets: list[str | Path]) -> list[dict[str, Any]]:
    """Audited cases with a majority human judgement: ``real`` violation = 1, ``false positive`` = 0."""
    from matpcr.audit import read_sheet, reviewer_labels

    out = []
    for sheet in sheets:
        rows = read_sheet(sheet)
        by_reviewer = reviewer_labels(sheet, rows=rows)
        runs: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        for row in rows:
            votes = Counter(labels[row["case_id"]] for labels in by_reviewer.values()
                            if labels.get(row["case_id"]) in ("real", "false positive"))
            if not votes or (len(votes) == 2 and len(set(votes.values())) == 1):
                continue  # nobody decided, or a tie
            judgement = votes.most_common(1)[0][0]
            run_dir = row.get("run_dir", "")
            if run_dir not in runs:
                try:
                    run = RunDir(run_dir)
                    runs[run_dir] = ({r.key: r for r in run.iter_records()}, run.items())
                except MatpcrError as exc:
                    log.warning("%s: audited run %s unreadable (%s); its cases are left out", sheet, run_dir, exc)
                    runs[run_dir] = ({}, {})
            records, items = runs[run_dir]
            record = records.get(row["record_key"])
            if record is None:
                continue
            item = items.get(f"{record.task}/{record.item_id}")
            out.append({"text": example_text(record.constraint, item.text if item else "", record.chain),
                        "label": int(judgement == "real"), "origin": "audit", "constraint": record.constraint,
                        "source_id": record.source_id, "task": record.task, "record": f"audit:{row['case_id']}",
                        "round": record.round, "run": run_dir, "model": record.model})
    return out


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode())


def _counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {o: {"n": sum(r["origin"] == o for r in rows), "violated": sum(r["label"] for r in rows if r["origin"] == o)}
            for o in ORIGINS}


def build(run_dirs: list[str | Path], out_dir: str | Path, test_fraction: float = 0.2, seed: int = 0,
          controls_per_reference: int = 0, control_refs: int = 60, audit: list[str | Path] | None = None,
          data_dir: Path | None = None) -> dict[str, Any]:
    """Write ``train.jsonl``/``test.jsonl`` (split by source across all origins), one held-out split per
    constraint type, and ``manifest.json`` with counts per origin and side."""
    examples = real_examples(run_dirs)
    if controls_per_reference:
        oracles: dict[str, str] = {}
        for d in run_dirs:
            config = RunDir(d).read_config()
            for task in config.get("tasks_resolved") or []:
                if task.get("oracle"):
                    oracles[task["oracle"]] = task["constraint"]
            data_dir = data_dir or (Path(config["data_dir"]) if config.get("data_dir") else None)
        examples += control_examples(oracles, data_dir, control_refs, controls_per_reference, seed)
    if audit:
        examples += audit_examples(audit)
    if not any(e["origin"] == "real" for e in examples):
        raise MatpcrError("no oracle-checked records in those runs (the verifier learns from consistent/violated "
                          "records; evaluation reads real chains only)")
    out = Path(out_dir)
    train = [e for e in examples if not in_test(e["source_id"], test_fraction, seed)]
    test = [e for e in examples if in_test(e["source_id"], test_fraction, seed)]
    _write(out / "train.jsonl", train)
    _write(out / "test.jsonl", test)
    constraints = sorted({e["constraint"] for e in examples})
    heldout = {}
    for c in constraints:
        rest = [e for e in examples if e["constraint"] != c]
        held = [e for e in examples if e["constraint"] == c and e["origin"] == "real"]
        if rest and held:
            _write(out / "heldout" / c / "train.jsonl", rest)
            _write(out / "heldout" / c / "test.jsonl", held)
            heldout[c] = {"train": len(rest), "test": len(held)}
    manifest = {
        "runs": [str(d) for d in run_dirs], "seed": seed, "test_fraction": test_fraction,
        "controls_per_reference": controls_per_reference, "audit_sheets": [str(a) for a in audit or []],
        "examples": len(examples), "train": len(train), "test": len(test),
        "origins": {"train": _counts(train), "test": _counts(test)},
        "models": dict(Counter(e["model"] for e in examples if e["origin"] == "real")),
        "sources_train": len({e["source_id"] for e in train}), "sources_test": len({e["source_id"] for e in test}),
        "sources_on_both_sides": len({e["source_id"] for e in train} & {e["source_id"] for e in test}),
        "labels": dict(Counter(str(e["label"]) for e in examples)),
        "by_constraint": {c: {o: dict(Counter(str(e["label"]) for e in examples
                                              if e["constraint"] == c and e["origin"] == o)) for o in ORIGINS}
                          for c in constraints},
        "heldout": heldout,
    }
    write_atomic(out / "manifest.json", json.dumps(manifest, indent=2).encode())
    return manifest


def read_split(dataset: str | Path, split: str, origins: tuple[str, ...] | None = None
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``split`` is ``in_distribution`` or ``heldout:CONSTRAINT``; the training rows are restricted to
    ``origins`` (all when None) and the test rows are always real chains only."""
    root = Path(dataset)
    folder = root if split == "in_distribution" else root / "heldout" / split.split(":", 1)[1]
    if not (folder / "train.jsonl").exists():
        raise MatpcrError(f"{folder}: no train.jsonl (build it with `matpcr verifier dataset`)")

    def load(path: Path) -> list[dict[str, Any]]:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for r in rows:
            r.setdefault("origin", "control" if r.get("planted") else "real")  # datasets written by matpcr 0.2.0
        return rows

    train_rows = [r for r in load(folder / "train.jsonl") if origins is None or r["origin"] in origins]
    test_rows = [r for r in load(folder / "test.jsonl") if r["origin"] == "real"]
    return train_rows, test_rows
