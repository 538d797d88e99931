"""Building the verifier's training data from oracle-labelled records (no human annotation).

One example per checkable record: the question text (a description of the item; image items are
described by their question), the model's chain, and the oracle's label (1 = violated). Splits are by
source, so no source is on both sides, plus one held-out-constraint split per constraint type. Planted
claims from the validity gate may top the data up; they are marked ``planted``.
"""

from __future__ import annotations

import logging

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import MatpcrError
from matpcr.scoring import run_oracles
from matpcr.rundir import RunDir

log = logging.getLogger("matpcr.verifier")

MAX_QUESTION_CHARS = 600


def example_text(constraint: str, question: str, chain: str) -> str:
    return f"[{constraint}] Question: {question[:MAX_QUESTION_CHARS]}\nAnswer: {chain}"


def _in_test(source_id: str, test_fraction: float, seed: int) -> bool:
    digest = hashlib.sha256(f"{seed}:{source_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2**64 < test_fraction


def collect(run_dirs: list[str | Path]) -> list[dict[str, Any]]:
    examples = []
    for d in run_dirs:
        run = RunDir(d)
        items = run.items()
        for r in run.records():
            if r.status not in ("consistent", "violated"):  # oracle-checked records only
                continue
            item = items.get(f"{r.task}/{r.item_id}")
            question = item.text if item is not None else ""
            examples.append({"text": example_text(r.constraint, question, r.chain), "label": int(r.status == "violated"),
                             "constraint": r.constraint, "source_id": r.source_id, "task": r.task, "record": r.key,
                             "run": str(run.path), "model": r.model, "planted": False})
    return examples


def planted_examples(run_dirs: list[str | Path], per_item: int, seed: int) -> list[dict[str, Any]]:
    """Chains stating planted claims on the runs' own item references, labelled by the oracle."""
    rng = np.random.default_rng(seed)
    out = []
    for d in run_dirs:
        run = RunDir(d)
        by_task, _ = run_oracles(run.read_config())
        for key, item in run.items().items():
            oracle = by_task.get(item.task, (None, None))[1]
            if oracle is None:
                continue  # scored tasks (MSQA) have nothing to plant
            try:
                ref = oracle.prepare(item.reference)
            except Exception as exc:  # an unusable reference gives no planted examples
                log.info("%s: reference unusable for planting (%s: %s)", key, type(exc).__name__, exc)
                continue
            for _ in range(per_item):
                try:
                    claim = oracle.plant_violation(ref, rng) if rng.random() < 0.5 else oracle.plant_consistent(ref, rng)
                except Exception as exc:  # this reference cannot take planted claims (e.g. no free 2θ range)
                    log.info("%s: nothing planted (%s: %s)", key, type(exc).__name__, exc)
                    break
                chain = oracle.render_claim(claim)
                verdicts = [oracle.check(c, ref) for c in oracle.extract(chain)]
                if not verdicts:
                    continue
                out.append({"text": example_text(item.constraint, item.text, chain),
                            "label": int(any(v.status == "violated" for v in verdicts)), "constraint": item.constraint,
                            "source_id": item.source_id, "task": item.task, "record": f"planted:{key}",
                            "run": str(run.path), "model": "planted", "planted": True})
    return out


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def build(run_dirs: list[str | Path], out_dir: str | Path, test_fraction: float = 0.2, seed: int = 0,
          planted_per_item: int = 0) -> dict[str, Any]:
    examples = collect(run_dirs)
    if planted_per_item:
        examples += planted_examples(run_dirs, planted_per_item, seed)
    if not examples:
        raise MatpcrError("no oracle-checked records in those runs (the verifier learns from consistent/violated records)")
    out = Path(out_dir)
    train = [e for e in examples if not _in_test(e["source_id"], test_fraction, seed)]
    test = [e for e in examples if _in_test(e["source_id"], test_fraction, seed)]
    _write(out / "train.jsonl", train)
    _write(out / "test.jsonl", test)
    constraints = sorted({e["constraint"] for e in examples})
    heldout = {}
    for c in constraints:
        rest = [e for e in examples if e["constraint"] != c]
        held = [e for e in examples if e["constraint"] == c]
        if rest and held:
            _write(out / "heldout" / c / "train.jsonl", rest)
            _write(out / "heldout" / c / "test.jsonl", held)
            heldout[c] = {"train": len(rest), "test": len(held)}
    manifest = {
        "runs": [str(d) for d in run_dirs], "seed": seed, "test_fraction": test_fraction,
        "examples": len(examples), "planted": sum(e["planted"] for e in examples),
        "train": len(train), "test": len(test),
        "sources_train": len({e["source_id"] for e in train}), "sources_test": len({e["source_id"] for e in test}),
        "sources_on_both_sides": len({e["source_id"] for e in train} & {e["source_id"] for e in test}),
        "labels": dict(Counter(str(e["label"]) for e in examples)),
        "by_constraint": {c: dict(Counter(str(e["label"]) for e in examples if e["constraint"] == c)) for c in constraints},
        "heldout": heldout,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return manifest


def read_split(dataset: str | Path, split: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``split`` is ``in_distribution`` or ``heldout:CONSTRAINT``."""
    root = Path(dataset)
    folder = root if split == "in_distribution" else root / "heldout" / split.split(":", 1)[1]
    if not (folder / "train.jsonl").exists():
        raise MatpcrError(f"{folder}: no train.jsonl (build it with `matpcr verifier dataset`)")
    load = lambda p: [json.loads(l) for l in p.read_text().splitlines() if l.strip()]  # noqa: E731
    return load(folder / "train.jsonl"), load(folder / "test.jsonl")
