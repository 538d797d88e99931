"""Chain templates for the validity gate: the ways a model states an answer.

A gate control (``matpcr.protocols.Control``) carries values (numbers or class words) with their unit;
each template below writes them into a whole chain the claim reader then has to parse back: free prose,
an "Answer:" line, bullet and numbered lists, LaTeX, a markdown table, a JSON block, a reasoning paragraph
full of distractor numbers (instrument settings, lattice parameters, temperatures) before the answer, and
so on. A family supplies a :class:`Phrasing` (its quantity's label, the sentence that introduces its
answer, its distractors); :func:`bind` turns it into the list the oracle's ``chain_templates`` returns.
The gate reports rates per control over all templates, so what the reader misses is measured, not hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

Template = Callable[[list[Any], str, np.random.Generator], str]


@dataclass(frozen=True)
class Phrasing:
    label: str                  # "2θ", "Raman shift", "feature size", "stability"
    intro: str                  # "The three strongest reflections lie at"
    noun: str                   # "reflection" (for "the first reflection at ...")
    latex_label: str = ""       # "2\\theta"
    decimals: int = 2
    header: str = ""            # a table column header ("2θ (°)")
    distractors: tuple[str, ...] = ()
    reasoning: tuple[str, ...] = ()
    words: bool = False         # class words ("metastable"), not numbers


def fmt(value: Any, unit: str, ph: Phrasing) -> str:
    if isinstance(value, str):
        return value
    text = f"{value:.{ph.decimals}f}"
    if not unit:
        return text
    return f"{text}{unit}" if unit in ("°",) else f"{text} {unit}"


def _latex_unit(unit: str) -> str:
    return {"°": "^\\circ", "cm⁻¹": "\\,\\mathrm{cm^{-1}}", "nm": "\\,\\mathrm{nm}", "µm": "\\,\\mu\\mathrm{m}",
            "eV/atom": "\\,\\mathrm{eV/atom}", "eV": "\\,\\mathrm{eV}", "µB/atom": "\\,\\mu_B/\\mathrm{atom}",
            "µB/f.u.": "\\,\\mu_B/\\mathrm{f.u.}", "eV/f.u.": "\\,\\mathrm{eV/f.u.}"}.get(unit, f"\\,\\mathrm{{{unit}}}")


def _join(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _reason(ph: Phrasing, rng: np.random.Generator) -> str:
    return str(rng.choice(ph.reasoning)) if ph.reasoning else "Reasoning from the data given."


def answer_line(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    body = ", ".join(fmt(v, unit, ph) for v in values)
    return f"{_reason(ph, rng)}\nAnswer: {body}" if ph.words else f"{_reason(ph, rng)}\nAnswer: {ph.label} = {body}"


def prose(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    return f"{_reason(ph, rng)} {ph.intro} {_join([fmt(v, unit, ph) for v in values])}."


def bullets(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    lines = "\n".join(f"- {fmt(v, unit, ph)}" for v in values)
    return f"{_reason(ph, rng)}\n\n{ph.intro}:\n{lines}"


def numbered(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    lines = "\n".join(f"{i}. {ph.label}: {fmt(v, unit, ph)}" for i, v in enumerate(values, 1))
    return f"{_reason(ph, rng)}\n\nResult:\n{lines}"


def latex(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    if ph.words:
        return f"{_reason(ph, rng)} Hence the material is \\textbf{{{values[0]}}}."
    lab = ph.latex_label or f"\\mathrm{{{ph.label}}}"
    parts = ", ".join(f"${lab} = {v:.{ph.decimals}f}{_latex_unit(unit) if unit else ''}$" for v in values)
    return f"{_reason(ph, rng)} {ph.intro} {parts}."


def table(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    if ph.words:
        return f"{_reason(ph, rng)}\n\n| property | assessment |\n|---|---|\n| {ph.label} | {values[0]} |"
    head = ph.header or f"{ph.label} ({unit})"
    rows = "\n".join(f"| {i} | {v:.{ph.decimals}f} |" for i, v in enumerate(values, 1))
    return f"{_reason(ph, rng)}\n\n| # | {head} |\n|---|---|\n{rows}"


def distractors(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    k = min(3, len(ph.distractors))
    picked = [ph.distractors[i] for i in sorted(rng.choice(len(ph.distractors), k, replace=False))] if k else []
    return " ".join(picked) + f"\n\nTaking all of this into account, {ph.intro[0].lower() + ph.intro[1:]} " \
        f"{_join([fmt(v, unit, ph) for v in values])}."


def bold_final(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    body = _join([fmt(v, unit, ph) for v in values])
    return f"{_reason(ph, rng)}\n\n**Final answer:** {body}" if ph.words else \
        f"{_reason(ph, rng)}\n\n**Final answer:** {ph.label} ≈ {body}"


def ordinal(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    if ph.words:
        return f"Weighing the evidence, I conclude that it is {values[0]}, as {ph.intro.lower()} {values[0]}."
    names = ("first", "second", "third", "fourth", "fifth")
    parts = [f"the {names[i]} {ph.noun} at {fmt(v, unit, ph)}" for i, v in enumerate(values[:5])]
    return f"{_reason(ph, rng)} I find {_join(parts)}."


def steps(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    return (f"Step 1: {_reason(ph, rng)}\nStep 2: Compare with what is known for this class of materials.\n"
            f"Step 3: Therefore, {ph.intro[0].lower() + ph.intro[1:]} {'; '.join(fmt(v, unit, ph) for v in values)}.")


def json_block(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    import json

    key = ph.label.replace(" ", "_")
    return f"{_reason(ph, rng)}\n```json\n" + json.dumps({key: [fmt(v, unit, ph) for v in values]}, ensure_ascii=False) \
        + "\n```"


def approximate(ph: Phrasing, values: list[Any], unit: str, rng: np.random.Generator) -> str:
    if ph.words:
        return f"{_reason(ph, rng)} On balance it is {values[0]}."
    hedges = ("approximately", "about", "roughly", "near")
    parts = [f"{hedges[i % 4]} {fmt(v, unit, ph)}" for i, v in enumerate(values)]
    return f"{_reason(ph, rng)} {ph.intro} {_join(parts)}."


TEMPLATES: dict[str, Callable[..., str]] = {
    "answer_line": answer_line, "prose": prose, "bullets": bullets, "numbered": numbered, "latex": latex,
    "table": table, "distractors": distractors, "bold_final": bold_final, "ordinal": ordinal, "steps": steps,
    "json": json_block, "approximate": approximate,
}


@dataclass
class BoundTemplate:
    """One template with a family's phrasing: ``template(values, unit, rng) -> chain``; ``name`` for reports.
    ``phrasing`` is a Phrasing or a function ``(values, unit) -> Phrasing`` (a family whose controls state
    class words and numbers)."""

    name: str
    fn: Callable[..., str] = field(repr=False)
    phrasing: Any = field(repr=False, default=None)

    def __call__(self, values: list[Any], unit: str, rng: np.random.Generator) -> str:
        ph = self.phrasing(values, unit) if callable(self.phrasing) else self.phrasing
        return self.fn(ph, values, unit, rng)


def bind(phrasing: Phrasing | Callable[[list[Any], str], Phrasing]) -> list[BoundTemplate]:
    return [BoundTemplate(name, fn, phrasing) for name, fn in TEMPLATES.items()]
