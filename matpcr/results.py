"""Aggregating records into ``results.json`` and the end-of-run summary table.

The aggregator is generic: it groups first answers (round 0, sample 0) by task, constraint and
modality and computes, for each group, the metrics its oracles, scorers and checker *declare*
(``protocols.Metric``), each with its bootstrap interval, n and number of sources. An intervention
summarises its own rounds (``Intervention.summarize``).
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
from matpcr.protocols import Intervention, Metric, Oracle
from matpcr.records import STATUSES, Record
from matpcr.schema import SCHEMA_VERSION, Results
from matpcr.table import format_table

PACKAGES = ("matpcr", "numpy", "scipy", "torch", "transformers", "pymatgen", "scikit-image", "pluggy", "peft")
ORACLE_METRICS = Oracle.metrics
MAX_ERRORS_SHOWN = 5


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


def checkable(r: Record) -> bool:
    return r.status in ("consistent", "violated")


def _mean_metric(records: list[Record], name: str, n_boot: int, seed: int) -> dict[str, Any]:
    scored = [r for r in records if r.score_value(name) is not None]
    rate = stats.bootstrap_rate([float(r.score_value(name)) for r in scored], [r.source_id for r in scored],  # type: ignore[arg-type]
                                n_boot=n_boot, seed=seed).to_dict()
    rate["unscored"] = len(records) - len(scored)
    return rate


def _checked(r: Record) -> list[dict[str, Any]]:
    return [v for v in r.verdicts if v.get("status") in ("consistent", "violated")]


def item_chance(r: Record) -> float | None:
    """π_i: the chance that uniformly random claims in place of the item's checked claims would all pass
    (the product of their ``p_chance``); None when a checked claim carries none."""
    ps = [(v.get("details") or {}).get("p_chance") for v in _checked(r)]
    if not ps or any(p is None for p in ps):
        return None
    return float(np.prod([float(p) for p in ps]))


def _extra_metric(records: list[Record], metric: Metric, n_boot: int, seed: int) -> dict[str, Any] | None:
    """The verdict aggregates beyond PCR, claim rate and accuracy (``Metric.aggregation``)."""
    kind = metric.aggregation
    checked = [r for r in records if checkable(r)]
    if kind == "claim_pcr":
        ok = [sum(v["status"] == "consistent" for v in _checked(r)) for r in checked]
        n = [len(_checked(r)) for r in checked]
        return stats.violation_rate(ok, n, [r.source_id for r in checked], n_boot=n_boot, seed=seed).to_dict()
    if kind == "first_claim_pcr":
        firsts = [(_checked(r)[0]["status"] == "consistent", r.source_id) for r in checked if _checked(r)]
        return stats.bootstrap_rate([float(a) for a, _ in firsts], [b for _, b in firsts], n_boot=n_boot,
                                    seed=seed).to_dict()
    if kind == "chance":
        ps = np.array([float(v["details"]["p_chance"]) for r in checked for v in _checked(r)
                       if (v.get("details") or {}).get("p_chance") is not None], float)
        items = np.array([p for p in (item_chance(r) for r in checked) if p is not None], float)
        low_power = sum(any((v.get("details") or {}).get("reason") == "low_power" for v in r.verdicts) for r in records)
        if not ps.size:
            return {"value": None, "n": 0, "abstained_low_power": low_power} if low_power else None
        return {"value": float(ps.mean()), "n": int(ps.size),
                **{f"q{int(q * 100)}": float(np.quantile(ps, q)) for q in (0.1, 0.25, 0.5, 0.75, 0.9)},
                "item_mean": float(items.mean()) if items.size else None, "n_items": int(items.size),
                "share_over_0.3": float(np.mean(ps > 0.3)),
                # records excluded as low-power references (e.g. --oracle-args xrd.max_chance=0.3): they abstain
                "abstained_low_power": low_power}
    if kind == "chance_corrected_pcr":
        rows = [(float(r.status == "consistent"), p, r.source_id) for r in checked
                for p in [item_chance(r)] if p is not None and p < 1.0]
        if not rows:
            return None
        out = stats.chance_corrected_pcr([a for a, _, _ in rows], [b for _, b, _ in rows], [c for _, _, c in rows],
                                         n_boot=n_boot, seed=seed).to_dict()
        out.update({"n_items": len(rows), "p_bar": float(np.mean([b for _, b, _ in rows])),
                    "pcr": float(np.mean([a for a, _, _ in rows]))})
        return out
    if kind == "corollary2":
        params = metric.params or {}
        rate = stats.pcr([r.status for r in records], [r.source_id for r in records], n_boot=200, seed=seed)
        if rate.value is None or params.get("recall") is None or params.get("false_alarm") is None:
            return None
        return {**stats.corollary2_bounds(rate.value, float(params["recall"]), float(params["false_alarm"])),
                "pcr": rate.value, "gate": dict(params)}
    if kind == "balanced_accuracy":
        pairs = []
        for r in checked:
            for v in _checked(r):
                d = v.get("details") or {}
                if d.get("true_class") is not None and d.get("claimed_class") is not None:
                    pairs.append((str(d["true_class"]), str(d["claimed_class"])))
                    break
        if not pairs:
            return None
        classes = sorted({t for t, _ in pairs} | {c for _, c in pairs})
        per = {c: {"n": sum(t == c for t, _ in pairs), "correct": sum(t == c and p == c for t, p in pairs)}
               for c in classes}
        recalls = [v["correct"] / v["n"] for v in per.values() if v["n"]]
        return {"value": float(np.mean(recalls)) if recalls else None, "n": len(pairs), "per_class": per,
                "accuracy": sum(t == p for t, p in pairs) / len(pairs)}
    if kind == "detail_mean":
        vals, src = [], []
        for r in checked:
            flags = [(v.get("details") or {}).get(metric.name) for v in _checked(r)]
            flags = [f for f in flags if f is not None]
            if flags:
                vals.append(float(np.mean([float(f) for f in flags])))
                src.append(r.source_id)
        if not vals:
            return None
        return stats.bootstrap_rate(vals, src, n_boot=n_boot, seed=seed).to_dict()
    return None


def _oracle_metric(records: list[Record], metric: Metric, n_boot: int, seed: int) -> dict[str, Any] | None:
    sources = [r.source_id for r in records]
    if metric.aggregation not in ("pcr", "claim_rate", "accuracy"):
        return _extra_metric(records, metric, n_boot, seed)
    if metric.aggregation == "pcr":
        return stats.pcr([r.status for r in records], sources, n_boot=n_boot, seed=seed).to_dict()
    if metric.aggregation == "claim_rate":
        viol = [sum(v["status"] == "violated" for v in r.verdicts) for r in records]
        chk = [sum(v["status"] in ("consistent", "violated") for v in r.verdicts) for r in records]
        return stats.violation_rate(viol, chk, sources, n_boot=n_boot, seed=seed).to_dict()
    acc = [r for r in records if r.accurate is not None and checkable(r)]
    if not acc:
        return None
    return stats.bootstrap_rate([float(r.accurate) for r in acc], [r.source_id for r in acc],  # type: ignore[arg-type]
                                n_boot=n_boot, seed=seed).to_dict()


def summarize(records: list[Record], metrics: list[Metric] | tuple[Metric, ...] = ORACLE_METRICS,
              n_boot: int = stats.DEFAULT_B, seed: int = 0) -> dict[str, Any]:
    """The declared metrics of one group of records (first answers), with status counts and errors."""
    counts = {s: 0 for s in STATUSES}
    for r in records:
        counts[r.status] = counts.get(r.status, 0) + 1
    out: dict[str, Any] = {"n_records": len(records), "status_counts": counts, "scores": {}}
    mean_names = []
    for metric in metrics:
        if metric.aggregation == "mean":
            mean_names.append(metric.name)
        elif metric.name not in out:
            out[metric.name] = _oracle_metric(records, metric, n_boot, seed)
    if "accuracy" in out and out["accuracy"] is not None:
        acc = [r for r in records if r.accurate is not None and checkable(r)]
        out["accuracy_vs_consistency"] = stats.four_cells([bool(r.accurate) for r in acc],
                                                          [r.status == "consistent" for r in acc])
    present = [n for n in dict.fromkeys(mean_names) if any(n in r.scores for r in records)]
    out["scores"] = {n: _mean_metric(records, n, n_boot, seed) for n in present}
    groups = sorted({str(r.meta["group"]) for r in records if r.meta.get("group")})
    if present and groups:
        out["scores_by_group"] = {g: {n: _mean_metric([r for r in records if str(r.meta.get("group")) == g], n,
                                                      n_boot, seed) for n in present} for g in groups}
    out["generation_errors"] = sum(1 for r in records if r.error)
    errors = [r for r in records if r.status == "error"]
    out["errors"] = [f"{r.key}: {r.meta.get('scoring_error', '')}" for r in errors[:MAX_ERRORS_SHOWN]]
    return out


def paired_rounds(records: list[Record], n_boot: int, seed: int) -> dict[str, Any]:
    """Before (round 0) versus after (the last round reached) for one task, with the exact McNemar test.

    Pairs whose first answer was checkable are kept even when the revision is not: an answer whose claims
    were withdrawn (no longer checkable) is counted as ``withdrawn`` and, in ``pcr_after_with_withdrawn``,
    as not consistent, so an "improvement" made by saying less stays visible."""
    first = {(r.item_id, r.seed, r.sample): r for r in records if r.round == 0}
    last = final_answers(records)
    pairs_all = [(first[(i, s, n)], last[(t, i, s, n)]) for (t, i, s, n) in last if (i, s, n) in first]
    cell: dict[str, Any] = {}
    if not any(b.round > 0 for _, b in pairs_all):
        return cell
    before_ok = [(a, b) for a, b in pairs_all if checkable(a)]
    pairs = [(a, b) for a, b in before_ok if checkable(b)]
    withdrawn = [(a, b) for a, b in before_ok if not checkable(b)]
    cell.update({"n_pairs": len(pairs), "withdrawn": len(withdrawn),
                 "claims_per_item_before": float(np.mean([len(a.claims) for a, _ in before_ok])) if before_ok else None,
                 "claims_per_item_after": float(np.mean([len(b.claims) for _, b in before_ok])) if before_ok else None})
    if before_ok:
        src = [a.source_id for a, _ in before_ok]
        cell["pcr_after_with_withdrawn"] = stats.bootstrap_rate(
            [float(b.status == "consistent") for _, b in before_ok], src, n_boot=n_boot, seed=seed).to_dict()
        # accuracy where the oracle has a criterion: before, after, and after with withdrawn answers counted
        # as not accurate (an answer that says nothing checkable is not a correct one)
        graded = [(a, b) for a, b in before_ok if a.accurate is not None]
        if graded:
            gsrc = [a.source_id for a, _ in graded]
            cell["accuracy_before"] = stats.bootstrap_rate([float(bool(a.accurate)) for a, _ in graded], gsrc,
                                                           n_boot=n_boot, seed=seed).to_dict()
            cell["accuracy_after_with_withdrawn"] = stats.bootstrap_rate(
                [float(bool(b.accurate) and checkable(b)) for _, b in graded], gsrc, n_boot=n_boot, seed=seed).to_dict()
        cell["withdrawn_share"] = len(withdrawn) / len(before_ok)
        cell["claims_withdrawn"] = int(sum(max(0, len(a.claims) - len(b.claims)) for a, b in before_ok))
    if pairs:
        before = [a.status == "consistent" for a, _ in pairs]
        after = [b.status == "consistent" for _, b in pairs]
        cell.update(stats.paired_outcomes(before, after))
        src = [a.source_id for a, _ in pairs]
        cell["pcr_before_ci"] = stats.bootstrap_rate(before, src, n_boot=n_boot, seed=seed).to_dict()
        cell["pcr_after_ci"] = stats.bootstrap_rate(after, src, n_boot=n_boot, seed=seed).to_dict()
        cell["residual_violations"] = int(sum(not x for x in after))
        acc_after = [b.accurate for _, b in pairs if b.accurate is not None]
        cell["accuracy_after"] = float(np.mean(acc_after)) if acc_after else None
        cell["rounds_used"] = float(np.mean([b.round for _, b in pairs]))
    return cell


def intervention_summary(records: list[Record], intervention: Intervention | None, n_boot: int,
                         seed: int) -> dict[str, Any]:
    """Each task's figures from the intervention's ``summarize``, then Holm and BH across the run's
    tasks for the cells that carry a McNemar p-value."""
    by_task: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_task[r.task].append(r)
    summarize_task = intervention.summarize if intervention is not None else (
        lambda recs, n_boot, seed: paired_rounds(recs, n_boot, seed))
    cells = {task: summarize_task(recs, n_boot, seed) for task, recs in sorted(by_task.items())}
    tested = [t for t, c in cells.items() if "p" in c]
    for name, adjusted in (("p_holm", stats.holm([cells[t]["p"] for t in tested])),
                           ("p_bh", stats.benjamini_hochberg([cells[t]["p"] for t in tested]))):
        for t, p in zip(tested, adjusted):
            cells[t][name] = p
    return cells


def aggregate(records: list[Record], declared: dict[str, list[Metric]] | None = None,
              intervention: Intervention | None = None, n_boot: int = stats.DEFAULT_B,
              seed: int = 0) -> dict[str, Any]:
    """Metrics per task, constraint, modality and overall. ``declared`` maps a task to its metrics (the
    judge's plus the checker's); a group's metrics are the union over its tasks."""
    declared = declared or {}
    first = first_answers(records)
    by: dict[str, dict[str, list[Record]]] = {"tasks": defaultdict(list), "constraints": defaultdict(list),
                                               "modalities": defaultdict(list)}
    for r in first:
        by["tasks"][r.task].append(r)
        by["constraints"][r.constraint].append(r)
        by["modalities"][r.modality].append(r)

    def metrics_of(recs: list[Record]) -> list[Metric]:
        union: dict[str, Metric] = {}
        mixed: set[str] = set()
        for task in sorted({r.task for r in recs}):
            for m in declared.get(task, ORACLE_METRICS):
                if m.name in union and m.params != union[m.name].params:
                    mixed.add(m.name)  # e.g. Corollary 2 with two oracles' gate figures: not one figure
                union.setdefault(m.name, m)
        return [m for n, m in union.items() if n not in mixed] or list(ORACLE_METRICS)

    out: dict[str, Any] = {"overall": summarize(first, metrics_of(first), n_boot, seed)}
    for group, parts in by.items():
        out[group] = {name: summarize(recs, metrics_of(recs), n_boot, seed) for name, recs in sorted(parts.items())}
    treated = [r for r in records if r.intervention]
    if treated:
        out["intervention"] = {"name": treated[0].intervention,
                               **intervention_summary(treated, intervention, n_boot, seed)}
    return out


