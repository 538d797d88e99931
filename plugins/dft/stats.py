"""Summary counts of the reference store (``matpcr refs stats``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from matpcr_plugins.dft.store import ReferenceStore
from matpcr_plugins.dft.thresholds import (EPSILON_GRID, NEAR_HULL_EV, NONZERO_GAP_EV, ZERO_GAP_EV,
                                             ZERO_MOMENT_MUB_PER_ATOM)

EPSILONS = EPSILON_GRID


def store_stats(path: str | None = None) -> dict[str, Any]:
    db = ReferenceStore(path)
    per: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    labelled: list[tuple[float, bool]] = []
    for m in db.iter():
        row = per[m.source]
        row["rows"] += 1
        if m.e_above_hull is not None:
            row["on_hull"] += m.e_above_hull <= 1e-6
            row["near_hull"] += m.e_above_hull <= NEAR_HULL_EV
            if m.is_stable is not None:
                row["is_stable_n"] += 1
                row["epsilon_disagree"] += (m.e_above_hull <= NEAR_HULL_EV) != m.is_stable
                labelled.append((m.e_above_hull, m.is_stable))
        if m.band_gap is not None:
            row["metallic"] += m.band_gap <= ZERO_GAP_EV
            row["gap_abstain"] += ZERO_GAP_EV < m.band_gap < NONZERO_GAP_EV
        if m.total_magnetization is not None and m.nsites:
            row["magnetic"] += abs(m.total_magnetization) / m.nsites >= ZERO_MOMENT_MUB_PER_ATOM
    db.close()
    keys = ("rows", "on_hull", "near_hull", "metallic", "gap_abstain", "magnetic", "is_stable_n", "epsilon_disagree")
    sensitivity = {}
    for eps in EPSILONS:
        disagree = sum((e <= eps + 1e-12) != s for e, s in labelled)
        sensitivity[str(eps)] = {"n": len(labelled), "disagree": disagree,
                                 "share": disagree / len(labelled) if labelled else 0.0}
    return {"sources": {s: {k: int(r[k]) for k in keys} for s, r in sorted(per.items())},
            "epsilon_sensitivity": sensitivity}
