"""CGSV: consistency-guided self-verification (MatPCR Algorithm 1).

After each answer, the oracle's violation messages are shown to the model, which is asked to revise;
up to K rounds (K = 2) or until no violation remains. The messages name the violated constraint and
never the reference value, so the feedback cannot hand over the answer.
"""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl
from matpcr.protocols import FollowUp
from matpcr.records import Record, Request, Verdict
from matpcr_plugins.interventions.base import FORMAT_REMINDER, RoundsIntervention, continue_with


class CGSV(RoundsIntervention):
    name = "cgsv"

    def follow_up(self, record: Record, request: Request, verdicts: list[Verdict]) -> FollowUp | None:
        problems = [v.message for v in verdicts if v.status == "violated"]
        if not problems:
            return None  # consistent (or nothing checkable): nothing to act on
        unique = list(dict.fromkeys(problems))
        text = ("A physical-consistency check of your answer found these problems:\n"
                + "\n".join(f"- {p}" for p in unique)
                + f"\nRe-examine your reasoning and give a corrected answer. {FORMAT_REMINDER}")
        return continue_with(request, record, text, {"feedback": unique})


@hookimpl
def register_interventions(register: Any) -> None:
    register("cgsv", CGSV, "oracle feedback on violations, up to K=2 revision rounds (MatPCR Algorithm 1)")
