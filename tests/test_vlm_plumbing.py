"""The vision-language path of the hf backend, with a tiny randomly initialised LLaVA-style model.

This checks plumbing, not quality: no vision-language weights are available offline here, so a
model with random weights (built from a config) proves that images reach the processor, that mixed
image+text batches are padded and generated together, and that image tasks run end to end. Its
answers are noise by construction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli

TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
            "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}"
            "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory, smollm2_dir: Path) -> Path:
    import torch
    from transformers import (AutoTokenizer, CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor)

    out = tmp_path_factory.mktemp("tiny_vlm")
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    processor = LlavaProcessor(image_processor=CLIPImageProcessor(size={"shortest_edge": 28},
                                                                  crop_size={"height": 28, "width": 28}),
                               tokenizer=tokenizer, patch_size=14, vision_feature_select_strategy="default",
                               num_additional_image_tokens=1, chat_template=TEMPLATE)
    torch.manual_seed(0)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                       image_size=28, patch_size=14, projection_dim=32),
        text_config=LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                num_key_value_heads=2, vocab_size=len(tokenizer), max_position_embeddings=4096),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"), vision_feature_select_strategy="default",
        vision_feature_layer=-1)
    LlavaForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)
    return out


def test_backend_sees_images_and_batches_them(tiny_vlm: Path, data_dir: Path) -> None:
    from matpcr.records import Message, Request, Sampling, image_part, text_part
    from matpcr_plugins.backend_hf import HFBackend

    backend = HFBackend(str(tiny_vlm))
    assert backend.capabilities.images
    img = sorted((data_dir / "sem_bam_tio2" / "images").glob("*.tif"))[0]
    requests = [Request([Message("user", [image_part(img), text_part("How big are the particles?")])], Sampling(max_new_tokens=4)),
                Request([Message("system", [text_part("Be brief.")]),
                         Message("user", [image_part(img), text_part("A longer question about the same micrograph, please.")])],
                        Sampling(max_new_tokens=4))]
    responses = backend.generate(requests)
    assert len(responses) == 2 and all(r.completion_tokens == 4 for r in responses)
    assert responses[1].prompt_tokens > responses[0].prompt_tokens  # left padding kept each prompt whole
    assert backend.identity["fingerprint"]


def test_image_tasks_run_end_to_end(tiny_vlm: Path, data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("run", "--tasks", "xrd_image,raman_image,sem_image", "--limit", "2", "--model", f"hf:{tiny_vlm}",
                   "--generation", "max_new_tokens=8", "--data-dir", str(data_dir), "--output-dir", str(tmp_path),
                   "--cache", "none", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    records = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 6 and {r["modality"] for r in records} == {"image"}
    for r in records:
        parts = r["prompt"][-1]["content"]
        image = [p for p in parts if p["type"] == "image"]
        assert len(image) == 1 and Path(image[0]["path"]).exists() and len(image[0]["sha256"]) == 64
        assert r["error"] is None and r["completion_tokens"] > 0
