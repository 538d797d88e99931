"""The trained verifier as a checker usable where no reference exists (``--checker verifier:PATH``).

Its judgements are kept apart from oracle verdicts: they go to ``record.meta["checker"]`` and to a
separate ``checker`` section of results.json.
"""

from __future__ import annotations

from typing import Any

from matpcr.records import Item, Record
from matpcr_plugins.verifier.dataset import example_text


class VerifierChecker:
    name = "verifier"
    constraint = "any"

    def __init__(self, path: str, threshold: float = 0.5):
        from matpcr_plugins.verifier.model import Verifier

        self.verifier = Verifier(path)
        self.threshold = float(threshold)
        self.params = {"path": path, "threshold": self.threshold, "base": self.verifier.meta["base"]}

    def predict(self, records: list[Record], items: list[Item]) -> list[dict[str, Any]]:
        texts = [example_text(r.constraint, i.text, r.chain) for r, i in zip(records, items)]
        probs = self.verifier.p_violation(texts)
        return [{"name": "verifier", "p_violation": float(p), "predicted": "violated" if p >= self.threshold else "consistent"}
                for p in probs]
