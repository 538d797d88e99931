"""Self-refine baseline: the model is told to double-check its answer, with no oracle signal."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl
from matpcr_plugins.interventions.base import FORMAT_REMINDER, PromptedRounds


class SelfRefine(PromptedRounds):
    name = "self_refine"
    prompt = ("Double-check your answer carefully: verify each step and each number, and correct anything that is "
          f"wrong. {FORMAT_REMINDER}")


@hookimpl
def register_interventions(register: Any) -> None:
    register("self_refine", SelfRefine, "baseline: ask the model to double-check its answer (no oracle signal)")
