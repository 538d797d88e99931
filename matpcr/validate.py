"""The oracle validity gate (MatPCR Table 1): planted violations in real reference data.

For each oracle, claims are planted into its real references with the oracle's own generators at the
given violation rates, mixed with planted consistent claims, written out as chains a model might
produce, parsed back and checked. The false-negative rate (planted violations not flagged) and the
false-positive rate (planted consistent claims flagged) are reported per oracle and rate, with a
sensitivity grid over the oracle's main tolerance.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import MatpcrError
from matpcr.plugins import get_manager
from matpcr.protocols import Oracle, as_loader
from matpcr.records import Claim, Item, item_status
from matpcr.tasks import TaskConfig, discover

log = logging.getLogger("matpcr.validate")

DEFAULT_RATES = (0.1, 0.3, 0.5)
TOLERANCE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)


@dataclass
class Planted:
    chain: str
    violation: bool
    reference: Any
    source: str


def references_for(oracle_name: str, data_dir: Path | None, max_refs: int | None = None) -> list[Item]:
    """Real references for one oracle: the completed items of every task that uses it (deduplicated)."""
    manager = get_manager()
    tasks = [t for t in discover().values() if (t.oracle or t.scorer) == oracle_name]
    if not tasks:
        raise MatpcrError(f"no task uses oracle {oracle_name!r}, so there are no references to plant into")
    tasks.sort(key=lambda t: t.modality != "text")  # text tasks avoid rendering images
    seen: dict[str, Item | None] = {}
    loaders_done = set()
    for task in tasks:
        key = (task.loader, repr(sorted(task.loader_args.items())))
        if key in loaders_done or (max_refs and sum(v is not None for v in seen.values()) >= max_refs):
            continue
        loaders_done.add(key)
        loader = as_loader(manager.registry.get("tasks", task.loader).factory())
        for item in loader.load(task, data_dir):
            ref_key = str(item.reference.get("file", item.id))
            if ref_key in seen:
                continue
            try:
                seen[ref_key] = loader.complete(item)
            except Exception as exc:  # an unreadable reference file is skipped (logged with --verbose)
                log.info("reference %s skipped: %s: %s", ref_key, type(exc).__name__, exc)
                seen[ref_key] = None
            if max_refs and sum(v is not None for v in seen.values()) >= max_refs:
                break
    return [v for v in seen.values() if v is not None]


def plant(oracle: Oracle, refs: list[tuple[Item, Any]], rate: float, per_ref: int, seed: int) -> list[Planted]:
    rng = np.random.default_rng([seed, int(rate * 1000)])
    total = len(refs) * per_ref
    violate = np.zeros(total, dtype=bool)
    violate[rng.permutation(total)[: int(round(rate * total))]] = True
    out = []
    for i in range(total):
        item, prepared = refs[i // per_ref]
        claim: Claim = oracle.plant_violation(prepared, rng) if violate[i] else oracle.plant_consistent(prepared, rng)
        out.append(Planted(oracle.render_claim(claim), bool(violate[i]), prepared, item.source_id))
    return out


def judge(oracle: Oracle, planted: list[Planted]) -> dict[str, Any]:
    fn = fp = unparsed = 0
    n_v = sum(p.violation for p in planted)
    n_c = len(planted) - n_v
    for p in planted:
        status = item_status([oracle.check(c, p.reference) for c in oracle.extract(p.chain)])
        if status == "unparsable":
            unparsed += 1
        if p.violation and status != "violated":
            fn += 1
        if not p.violation and status == "violated":
            fp += 1
    return {"n": len(planted), "n_violations": n_v, "n_consistent": n_c, "false_negatives": fn,
            "false_positives": fp, "fn_rate": fn / n_v if n_v else 0.0, "fp_rate": fp / n_c if n_c else 0.0,
            "unparsed": unparsed}


def validate(oracles: list[str] | None = None, rates: tuple[float, ...] = DEFAULT_RATES, per_reference: int = 10,
             data_dir: Path | None = None, max_refs: int | None = None, seed: int = 0,
             oracle_args: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    registry = get_manager().registry
    names = oracles or registry.names("oracles")
    report: dict[str, Any] = {"rates": list(rates), "per_reference": per_reference, "seed": seed, "oracles": {}}
    for name in names:
        factory = registry.get("oracles", name).factory
        args = (oracle_args or {}).get(name, {})
        oracle = factory(**args)
        items = references_for(name, data_dir, max_refs)
        refs = []
        skipped = 0
        probe = np.random.default_rng(0)
        for item in items:
            try:
                prepared = oracle.prepare(item.reference)
                oracle.plant_consistent(prepared, probe)  # references without the needed field are skipped
                refs.append((item, prepared))
            except Exception as exc:
                log.info("%s: reference %s skipped: %s: %s", name, item.id, type(exc).__name__, exc)
                skipped += 1
        digest = hashlib.sha256("".join(sorted(i.source_id for i, _ in refs)).encode()).hexdigest()[:12]
        entry: dict[str, Any] = {"n_references": len(refs), "references_skipped": skipped,
                                 "references_sha": digest, "params": oracle.params,
                                 "by_rate": {}, "sensitivity": {}}
        planted_by_rate = {}
        for rate in rates:
            planted = plant(oracle, refs, rate, per_reference, seed)
            planted_by_rate[rate] = planted
            entry["by_rate"][str(rate)] = judge(oracle, planted)
        param = oracle.tolerance_param
        if param and refs:
            mid = planted_by_rate[rates[len(rates) // 2]]
            values = oracle.sensitivity_values or [oracle.params[param] * f for f in TOLERANCE_FACTORS]
            for value in values:
                varied = factory(**{**args, param: value})
                # the planted claims are judged against references prepared with the default parameters
                entry["sensitivity"][f"{param}={value:g}"] = judge(varied, mid)
        report["oracles"][name] = entry
    return report
