"""`matpcr run --shard i/n` and `matpcr merge`: disjoint parts that merge into the unsharded run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import replay_file, run_cli

TASKS = ["xrd_text", "raman_text", "msqa_binary"]


def _run(tmp_path: Path, data_dir: Path, replay: Path, out: str, *extra: str) -> Path:
    proc = run_cli("run", "--tasks", ",".join(TASKS), "--limit", "5", "--seeds", "2", "--model", f"replay:{replay}",
                   "--data-dir", str(data_dir), "--output-dir", str(tmp_path / out), "--cache", "none",
                   "--no-progress", *extra)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("shards")
    replay = replay_file(tmp / "chains.jsonl", data_dir, TASKS, 5, seeds=2)
    whole = _run(tmp, data_dir, replay, "whole")
    parts = [_run(tmp, data_dir, replay, f"part{i}", "--shard", f"{i}/3") for i in (1, 2, 3)]
    return {"tmp": tmp, "whole": whole, "parts": parts}


def _records(run: Path) -> dict[str, dict]:
    return {r["key"]: r for r in map(json.loads, (run / "samples.jsonl").read_text().splitlines())}


def test_shards_are_disjoint_and_cover_the_run(runs: dict) -> None:
    whole = set(_records(runs["whole"]))
    parts = [set(_records(p)) for p in runs["parts"]]
    assert all(parts) and sum(len(p) for p in parts) == len(whole) == 30
    assert set().union(*parts) == whole


def test_merged_shards_equal_the_unsharded_run(runs: dict) -> None:
    out = runs["tmp"] / "merged"
    proc = run_cli("merge", *map(str, runs["parts"]), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    merged = json.loads((out / "results.json").read_text())
    whole = json.loads((runs["whole"] / "results.json").read_text())
    assert merged["metrics"] == whole["metrics"]  # same numbers, same intervals, same bootstrap seed
    for task in TASKS:
        for field in ("n_items", "datasets", "licences", "unusable_items"):
            assert merged["data"][task][field] == whole["data"][task][field], (task, field)
    assert merged["model"] == whole["model"] and merged["judged_by"] == whole["judged_by"]
    assert [m["shard"] for m in merged["merged_from"]] == ["1/3", "2/3", "3/3"]
    assert _records(out).keys() == _records(runs["whole"]).keys()
    report = run_cli("report", str(out))
    assert report.returncode == 0, report.stderr
    md = (out / "report.md").read_text()
    xrd_row = next(line for line in md.splitlines() if "| xrd_text |" in line and "Corollary" not in line)
    low, high = merged["metrics"]["tasks"]["xrd_text"]["pcr_true_range"]["pcr_true_low"], \
        merged["metrics"]["tasks"]["xrd_text"]["pcr_true_range"]["pcr_true_high"]
    assert "true PCR range (Corollary 2" in md and f"[{low:.3f}, {high:.3f}]" in xrd_row


def test_merge_refuses_missing_duplicated_or_foreign_shards(runs: dict, data_dir: Path) -> None:
    p1, p2, p3 = map(str, runs["parts"])
    missing = run_cli("merge", p1, p2, "--out", str(runs["tmp"] / "m1"))
    assert missing.returncode == 2 and "shard(s) 3 missing" in missing.stderr
    twice = run_cli("merge", p1, p1, p2, p3, "--out", str(runs["tmp"] / "m2"))
    assert twice.returncode == 2 and "shard(s) 1 given twice" in twice.stderr
    whole = run_cli("merge", p1, str(runs["whole"]), "--out", str(runs["tmp"] / "m3"))
    assert whole.returncode == 2 and "not a shard" in whole.stderr
    other = _run(runs["tmp"], data_dir, replay_file(runs["tmp"] / "c2.jsonl", data_dir, TASKS, 5, seeds=2),
                 "other", "--shard", "3/3", "--oracle-args", "xrd.tolerance_deg=1.0")
    foreign = run_cli("merge", p1, p2, str(other), "--out", str(runs["tmp"] / "m4"))
    assert foreign.returncode == 2 and "do not share one configuration" in foreign.stderr


def test_bad_shard_spec_is_a_clear_error(data_dir: Path, tmp_path: Path) -> None:
    for spec in ("4/3", "a/b", "0/2"):
        proc = run_cli("run", "--tasks", "sem_text", "--shard", spec, "--data-dir", str(data_dir),
                       "--output-dir", str(tmp_path))
        assert proc.returncode == 2 and "--shard" in proc.stderr and "Traceback" not in proc.stderr
