"""The trained verifier as a checker usable where no reference exists (``--checker verifier:PATH``).

Its judgements are kept apart from oracle verdicts: scores ``verifier.p_violation``,
``verifier.predicted_violation`` and, where the oracle could check the record, ``verifier.agrees_with_oracle``.
"""

from __future__ import annotations

from typing import Any

from matpcr.protocols import Checker, Metric
from matpcr.records import Item, Record, Score
from matpcr_plugins.verifier.dataset import example_text


class VerifierChecker(Checker):
    name = "verifier"
    metrics = (Metric("verifier.predicted_violation", higher_is_better=False,
                      description="share of answers the verifier predicts violated"),
               Metric("verifier.agrees_with_oracle", description="verifier prediction = oracle verdict (checkable records)"),
               Metric("verifier.p_violation", higher_is_better=False, interval="none",
                      description="mean predicted probability of a violation"))

    def __init__(self, path: str, threshold: float = 0.5):
        from matpcr_plugins.verifier.model import Verifier

        self.verifier = Verifier(path)
        self.threshold = float(threshold)
        self.params = {"path": path, "threshold": self.threshold, "base": self.verifier.meta["base"]}

    def predict(self, records: list[Record], items: list[Item]) -> list[dict[str, Score]]:
        texts = [example_text(r.constraint, i.text, r.chain) for r, i in zip(records, items)]
        out = []
        for record, p in zip(records, self.verifier.p_violation(texts)):
            predicted = "violated" if p >= self.threshold else "consistent"
            scores = {"verifier.p_violation": Score(float(p), predicted),
                      "verifier.predicted_violation": Score(float(predicted == "violated"), predicted)}
            if record.status in ("consistent", "violated"):
                scores["verifier.agrees_with_oracle"] = Score(float(predicted == record.status), predicted)
            out.append(scores)
        return out
