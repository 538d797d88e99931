#!/usr/bin/env bash
# GPU readiness in one prepared script (< 5 minutes, no network beyond what the project's install put
# there): the HF backend on the GPU with the embedded SmolLM2 and a tiny random VLM (plumbing), the vLLM
# backend on the same text model when vLLM is installed, their agreement on a few greedy items, and
# throughput. Run it wherever a CUDA GPU is available:   bash bench/gpu_check.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/matpcr-gpu-check}}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export MATPCR_DATA_DIR=${MATPCR_DATA_DIR:-$(cd .. && pwd)/shared/data}
timeout 200 python bench/gpu_check.py --out "$OUT" 2>&1 | tee "$OUT/gpu_check.log"
status=${PIPESTATUS[0]}
# the image path with a tiny random VLM built from a config (plumbing, not quality)
timeout 90 python -m pytest -q tests/test_vlm_plumbing.py 2>&1 | tail -3 | tee -a "$OUT/gpu_check.log"
exit "$status"
