"""One oracle, one chain, one reference: the engine's scoring path, for debugging oracles."""

from __future__ import annotations

import dataclasses
from typing import Any

from matpcr.plugins import get_manager
from matpcr.records import Item, item_status


def check_chain(oracle_name: str, reference: str, chain: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    oracle = get_manager().registry.get("oracles", oracle_name).factory(**(params or {}))
    ref = oracle.read_reference(reference)
    item = Item(id="check", task="check", constraint=oracle.constraint, modality="text", text="", reference=ref)
    prepared = oracle.prepare(ref)
    claims = oracle.extract(chain, item)
    rows, verdicts = [], []
    for claim in claims:
        verdict = oracle.check(claim, prepared)
        verdicts.append(verdict)
        rows.append({**dataclasses.asdict(claim), "verdict": dataclasses.asdict(verdict),
                     "accurate": oracle.accurate(claim, prepared)})
    return {"oracle": oracle_name, "params": oracle.params, "reference": reference,
            "status": item_status(verdicts), "claims": rows}
