"""Re-scoring stored chains: new oracle revisions or tolerances, no model calls."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from matpcr import scoring
from matpcr.errors import MatpcrError
from matpcr.results import aggregate, git_revision, package_versions
from matpcr.rundir import RunDir


def rescore(run_dir: str | Path, oracle_args: dict[str, dict[str, Any]] | None = None,
            output_dir: str | Path | None = None) -> dict[str, Any]:
    """Recompute claims, verdicts and metrics of a run from its stored chains and references.

    With ``output_dir`` the original run stays untouched and the re-scored copy is written there.
    """
    source = RunDir(run_dir)
    config = source.read_config()
    records = source.records()
    if not records:
        raise MatpcrError(f"{source.path}: no records in samples.jsonl to re-score")
    items = source.items()
    target = source
    if output_dir is not None:
        target = RunDir(output_dir)
        target.path.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "items.jsonl"):
            shutil.copy2(source.path / name, target.path / name)
    by_task, merged = scoring.run_oracles(config, oracle_args)
    oracles = {name: oracle for name, oracle in by_task.values()}
    missing = 0
    for record in records:
        item = items.get(f"{record.task}/{record.item_id}")
        oracle = by_task.get(record.task, (None, None))[1]
        if item is None or oracle is None:
            missing += 1
            continue
        scoring.score_record(record, oracle, item)
    tmp = target.samples_path.with_suffix(".jsonl.tmp")
    tmp.unlink(missing_ok=True)
    with target.writer(tmp.name) as writer:
        writer.write_many([r.to_dict() for r in records])
    tmp.replace(target.samples_path)
    previous = {}
    if source.results_path.exists():
        import json

        previous = json.loads(source.results_path.read_text())
    results = {**previous, "run_dir": str(target.path), "metrics": aggregate(records),
               "rescored": {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "from": str(source.path),
                            "oracle_args": merged, "records_without_item_or_oracle": missing,
                            "versions": package_versions(), "git_revision": git_revision()},
               "oracles": {n: {"params": getattr(o, "params", {}), "class": type(o).__qualname__} for n, o in oracles.items()}}
    results.setdefault("config", config)
    target.write_results(results)
    return results
