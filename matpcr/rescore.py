"""Re-scoring stored chains: new oracle revisions or tolerances, no model calls."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from matpcr import scoring
from matpcr.errors import MatpcrError
from matpcr.results import aggregate, git_revision, package_versions
from matpcr.records import Record
from matpcr.rundir import RunDir
from matpcr.schema import SCHEMA_VERSION, Results, load_results


def rescore(run_dir: str | Path, oracle_args: dict[str, dict[str, Any]] | None = None,
            output_dir: str | Path | None = None) -> dict[str, Any]:
    """Recompute claims, verdicts and metrics of a run from its stored chains and references.

    With ``output_dir`` the original run stays untouched and the re-scored copy is written there (a new
    or empty folder: an existing run is never overwritten).
    """
    source = RunDir(run_dir)
    config = source.read_config()
    if not source.samples_path.exists() or source.samples_path.stat().st_size == 0:
        raise MatpcrError(f"{source.path}: no records in samples.jsonl to re-score")
    items = source.items()
    if not items:
        raise MatpcrError(f"{source.path}: no items.jsonl, so there are no references to re-score against "
                          "(it is written by `matpcr run`; re-run the evaluation)")
    target = source
    if output_dir is not None:
        target = RunDir(output_dir)
        if target.path.resolve() == source.path.resolve():
            raise MatpcrError(f"--output-dir {output_dir} is the run being re-scored; omit it to re-score in place")
        if target.path.exists() and (not target.path.is_dir() or any(target.path.iterdir())):
            raise MatpcrError(f"--output-dir {output_dir} exists and is not an empty folder; pick a new one")
        target.create(config)
        target.path.joinpath("items.jsonl").write_bytes(source.items_path.read_bytes())
    judges, merged = scoring.run_judges(config, oracle_args)
    # streamed: each record is re-scored and written, and only its slim copy (no prompt or chain) is kept
    records: list[Record] = []
    missing = 0
    tmp = target.samples_path.with_suffix(".jsonl.tmp")
    tmp.unlink(missing_ok=True)
    batch: list[dict[str, Any]] = []
    with target.writer(tmp.name) as writer:
        for record in source.iter_records():
            item = items.get(f"{record.task}/{record.item_id}")
            judge = judges.get(record.task)
            if item is None or judge is None:
                missing += 1
            else:
                scoring.score_record(record, judge, item)
            batch.append(record.to_dict())
            records.append(record.slim())
            if len(batch) >= 500:
                writer.write_many(batch)
                batch = []
        writer.write_many(batch)
    if not records:
        raise MatpcrError(f"{source.path}: no records in samples.jsonl to re-score")
    if missing == len(records):
        tmp.unlink(missing_ok=True)
        raise MatpcrError(f"{source.path}: none of the {missing} records has a stored item and a judge; nothing "
                          "was re-scored")
    tmp.replace(target.samples_path)
    previous = load_results(source.results_path).to_json() if source.results_path.exists() else {
        "schema_version": SCHEMA_VERSION, "status": "success", "created": "", "config": config}
    declared = scoring.stored_metrics(previous, judges)
    results = Results.model_validate({
        **previous, "schema_version": SCHEMA_VERSION, "run_dir": str(target.path),
        "judged_by": {task: judge.describe() for task, judge in judges.items()},
        "metrics": aggregate(records, declared, scoring.run_intervention(config)),
        "rescored": {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "from": str(source.path), "oracle_args": merged,
                     "records_without_item_or_judge": missing, "versions": package_versions(),
                     "git_revision": git_revision()}})
    out = results.to_json()
    target.write_results(out)
    return out
