"""Self-refine baseline: the model is told to double-check its answer, with no oracle signal."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl
from matpcr.protocols import FollowUp
from matpcr.records import Record, Request, Verdict
from matpcr_plugins.interventions.base import FORMAT_REMINDER, RoundsIntervention, continue_with

PROMPT = ("Double-check your answer carefully: verify each step and each number, and correct anything that is "
          f"wrong. {FORMAT_REMINDER}")


class SelfRefine(RoundsIntervention):
    name = "self_refine"

    def follow_up(self, record: Record, request: Request, verdicts: list[Verdict]) -> FollowUp | None:
        if record.error:
            return None
        return continue_with(request, record, PROMPT)


@hookimpl
def register_interventions(register: Any) -> None:
    register("self_refine", SelfRefine, "baseline: ask the model to double-check its answer (no oracle signal)")
