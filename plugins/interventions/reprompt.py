"""Equal-compute re-prompting baseline: the model is simply asked to reconsider."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl
from matpcr_plugins.interventions.base import FORMAT_REMINDER, PromptedRounds


class Reprompt(PromptedRounds):
    name = "reprompt"
    prompt = f"Please reconsider the question and answer it again. {FORMAT_REMINDER}"


@hookimpl
def register_interventions(register: Any) -> None:
    register("reprompt", Reprompt, "baseline: equal-compute re-prompting ('reconsider')")