def declared_metrics(judges: dict[str, Any], checker: Any = None) -> dict[str, list[Metric]]:
    extra = list(checker.metrics) if checker is not None else []
    return {task: [*judge.metrics, *extra] for task, judge in judges.items()}


def build_results(evaluation: Any, records: list[Record], started: float, status: str = "success",
                  error: str | None = None) -> dict[str, Any]:
    """The typed results object of a run (``schema.Results``), as JSON-ready data."""
    config = evaluation.config
    plan = evaluation.plan
    provenance = {}
    for task in evaluation.tasks:
        items = plan.items_of(task.task)
        metas = [i.meta for i in items]
        provenance[task.task] = {
            "loader": task.loader, "version": task.version, "config_path": task.path,
            "data_dir": str(evaluation.data_dir) if evaluation.data_dir else None,
            "datasets": sorted({str(m.get("dataset")) for m in metas if m.get("dataset")}),
            "licences": sorted({str(m.get("licence")) for m in metas if m.get("licence")}),
            "n_items": len(items),
            "loader_report": plan.loader_reports.get(task.task),
            "unusable_items": {k: v for k, v in plan.bad_items.items() if k.startswith(task.task + "/")},
        }
    executor, judge_executor = evaluation.executor, evaluation.judge_executor
    checker = evaluation.checker
    results = Results(
        schema_version=SCHEMA_VERSION, status=status, error=error,  # type: ignore[arg-type]
        created=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        finished=None if status == "started" else time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        run_dir=str(evaluation.run.path), config=config.to_dict(),
        tasks_config={t.task: t.to_dict() for t in evaluation.tasks},
        versions=package_versions(), git_revision=git_revision(),
        model=executor.identity if executor.started else {"spec": config.model},
        judged_by={task: judge.describe() for task, judge in evaluation.judges.items()},
        judge=judge_executor.identity if judge_executor is not None and judge_executor.started else None,
        checker={"kind": "checker", "class": type(checker).__qualname__, "params": dict(checker.params),
                 "metrics": [m.to_dict() for m in checker.metrics]} if checker is not None else None,
        data=provenance, skipped_tasks=evaluation.skipped_tasks,
        model_alias=(None if evaluation.model_alias is None else
                     {"alias": evaluation.model_alias.name, "backend": evaluation.model_alias.backend,
                      "model": evaluation.model_alias.model}),
        timing={"wall_s": time.time() - started, **executor.stats, "resumed": evaluation.resumed,
                **({f"judge_{k}": v for k, v in judge_executor.stats.items()} if judge_executor else {})},
        metrics=aggregate(records, declared_metrics(evaluation.judges, checker), evaluation.intervention),
    )
    return results.to_json()


