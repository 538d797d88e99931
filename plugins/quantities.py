"""Finding numbers with units in what models write.

Handles unicode and LaTeX spellings (2θ, 2\\theta, °, ^\\circ, cm⁻¹, cm^{-1}, µm, μm, \\AA), ranges
("28-29°" → its midpoint), hedges ("approximately", "~", "≈"), lists sharing one unit
("28.4, 47.3 and 56.1°"), a final "Answer:" line (preferred when it holds claims) and free text.
Never raises: anything it cannot read is simply not a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_REPLACEMENTS = [
    (re.compile(r"\\(?:mathrm|text|textrm|rm|mbox)\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|\\deg\b|\^\s*\{?\s*o\s*\}?(?=\W|$)"), "°"),
    (re.compile(r"\\theta|θ|ϑ|\\vartheta"), "θ"),
    (re.compile(r"\b(?:2|two)\s*[-_ ]?\s*(?:θ|theta)\b|\b2θ", re.I), "twotheta"),
    (re.compile(r"\\AA\b|\\mathring\{A\}|Å|\u212b|\bangstr(?:o|ö)ms?\b|\bÅngströms?\b", re.I), "Å"),
    (re.compile(r"(?:\\mu|µ|μ)\s*m\b|\bmicrons?\b|\bmicromet(?:er|re)s?\b|\bum\b", re.I), "µm"),
    (re.compile(r"\bnanomet(?:er|re)s?\b", re.I), "nm"),
    (re.compile(r"\bmillimet(?:er|re)s?\b", re.I), "mm"),
    (re.compile(r"cm\s*(?:\^\s*\{?\s*[-−–]\s*1\s*\}?|⁻¹|[-−]1\b)|\b1\s*/\s*cm\b|\bwavenumbers?\b|\bcm-1\b", re.I), "cm-1"),
    (re.compile(r"\b(?:degrees?|deg)\b\.?", re.I), "°"),
    (re.compile(r"[º˚]"), "°"),
    (re.compile(r"[−–—]"), "-"),
    (re.compile(r"\\[,;:! ]|[\u2009\u202f\u00a0]"), " "),
    (re.compile(r"[${}]|\\(?:left|right|approx|sim)\b"), " "),
]

UNIT_PATTERN = r"°|cm-1|nm|µm|mm|Å|pm"
NUMBER = r"(?<![\w.])\d+(?:\.\d+)?(?![\d])"
_SEP = r"\s*(?:,|;|/|&|\band\b|\bor\b)\s*"
_RANGE = r"\s*(?:-|\bto\b)\s*"
_LIST = re.compile(rf"({NUMBER}(?:{_RANGE}{NUMBER})?(?:\s*(?:{UNIT_PATTERN}))?(?:{_SEP}{NUMBER}(?:{_RANGE}{NUMBER})?(?:\s*(?:{UNIT_PATTERN}))?)*)\s*({UNIT_PATTERN})(?![A-Za-z])")
_ONE = re.compile(rf"({NUMBER})(?:{_RANGE}({NUMBER}))?(?:\s*({UNIT_PATTERN})(?![A-Za-z]))?")
_ANSWER = re.compile(r"\banswer\s*[*]*\s*[:=]", re.I)


@dataclass
class Quantity:
    value: float
    unit: str
    start: int
    end: int
    text: str
    low: float | None = None
    high: float | None = None


def normalize(text: str) -> str:
    """Map the spellings models use onto one form; lengths change, so spans refer to this text."""
    for pattern, repl in _REPLACEMENTS:
        text = pattern.sub(repl, text)
    return text


def _to_float(s: str) -> float | None:
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def _quantities_in(text: str, offset: int, default_unit: str | None) -> list[Quantity]:
    out: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    for match in _LIST.finditer(text):
        list_unit = match.group(2)
        for one in _ONE.finditer(match.group(1)):
            a, b = _to_float(one.group(1)), _to_float(one.group(2)) if one.group(2) else None
            if a is None:
                continue
            unit = one.group(3) or list_unit
            lo, hi = (min(a, b), max(a, b)) if b is not None else (None, None)
            value = (a + b) / 2 if b is not None else a
            start = match.start(1) + one.start()
            out.append(Quantity(value, unit, offset + start, offset + match.start(1) + one.end(), one.group(0).strip(), lo, hi))
        taken.append(match.span())
    if default_unit is not None:
        for one in _ONE.finditer(text):
            if any(s <= one.start() < e for s, e in taken) or one.group(3):
                continue
            if one.start() > 0 and text[one.start() - 1] in "([{" or text[one.end():one.end() + 1] in (")", "]"):
                continue  # Miller indices such as (111), not quantities
            a = _to_float(one.group(1))
            b = _to_float(one.group(2)) if one.group(2) else None
            if a is None:
                continue
            value = (a + b) / 2 if b is not None else a
            lo, hi = (min(a, b), max(a, b)) if b is not None else (None, None)
            out.append(Quantity(value, default_unit, offset + one.start(), offset + one.end(), one.group(0), lo, hi))
    return sorted(out, key=lambda q: q.start)


def find_quantities(text: str, units: set[str] | None = None, answer_default_unit: str | None = None,
                    prefer_answer: bool = True) -> tuple[str, list[Quantity]]:
    """Quantities in ``text`` (normalised; returned with it so spans make sense).

    If the text has an "Answer:" line with quantities, only those count: that is what the model
    committed to. In the answer, bare numbers take ``answer_default_unit`` when given.
    """
    try:
        norm = normalize(text or "")
        found: list[Quantity] = []
        if prefer_answer:
            marks = list(_ANSWER.finditer(norm))
            if marks:
                start = marks[-1].end()
                found = _quantities_in(norm[start:], start, answer_default_unit)
        if not found:
            found = _quantities_in(norm, 0, None)
        if units is not None:
            found = [q for q in found if q.unit in units]
        unique: dict[tuple[str, float], Quantity] = {}
        for q in found:  # a value repeated in the reasoning is one claim, not several
            unique.setdefault((q.unit, round(q.value, 4)), q)
        return norm, list(unique.values())
    except Exception:  # the parser must never take a run down
        return text or "", []


def context_before(text: str, start: int, width: int = 40) -> str:
    return text[max(0, start - width):start]
