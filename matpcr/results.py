"""Aggregating records into ``results.json`` and the end-of-run summary table.

Every rate carries its bootstrap interval, n and number of sources. First answers (round 0,
sample 0) give the headline metrics; an intervention section compares them with the final round.
"""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from matpcr import stats
from matpcr.records import Record
from matpcr.rundir import SCHEMA_VERSION
from matpcr.table import format_table

PACKAGES = ("matpcr", "numpy", "scipy", "torch", "transformers", "pymatgen", "scikit-image", "pluggy", "vllm", "peft")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_revision() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def first_answers(records: list[Record]) -> list[Record]:
    return sorted((r for r in records if r.round == 0 and r.sample == 0), key=lambda r: r.key)


def final_answers(records: list[Record]) -> dict[tuple[str, str, int, int], Record]:
    """The last round each (task, item, seed, sample) reached."""
    last: dict[tuple[str, str, int, int], Record] = {}
    for r in records:
        k = (r.task, r.item_id, r.seed, r.sample)
        if k not in last or r.round > last[k].round:
            last[k] = r
    return last


def _checkable(r: Record) -> bool:
    return r.status in ("consistent", "violated")


def _score_rate(records: list[Record], name: str, n_boot: int, seed: int) -> dict[str, Any]:
    scored = [r for r in records if r.scores.get(name) is not None]
    rate = stats.bootstrap_rate([float(r.scores[name]) for r in scored], [r.source_id for r in scored],
                                n_boot=n_boot, seed=seed).to_dict()
    rate["unscored"] = len(records) - len(scored)
    return rate


def summarize(records: list[Record], n_boot: int = stats.DEFAULT_B, seed: int = 0) -> dict[str, Any]:
    """Metrics of one group of records (first answers)."""
    counts = {s: 0 for s in ("consistent", "violated", "abstain", "unparsable")}
    for r in records:
        counts[r.status] += 1
    statuses = [r.status for r in records]
    sources = [r.source_id for r in records]
    out: dict[str, Any] = {"n_records": len(records), "status_counts": counts,
                           "pcr": stats.pcr(statuses, sources, n_boot=n_boot, seed=seed).to_dict()}
    viol = [sum(v["status"] == "violated" for v in r.verdicts) for r in records]
    chk = [sum(v["status"] in ("consistent", "violated") for v in r.verdicts) for r in records]
    out["claim_violation_rate"] = stats.violation_rate(viol, chk, sources, n_boot=n_boot, seed=seed).to_dict()
    acc = [r for r in records if r.accurate is not None and _checkable(r)]
    if acc:
        out["accuracy"] = stats.bootstrap_rate([float(r.accurate) for r in acc], [r.source_id for r in acc],
                                               n_boot=n_boot, seed=seed).to_dict()
        out["accuracy_vs_consistency"] = stats.four_cells([bool(r.accurate) for r in acc],
                                                          [r.status == "consistent" for r in acc])
    names = sorted({k for r in records for k in r.scores})
    if names:
        out["scores"] = {n: _score_rate(records, n, n_boot, seed) for n in names}
        groups = sorted({r.meta.get("group") for r in records if r.meta.get("group")})
        if groups:
            out["scores_by_group"] = {g: {n: _score_rate([r for r in records if r.meta.get("group") == g], n, n_boot, seed)
                                          for n in names} for g in groups}
    errors = sum(1 for r in records if r.error)
    if errors:
        out["generation_errors"] = errors
    return out


def intervention_summary(records: list[Record], n_boot: int, seed: int) -> dict[str, Any]:
    """Before (round 0) versus after (last round reached) per task, with exact McNemar tests."""
    by_task: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_task[r.task].append(r)
    cells: dict[str, Any] = {}
    for task, recs in sorted(by_task.items()):
        first = {(r.item_id, r.seed, r.sample): r for r in recs if r.round == 0}
        last = final_answers(recs)
        pairs = [(first[(i, s, n)], last[(t, i, s, n)]) for (t, i, s, n) in last if (i, s, n) in first]
        pairs = [(a, b) for a, b in pairs if _checkable(a) and _checkable(b)]
        cell: dict[str, Any] = {"n_pairs": len(pairs)}
        revised = any(r.round > 0 for r in recs) or not any(r.sample > 0 for r in recs)
        if pairs and revised:  # best-of-N alone has no before/after pairs, only its own bounds
            before = [a.status == "consistent" for a, _ in pairs]
            after = [b.status == "consistent" for _, b in pairs]
            cell.update(stats.paired_outcomes(before, after))
            src = [a.source_id for a, _ in pairs]
            cell["pcr_before_ci"] = stats.bootstrap_rate(before, src, n_boot=n_boot, seed=seed).to_dict()
            cell["pcr_after_ci"] = stats.bootstrap_rate(after, src, n_boot=n_boot, seed=seed).to_dict()
            cell["residual_violations"] = int(sum(not x for x in after))
            cell["claims_per_item_before"] = float(np.mean([len(a.claims) for a, _ in pairs]))
            cell["claims_per_item_after"] = float(np.mean([len(b.claims) for _, b in pairs]))
            acc_after = [b.accurate for _, b in pairs if b.accurate is not None]
            cell["accuracy_after"] = float(np.mean(acc_after)) if acc_after else None
            cell["rounds_used"] = float(np.mean([b.round for _, b in pairs]))
        samples = sorted({r.sample for r in recs})
        if len(samples) > 1:
            groups: dict[tuple[str, int], list[Record]] = defaultdict(list)
            for r in recs:
                if r.round == 0 and _checkable(r):
                    groups[(r.item_id, r.seed)].append(r)
            picks = [float(np.mean([g.status == "consistent" for g in grp])) for grp in groups.values()]
            best = [float(any(g.status == "consistent" for g in grp)) for grp in groups.values()]
            cell["best_of_n"] = {"n_items": len(groups), "samples": len(samples),
                                 "random_pick_pcr": float(np.mean(picks)) if picks else None,
                                 "oracle_upper_bound_pcr": float(np.mean(best)) if best else None}
        cells[task] = cell
    tested = [t for t, c in cells.items() if "p" in c]  # the family of tests in this run
    for name, adjusted in (("p_holm", stats.holm([cells[t]["p"] for t in tested])),
                           ("p_bh", stats.benjamini_hochberg([cells[t]["p"] for t in tested]))):
        for t, p in zip(tested, adjusted):
            cells[t][name] = p
    return cells


