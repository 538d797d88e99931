"""Merging the shards of one run (``matpcr run --shard i/n``) into the run it would have been.

Shards must come from one configuration: the same config (apart from where they were written and which
shard they are), the same model identity, the same items for the keys they share, and every index
1..n exactly once. The merged results.json carries the same metrics, with the same intervals and
bootstrap seed, as the unsharded run.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from matpcr import scoring
from matpcr.errors import MatpcrError
from matpcr.planning import parse_shard
from matpcr.records import Record
from matpcr.results import aggregate
from matpcr.rundir import RunDir
from matpcr.schema import SCHEMA_VERSION, Results, load_results

#: config fields that differ between shards of one run
PER_SHARD = ("run_dir", "output_dir", "shard", "progress", "cache", "data_dir")  # the data themselves are compared


def config_fingerprint(config: dict[str, Any]) -> str:
    """A hash of what defines the run's numbers (not where or in which part it ran)."""
    same = copy.deepcopy({k: v for k, v in config.items() if k not in PER_SHARD})
    for task in same.get("tasks_resolved", []):
        task.pop("path", None)  # an installed vs. editable copy of the same YAML
    return hashlib.sha256(json.dumps(same, sort_keys=True, default=str).encode()).hexdigest()[:16]


def merge(run_dirs: list[str | Path], out: str | Path) -> dict[str, Any]:
    runs = [RunDir(d) for d in run_dirs]
    configs = [r.read_config() for r in runs]
    shards = []
    for run, config in zip(runs, configs):
        if not config.get("shard"):
            raise MatpcrError(f"{run.path} is not a shard (it was run without --shard i/n)")
        shards.append(parse_shard(config["shard"]))
    sizes = {n for _, n in shards}
    if len(sizes) != 1:
        raise MatpcrError(f"the shards were cut into different numbers of parts: {sorted(sizes)}")
    n = sizes.pop()
    indices = sorted(i for i, _ in shards)
    duplicated = sorted({i for i in indices if indices.count(i) > 1})
    missing = sorted(set(range(1, n + 1)) - set(indices))
    if duplicated or missing:
        raise MatpcrError(f"shards of {n}: " + "; ".join(
            ([f"shard(s) {', '.join(map(str, duplicated))} given twice"] if duplicated else [])
            + ([f"shard(s) {', '.join(map(str, missing))} missing"] if missing else [])))
    prints = {config_fingerprint(c) for c in configs}
    if len(prints) != 1:
        raise MatpcrError("the shards do not share one configuration (tasks, model, limits, seeds, oracle or "
                          "generation settings differ); merge only shards of one `matpcr run ... --shard i/n`")
    results = [load_results(r.results_path).to_json() for r in runs]
    for run, res in zip(runs, results):
        if res["status"] != "success":
            raise MatpcrError(f"{run.path} did not finish (status {res['status']!r}); "
                              f"`matpcr run --resume {run.path}` first")
    identities = {json.dumps(res["model"], sort_keys=True) for res in results}
    if len(identities) != 1:
        raise MatpcrError("the shards were answered by different model identities: " + " vs ".join(sorted(identities)))
    items: dict[str, Any] = {}
    for run in runs:
        for key, item in run.items().items():
            if key in items and items[key] != item:
                raise MatpcrError(f"item {key} differs between shards (different data behind the same task); "
                                  "the shards did not read the same data directory")
            items[key] = item
    records: dict[str, Record] = {}
    for run in runs:
        for record in run.records():
            if record.key in records:
                raise MatpcrError(f"record {record.key} is in two shards; the shards overlap")
            records[record.key] = record
    target = RunDir(out)
    if target.path.exists() and any(target.path.iterdir()):
        raise MatpcrError(f"--out {out} exists and is not empty; pick a new folder")
    config = {k: v for k, v in configs[0].items() if k not in ("shard",)}
    config["run_dir"] = str(target.path)
    config["shard"] = None
    target.create(config)
    with target.writer("items.jsonl") as writer:
        from dataclasses import asdict

        writer.write_many([asdict(items[k]) for k in sorted(items)])
    ordered = sorted(records.values(), key=lambda r: r.key)
    with target.writer() as writer:
        writer.write_many([r.to_dict() for r in ordered])
    first = results[0]
    data = {}
    for task, entry in first["data"].items():
        task_items = [i for k, i in items.items() if k.startswith(task + "/")]
        metas = [i.meta for i in task_items]
        data[task] = {**entry, "n_items": len(task_items),
                      "datasets": sorted({str(m.get("dataset")) for m in metas if m.get("dataset")}),
                      "licences": sorted({str(m.get("licence")) for m in metas if m.get("licence")}),
                      "unusable_items": {k: v for res in results for k, v in res["data"][task]["unusable_items"].items()}}
    timing = {k: sum(res["timing"].get(k, 0) for res in results) for k in first["timing"]
              if isinstance(first["timing"][k], (int, float))}
    merged = Results.model_validate({
        **first, "schema_version": SCHEMA_VERSION, "status": "success", "error": None, "run_dir": str(target.path),
        "config": {k: v for k, v in config.items() if k not in ("run_dir", "tasks_resolved")},
        "created": min(res["created"] for res in results), "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "data": data, "timing": timing,
        "metrics": aggregate(ordered, scoring.stored_metrics(first), scoring.run_intervention(config)),
        "merged_from": [{"run_dir": str(r.path), "shard": c["shard"]} for r, c in zip(runs, configs)],
    }).to_json()
    target.write_results(merged)
    target.release()
    return merged
