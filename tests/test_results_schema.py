"""results.json: the typed schema, its JSON Schema file, run status, and run directories of 0.1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from matpcr.schema import SCHEMA_VERSION, json_schema

from conftest import REPO, replay_file, run_cli

SCHEMA_FILE = REPO / "docs" / "results.schema.json"
V01_RUN = REPO / "tests" / "data" / "runs" / "v0.1"


def validate_results(path: Path) -> dict:
    """Every results.json the tests write goes through this: it must satisfy the published schema."""
    data = json.loads(path.read_text())
    jsonschema.validate(data, json.loads(SCHEMA_FILE.read_text()))
    return data


def test_schema_file_is_current() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema(), \
        "docs/results.schema.json is stale: python -m matpcr.schema > docs/results.schema.json"


def test_schema_rejects_what_it_should() -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    good = {"schema_version": SCHEMA_VERSION, "status": "success", "created": "x", "run_dir": "r", "config": {}}
    jsonschema.validate(good, schema)
    for bad in ({**good, "status": "finished"}, {k: v for k, v in good.items() if k != "config"},
                {**good, "metrics": {"overall": {"n_records": "many", "status_counts": {}}}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_run_results_validate_and_carry_status(tmp_path: Path, data_dir: Path) -> None:
    """A real run (stored chains replayed through the engine) writes a schema-valid results.json whose
    status is success, with per-task judges and declared metrics."""
    out = tmp_path / "runs"
    replay = replay_file(tmp_path / "chains.jsonl", data_dir, ["sem_text", "msqa_binary"], 3)
    proc = run_cli("run", "--tasks", "sem_text,msqa_binary", "--limit", "3", "--model", f"replay:{replay}",
                   "--data-dir", str(data_dir), "--output-dir", str(out), "--cache", "none", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    data = validate_results(run_dir / "results.json")
    assert data["status"] == "success" and data["error"] is None and data["schema_version"] == SCHEMA_VERSION
    assert data["judged_by"]["sem_text"]["kind"] == "oracle"
    assert data["judged_by"]["msqa_binary"]["kind"] == "scorer"
    assert [m["name"] for m in data["judged_by"]["msqa_binary"]["metrics"]] == [
        "accuracy_paper_rule", "accuracy_robust", "answered_robust"]
    tasks = data["metrics"]["tasks"]
    assert "pcr" in tasks["sem_text"] and tasks["msqa_binary"].get("pcr") is None
    assert tasks["msqa_binary"]["status_counts"]["scored"] == 3
    assert tasks["msqa_binary"]["status_counts"]["consistent"] == 0  # accuracy is not written as consistency
    rescored = run_cli("rescore", str(run_dir))
    assert rescored.returncode == 0, rescored.stderr
    assert validate_results(run_dir / "results.json")["rescored"]["records_without_item_or_judge"] == 0


def test_run_directory_of_version_0_1_still_loads(tmp_path: Path) -> None:
    """A run directory written by matpcr 0.1 (schema version 1): report and rescore work on it."""
    run = tmp_path / "old"
    shutil.copytree(V01_RUN, run)
    assert json.loads((run / "results.json").read_text())["schema_version"] == 1
    report = run_cli("report", str(run))
    assert report.returncode == 0, report.stderr
    assert "Per task" in (run / "report.md").read_text()
    rescored = run_cli("rescore", str(run), "--output-dir", str(tmp_path / "new"))
    assert rescored.returncode == 0, rescored.stderr
    new = validate_results(tmp_path / "new" / "results.json")
    old = json.loads((run / "results.json").read_text())
    assert new["schema_version"] == SCHEMA_VERSION and new["upgraded_from"] == 1
    assert set(new["metrics"]["tasks"]) == set(old["metrics"]["tasks"])
    # 0.1 stored bare numbers as scores and wrote MSQA accuracy as consistent/violated; both read back
    msqa = new["metrics"]["tasks"]["msqa_binary"]
    assert msqa["scores"]["accuracy_paper_rule"]["value"] == old["metrics"]["tasks"]["msqa_binary"]["scores"][
        "accuracy_paper_rule"]["value"]
    assert msqa["status_counts"]["scored"] == msqa["n_records"]
