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


def test_intervals_bracket_the_pooled_rate_and_stay_informative_when_every_claim_agrees() -> None:
    # 40 chains that each read 3 of 3 gold claims right, and one that invents 2 and drops 1
    per_item = {"sem": [(3, 3, 3)] * 40 + [(1, 3, 2)]}
    lines = bench.intervals(per_item).splitlines()
    sem = lines[1].split()
    precision, boot_lo, boot_hi, exact_lo, exact_hi = (float(sem[2]), float(sem[3].strip("[,")), float(sem[4].strip("]")),
                                                       float(sem[5].strip("[,")), float(sem[6].strip("]")))
    assert precision == pytest.approx(121 / 123, abs=1e-4)
    assert boot_lo <= precision <= boot_hi < 1.0 + 1e-9
    assert exact_lo < precision <= exact_hi
    perfect = bench.intervals({"sem": [(2, 2, 2)] * 30}).splitlines()[1].split()
    assert float(perfect[2]) == 1.0
    assert float(perfect[5].strip("[,")) < 0.97  # 60 of 60 claims right still leaves room below 1
