"""The headline command as users paste it: `matpcr run --tasks xrd,raman --model hf:Qwen2.5-VL-7B`."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli


def test_headline_command_resolves_and_stops_on_missing_weights(data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("run", "--tasks", "xrd,raman", "--model", "hf:Qwen2.5-VL-7B", "--limit", "1",
                   "--data-dir", str(data_dir), "--output-dir", str(tmp_path / "runs"), env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 2, proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "weights for Qwen/Qwen2.5-VL-7B-Instruct are not available" in lines[0]
    assert "huggingface-cli download Qwen/Qwen2.5-VL-7B-Instruct" in lines[0] and "HF cache" in lines[0]
    assert not (tmp_path / "runs").exists()


def test_unknown_short_model_name_suggests_aliases(data_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "xrd", "--model", "hf:Qwen2.5VL-7B", "--data-dir", str(data_dir))
    assert proc.returncode == 2 and "did you mean Qwen2.5-VL-7B" in proc.stderr


def test_groups_and_models_are_listed() -> None:
    groups = run_cli("ls", "groups", "--json")
    by_group = {g["group"]: g["tasks"].split(",") for g in json.loads(groups.stdout)}
    assert by_group["xrd"] == ["xrd_image", "xrd_pattern_text", "xrd_text"]
    assert by_group["raman"] == ["raman_image", "raman_text"]
    for family in ("sem", "stability", "metallicity", "magnetism"):
        assert family in by_group
    models = {m["name"]: m["means"] for m in json.loads(run_cli("ls", "models", "--json").stdout)}
    assert models["Qwen2.5-VL-7B"] == "hf:Qwen/Qwen2.5-VL-7B-Instruct" and "Qwen3-VL-8B" in models


def test_text_model_runs_the_text_tasks_of_a_group_and_says_what_it_skipped(data_dir: Path, tmp_path: Path,
                                                                             smollm2_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "xrd,raman", "--model", "smollm2", "--limit", "1", "--data-dir", str(data_dir),
                   "--output-dir", str(tmp_path), "--generation", "max_new_tokens=8", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "skipping image task(s) xrd_image, raman_image" in proc.stderr
    results = json.loads((Path(proc.stdout.strip().splitlines()[-1]) / "results.json").read_text())
    assert set(results["metrics"]["tasks"]) == {"xrd_text", "xrd_pattern_text", "raman_text"}
    assert set(results["skipped_tasks"]) == {"xrd_image", "raman_image"}
    named = run_cli("run", "--tasks", "xrd_image", "--model", "smollm2", "--data-dir", str(data_dir),
                    "--output-dir", str(tmp_path))
    assert named.returncode == 2 and "takes text only" in named.stderr  # asked for by name: an error
