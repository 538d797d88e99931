"""How the transformers backend batches long prompts (issue #18: peak memory of the README command).

Real model, real prompts: the measured spectrum tables of the staged data cost a token per 1–2 characters, so the
token budget must count with the tokenizer (the old 4-characters-a-token estimate put eight 2,000-token spectra in
one batch and the README command peaked at 2.4 GB); and chunked prefill must not change greedy output."""

from __future__ import annotations

from pathlib import Path

import pytest

from matpcr.records import Message, Request, Sampling
from matpcr_plugins.backend_hf import HFBackend

TABLE = "\n".join(f"{100 + 0.7 * i:.1f} {1000 + 37 * i}" for i in range(420))  # a 420-row spectrum table


def request(text: str, max_new_tokens: int = 8) -> Request:
    return Request([Message("user", [{"type": "text", "text": text}])], Sampling(max_new_tokens=max_new_tokens))


@pytest.fixture(scope="module")
def backend(smollm2_dir: Path) -> HFBackend:
    b = HFBackend(str(smollm2_dir), token_budget=4096, prefill_chunk=256)
    b.load()
    return b


def test_the_budget_counts_real_tokens_not_characters(backend: HFBackend) -> None:
    long = request("Which are the strongest bands of this measured Raman spectrum?\n" + TABLE)
    tokens = backend._prompt_tokens(long)
    assert tokens > len(TABLE) / 4 * 1.5  # numbers cost far more than the prose estimate
    requests = [long, long, long, request("Is quartz stable?"), request("Is Si metallic?")]
    chunks = backend._token_budget_chunks(requests, list(range(len(requests))))
    for chunk in chunks:
        rows = [backend._prompt_tokens(requests[i]) + requests[i].sampling.max_new_tokens for i in chunk]
        assert len(chunk) == 1 or len(chunk) * max(rows) <= backend.token_budget
    assert sorted(i for c in chunks for i in c) == list(range(len(requests)))
    assert [3, 4] in chunks or [4, 3] in chunks  # the short prompts share a batch; each long one runs alone


def test_chunked_prefill_gives_the_same_greedy_answer(backend: HFBackend) -> None:
    prompt = request("Name the strongest band of this spectrum in cm-1.\n" + TABLE[:2500], max_new_tokens=12)
    chunked = backend.generate([prompt])[0].text
    backend.prefill_chunk = 0
    try:
        whole = backend.generate([prompt])[0].text
    finally:
        backend.prefill_chunk = 256
    assert chunked == whole and chunked
