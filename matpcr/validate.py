"""The oracle validity gate, rebuilt (docs/oracles.md, "The validity gate"; issue 13).

For every oracle and every one of its real references, the oracle builds *controls* (``Oracle.controls``):
negative controls that look like real mistakes and positive controls that are honest answers, computed
from the raw reference (structure, spectrum, micrograph calibration, DFT values) independently of the
oracle's own prepared reference. Each control is written into a chain through the oracle's chain
templates (``Oracle.chain_templates``: prose, lists, LaTeX, tables, distractor numbers...) and judged
through the whole path the engine uses (``matpcr.scoring.score_with_oracle``: ``read`` then ``check``).

Reported per family and control: ``n`` (chains judged), ``rate`` (share judged *violated*: recall d̂ for
a negative control, false-alarm rate f̂ for a positive one) with a Clopper–Pearson 95% interval, the share
left unparsed, and the rate per template. Per family: pooled d̂ and f̂ (what Corollary 2 uses), planted
mixtures at the given rates (measured vs true PCR, with the Corollary-2 interval), a sensitivity grid
that rebuilds the controls at each tolerance, and the oracle-power (chance-pass) distribution.

The core knows no physics: everything family-specific comes through the Oracle base-class methods.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from matpcr import stats
from matpcr.errors import MatpcrError
from matpcr.plugins import get_manager
from matpcr.protocols import Control, Oracle, as_loader
from matpcr.records import Item, Record
from matpcr.tasks import discover

log = logging.getLogger("matpcr.validate")

DEFAULT_RATES = (0.1, 0.3, 0.5)
TOLERANCE_FACTORS = (0.5, 1.0, 2.0)
#: references used per family by default (a seeded random sample; ``max_refs=0`` uses all)
DEFAULT_MAX_REFS = 60


@dataclass
class Outcome:
    """One judged control chain."""

    family: str
    control: str
    kind: str
    template: str
    status: str
    reference: str
    source: str
    p_chance: float | None
    values: list[Any]
    unit: str
    #: the chain the template wrote (kept so the verifier can learn from the gate's controls)
    chain: str = ""


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> list[float]:
    return list(stats.clopper_pearson(k, n, alpha))


def _sample(items: list[Item], k: int | None, seed: int) -> list[Item]:
    if not k or len(items) <= k:
        return items
    idx = np.random.default_rng([seed, 7]).choice(len(items), k, replace=False)
    return [items[i] for i in sorted(idx)]


def references_for(oracle_name: str, data_dir: Path | None, max_refs: int | None = None, seed: int = 0) -> list[Item]:
    """Real references for one oracle: completed items of every task that uses it, deduplicated by reference
    file/id, a seeded random sample of at most ``max_refs`` per loader (text tasks first)."""
    manager = get_manager()
    tasks = [t for t in discover().values() if t.oracle == oracle_name]
    if not tasks:
        raise MatpcrError(f"no task uses oracle {oracle_name!r}, so there are no references to build controls on")
    tasks.sort(key=lambda t: t.modality != "text")
    seen: dict[str, Item | None] = {}
    loaders_done = set()
    for task in tasks:
        key = (task.loader, repr(sorted(task.loader_args.items())))
        if key in loaders_done:
            continue
        loaders_done.add(key)
        loader = as_loader(manager.registry.get("tasks", task.loader).factory())
        items = [i for i in loader.load(task, data_dir)
                 if str(i.reference.get("file", i.id)) + str(i.reference.get("material_id", "")) not in seen]
        for item in _sample(items, max_refs, seed):
            ref_key = str(item.reference.get("file", item.id)) + str(item.reference.get("material_id", ""))
            if ref_key in seen:
                continue
            try:
                seen[ref_key] = loader.complete(item)
            except Exception as exc:  # an unreadable reference file is skipped (logged with --verbose)
                log.info("reference %s skipped: %s: %s", ref_key, type(exc).__name__, exc)
                seen[ref_key] = None
    return [v for v in seen.values() if v is not None]


def judge_chain(oracle: Oracle, item: Item, chain: str) -> tuple[str, float | None]:
    """The item status the engine would give ``chain`` (``scoring.score_with_oracle``), and the p_chance
    stored in its first verdict."""
    from matpcr.scoring import score_with_oracle

    record = Record(key="gate", task=item.task, item_id=item.id, source_id=item.source_id, constraint=item.constraint,
                    modality=item.modality, seed=0, round=0, sample=0, model="gate", prompt=[], chain=chain)
    score_with_oracle(record, oracle, item)
    p = next((v.get("details", {}).get("p_chance") for v in record.verdicts if v.get("details")), None)
    return record.status, p


def run_controls(name: str, oracle: Oracle, items: list[Item], per_reference: int, seed: int,
                 template_names: list[str] | None = None) -> tuple[list[Outcome], int]:
    """Build and judge every control of every reference, each written through ``per_reference`` templates
    (drawn without replacement, seeded per reference; ``template_names`` restricts them)."""
    templates = [t for t in oracle.chain_templates() if not template_names or t.name in template_names]
    outcomes: list[Outcome] = []
    skipped = 0
    for n, item in enumerate(items):
        rng = np.random.default_rng([seed, n])
        try:
            controls: list[Control] = oracle.controls(item, items, rng)
        except Exception as exc:
            log.info("%s: no controls for %s: %s: %s", name, item.id, type(exc).__name__, exc)
            skipped += 1
            continue
        for control in controls:
            if templates:
                picks = rng.choice(len(templates), min(per_reference, len(templates)), replace=False)
                chains = [(templates[int(i)].name, templates[int(i)](control.values, control.unit, rng)) for i in picks]
            else:
                from matpcr.records import Claim

                chains = [("canonical", oracle.render_claim(Claim(control.name, control.values[0], control.unit)))]
            for template, chain in chains:
                status, p = judge_chain(oracle, item, chain)
                outcomes.append(Outcome(name, control.name, control.kind, template, status, item.id, item.source_id, p,
                                        list(control.values), control.unit, chain))
    return outcomes, skipped


def summarize(outcomes: list[Outcome], names: dict[str, str]) -> dict[str, Any]:
    """Per control: n, rate flagged violated, Clopper–Pearson interval, unparsed share, per-template rates."""
    by: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by[o.control].append(o)
    out: dict[str, Any] = {}
    for control in [*names, *(c for c in by if c not in names)]:
        rows = by.get(control, [])
        n = len(rows)
        k = sum(o.status == "violated" for o in rows)
        per_template: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in rows:
            per_template[o.template][0] += o.status == "violated"
            per_template[o.template][1] += 1
        out[control] = {"kind": names.get(control, rows[0].kind if rows else "negative"), "n": n, "violated": k,
                        "rate": k / n if n else None, "ci": clopper_pearson(k, n),
                        "unparsed": sum(o.status == "unparsable" for o in rows),
                        "abstained": sum(o.status == "abstain" for o in rows),
                        "by_template": {t: round(v[0] / v[1], 4) for t, v in sorted(per_template.items())}}
    return out


def pooled(outcomes: list[Outcome]) -> dict[str, Any]:
    """Pooled recall d̂ (negatives judged violated) and false alarm f̂ (positives judged violated)."""
    neg = [o for o in outcomes if o.kind == "negative"]
    pos = [o for o in outcomes if o.kind == "positive"]
    kn, kp = sum(o.status == "violated" for o in neg), sum(o.status == "violated" for o in pos)
    return {"recall": kn / len(neg) if neg else None, "recall_ci": clopper_pearson(kn, len(neg)), "n_negative": len(neg),
            "false_alarm": kp / len(pos) if pos else None, "false_alarm_ci": clopper_pearson(kp, len(pos)),
            "n_positive": len(pos)}


def corollary2(pcr: float, recall: float, false_alarm: float) -> dict[str, Any]:
    b = stats.corollary2_bounds(pcr, recall, false_alarm)
    return {"pcr_true_lo": b["pcr_true_low"], "pcr_true_hi": b["pcr_true_high"], "pcr_true_point": b["pcr_true_point"]}


def mixtures(outcomes: list[Outcome], rates: tuple[float, ...], seed: int, gate: dict[str, Any]) -> dict[str, Any]:
    """Planted mixtures: at violation share r, draw negatives and positives (already judged) so that a share r
    of the chains is a real mistake; measured PCR (share of checkable chains not judged violated) against the
    true PCR 1 − r, with the Corollary-2 interval from the family's pooled d̂, f̂."""
    neg = [o for o in outcomes if o.kind == "negative"]
    pos = [o for o in outcomes if o.kind == "positive"]
    out: dict[str, Any] = {}
    if not neg or not pos:
        return out
    for rate in rates:
        rng = np.random.default_rng([seed, int(rate * 1000), 99])
        total = int(min(len(neg) / rate, len(pos) / (1 - rate)))
        n_neg = int(round(rate * total))
        chosen = [neg[i] for i in rng.choice(len(neg), n_neg, replace=False)] + \
                 [pos[i] for i in rng.choice(len(pos), total - n_neg, replace=False)]
        checkable = [o for o in chosen if o.status in ("consistent", "violated")]
        truth_checkable = [o for o in checkable if o.kind == "positive"]
        measured = sum(o.status == "consistent" for o in checkable) / len(checkable) if checkable else None
        entry = {"n": len(chosen), "n_violations": n_neg, "checkable": len(checkable), "true_pcr": 1 - n_neg / len(chosen),
                 "true_pcr_checkable": len(truth_checkable) / len(checkable) if checkable else None,
                 "measured_pcr": measured,
                 "fn_rate": sum(o.status != "violated" for o in chosen if o.kind == "negative") / max(1, n_neg),
                 "fp_rate": sum(o.status == "violated" for o in chosen if o.kind == "positive") / max(1, total - n_neg)}
        if measured is not None and gate.get("recall") is not None and gate.get("false_alarm") is not None:
            entry.update(corollary2(measured, gate["recall"], gate["false_alarm"]))
        out[str(rate)] = entry
    return out


