"""Turning a chain into claims and verdicts; shared by the engine and ``matpcr rescore``.

Scoring never raises: a failing oracle or a garbled answer becomes an ``unparsable`` or
``abstain`` record with the reason, so one bad item cannot end a long run.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from matpcr.protocols import Oracle
from matpcr.records import Item, Record, Verdict, item_status

_PREPARED: dict[tuple[int, str, str], Any] = {}


def run_oracles(config: dict[str, Any], overrides: dict[str, dict[str, Any]] | None = None
                ) -> tuple[dict[str, tuple[str, Any]], dict[str, dict[str, Any]]]:
    """The oracle (or scorer) each task of a stored run used, rebuilt from its ``config.json`` with the run's
    ``--oracle-args`` plus ``overrides``: ``{task: (name, instance)}`` and the merged arguments. Shared by
    re-scoring, audits and the verifier's planted examples, so all three read a run the same way."""
    from matpcr.plugins import get_manager

    registry = get_manager(config.get("plugins", [])).registry
    merged = {k: dict(v) for k, v in config.get("oracle_args", {}).items()}
    for name, params in (overrides or {}).items():
        merged.setdefault(name, {}).update(params)
    instances: dict[str, Any] = {}
    by_task: dict[str, tuple[str, Any]] = {}
    for task in config.get("tasks_resolved", []):
        name = task.get("oracle") or task.get("scorer")
        if not name:
            continue
        if name not in instances:
            instances[name] = registry.get("oracles", name).factory(**merged.get(name, {}))
        by_task[task["task"]] = (name, instances[name])
    return by_task, merged


def prepared_reference(oracle: Oracle, item: Item) -> Any:
    """``oracle.prepare`` once per (oracle, item); references can be arrays worth keeping."""
    key = (id(oracle), item.task, item.id)
    if key not in _PREPARED:
        if len(_PREPARED) > 20_000:
            _PREPARED.clear()
        _PREPARED[key] = oracle.prepare(item.reference)
    return _PREPARED[key]


def score_with_scorer(record: Record, scorer: Any, item: Item) -> Record:
    """Tasks without a physical oracle (MSQA) score answers: ``scorer.score`` returns named scores
    (1, 0, or None when not scorable); the primary one sets the record's status and accuracy."""
    try:
        scores = scorer.score(record.chain or "", item, record.meta)
    except Exception as exc:
        scores = {}
        record.meta["scoring_error"] = f"scorer failed: {type(exc).__name__}: {exc}"
    record.scores = scores
    primary = scores.get(scorer.primary)
    record.accurate = None if primary is None else bool(primary)
    record.status = "unparsable" if primary is None else ("consistent" if primary else "violated")
    return record


def score_record(record: Record, oracle: Oracle, item: Item) -> Record:
    """Fill claims, verdicts, status and accuracy of ``record`` in place."""
    if hasattr(oracle, "score") and hasattr(oracle, "primary"):
        return score_with_scorer(record, oracle, item)
    record.claims, record.verdicts, record.accurate = [], [], None
    if record.error:
        record.status = "unparsable"
        record.meta["scoring_error"] = f"no answer: {record.error}"
        return record
    try:
        reference = prepared_reference(oracle, item)
    except Exception as exc:
        record.status = "abstain"
        record.meta["scoring_error"] = f"reference unusable: {type(exc).__name__}: {exc}"
        return record
    try:
        claims = oracle.extract(record.chain or "", item)
    except Exception as exc:
        record.status = "unparsable"
        record.meta["scoring_error"] = f"parser failed: {type(exc).__name__}: {exc}"
        return record
    verdicts: list[Verdict] = []
    accuracies: list[bool] = []
    for claim in claims:
        try:
            verdict = oracle.check(claim, reference)
            acc = oracle.accurate(claim, reference)
        except Exception as exc:
            verdict, acc = Verdict("abstain", f"the oracle could not check this claim ({type(exc).__name__})"), None
        verdicts.append(verdict)
        if acc is not None and verdict.status in ("consistent", "violated"):
            accuracies.append(bool(acc))
    record.claims = [dataclasses.asdict(c) for c in claims]
    record.verdicts = [dataclasses.asdict(v) for v in verdicts]
    record.status = item_status(verdicts)
    record.accurate = all(accuracies) if accuracies else None
    if not claims:
        record.meta["scoring_error"] = "no checkable claim found in the answer"
    return record
