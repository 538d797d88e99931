"""One oracle, one chain, one reference: the engine's scoring path outside a run.

``check`` is the public entry point (``matpcr.check``) and what ``matpcr check`` prints with ``--json``;
``check_batch`` serves ``matpcr check ORACLE --batch FILE.jsonl``: one oracle instance for the whole file, each
distinct reference read and prepared once, and a bad line answered with an error object for that line.
The core never imports the built-in plugins: oracles come from the plugin registry.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from matpcr.plugins import get_manager
from matpcr.records import Item, item_status
from matpcr.scoring import judge_claims


def make_oracle(name: str, params: dict[str, Any] | None = None) -> Any:
    """An oracle from the registry, with ``params`` overriding its defaults."""
    return get_manager().registry.get("oracles", name).factory(**(params or {}))


def _reference_label(reference: Any) -> Any:
    if isinstance(reference, dict):
        for key in ("material_id", "name", "phase", "file", "id"):
            if reference.get(key):
                return reference[key]
        return "<inline reference>"
    return reference


def load_reference(oracle: Any, reference: Any) -> tuple[dict[str, Any], Any]:
    """The JSON reference and what ``check`` needs from it: a spec string goes through ``read_reference`` (a CIF,
    pattern, spectrum, micrograph, JSON record or store id); a dict is used as the reference record itself."""
    ref = reference if isinstance(reference, dict) else oracle.read_reference(str(reference))
    return ref, oracle.prepare(ref)


def check_prepared(oracle: Any, name: str, label: Any, ref: dict[str, Any], prepared: Any, chain: str,
                   question: str = "") -> dict[str, Any]:
    """Read the chain and check every claim against an already prepared reference. A reader exception makes the
    result ``error`` with the message, as in a run; it is never reported as "no claim"."""
    item = Item(id="check", task="check", constraint=oracle.constraint, modality="text", text=question or "",
                reference=ref)
    result: dict[str, Any] = {"oracle": name, "params": dict(oracle.params), "reference": label}
    try:
        extraction = oracle.read(chain if isinstance(chain, str) else str(chain), item)
    except Exception as exc:
        return {**result, "status": "error", "error": f"claim reader failed: {type(exc).__name__}: {exc}",
                "claims": [], "rejected": [], "notes": []}
    judged = judge_claims(oracle, extraction.claims, prepared)
    rows = [{**dataclasses.asdict(claim), "verdict": dataclasses.asdict(verdict), "accurate": accurate}
            for claim, (verdict, accurate) in zip(extraction.claims, judged)]
    return {**result, "status": item_status([v for v, _ in judged]), "claims": rows,
            "rejected": [dataclasses.asdict(c) for c in extraction.rejected], "notes": list(extraction.notes)}


def check(oracle: str, reference: Any, chain: str, *, question: str = "", **oracle_args: Any) -> dict[str, Any]:
    """Parse ``chain`` with oracle ``oracle``'s reader and check every claim against ``reference`` (a file or id
    the oracle can read, or a reference dict). Returns the JSON ``matpcr check --json`` prints: status, claims
    with verdicts and accuracy, the numbers the reader rejected (with reasons) and its notes. ``question``, when
    given, lets the reader tell numbers copied from the question (``question_echo``)."""
    instance = make_oracle(oracle, oracle_args)
    ref, prepared = load_reference(instance, reference)
    return check_prepared(instance, oracle, _reference_label(reference), ref, prepared, chain, question)


#: distinct references kept prepared during a batch (a spectrum or pattern is worth keeping)
BATCH_CACHE = 256


def check_batch(oracle: str, lines: Iterable[str], params: dict[str, Any] | None = None,
                reference: Any = None) -> Iterator[dict[str, Any]]:
    """One result per JSON line ``{"reference": ..., "chain": ..., "question": ...}`` (``reference`` may be left out
    when a default is given). A line that is not valid JSON, lacks a field, or names an unreadable reference gives
    ``{"line": N, "status": "error", "error": ...}`` and the batch goes on."""
    instance = make_oracle(oracle, params)
    cache: OrderedDict[str, tuple[dict[str, Any], Any]] = OrderedDict()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("a line must be a JSON object")
            ref_spec = record.get("reference", reference)
            chain = record.get("chain")
            if ref_spec is None or not isinstance(chain, str):
                raise ValueError('each line needs "reference" and a string "chain"')
            key = ref_spec if isinstance(ref_spec, str) else json.dumps(ref_spec, sort_keys=True, default=str)
            if key in cache:
                cache.move_to_end(key)
            else:
                cache[key] = load_reference(instance, ref_spec)
                if len(cache) > BATCH_CACHE:
                    cache.popitem(last=False)
            ref, prepared = cache[key]
            result = check_prepared(instance, oracle, _reference_label(ref_spec), ref, prepared, chain,
                                    str(record.get("question") or ""))
        except Exception as exc:
            yield {"line": number, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
            continue
        if "id" in record:
            result = {"id": record["id"], **result}
        yield {"line": number, **result}


def check_chain(oracle_name: str, reference: str, chain: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Kept for callers of the first version: ``check`` with the oracle arguments as a dict."""
    return check(oracle_name, reference, chain, **(params or {}))
