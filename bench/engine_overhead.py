"""Engine overhead: `matpcr run` versus a plain batched `model.generate` loop over the same prompts,
same model (the embedded SmolLM2), same batch size, in one process. Target: ratio <= 1.10.

    MATPCR_DATA_DIR=../shared/data python bench/engine_overhead.py [--tasks xrd_text] [--limit 16] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", default="xrd_text,sem_text")
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    from matpcr.engine import Evaluation, RunConfig, build_request

    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(tasks=args.tasks.split(","), limit=args.limit, batch_size=args.batch_size, cache=None,
                           output_dir=tmp, progress=False, generation={"max_new_tokens": args.max_new_tokens})
        evaluation = Evaluation(config)
        backend = evaluation.backend
        backend.load()  # both sides start with the model in memory
        plan = evaluation.load_items()  # items are loaded inside the timed run too (cached references)
        requests = [build_request(t, i, s, "", evaluation.sampling(t)) for t, s, i in plan]

        tok, model = backend._tokenizer, backend._model
        t0 = time.perf_counter()
        for start in range(0, len(requests), args.batch_size):
            chunk = requests[start:start + args.batch_size]
            texts = [tok.apply_chat_template([{"role": m.role, "content": m.text} for m in r.messages],
                                             add_generation_prompt=True, tokenize=False) for r in chunk]
            batch = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
            with torch.inference_mode():
                out = model.generate(**batch, max_new_tokens=args.max_new_tokens, do_sample=False,
                                     pad_token_id=tok.pad_token_id)
            tok.batch_decode(out[:, batch["input_ids"].shape[1]:], skip_special_tokens=True)
        plain = time.perf_counter() - t0

        evaluation.items.clear()
        t0 = time.perf_counter()
        evaluation.execute()
        engine = time.perf_counter() - t0
    print(f"prompts: {len(requests)}  batch size: {args.batch_size}  max_new_tokens: {args.max_new_tokens}")
    print(f"plain generate loop: {plain:.2f} s")
    print(f"matpcr run (uncached, scoring and writing records included): {engine:.2f} s")
    print(f"ratio: {engine / plain:.3f}  (target <= 1.10)")


if __name__ == "__main__":
    main()