def _fmt_rate(rate: dict[str, Any] | None) -> str:
    if not rate or rate.get("value") is None:
        return "-"
    return f"{rate['value']:.3f} [{rate['ci_low']:.3f}, {rate['ci_high']:.3f}]"


def primary_score(results: dict[str, Any], task: str) -> dict[str, Any] | None:
    """A scored task's primary metric (the first it declares), for summary tables."""
    spec = (results.get("judged_by") or {}).get(task) or {}
    if spec.get("kind") != "scorer":
        return None
    names = [m["name"] for m in spec.get("metrics", [])]
    scores = results["metrics"]["tasks"].get(task, {}).get("scores", {})
    return next((scores[n] for n in names if n in scores), None)


def summary_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    metrics = results["metrics"]
    for name, m in [*metrics["tasks"].items(), ("overall", metrics["overall"])]:
        c = m["status_counts"]
        score = primary_score(results, name)
        rows.append([name, str(m["n_records"]), str(c.get("consistent", 0) + c.get("violated", 0)),
                     _fmt_rate(m.get("pcr")), str(c.get("violated", 0)), str(c.get("abstain", 0)),
                     str(c.get("unparsable", 0)), str(c.get("error", 0)),
                     _fmt_rate(score if score is not None else m.get("accuracy"))])
    return rows


