"""How well do two annotators agree on the gold claims? (issue #12: is the reader's gap in the labels or the reader?)

    python bench/claims_agreement.py

tests/data/claims/agreement/second_annotator.jsonl holds a second labelling of 150 dev chains (25 per family, drawn
from the w14–w23 batches by sha1 of the id). A helper wrote it from the chain, the question and the corpus README
only, without opening those batches. The README records many of their decisions, so the agreement measures how
tightly the README pins the labels down rather than fully independent judgement. Prints, per family, the second
annotator's precision and recall against the gold claims (the same matching as bench/claims.py) and the reader's
on the same chains (tuned on them: dev).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claims as B  # noqa: E402  (bench/claims.py: the corpus loader and the claim matcher)

SECOND = Path(__file__).resolve().parents[1] / "tests" / "data" / "claims" / "agreement" / "second_annotator.jsonl"


def main() -> int:
    gold = {r["id"]: r for r in B.load("dev")}
    readers = B.oracles()
    # family -> [second hits, second claims, gold claims, reader hits, reader claims, chains]
    totals: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    for line in SECOND.open(encoding="utf-8"):
        second = json.loads(line)
        row = gold[second["id"]]
        t = totals[row["family"]]
        t[0] += B.match(second["claims"], row["claims"])
        t[1] += len(second["claims"])
        t[2] += len(row["claims"])
        pred = [dataclasses.asdict(c) for c in readers[row["family"]].read(row["chain"], B.item_for(row)).claims]
        t[3] += B.match(pred, row["claims"])
        t[4] += len(pred)
        t[5] += 1
    print(f"{'family':<12} {'chains':>6} {'gold':>5}  second P    R   reader P    R")
    for name in sorted(totals) + ["all"]:
        t = [sum(v[i] for v in totals.values()) for i in range(6)] if name == "all" else totals[name]
        print(f"{name:<12} {t[5]:>6} {t[2]:>5}     {t[0] / t[1]:.3f} {t[0] / t[2]:.3f}     {t[3] / t[4]:.3f} {t[3] / t[2]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
