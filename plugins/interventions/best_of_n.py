"""Best-of-N baseline: N independent samples of the first answer (N = 3).

The report gives the random-pick PCR (the mean over samples) and the oracle upper bound (an item
counts as consistent if any of its N samples is). Sampling, not greedy decoding, is needed for the
samples to differ: temperature 0.7 unless the task or ``--generation`` says otherwise.
"""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl
from matpcr.protocols import FollowUp, Intervention
from matpcr.records import Record, Request, Verdict
from matpcr_plugins.interventions.base import parse_constraints


class BestOfN(Intervention):
    name = "best_of_n"

    def __init__(self, n: int = 3, temperature: float = 0.7, constraints: Any = None) -> None:
        self.samples = int(n)
        self.rounds = 0
        self.generation = {"temperature": float(temperature)}
        self.constraints = parse_constraints(constraints)

    def follow_up(self, record: Record, request: Request, verdicts: list[Verdict]) -> FollowUp | None:
        return None


@hookimpl
def register_interventions(register: Any) -> None:
    register("best_of_n", BestOfN, "baseline: N=3 independent samples; random-pick PCR and oracle upper bound")
