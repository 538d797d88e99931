"""User mistakes end in one clear line (exit 2, no traceback) and write nothing half-done."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_cli

V01_RUN = REPO / "tests" / "data" / "runs" / "v0.1"


@pytest.mark.parametrize("args, message", [
    (["run", "--tasks", "sem_text", "--limit", "0"], "--limit"),
    (["run", "--tasks", "sem_text", "--seeds", "-1"], "--seeds"),
    (["run", "--tasks", "sem_text", "--batch-size", "0"], "--batch-size"),
    (["run", "--tasks", "sem_text", "--generation", "max_new_tokens=lots"], "max_new_tokens"),
    (["run", "--tasks", "sem_text", "--generation", "temperature=-1"], "temperature"),
    (["run", "--tasks", "sem_text", "--oracle-args", "sem.fov_slack=abc"], "sem"),
    (["run", "--tasks", "xrd_text", "--oracle-args", "xrd.tolerance_deg=-0.5"], "tolerance_deg"),
    (["run", "--tasks", "xrd_text", "--intervention", "cgsv", "--intervention-args", "rounds=abc"], "rounds"),
    (["run", "--tasks", "sem_text", "--model", "replay:/nonexistent/chains.jsonl"], "not found"),
    (["run", "--tasks", "sem_text", "--model", "smollm2", "--model-args", "colour=blue"], "colour"),
    (["run", "--tasks", "sem_text", "--model", "no_such_backend"], "Known backend or model aliass"),
    (["validate", "--rates", "abc"], "--rates"),
    (["validate", "--rates", "0.5,1.5"], "--rates"),
])
def test_mistake_is_one_clear_line(args: list[str], message: str, data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli(*args, "--data-dir", str(data_dir), *(["--output-dir", str(tmp_path / "out")] if args[0] == "run" else []))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_rescore_refuses_its_own_folder_and_an_existing_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(V01_RUN, run)
    same = run_cli("rescore", str(run), "--output-dir", str(run))
    assert same.returncode == 2 and "is the run being re-scored" in same.stderr
    other = tmp_path / "other"
    shutil.copytree(V01_RUN, other)
    before = (other / "samples.jsonl").read_bytes()
    clash = run_cli("rescore", str(run), "--output-dir", str(other))
    assert clash.returncode == 2 and "not an empty folder" in clash.stderr
    assert (other / "samples.jsonl").read_bytes() == before


def test_rescore_without_items_says_so(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(V01_RUN, run)
    (run / "items.jsonl").unlink()
    proc = run_cli("rescore", str(run))
    assert proc.returncode == 2 and "no items.jsonl" in proc.stderr
    assert json.loads((run / "results.json").read_text())["schema_version"] == 1  # untouched
