"""The claim reader against the labelled dev corpus (tests/data/claims/dev): precision and recall per family
stay at or above 0.98, so a change that invents or drops claims fails CI. The held-out split is only for
bench/claims.py's reported figures and is never read here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import claims as bench  # noqa: E402

DEV = bench.load("dev")


@pytest.mark.skipif(not DEV, reason="no labelled dev corpus")
def test_dev_precision_and_recall_per_family() -> None:
    stats = bench.evaluate(DEV)
    assert set(stats) == set(bench.FAMILIES)
    for family, s in stats.items():
        precision = s["tp"] / s["pred"] if s["pred"] else 1.0
        recall = s["tp"] / s["gold"] if s["gold"] else 1.0
        assert precision >= 0.98, (family, precision)
        assert recall >= 0.98, (family, recall)


def test_corpus_texts_are_substrings_of_their_chains() -> None:
    for row in DEV:
        for entry in row.get("claims", []) + row.get("non_claims", []):
            assert entry["text"] in row["chain"], (row["id"], entry["text"])
