"""The MSQA tables of ``matpcr report``: accuracy by question type, and judged long answers (correct /
mostly correct / incorrect, unjudged counted apart). The core's table already lists every declared score."""

from __future__ import annotations

import json
from typing import Any

from matpcr.protocols import ReportSection
from matpcr.report import rate_cell

MSQA_SCORER_CLASSES = ("BinaryScorer", "LongAnswerScorer")


def _msqa_tasks(run: dict[str, Any]) -> list[str]:
    """Tasks judged by an MSQA scorer (runs written before 0.2 name no judge: their msqa_* tasks)."""
    judged_by = run.get("judged_by") or {}
    return [t for t in run["metrics"]["tasks"] if (judged_by.get(t) or {}).get("class") in MSQA_SCORER_CLASSES
            or (not judged_by and t.startswith("msqa"))]


def msqa_sections(runs: list[dict[str, Any]], labels: list[str]) -> list[ReportSection]:
    rows, judged = [], []
    for label, run in zip(labels, runs):
        for task in _msqa_tasks(run):
            m = run["metrics"]["tasks"][task]
            for group, scores in (m.get("scores_by_group") or {}).items():
                primary = next(iter(scores))
                rows.append([label, task, group, primary, rate_cell(scores[primary]),
                             str(scores[primary].get("unscored", 0))])
            sc = m.get("scores") or {}
            if {"correct", "mostly_correct", "incorrect"} <= set(sc):
                judged.append([label, task, rate_cell(sc["accuracy"]),
                               f"{sc['correct']['numerator']:g}/{sc['mostly_correct']['numerator']:g}/"
                               f"{sc['incorrect']['numerator']:g}",
                               str(sc["accuracy"].get("unscored", 0)), json.dumps(run.get("judge") or {})])
    out = []
    if rows:
        out.append(ReportSection("MSQA: accuracy by question type (primary rule)",
                                 ["model", "task", "question type", "score", "rate", "unscored"], rows))
    if judged:
        out.append(ReportSection("MSQA long answers (judge): accuracy (correct/mostly correct/incorrect)",
                                 ["model", "task", "accuracy", "C/MC/I", "unjudged", "judge"], judged))
    return out
