"""End-to-end runs of the real CLI with the embedded default model (SmolLM2-135M) on real data."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run_cli

FAST = ["--generation", "max_new_tokens=24", "--no-progress"]


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path, smollm2_dir: Path) -> dict:
    out = tmp_path_factory.mktemp("runs")
    cache = out / "cache.sqlite"
    args = ["run", "--tasks", "xrd_text,raman_text,sem_text", "--limit", "2", "--batch-size", "2", "--output-dir",
            str(out), "--cache", str(cache), "--data-dir", str(data_dir), *FAST]
    t0 = time.perf_counter()
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    elapsed = time.perf_counter() - t0
    return {"dir": Path(proc.stdout.strip().splitlines()[-1]), "args": args, "cache": cache, "out": out,
            "elapsed": elapsed, "stderr": proc.stderr}


def test_run_writes_a_complete_run_directory(first_run: dict) -> None:
    run_dir = first_run["dir"]
    for name in ("config.json", "samples.jsonl", "items.jsonl", "results.json"):
        assert (run_dir / name).exists(), name
    records = _records(run_dir)
    assert len(records) == 6 and len({r["key"] for r in records}) == 6
    assert {r["task"] for r in records} == {"xrd_text", "raman_text", "sem_text"}
    assert all(r["chain"] for r in records), "the real model answered every item"
    results = json.loads((run_dir / "results.json").read_text())
    assert results["schema_version"] == 2 and results["status"] == "success"
    assert results["model"]["backend"] == "hf" and results["model"]["fingerprint"]
    assert results["versions"]["torch"] and results["versions"]["matpcr"]
    assert results["data"]["raman_text"]["datasets"] and results["data"]["sem_text"]["licences"] == ["CC BY-NC-ND 4.0"]
    pcr = results["metrics"]["overall"]["pcr"]
    assert {"value", "ci_low", "ci_high", "n", "n_sources"} <= set(pcr)
    counts = results["metrics"]["overall"]["status_counts"]
    assert sum(counts.values()) == 6
    # the summary table is printed on stderr
    assert "PCR [95% CI]" in first_run["stderr"]


def test_cached_rerun_skips_the_model(first_run: dict) -> None:
    args = list(first_run["args"])
    t0 = time.perf_counter()
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((Path(proc.stdout.strip().splitlines()[-1]) / "results.json").read_text())
    assert results["timing"]["generated"] == 0 and results["timing"]["cached"] == 6
    records = _records(Path(results["run_dir"]))
    assert all(r["cached"] for r in records)
    before = {r["key"]: r["chain"] for r in _records(first_run["dir"])}
    assert {r["key"]: r["chain"] for r in records} == before


def test_rescore_changes_verdicts_without_a_model(first_run: dict, tmp_path: Path) -> None:
    strict = tmp_path / "strict"
    proc = run_cli("rescore", str(first_run["dir"]), "--oracle-args", "xrd.tolerance_deg=0.0001,raman.tolerance_cm1=0.0001",
                   "--output-dir", str(strict), env={"HF_HUB_OFFLINE": "1", "MATPCR_MODEL_CACHE": str(tmp_path / "none")})
    assert proc.returncode == 0, proc.stderr
    results = json.loads((strict / "results.json").read_text())
    assert results["rescored"]["oracle_args"]["xrd"]["tolerance_deg"] == 0.0001
    original = {r["key"]: r for r in _records(first_run["dir"])}
    rescored = {r["key"]: r for r in _records(strict)}
    assert original.keys() == rescored.keys()
    for key, r in rescored.items():
        assert r["chain"] == original[key]["chain"]
        if r["task"] in ("xrd_text", "raman_text"):
            assert not any(v["status"] == "consistent" for v in r["verdicts"])


def test_replay_backend_reproduces_verdicts(first_run: dict, data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("run", "--tasks", "xrd_text,raman_text,sem_text", "--limit", "2", "--model", f"replay:{first_run['dir']}",
                   "--output-dir", str(tmp_path), "--cache", "none", "--data-dir", str(data_dir), *FAST)
    assert proc.returncode == 0, proc.stderr
    replayed = {r["key"]: r["status"] for r in _records(Path(proc.stdout.strip().splitlines()[-1]))}
    assert replayed == {r["key"]: r["status"] for r in _records(first_run["dir"])}


def test_kill_and_resume_loses_and_duplicates_nothing(data_dir: Path, smollm2_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    cache = tmp_path / "cache.sqlite"
    args = [sys.executable, "-m", "matpcr.cli", "run", "--tasks", "xrd_text", "--limit", "8", "--batch-size", "1",
            "--output-dir", str(out), "--cache", str(cache), "--data-dir", str(data_dir), *FAST]
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    samples = None
    while time.time() < deadline:
        found = list(out.glob("*/samples.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 3:
            samples = found[0]
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert samples is not None, "the run never wrote records"
    run_dir = samples.parent
    partial = _records(run_dir)
    assert 3 <= len(partial) < 8
    resumed = run_cli("run", "--resume", str(run_dir), "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    records = _records(run_dir)
    keys = [r["key"] for r in records]
    assert len(keys) == 8 and len(set(keys)) == 8
    assert {r["key"]: r["chain"] for r in partial}.items() <= {r["key"]: r["chain"] for r in records}.items()
    results = json.loads((run_dir / "results.json").read_text())
    assert results["timing"]["resumed"] == len(partial)
    # the same items, uninterrupted and uncached, give the same greedy answers
    fresh = run_cli("run", "--tasks", "xrd_text", "--limit", "8", "--batch-size", "1", "--output-dir", str(tmp_path / "fresh"),
                    "--cache", "none", "--data-dir", str(data_dir), *FAST)
    assert fresh.returncode == 0, fresh.stderr
    reference = {r["key"]: r["chain"] for r in _records(Path(fresh.stdout.strip().splitlines()[-1]))}
    assert reference == {r["key"]: r["chain"] for r in records}


def test_each_seed_draws_its_own_items(data_dir: Path) -> None:
    from matpcr.engine import sample_items
    from matpcr.tasks import resolve
    from matpcr.plugins import get_manager

    task = resolve(["raman_text"])[0]
    items = get_manager().registry.get("tasks", task.loader).factory().load(task, data_dir)
    a, b = sample_items(items, task.task, 0, 30), sample_items(items, task.task, 1, 30)
    assert len(a) == len(b) == 30
    assert [i.id for i in a] != [i.id for i in b]
    assert [i.id for i in a] == [i.id for i in sample_items(items, task.task, 0, 30)]


def test_bad_item_does_not_end_the_run(data_dir: Path, tmp_path: Path, smollm2_dir: Path) -> None:
    staged = tmp_path / "data" / "cif_reference_phases" / "amcsd_minerals"
    staged.mkdir(parents=True)
    (staged / "Periclase.cif").write_bytes((data_dir / "cif_reference_phases/amcsd_minerals/Periclase.cif").read_bytes())
    (staged / "Broken.cif").write_text("data_broken\n_cell_length_a 4.2\n")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "mini.yaml").write_text("task: xrd_mini\nloader: xrd.structures\nconstraint: diffraction\noracle: xrd\n"
                                     "loader_args:\n  sources: [amcsd]\n")
    proc = run_cli("run", "--tasks", "xrd_mini", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
                   "--output-dir", str(tmp_path / "runs"), "--cache", "none", *FAST)
    assert proc.returncode == 0, proc.stderr
    records = {r["item_id"]: r for r in _records(Path(proc.stdout.strip().splitlines()[-1]))}
    assert set(records) == {"amcsd:Periclase", "amcsd:Broken"}
    broken = records["amcsd:Broken"]
    assert broken["status"] == "abstain" and "Broken.cif" in broken["meta"]["item_error"]
    assert "item unusable" in broken["meta"]["scoring_error"] and broken["error"] is None  # not a generation error
    assert records["amcsd:Periclase"]["chain"]


def test_user_errors_are_clear(data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("run", "--tasks", "xrd_txt", "--data-dir", str(data_dir))
    assert proc.returncode == 2 and "Did you mean: xrd_text" in proc.stderr
    proc = run_cli("run", "--tasks", "xrd_image", "--data-dir", str(data_dir), "--output-dir", str(tmp_path))
    assert proc.returncode == 2 and "takes text only" in proc.stderr
    proc = run_cli("run", "--tasks", "raman_text", "--data-dir", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = run_cli("run", "--tasks", "raman_text", "--oracle-args", "raman.tolerance=3", "--data-dir", str(data_dir))
    assert proc.returncode == 2 and "tolerance_cm1" in proc.stderr
    proc = run_cli("run", "--tasks", "raman_text", "--model", "hf", "--data-dir", str(data_dir))
    assert proc.returncode == 2 and "needs a model" in proc.stderr


def test_evaluate_python_api(data_dir: Path, tmp_path: Path, smollm2_dir: Path) -> None:
    import matpcr

    results = matpcr.evaluate("sem_text", limit=1, data_dir=str(data_dir), output_dir=str(tmp_path),
                              cache=str(tmp_path / "c.sqlite"), generation={"max_new_tokens": 16}, progress=False)
    assert results["metrics"]["tasks"]["sem_text"]["n_records"] == 1
    assert Path(results["run_dir"], "results.json").exists()