def aggregate(records: list[Record], n_boot: int = stats.DEFAULT_B, seed: int = 0) -> dict[str, Any]:
    first = first_answers(records)
    by: dict[str, dict[str, list[Record]]] = {"tasks": defaultdict(list), "constraints": defaultdict(list),
                                               "modalities": defaultdict(list)}
    for r in first:
        by["tasks"][r.task].append(r)
        by["constraints"][r.constraint].append(r)
        by["modalities"][r.modality].append(r)
    out: dict[str, Any] = {"overall": summarize(first, n_boot, seed)}
    for group, parts in by.items():
        out[group] = {name: summarize(recs, n_boot, seed) for name, recs in sorted(parts.items())}
    checked = [r for r in first if r.meta.get("checker")]
    if checked:
        predicted = [float(r.meta["checker"]["predicted"] == "violated") for r in checked]
        both = [r for r in checked if _checkable(r)]
        out["checker"] = {
            "name": checked[0].meta["checker"]["name"],
            "predicted_violation_rate": stats.bootstrap_rate(predicted, [r.source_id for r in checked],
                                                             n_boot=n_boot, seed=seed).to_dict(),
            "agreement_with_oracle": stats.bootstrap_rate(
                [float((r.meta["checker"]["predicted"] == "violated") == (r.status == "violated")) for r in both],
                [r.source_id for r in both], n_boot=n_boot, seed=seed).to_dict() if both else None,
        }
    treated = [r for r in records if r.intervention]
    if treated:
        out["intervention"] = {"name": treated[0].intervention, **intervention_summary(treated, n_boot, seed)}
    return out


def build_results(evaluation: Any, records: list[Record], started: float) -> dict[str, Any]:
    config = evaluation.config
    provenance = {}
    for task in evaluation.tasks:
        metas = [i.meta for k, i in evaluation.items.items() if k.startswith(task.task + "/")]
        provenance[task.task] = {
            "loader": task.loader, "version": task.version, "config_path": task.path,
            "data_dir": str(evaluation.data_dir) if evaluation.data_dir else None,
            "datasets": sorted({str(m.get("dataset")) for m in metas if m.get("dataset")}),
            "licences": sorted({str(m.get("licence")) for m in metas if m.get("licence")}),
            "n_items": len(metas),
            "loader_report": evaluation.loader_reports.get(task.task),
            "unusable_items": {k: v for k, v in evaluation.bad_items.items() if k.startswith(task.task + "/")},
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "success",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "run_dir": str(evaluation.run.path),
        "config": config.to_dict(),
        "tasks_config": {t.task: t.to_dict() for t in evaluation.tasks},
        "versions": package_versions(),
        "git_revision": git_revision(),
        "model": evaluation._identity() if evaluation._backend is not None or evaluation.stats["generated"] else
        {"spec": config.model},
        "oracles": {name: {"params": getattr(o, "params", {}), "class": type(o).__qualname__}
                    for name, o in evaluation.oracles.items()},
        "judge": dict(evaluation._judge_backend.identity) if evaluation._judge_backend is not None else None,
        "data": provenance,
        "timing": {"wall_s": time.time() - started, **evaluation.stats},
        "metrics": aggregate(records),
    }


def _fmt_rate(rate: dict[str, Any] | None) -> str:
    if not rate or rate.get("value") is None:
        return "-"
    return f"{rate['value']:.3f} [{rate['ci_low']:.3f}, {rate['ci_high']:.3f}]"


def summary_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    metrics = results["metrics"]
    for name, m in [*metrics["tasks"].items(), ("overall", metrics["overall"])]:
        c = m["status_counts"]
        rows.append([name, str(m["n_records"]), str(c["consistent"] + c["violated"]), _fmt_rate(m["pcr"]),
                     str(c["violated"]), str(c["abstain"]), str(c["unparsable"]), _fmt_rate(m.get("accuracy"))])
    return rows


SUMMARY_HEADER = ["task", "records", "checkable", "PCR [95% CI]", "violated", "abstain", "unparsable", "accuracy"]


def print_summary(results: dict[str, Any], file: TextIO = sys.stdout) -> None:
    print(format_table(summary_rows(results), SUMMARY_HEADER), file=file)
    timing = results.get("timing", {})
    if timing:
        print(f"run dir: {results['run_dir']}  ({timing.get('generated', 0)} generated, "
              f"{timing.get('cached', 0)} cached, {timing.get('resumed', 0)} resumed, {timing.get('wall_s', 0):.1f} s)",
              file=file)