SUMMARY_HEADER = ["task", "records", "checkable", "PCR [95% CI]", "violated", "abstain", "unparsable", "error",
                  "accuracy"]


def print_summary(results: dict[str, Any], file: TextIO = sys.stdout) -> None:
    print(format_table(summary_rows(results), SUMMARY_HEADER), file=file)
    timing = results.get("timing", {})
    if timing:
        print(f"run dir: {results['run_dir']}  ({timing.get('generated', 0)} generated, "
              f"{timing.get('cached', 0)} cached, {timing.get('resumed', 0)} resumed, {timing.get('wall_s', 0):.1f} s)",
              file=file)
    for task, why in (results.get("skipped_tasks") or {}).items():
        print(f"skipped {task}: {why}", file=file)
    for task, m in results["metrics"]["tasks"].items():
        kappa, bounds = m.get("pcr_chance_corrected"), m.get("pcr_true_range")
        parts = []
        if kappa and kappa.get("value") is not None:
            parts.append(f"chance-corrected PCR {_fmt_rate(kappa)} (p̄ = {kappa.get('p_bar', 0):.3f})")
        if bounds and bounds.get("pcr_true_low") is not None:
            parts.append(f"true PCR within [{bounds['pcr_true_low']:.3f}, {bounds['pcr_true_high']:.3f}] "
                         f"(Corollary 2, gate d̂ = {bounds['gate']['recall']:.3f}, f̂ = {bounds['gate']['false_alarm']:.3f})")
        if parts:
            print(f"{task}: " + "; ".join(parts), file=file)
    errors = results["metrics"]["overall"].get("errors") or []
    if errors:
        print(f"{results['metrics']['overall']['status_counts'].get('error', 0)} record(s) could not be judged "
              f"(status error), e.g. {errors[0]}", file=file)