def power(oracle: Oracle, items: list[Item]) -> dict[str, Any]:
    """Per reference chance-pass probability (``Oracle.chance``) and its distribution."""
    values = {}
    for item in items:
        try:
            p = oracle.chance(oracle.prepare(item.reference))
        except Exception:
            p = None
        if p is not None and np.isfinite(p):
            values[item.id] = round(float(p), 4)
    arr = np.array(list(values.values()), float)
    dist = {}
    if arr.size:
        dist = {"n": int(arr.size), "mean": float(arr.mean()), "min": float(arr.min()), "max": float(arr.max()),
                **{f"q{int(q * 100)}": float(np.quantile(arr, q)) for q in (0.1, 0.25, 0.5, 0.75, 0.9)},
                "share_over_0.3": float(np.mean(arr > 0.3)), "share_over_0.5": float(np.mean(arr > 0.5))}
    return {"distribution": dist, "per_reference": values}


def validate(oracles: list[str] | None = None, rates: tuple[float, ...] = DEFAULT_RATES, per_reference: int = 2,
             data_dir: Path | None = None, max_refs: int | None = DEFAULT_MAX_REFS, seed: int = 0,
             oracle_args: dict[str, dict[str, Any]] | None = None, sensitivity: bool = True,
             sensitivity_refs: int = 20) -> dict[str, Any]:
    registry = get_manager().registry
    names = oracles or registry.names("oracles")
    report: dict[str, Any] = {"rates": list(rates), "per_reference": per_reference, "seed": seed,
                              "max_refs": max_refs, "families": {}}
    for name in names:
        t0 = time.perf_counter()
        factory = registry.get("oracles", name).factory
        args = (oracle_args or {}).get(name, {})
        oracle = factory(**args)
        if not oracle.control_names:
            log.info("%s: no validity-gate controls", name)
            continue
        items = references_for(name, data_dir, max_refs, seed)
        outcomes, skipped = run_controls(name, oracle, items, per_reference, seed)
        gate = pooled(outcomes)
        digest = hashlib.sha256("".join(sorted(i.source_id for i in items)).encode()).hexdigest()[:12]
        entry: dict[str, Any] = {
            "oracle": name, "n_references": len(items), "references_skipped": skipped, "references_sha": digest,
            "params": dict(oracle.params), "templates": [t.name for t in oracle.chain_templates()],
            "controls": summarize(outcomes, dict(oracle.control_names)), **gate,
            "mixtures": mixtures(outcomes, rates, seed, gate), "power": power(oracle, items), "sensitivity": {},
        }
        param = oracle.tolerance_param
        if sensitivity and param:
            values = oracle.sensitivity_values or [oracle.params[param] * f for f in TOLERANCE_FACTORS]
            subset = items[:sensitivity_refs]
            for value in values:
                varied = factory(**{**args, param: value})
                sub, _ = run_controls(name, varied, subset, 1, seed)  # controls rebuilt at this tolerance
                entry["sensitivity"][f"{param}={value:g}"] = {**pooled(sub), "n_references": len(subset)}
        entry["seconds"] = round(time.perf_counter() - t0, 1)
        report["families"][name] = entry
    return report


def gate_figures(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``matpcr run --gate FILE`` keeps per oracle for Corollary 2: pooled d̂ and f̂ with their n."""
    return {name: {k: fam.get(k) for k in ("recall", "false_alarm", "n_negative", "n_positive", "references_sha")}
            for name, fam in report.get("families", {}).items()}
