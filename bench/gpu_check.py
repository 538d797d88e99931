"""The GPU check behind bench/gpu_check.sh: prints what ran, agreement and throughput (see that script)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

N_ITEMS = 8
TASKS = "sem_text,raman_text,xrd_text"


def requests_for(data_dir: str, n: int) -> list:
    from matpcr.planning import build_request, plan_items, record_key
    from matpcr.plugins import get_manager
    from matpcr.records import Sampling
    from matpcr.tasks import resolve

    tasks = resolve(TASKS.split(","))
    plan = plan_items(tasks, get_manager().registry, Path(data_dir), 1, max(1, n // len(tasks)))
    return [build_request(t, item, 0, record_key(t.task, item.id, 0, 0, 0), Sampling(max_new_tokens=48))
            for t, _, item in plan.entries]


def timed(backend, requests) -> tuple[list, float]:
    t0 = time.perf_counter()
    out = backend.generate(requests)
    return out, time.perf_counter() - t0


def main() -> int:
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import torch

    report: dict = {"cuda": torch.cuda.is_available()}
    if not torch.cuda.is_available():
        print("no CUDA GPU visible to torch: nothing to check here")
        return 2
    report["device"] = torch.cuda.get_device_name(0)
    print(f"GPU: {report['device']}, torch {torch.__version__}")
    from matpcr_plugins.backend_hf import HFBackend, converted_model_dir, smollm2_gguf

    model_dir = converted_model_dir(smollm2_gguf())
    requests = requests_for(os.environ["MATPCR_DATA_DIR"], N_ITEMS)
    hf = HFBackend(str(model_dir), device="cuda", dtype="float16")
    hf_out, hf_s = timed(hf, requests)
    hf_tokens = sum(r.completion_tokens for r in hf_out)
    report["hf"] = {"items": len(requests), "seconds": hf_s, "tokens_per_s": hf_tokens / hf_s,
                    "errors": sum(bool(r.error) for r in hf_out)}
    print(f"hf (SmolLM2, cuda, fp16): {len(requests)} items in {hf_s:.1f} s, {hf_tokens / hf_s:.0f} tokens/s")

    # the image path (a tiny random VLM) runs after this script, from gpu_check.sh, as tests/test_vlm_plumbing.py

    if importlib.util.find_spec("vllm") is None:
        report["vllm"] = "not installed (pip install 'matpcr[vllm]')"
        print("vllm: not installed; install the extra to compare backends")
    else:
        from matpcr_plugins.backend_vllm import make_vllm

        vllm = make_vllm(str(model_dir), None, gpu_memory_utilization=0.3, max_model_len=4096)
        v_out, v_s = timed(vllm, requests)
        v_tokens = sum(r.completion_tokens for r in v_out)
        same = sum(a.text.strip() == b.text.strip() for a, b in zip(hf_out, v_out))
        report["vllm"] = {"seconds": v_s, "tokens_per_s": v_tokens / v_s, "identical_greedy_answers": same,
                          "items": len(requests)}
        print(f"vllm: {len(requests)} items in {v_s:.1f} s, {v_tokens / v_s:.0f} tokens/s; "
              f"greedy answers identical to hf on {same}/{len(requests)} (fp16 kernels may differ in a few tokens)")
    Path(args.out, "gpu_check.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
