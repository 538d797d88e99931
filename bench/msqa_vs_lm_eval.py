"""The same MSQA binary prompts through matpcr and through lm-evaluation-harness, same model (the embedded
SmolLM2), greedy, batch size 1: accuracies, per-item agreement and wall time of both, in one script.

    MATPCR_DATA_DIR=../shared/data python bench/msqa_vs_lm_eval.py [--limit 136]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=136)
    parser.add_argument("--task", default="msqa_binary")
    args = parser.parse_args()
    data_dir = Path(os.environ.get("MATPCR_DATA_DIR", "../shared/data"))
    import matpcr
    from matpcr.tasks import resolve
    from matpcr_plugins.backend_hf import converted_model_dir, smollm2_gguf
    from matpcr_plugins.msqa.export import export_lm_eval

    model_dir = converted_model_dir(smollm2_gguf())
    config = resolve([args.task])[0]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ours = matpcr.evaluate(args.task, model=f"hf:{model_dir}", limit=args.limit, batch_size=1, data_dir=str(data_dir),
                               output_dir=tmp, cache="none", progress=False)
        ours_s = time.perf_counter() - t0
        records = [json.loads(l) for l in (Path(ours["run_dir"]) / "samples.jsonl").read_text().splitlines()]
        ours_by_index = {int(r["item_id"].split("-")[1]): r for r in records}

        export_dir = Path(tmp) / "lm_eval_tasks"
        export_lm_eval(export_dir, data_dir / "msqa")
        t0 = time.perf_counter()
        import lm_eval
        from lm_eval.tasks import TaskManager

        theirs = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={model_dir},dtype=float32",
                                         tasks=[args.task], task_manager=TaskManager(include_path=str(export_dir)),
                                         apply_chat_template=True, system_instruction=config.system_prompt,
                                         batch_size=1, limit=None, log_samples=True, device="cpu")
        theirs_s = time.perf_counter() - t0
    samples = theirs["samples"][args.task]
    chosen = set(ours_by_index)
    lm_acc = [s["acc"] for s in samples if s["doc"]["index"] in chosen]
    same_text = sum(s["resps"][0][0].strip() == ours_by_index[s["doc"]["index"]]["chain"].strip()
                    for s in samples if s["doc"]["index"] in chosen)
    same_score = sum(s["acc"] == ours_by_index[s["doc"]["index"]]["scores"]["accuracy_paper_rule"]
                     for s in samples if s["doc"]["index"] in chosen)
    ours_acc = ours["metrics"]["tasks"][args.task]["scores"]["accuracy_paper_rule"]
    print(f"items: {len(chosen)} ({args.task}, SmolLM2-135M-Instruct, greedy, batch size 1)")
    print(f"matpcr:  accuracy (paper rule) {ours_acc['value']:.4f} [{ours_acc['ci_low']:.3f}, {ours_acc['ci_high']:.3f}]  "
          f"wall {ours_s:.1f} s")
    print(f"lm-eval: accuracy (same rule)  {sum(lm_acc) / len(lm_acc):.4f}  wall {theirs_s:.1f} s "
          "(includes lm_eval import, task indexing and model load)")
    print(f"identical generations: {same_text}/{len(chosen)}; identical per-item scores: {same_score}/{len(chosen)}")


if __name__ == "__main__":
    main()
