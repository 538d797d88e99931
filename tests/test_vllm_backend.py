"""The optional vLLM backend: a clear error without it, and a real run where a GPU and vLLM exist."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import run_cli

HAS_VLLM = importlib.util.find_spec("vllm") is not None


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed here")
def test_missing_vllm_stops_with_the_install_hint_before_writing(data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("run", "--tasks", "sem_text", "--limit", "2", "--model", "vllm:HuggingFaceTB/SmolLM2-135M-Instruct",
                   "--data-dir", str(data_dir), "--output-dir", str(tmp_path), "--cache", "none", "--no-progress")
    assert proc.returncode == 2 and "pip install 'matpcr[vllm]'" in proc.stderr and "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir())  # no half-written run directory


@pytest.mark.gpu
@pytest.mark.skipif(not (HAS_VLLM and _has_gpu()), reason="needs vLLM and a CUDA GPU")
def test_vllm_generates_on_a_gpu(data_dir: Path, tmp_path: Path, smollm2_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "sem_text,raman_text", "--limit", "4", "--model", f"vllm:{smollm2_dir}",
                   "--model-args", "gpu_memory_utilization=0.3,max_model_len=4096", "--data-dir", str(data_dir),
                   "--output-dir", str(tmp_path), "--cache", "none", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(l) for l in next(tmp_path.glob("*/samples.jsonl")).read_text().splitlines()]
    assert len(records) == 8 and all(r["chain"] and not r["error"] for r in records)
