"""Equal-compute re-prompting baseline: the model is simply asked to reconsider."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl
from matpcr.protocols import FollowUp
from matpcr.records import Record, Request, Verdict
from matpcr_plugins.interventions.base import FORMAT_REMINDER, RoundsIntervention, continue_with

PROMPT = f"Please reconsider the question and answer it again. {FORMAT_REMINDER}"


class Reprompt(RoundsIntervention):
    name = "reprompt"

    def follow_up(self, record: Record, request: Request, verdicts: list[Verdict]) -> FollowUp | None:
        if record.error:
            return None
        return continue_with(request, record, PROMPT)


@hookimpl
def register_interventions(register: Any) -> None:
    register("reprompt", Reprompt, "baseline: equal-compute re-prompting ('reconsider')")
