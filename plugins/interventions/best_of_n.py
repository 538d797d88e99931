"""Best-of-N baseline: N independent samples of the first answer (N = 3).

The report gives the random-pick PCR (the mean over samples) and the oracle upper bound (an item
counts as consistent if any of its N samples is). Sampling, not greedy decoding, is needed for the
samples to differ: temperature 0.7 unless the task or ``--generation`` says otherwise.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from matpcr import hookimpl, stats
from matpcr.protocols import FollowUp, Intervention, ReportSection
from matpcr.report import rate_cell
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

    def summarize(self, records: list[Record], n_boot: int, seed: int) -> dict[str, Any]:
        """Random-pick PCR (the mean over samples of an item) and the oracle upper bound (any sample
        consistent), over items with at least one checkable sample; no before/after test applies."""
        groups: dict[tuple[str, int], list[Record]] = defaultdict(list)
        for r in records:
            if r.round == 0 and r.status in ("consistent", "violated"):
                groups[(r.item_id, r.seed)].append(r)
        picks = [float(np.mean([g.status == "consistent" for g in grp])) for grp in groups.values()]
        best = [float(any(g.status == "consistent" for g in grp)) for grp in groups.values()]
        sources = [grp[0].source_id for grp in groups.values()]
        return {"best_of_n": {
            "n_items": len(groups), "samples": len({r.sample for r in records}),
            "random_pick_pcr": stats.bootstrap_rate(picks, sources, n_boot=n_boot, seed=seed).to_dict(),
            "oracle_upper_bound_pcr": stats.bootstrap_rate(best, sources, n_boot=n_boot, seed=seed).to_dict()}}


@hookimpl
def register_interventions(register: Any) -> None:
    register("best_of_n", BestOfN, "baseline: N=3 independent samples; random-pick PCR and oracle upper bound")


def best_of_n_section(runs: list[dict[str, Any]], labels: list[str]) -> list[ReportSection]:
    """Random-pick PCR beside the oracle upper bound, per task, for runs with best-of-N."""
    rows = []
    for label, run in zip(labels, runs):
        for task, cell in ((run["metrics"].get("intervention") or {})).items():
            bon = cell.get("best_of_n") if isinstance(cell, dict) else None
            if bon:
                rows.append([label, task, str(bon["n_items"]), str(bon["samples"]),
                             rate_cell(bon["random_pick_pcr"]), rate_cell(bon["oracle_upper_bound_pcr"])])
    return [ReportSection("Best-of-N: random pick versus the oracle upper bound",
                          ["model", "task", "items", "samples", "random-pick PCR", "upper bound PCR"], rows)] if rows else []


@hookimpl
def register_report_sections(register: Any) -> None:
    register("best_of_n", best_of_n_section, "best-of-N random-pick PCR and oracle upper bound")
