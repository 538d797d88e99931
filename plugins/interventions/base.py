"""Shared parts of the built-in interventions: continuing a conversation and parsing arguments."""

from __future__ import annotations

from typing import Any

from matpcr.protocols import FollowUp, Intervention
from matpcr.records import Message, Record, Request, text_part

DEFAULT_CONSTRAINTS = ("diffraction", "spectra")
FORMAT_REMINDER = "Keep the same final line format as before (\"Answer: ...\")."


def parse_constraints(value: Any) -> tuple[str, ...] | None:
    if value in (None, "", "all"):
        return None if value == "all" else DEFAULT_CONSTRAINTS
    if isinstance(value, str):
        return tuple(v.strip() for v in value.replace(";", ",").split(",") if v.strip())
    return tuple(value)


def continue_with(request: Request, record: Record, user_text: str, meta: dict[str, Any] | None = None) -> FollowUp:
    """The conversation so far, the model's answer, and a new user turn."""
    messages = [*request.messages, Message("assistant", [text_part(record.chain)]), Message("user", [text_part(user_text)])]
    return FollowUp(Request(messages, request.sampling, seed=request.seed), meta or {})


class RoundsIntervention(Intervention):
    """An intervention with K rounds over a set of constraint types (diffraction and spectra by default,
    the two where feedback is actionable without revealing the answer)."""

    def __init__(self, rounds: int = 2, constraints: Any = None) -> None:
        self.rounds = int(rounds)
        self.constraints = parse_constraints(constraints)


class PromptedRounds(RoundsIntervention):
    """A baseline that sends the same fixed follow-up prompt every round, with no oracle signal."""

    prompt: str = ""

    def follow_up(self, record: Record, request: Request, verdicts: list[Any]) -> FollowUp | None:
        if record.error:
            return None
        return continue_with(request, record, self.prompt)
