"""The shared claim reader: one pass over a chain's numbers, each either taken as a claim or rejected with
a reason. Family readers (diffraction, spectra, microscopy, and the DFT families) only say what their asked
quantity looks like.

Contract (docs/oracles.md, "Claim extraction"): a claim is a quantity the model *asserts* about the thing
asked, anywhere in the chain, counted once per value. A number that is seen and not taken is returned in
``Extraction.rejected`` with one reason: range, uncertainty, instrument_setting, temperature, index,
lattice_parameter, other_property, question_echo, hedged, negated, retracted or other. Linear in the chain's
length: the words before a list are read once for the whole list ("a run"), and each number then costs a
few character checks. Chains over ``text.MAX_CHARS`` are cut with a note. Garbage never raises.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from matpcr.records import Claim, Extraction
from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.numbers import Number, tokenize
from matpcr_plugins.claims.text import MAX_CHARS, Text, normalize

REASONS = ("range", "uncertainty", "instrument_setting", "temperature", "index", "lattice_parameter", "other_property",
           "question_echo", "hedged", "negated", "retracted", "other")
#: at most this many rejected numbers are listed per chain (the rest are counted in a note)
MAX_REJECTED = 300
_GC_PAUSE_CHARS = 100_000

_UNIT_REASON = {"degC": "temperature", "degF": "temperature", "K": "temperature", "kV": "instrument_setting",
                "V": "instrument_setting", "mV": "instrument_setting", "mA": "instrument_setting",
                "µA": "instrument_setting", "nA": "instrument_setting", "mW": "instrument_setting",
                "W": "instrument_setting", "Hz": "instrument_setting", "kHz": "instrument_setting",
                "time": "instrument_setting", "times": "instrument_setting", "keV": "instrument_setting",
                "length/px": "instrument_setting", "px": "other", "%": "other", "fraction": "other_property",
                "counts": "other_property", "g/cm3": "other_property", "GPa": "other_property",
                "MPa": "other_property", "kJ/mol": "other_property", "kcal/mol": "other_property"}
_BRACKETS = {"(": ")", "[": "]", "{": "}", "<": ">", "⟨": "⟩"}
_INDEX_CHARS = frozenset("0123456789 ,-–+|̄")
_SG_PAREN = re.compile(r"\(\s*(?:No\.?|no\.?|#|SG|space group)\s*$")
_PAREN_UNCERTAINTY = re.compile(r"\(\d{1,3}\)")
_DIGITS = str.maketrans("123456789", "000000000")
_ORDINALS = frozenset({"st", "nd", "rd", "th"})
#: characters after a number that end its phrase without any cue ("28.4, 47.3" or "28.4.")
_IF = re.compile(r"\bif\b", re.I)
_ANSWER_LINE = re.compile(r"[ \t>*#-]*(?:final\s+|draft\s+|initial\s+|first\s+)?answer\b", re.I)
_REVISION = re.compile(r"\b(?:on reflection|on second thought|actually|correction|correcting|transposed|mistake|wrong|revis\w+|"
                       r"scratch that|wait|reconsider\w*|not right|incorrect|error)\b", re.I)
# a turn to what a method finds: "the ionic count would give 1 µB, but GGA finds 0.6 µB"
_TURN = re.compile(r"(?:\bbut\b|\bhowever\b|;|\binstead\b|\bwhereas\b),?\s+(?:the\s+)?(?:GGA|LDA|PBE\w*|DFT\w*|SCAN|HSE\w*|"
                   r"calculations?|computed|measured|experiment\w*|neutrons?|we|our)\b", re.I)
_TIMES_BEFORE = re.compile(r"[×*÷]\s*[~≈]?\s*$|\S\s*/\s+$|\d\s*\+\s*$")  # "3 + 3 = 6 µB": an addend
_OPERATOR_BEFORE = re.compile(r"\d[^.;=\n]{0,15}\s[−–+]\s+$")
_OPERATOR_AFTER = re.compile(r"\s*(?:\([^()\n]{0,8}\)\s*)?[−–+-]\s*(?:\d|\()")
_EQUATION_AHEAD = re.compile(r"[^.;=\n]{0,40}=\s*[-−]?\d")
_EQUALS_AFTER = re.compile(r"\s*[=≈→]")
_QUIET_AFTER = frozenset(",;.\n")
# a float-noise number cut short: a run of 9s or 0s, but fewer digits than a double's repr (0.9999999999999998 is whole)
_NOISE_STUB = re.compile(r"(?=[\d.]{6,16}$)\d*\.\d*(?:9{5,}|0{5,})")
_SPACED = re.compile(r"\bspaced\b", re.I)
_DIVIDED_AFTER = re.compile(r"\s*[/÷]\s*\d")
# the words a withdrawal by name needs; a chain without any of them skips the per-number look
_WITHDRAW_WORDS = re.compile(r"(?=[swidmoanc])(?:scrap|wrong|incorrect|discard|drop|withdraw|disregard|mistake|\boff|absent|missing|"
                             r"not (?:seen|observed|present)|sorry|oops|correction|(?:is|are|was|were) not|not\s*[-−]?\d)", re.I)
_LIST_AFTER = frozenset(",;")
_SOME_OTHERS = re.compile(r"(?=s)\bsome\s+(?:studies|calculations|works|groups|authors|papers|reports|find|report|obtain|get)\b(?:[^.;\n]|\.(?=[\du,])){0,160}?,\s*"
                          r"others\b", re.I)

#: a family's verdict for the numbers of one run in one unit: a reason, or (kind, factor, unit) for a claim
Template = str | tuple[str, float, str]


@dataclass(slots=True)
class Run:
    """What the words around one list say, worked out once for all its members."""

    head: Number
    s_start: int
    s_end: int
    lo: int                           # window start: the sentence start or 60 characters before the head
    reason: str | None = None         # an attached cue before the list (step size, a = ..., λ = ...)
    before: str | None = None         # sentence-level cue before it (negated, hedged, retracted, other_property)
    templates: dict[str, Template] = field(default_factory=dict)
    bare: str | None = None           # the unit a bare list takes from its words ("2θ = 15.20")
    last_unit: str = ""               # the template the last claim of this run used
    cache: dict[str, Any] = field(default_factory=dict)  # families' own per-run findings


def run_end(scan: "Scan", run: Run) -> int:
    """Where the run's last number (with its unit) ends: "the 368, 330 and 224 cm⁻¹ reported by …" is said of all."""
    if "end" not in run.cache:
        i = run.head.index
        while i + 1 < len(scan.nums) and scan.nums[i + 1].link:
            i += 1
        run.cache["end"] = scan.nums[i].end
    return run.cache["end"]


@dataclass
class Scan:
    """Everything the per-number judges may consult; built once per chain."""

    norm: str
    text: Text
    nums: list[Number]
    sentences: cx.Sentences
    answer: tuple[int, int] | None
    echo: frozenset[tuple[str, float]]
    heads: list[int]                       # index of each number's run head
    table: frozenset[float] = frozenset()  # first-column values of a data table in the question
    item: Any = None
    notes: list[str] = field(default_factory=list)
    echo_values: frozenset[float] = frozenset()
    after: dict[int, str | None] = field(default_factory=dict)  # per-sentence retraction by the next sentence
    asked: Any = None              # the asked material's composition, where a family reads it
    question_norm: str = ""
    counts: frozenset[float] = frozenset()  # integers the question states (atom counts, space groups)
    memo: dict[Any, Any] = field(default_factory=dict)  # run reasons by their window, for repetitive chains
    copied: frozenset[int] = frozenset()  # start offsets of numbers in rows copied from the question's table
    excluded: list[tuple[int, int]] = field(default_factory=list)  # sections whose heading says they are not the answer's

    def in_answer(self, n: Number) -> bool:
        return self.answer is not None and self.answer[0] <= n.start < self.answer[1]


# the alternatives a hedge leaves open are classes only: "… whether the calculation should be counted as magnetic or non-magnetic"
_CLASS_ONLY_HEDGE = re.compile(r"[^.;\n\d]{0,80}?\b(?:(?:non-?|weakly\s+)?magnetic|metallic|gapped|insulating)\s+or\s+"
                               r"(?:non-?)?(?:magnetic|metallic|gapped|insulating)\b", re.I)


def run_reason_of(run: Run, n: Number) -> str:
    """The reason the words before a list give its member ``n``; a temperature cue does not reach a member that
    changes quantity ("T_C ≈ 345 K, 3.1 µB/f.u. at 5 K")."""
    if run.reason == "temperature" and n.unit and not n.inherited_unit and n.unit != run.head.unit:
        return ""
    return run.reason or ""


def column_header(scan: Scan, pos: int) -> str | None:
    """The header cell above ``pos`` in a markdown table of the chain (the table's rows are found once per chain)."""
    if "table_rows" not in scan.memo:
        scan.memo["table_rows"] = cx.RowBlocks.of(scan.norm, cx.TABLE_ROW)
    return cx.column_header(scan.norm, pos, scan.memo["table_rows"])


def question_numbers(question: str | None) -> frozenset[tuple[str, float]]:
    """(unit, value) pairs the question states with a unit. Bare numbers (a table of 2θ or Raman shifts) are
    not echo sources: restating a row of the measured data asserts it as a peak (docs/oracles.md)."""
    if not question:
        return frozenset()
    return _question_numbers(question)


@lru_cache(maxsize=4096)
def _question_numbers(question: str) -> frozenset[tuple[str, float]]:
    out = set()
    for n in tokenize(normalize(question).norm):
        if n.unit and not n.inherited_unit and n.value == n.value:
            out.add(common(n.unit, n.value))
            out.add((n.unit, key(n.value)))  # as written, for bare restatements ("the 2 of the 2 µm bar")
    return frozenset(out)


#: lengths and energies compare in one unit, so "0.5 µm" echoes a scale bar labelled "500 nm"
_COMMON = {"nm": ("length", 1.0), "um": ("length", 1e3), "mm": ("length", 1e6), "angstrom": ("length", 0.1),
           "pm": ("length", 1e-3), "eV": ("energy", 1.0), "meV": ("energy", 1e-3), "eV/atom": ("energy/atom", 1.0),
           "meV/atom": ("energy/atom", 1e-3)}


def common(unit: str, value: float) -> tuple[str, float]:
    dim, factor = _COMMON.get(unit, (unit, 1.0))
    return dim, key(value * factor)


_TABLE_ROW = re.compile(r"^[ \t]*(-?\d+(?:\.\d+)?)[ \t,;|]+-?\d+(?:\.\d+)?[ \t|]*$", re.M)


def question_table(question: str | None) -> frozenset[float]:
    """The first column of a data table in the question (2θ or Raman shift against intensity). A chain that
    restates one of these rows, even as a bare number, names a position of the measured pattern."""
    if not question:
        return frozenset()
    return _question_table(question)


@lru_cache(maxsize=4096)
def _question_table(question: str) -> frozenset[float]:
    rows = [float(m.group(1)) for m in _TABLE_ROW.finditer(question)]
    return frozenset(key(v) for v in rows) if len(rows) >= 3 else frozenset()


#: rows of the question's table copied in order, at least this many in a row, are an echo of the data
COPIED_ROWS = 3
_ROW_PAIR = re.compile(r"^[ \t]*(-?\d+(?:\.\d+)?)[ \t,;|]+(-?\d+(?:\.\d+)?)[ \t|]*$", re.M)
_NEXT_ROW = re.compile(r"[ \t]*(-?\d+(?:\.\d+)?)(?:[ \t,;|]+(-?\d+(?:\.\d+)?))?[ \t|]*$", re.M)


@lru_cache(maxsize=256)
def _question_rows(question: str) -> dict[tuple[str, str], int]:
    """Each (x, y) row of the question's data table, as written, with its position in the table."""
    out: dict[tuple[str, str], int] = {}
    for i, m in enumerate(_ROW_PAIR.finditer(normalize(question).norm)):
        out.setdefault((m.group(1), m.group(2)), i)
    return out if len(out) >= COPIED_ROWS else {}


def copied_rows(norm: str, question: str | None) -> frozenset[int]:
    """Start offsets of the numbers on chain lines that copy a row of the question's table exactly, position and
    intensity as written (a model echoing its prompt, in order or looping over it), plus the line right after a
    copied block of ``COPIED_ROWS`` or more when it starts with the next row's position (the copy cut off
    mid-row by the token limit). A position restated without the row's intensity stays a claim (docs/oracles.md)."""
    rows = _question_rows(question) if question else {}
    if not rows:
        return frozenset()
    firsts = {i: x for (x, _), i in rows.items()}
    lines = [(m.start(1), m.start(2), rows.get((m.group(1), m.group(2))), m.end()) for m in _ROW_PAIR.finditer(norm)]
    out: set[int] = set()
    for a, b, index, _ in lines:
        if index is not None:
            out.update((a, b))
    k = 0
    while k < len(lines):
        j = k
        while (j + 1 < len(lines) and lines[j][2] is not None and lines[j + 1][2] == lines[j][2] + 1
               and lines[j + 1][0] - lines[j][3] <= 2):  # the next line, the next row of the table
            j += 1
        if lines[k][2] is not None and j - k + 1 >= COPIED_ROWS:
            cut = _NEXT_ROW.match(norm, lines[j][3] + 1)
            if cut and cut.group(1) == firsts.get(lines[j][2] + 1):
                out.update(cut.start(g) for g in (1, 2) if cut.group(g) is not None)
        k = j + 1
    tail = _LAST_BARE.search(norm)
    if tail and lines:  # a copy looping over the table or cut off mid-row at the chain's end
        block, below = 0, tail.start(1)  # copied rows in the block right above the chain's last line
        for a, _, index, end in reversed(lines):
            if below - end > 3:
                break  # not the line right above: the block has ended
            below = a
            block += index is not None
        if block >= COPIED_ROWS:
            out.add(tail.start(1))
    return frozenset(out)


_LAST_BARE = re.compile(r"\n[ \t]*(-?\d+(?:\.\d*)?)[ \t]*\Z")


_HEADER = re.compile(r"\(([^()\n]{1,20})\)\s*[:=]\s*$|(?:in|/)\s*(cm-1|°|Å|nm|µm|eV|µB)\s*\)?\s*[:=]\s*$")
_HEADER_UNITS = (("cm-1", "cm-1"), ("°", "deg"), ("Å", "angstrom"), ("µm", "um"), ("nm", "nm"), ("meV", "meV"),
                 ("eV", "eV"), ("µB", "muB"))


def _header_unit(norm: str, lo: int, hi: int) -> str | None:
    """A list introduced by its unit: "Band positions (cm-1): 1085, 711, 281"."""
    m = _HEADER.search(norm, lo, hi)
    if m is None:
        return None
    inside = m.group(1) or m.group(2) or ""
    for spelling, unit in _HEADER_UNITS:
        if spelling in inside:
            return unit
    return None


def _lane_factor(value: float, claimed: float) -> float | None:
    """The conversion a claim applied to its number (1, or 10⁻³ for meV read in eV), if it is one of those."""
    if claimed == value:
        return 1.0
    if value != 0 and claimed == round(value * 0.001, 9):
        return 0.001
    return None


def key(value: float) -> float:
    """Values equal to six significant figures are one claim."""
    return float(f"{value:.6g}")


class QuantityReader:
    """Reads one family's asked quantity. Subclasses set ``answer_unit`` and implement ``template``."""

    family = ""
    #: the unit bare numbers take in an Answer line that is clearly a list of the asked quantity
    answer_unit: str | None = None
    #: words allowed in such an Answer line besides numbers and units
    answer_words: frozenset[str] = frozenset()
    #: attached cues of this family's instrument settings ("step size of", "WD =", "spectral resolution")
    instrument: re.Pattern[str] | None = None
    #: whether a number copied from the question is an echo before anything else its words say (microscopy:
    #: the question states the scale bar and pixel counts, and restating them asserts nothing new)
    echo_first = False
    #: whether four-digit bracketed integers are Miller–Bravais indices (hkil) rather than intensities
    miller = False
    #: whether an earlier Answer line that the chain revises is retracted whole (one magnitude per answer: DFT
    #: families); a list answer is revised item by item, so there a superseded line keeps its confirmed values
    superseded_answers = False
    #: whether a number in the Answer line can be an echo (geometric answers are values, so there it cannot)
    answer_echo = False
    #: whether a value followed by a comparative ("0.1° higher", "24 cm⁻¹ apart") is a difference, not a value (the
    #: geometric families; in the DFT families "0.03 eV/atom above the hull" is the asked quantity)
    difference_after = False
    #: a number on a candidate line marked "(rejected)" or "— wrong" is a candidate turned down
    candidates_rejected = True
    #: "the separation between A1g and E2g is 24.8 cm⁻¹": a difference of two values (a micrograph's spacings are sizes)
    between_difference: re.Pattern[str] = cx.BETWEEN_DIFFERENCE
    #: whether "N apart" is a distance (a feature of a micrograph) rather than a difference
    apart_is_distance = False
    #: whether list members may share their list's verdict without being judged one by one (families whose
    #: verdict depends on the words right after each number, like "0.03 eV/atom above the hull", say no)
    fast_lane = True
    #: whether the fast lane takes the previous member's verdict (families that judge each number themselves, whose
    #: run template names no kind) rather than the run's template; such families say when a member may follow
    lane_by_result = False

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self.max_chars = max_chars

    # -- the pipeline ---------------------------------------------------------------------
    def read(self, chain: str, item: Any = None) -> Extraction:
        """The claims of ``chain`` and the numbers turned down, with reasons. A long chain (a stalled model's list of
        10⁵ numbers) is read with the cyclic garbage collector paused: its objects hold no cycles, and the collector's
        passes over them cost a fifth of the time."""
        if not isinstance(chain, str) or len(chain) < _GC_PAUSE_CHARS or not gc.isenabled():
            return self._read(chain, item)
        gc.disable()
        try:
            return self._read(chain, item)
        finally:
            gc.enable()

    def _read(self, chain: str, item: Any = None) -> Extraction:
        text = normalize(chain, self.max_chars)
        nums = tokenize(text.norm)
        heads: list[int] = []
        head = 0
        prev_run = -1
        for i, n in enumerate(nums):
            if n.run != prev_run:
                head, prev_run = i, n.run
            heads.append(head)
        question = getattr(item, "text", None) if item is not None else None
        echo = question_numbers(question)
        scan = Scan(text.norm, text, nums, cx.Sentences.of(text.norm), cx.answer_span(text.norm), echo, heads,
                    question_table(question) if self.answer_unit else frozenset(), item, list(text.notes),
                    frozenset(v for _, v in echo))
        if scan.table:
            scan.copied = copied_rows(text.norm, question)
        scan.excluded = cx.excluded_sections(text.norm, scan.answer[0] if scan.answer is not None else len(text.norm))
        self.prepare(scan)
        answer_bare_ok = self._answer_is_list(scan)
        found: dict[tuple[str, float, str], tuple[Number, str, float, str]] = {}
        rejected: list[tuple[Number, str]] = []
        n_rejected = 0
        runs: dict[int, Run] = {}
        classify = self.classify
        make_run = self._run
        own = self.own_reason
        lane = self.fast_lane and not scan.table
        by_result = self.lane_by_result
        template: Template | None = None
        lane_kind, lane_factor, lane_unit = "", 1.0, ""
        echo, echo_values = scan.echo, scan.echo_values
        answer_end = scan.answer[1] if scan.answer is not None else -1
        norm = text.norm
        last = len(norm) - 3
        separators = _LIST_AFTER
        run: Run | None = None
        prev: Number | None = None
        prev_claim = False
        s_end = -1
        skip_to = 0
        count = len(nums)
        for i, n in enumerate(nums):
            if i < skip_to:
                continue  # taken by the run below
            # the fast lane: the next member of a list whose previous member was a claim, with the same unit, not
            # an integer (no index questions), followed by a list separator (no cue after it), in the same
            # sentence and on the same side of the Answer line, not a number of the question, takes its list's
            # verdict without a new look. Numbers that each carry their unit and stand apart by spaces only
            # ("12.3 cm⁻¹ 45.6 cm⁻¹ ...") are a list too, unless a value stutters ("13.6 13.6 eV").
            if prev_claim and lane and not n.reason and not n.integer and n.unit == prev.unit \
                    and n.start < s_end and n.end < last \
                    and ((n.link == "list" and norm[n.end] in separators)
                         or (n.link == "space" and n.unit and not n.inherited_unit and self._spaced_member(scan, n))) \
                    and not (prev.start < answer_end <= n.start) \
                    and not (echo and ((common(n.unit, n.value) in echo) if n.unit else (key(n.value) in echo_values))) \
                    and not own(scan, n, run) and (template is not None or self.lane_follows(scan, n, prev)):
                if template is not None:
                    kind, factor, unit = template
                else:  # the family judges each number: the previous member's verdict, with its conversion factor
                    kind, factor, unit = lane_kind, lane_factor, lane_unit
                result = (kind, n.value if factor == 1.0 else round(n.value * factor, 9), unit)
                via_lane = True
            else:
                via_lane = False
                h = heads[i]
                run = runs.get(h)
                if run is None:
                    run = runs[h] = make_run(scan, nums[h])
                s_end = run.s_end
                if n_rejected >= MAX_REJECTED and (
                        (n.unit and run.templates.get(n.unit).__class__ is str)
                        or (not n.unit and not run.bare
                            and not (answer_bare_ok and self.answer_unit and scan.in_answer(n))
                            and not (scan.table and key(n.value) in scan.table))):
                    # a unitless number with no unit to take, or one whose unit this run already turned down, can
                    # only be rejected, and past the listing cap its reason is never shown: a chain of 10⁵ such
                    # numbers costs a count, not 10⁵ looks
                    n_rejected += 1
                    prev, prev_claim = n, False
                    continue
                result = classify(scan, n, run, answer_bare_ok)
                template = run.templates.get(run.last_unit)
            prev = n
            if result.__class__ is str:
                prev_claim = False
                n_rejected += 1
                if n_rejected <= MAX_REJECTED:
                    rejected.append((n, result))
                continue
            prev_claim = via_lane or template.__class__ is tuple
            if by_result and prev_claim and not via_lane:
                template = None
                lane_kind, lane_unit = result[0], result[2]
                lane_factor = _lane_factor(n.value, result[1])
                prev_claim = lane_factor is not None
            if len(n.digits) > 9 and result[1].__class__ is float:  # float noise: "225.00000000000003 nm" is 225 nm
                result = (result[0], float(f"{result[1]:.9g}"), result[2])
            if result not in found:
                found[result] = (n, *result)
            if via_lane and not echo:
                # the rest of a plain list in one go: the same checks as the lane above, with what cannot change
                # inside the run (the template, the sentence, the question) left out
                if template is not None:
                    kind, factor, unit = template
                    follows = None
                else:
                    kind, factor, unit = lane_kind, lane_factor, lane_unit
                    follows = self.lane_follows
                u, j, last_start = n.unit, i + 1, n.start
                while j < count:
                    m = nums[j]
                    if m.reason or m.integer or m.unit != u or m.start >= s_end or m.end >= last or m.link != "list" \
                            or norm[m.end] not in separators or last_start < answer_end <= m.start \
                            or len(m.digits) > 9 or own(scan, m, run) \
                            or (follows is not None and not follows(scan, m, nums[j - 1])):
                        break
                    res = (kind, m.value if factor == 1.0 else round(m.value * factor, 9), unit)
                    if res not in found:
                        found[res] = (m, *res)
                    last_start = m.start
                    j += 1
                if j > i + 1:
                    skip_to, prev = j, nums[j - 1]
        withdrawn = {(n.value, n.unit) for n in nums if self._withdrawn(norm, n)} if _WITHDRAW_WORDS.search(norm) else set()
        taken = [t for t in found.values() if (t[0].value, t[0].unit) not in withdrawn] if withdrawn else list(found.values())
        spans = text.spans([t[0].start for t in taken] + [n.start for n, _ in rejected],
                           [t[0].end for t in taken] + [n.end for n, _ in rejected])
        original = text.original
        claims = []
        new, add = object.__new__, claims.append
        for t, sp in zip(taken, spans):  # Claims without the dataclass __init__: a degenerate chain holds 10⁵ of them
            claim = new(Claim)
            claim.__dict__ = {"kind": t[1], "value": t[2], "unit": t[3], "span": sp, "text": original[sp[0]:sp[1]],
                              "reason": ""}
            add(claim)
        out_rejected = []
        for (n, reason), sp in zip(rejected, spans[len(taken):]):
            kind, value, unit = self.rejected_as(scan, n, reason)
            out_rejected.append(Claim(kind, value, unit, sp, original[sp[0]:sp[1]], reason))
        if n_rejected > len(rejected):
            scan.notes.append(f"{n_rejected - len(rejected)} further rejected numbers not listed")
        extraction = Extraction(claims, out_rejected, scan.notes)
        self.finish(scan, extraction)
        return extraction

    def prepare(self, scan: Scan) -> None:
        """Family set-up before the pass over numbers (e.g. the asked material)."""

    def lane_follows(self, scan: Scan, n: Number, prev: Number) -> bool:
        """For ``lane_by_result`` families: whether ``n`` may take ``prev``'s verdict unexamined."""
        return False

    @staticmethod
    def _spaced_member(scan: Scan, n: Number) -> bool:
        """Whether only spaces stand between ``n`` and the next number of its list, and no neighbour repeats its
        value: then no word before or after it can say anything of it alone."""
        nums = scan.nums
        i = n.index
        if i + 1 >= len(nums):
            return False
        nxt = nums[i + 1]
        return nxt.link == "space" and nxt.start - n.end <= 2 and nxt.value != n.value and nums[i - 1].value != n.value

    @staticmethod
    def _withdrawn(norm: str, n: Number) -> bool:
        """The chain withdraws this value by name ("so the 57.6 nm figure is wrong"): every statement of it goes."""
        lo = max(0, n.start - 16)
        return bool(cx.VALUE_WITHDRAWN_BEFORE.search(norm, lo, n.start)
                    or (cx.THE_BEFORE.search(norm, lo, n.start) and cx.VALUE_WITHDRAWN_AFTER.match(norm, n.end))
                    or (cx.APOLOGY_BEFORE.search(norm, lo, n.start) and cx.REASSIGNED_AFTER.match(norm, n.end))
                    or (n.unit != "" and cx.VALUE_DENIED_BEFORE.search(norm, lo, n.start) is not None))

    def finish(self, scan: Scan, extraction: Extraction) -> None:
        """Family additions after the pass over numbers (e.g. a named radiation, a class statement)."""

    def _run(self, scan: Scan, head: Number) -> Run:
        s_start, s_end = scan.sentences.bounds(head.start)
        run = Run(head, s_start, s_end, max(s_start, head.start - 60))
        # the attached cues only see the window before the head: a chain that repeats itself (a stalled model)
        # pays for each distinct window once
        window = scan.norm[max(0, run.lo - 2):head.start].translate(_DIGITS)
        memo = (head.unit, head.integer, run.lo - max(0, run.lo - 2), window)
        if memo in scan.memo:
            run.reason = scan.memo[memo]
        else:
            run.reason = scan.memo[memo] = self.run_reason(scan, run)
        if not head.unit:
            run.bare = self.bare_unit(scan, run) or _header_unit(scan.norm, max(s_start, head.start - 30), head.start)
        return run

    def classify(self, scan: Scan, n: Number, run: Run, answer_bare_ok: bool) -> str | tuple[str, float, str]:
        """A claim (kind, value, unit) or the reason the number is not one."""
        if n.reason:
            return n.reason
        if scan.copied and n.start in scan.copied:
            return "question_echo"
        if scan.excluded and cx.in_spans(scan.excluded, n.start):
            return "other_property"  # under "## Not from this image", "### Things that are not the gap"
        if (scan.echo or scan.counts) and self.echo_first and self._echo(scan, n, run, bare=True):
            return "question_echo"
        reason = self._own_reason(scan, n) or self.own_reason(scan, n, run)
        if reason:
            return reason
        if run_reason_of(run, n):
            return run.reason
        unit = n.unit
        if not unit:
            if answer_bare_ok and self.answer_unit and scan.in_answer(n):
                unit = self.answer_unit
            elif scan.table and key(n.value) in scan.table:
                unit = self.answer_unit or ""  # a row of the question's table of the asked quantity, restated
            elif run.bare and not cx.ARITHMETIC_AFTER.match(scan.norm, n.end):
                unit = run.bare
            if not unit:
                return "other"
        template = run.templates.get(unit)
        if template is None:
            template = run.templates[unit] = self.template(scan, run, unit)
        run.last_unit = unit
        result = self.apply(scan, n, run, template)
        if isinstance(result, str):
            return result
        sentence = self.sentence_reason(scan, n, run)
        if sentence:
            return sentence
        if (scan.echo or scan.counts) and self._echo(scan, n, run, bare=False):
            return "question_echo"
        return result

    def apply(self, scan: Scan, n: Number, run: Run, template: Template) -> str | tuple[str, float, str]:
        """Turn a run's template into this number's claim (families may look at the number itself)."""
        if isinstance(template, str):
            return template
        kind, factor, unit = template
        return kind, (round(n.value * factor, 9) if factor != 1.0 else n.value), unit

    # -- reasons --------------------------------------------------------------------------
    def _own_reason(self, scan: Scan, n: Number) -> str | None:
        """Reasons that belong to the number itself, not its list: brackets, units, ordinals, "28.4(2)"."""
        norm = scan.norm
        if n.unit in _UNIT_REASON:
            return _UNIT_REASON[n.unit]
        start = n.start
        before = norm[start - 1] if start > 0 else ""
        if before == "(" and start > 1 and norm[start - 2].isdigit() and _PAREN_UNCERTAINTY.match(norm, start - 1):
            return "uncertainty"
        if n.integer:
            if norm[n.num_end:n.num_end + 2] in _ORDINALS:
                return "index"  # "the 11th band"
            if not n.unit:
                if before and (before in _INDEX_CHARS or before in _BRACKETS) and self._bracketed(norm, n):
                    # (111), (No. 225) are indices, and (1010) in a diffraction chain; "(1518)" after a band is an intensity
                    return "index" if len(n.digits) <= 3 or (self.miller and len(n.digits) == 4 and max(n.digits) <= "4") \
                        else "other_property"
                if before == "(" and _SG_PAREN.search(norm, max(0, start - 16), start) and norm[n.num_end:n.num_end + 1] == ")":
                    return "index"
                if len(n.digits) <= 4 and cx.MILLER_AFTER.match(norm, n.end):
                    return "index"
                if cx.COUNT_AFTER.match(norm, n.end):
                    return "other"  # "at 3 positions", "the 3 strongest bands": a count
                if len(n.digits) <= 2 and cx.ENUMERATION_AFTER.match(norm, n.end) \
                        and cx.ENUMERATION.search(norm, max(0, start - 12), start):
                    return "index"  # "Step 1:", "#2:", "| 3 |", "1. **Internal modes**": an enumeration
        after = norm[n.end:n.end + 1]
        if n.integer and not n.unit and start > 1 and norm[start - 2:start] in ("[:", ",:", "[-") or (
                before == ":" and norm[n.num_end:n.num_end + 1] == "]"):
            return "other"  # "bands[:3]", "data[:, 1]": an index into an array in a code block
        if n.integer and not n.unit and norm[n.num_end:n.num_end + 1] == "(" and norm[n.num_end + 1:n.num_end + 2].isdigit():
            return "other"  # "M = 2(1.94) − 0.42": a factor of the arithmetic
        if after and after not in _QUIET_AFTER:
            inst = cx.INSTRUMENT_AFTER.match(norm, n.end)
            if inst and not (inst.group("bin") and cx.BIN_POSITION.search(norm, max(0, start - 14), start)):
                return "instrument_setting"  # "4 cm⁻¹ bins" (but "the 29.48° bin" is a position)
        if n.unit and after and after not in _QUIET_AFTER and cx.COEFFICIENT_AFTER.match(norm, n.end):
            return "other_property"  # "dω/dT = −0.022 cm⁻¹/K": a coefficient, not a value of the quantity
        if self.difference_after and n.unit and after and after not in _QUIET_AFTER:
            diff = cx.DIFFERENCE_AFTER.match(norm, n.end)
            word = diff.group().strip().lower() if diff else ""
            if diff and not (word == "apart" and (self.apart_is_distance or _SPACED.search(norm, max(0, start - 40), start))) \
                    and not (word.startswith("between") and self.apart_is_distance):
                return "other"  # "a Kα2 shoulder about 0.1° higher": a difference ("planes spaced 3.1 Å apart" is not)
        if start > 0 and _TIMES_BEFORE.search(norm, max(0, start - 4), start) and _EQUALS_AFTER.match(norm, n.end):
            return "other"  # "60 × 4 nm = 240 nm": a factor of the arithmetic, not a stated value
        if n.unit and (_TIMES_BEFORE.search(norm, max(0, start - 4), start) or _OPERATOR_AFTER.match(norm, n.end)
                       or _OPERATOR_BEFORE.search(norm, max(0, start - 20), start)) \
                and _EQUATION_AHEAD.match(norm, n.end):
            return "other"  # "2 × 4 µB (B) − 3 µB (A) = 5 µB": the terms of a sum, not stated values
        if n.unit and _DIVIDED_AFTER.match(norm, n.end) and _EQUALS_AFTER.search(norm, n.end, min(len(norm), n.end + 24)):
            return "other"  # "100 µm / 118 = 0.85 µm": the dividend of the arithmetic
        if n.integer and n.index == len(scan.nums) - 1 and not norm[n.num_end:].strip() and not scan.in_answer(n):
            return "other"  # the chain stops inside a number ("... the band gap is 2"): truncated
        if not n.unit and n.index == len(scan.nums) - 1 and not norm[n.num_end:].strip() and not scan.in_answer(n) \
                and _NOISE_STUB.fullmatch(n.digits):
            return "other"  # "... the moment of O is 0.0999999999": float noise cut off by the token limit before its last digits
        if (not n.unit or n.inherited_unit) and n.index > 0 and (n.end >= len(norm) - 3 and norm[n.end:].strip() in ("", ".")
                                                                 or self._cut_before_answer(scan, n)):
            prev_num = scan.nums[n.index - 1]
            prev = prev_num.digits
            if len(n.digits) < len(prev) and prev.startswith(n.digits):
                return "other"  # the chain was cut in the middle of a number ("..., 1027, 1")
            if (n.integer and not prev_num.integer and (not scan.in_answer(n) or n.inherited_unit)
                    and re.fullmatch(r"[\s,;]*(?:and\s+)?", norm[prev_num.end:start])):
                return "other"  # "..., 215.1, 218." or "Answer: 2θ = 40.26°, 58": cut off before the last one's decimals
        if start > 0 and cx.RATIO_BEFORE.search(norm, max(0, start - 30), start):
            return "other_property"  # "S/N ≈ 120": a signal-to-noise ratio
        if start > 0 and (cx.DELTA_BEFORE.search(norm, max(0, start - 6), start) or (
                not self.apart_is_distance and cx.SUBTRACTION_BEFORE.search(norm, max(0, start - 40), start))):
            return "other"  # "Δ = 1.2 cm⁻¹", "1086.2 − 1085.0 = 1.2 cm⁻¹": a difference (in a micrograph, a gap is a size)
        if not n.unit and n.end < len(norm) and ((norm[n.end].isalpha() or norm[n.end] == "θ") and norm[n.end] not in "eE"
                                                 or (norm[n.end] == "-" and norm[n.end + 1:n.end + 2].isalpha())):
            return "other"  # "3θ = 4°", "2H", "4f", "4-rings": a number glued to a word is part of a label, not a value
        nums = scan.nums
        if (n.link == "space" and n.index > 0 and nums[n.index - 1].value == n.value) or (
                n.index + 1 < len(nums) and nums[n.index + 1].link == "space" and nums[n.index + 1].value == n.value):
            return "other"  # "13.6 13.6 eV", "2θ = 26 26 26": a stuttering model, not a stated value
        if scan.table and n.link == "space" and not n.unit and key(n.value) not in scan.table and n.index > 0 \
                and key(scan.nums[n.index - 1].value) in scan.table:
            return "other_property"  # "464.5 21040": a restated row's intensity
        return None

    @staticmethod
    def _cut_before_answer(scan: Scan, n: Number) -> bool:
        """The number ends the last line before the Answer line ("…, 1069.4 cm⁻¹, 10\nAnswer: …"): the reasoning was
        cut off by the token limit there and the template's Answer line appended after it."""
        norm, answer = scan.norm, scan.answer
        if answer is None or n.end >= answer[0]:
            return False
        nl = norm.find("\n", n.end, n.end + 4)
        return nl >= 0 and nl < answer[0] <= nl + 200 and not norm[n.end:nl].strip() \
            and _ANSWER_LINE.match(norm, nl + 1) is not None and "\n" not in norm[nl + 1:answer[0]]

    @staticmethod
    def _bracketed(norm: str, n: Number) -> bool:
        """An integer inside brackets holding only integers: Miller indices (111), [1 -1 0], {200}."""
        lo = max(0, n.start - 12)
        i = n.start - 1
        while i >= lo and norm[i] not in _BRACKETS and norm[i] in _INDEX_CHARS:
            i -= 1
        if i < lo or norm[i] not in _BRACKETS:
            return False
        close = _BRACKETS[norm[i]]
        j = n.num_end
        hi = min(len(norm), n.num_end + 12)
        while j < hi and norm[j] != close and norm[j] in _INDEX_CHARS:
            j += 1
        return j < hi and norm[j] == close

    def run_reason(self, scan: Scan, run: Run) -> str | None:
        """Attached cues before a run's first number; they reject the whole list."""
        norm, head = scan.norm, run.head
        lo, hi = run.lo, head.start
        if lo >= hi:
            return None
        if cx.BOUND.search(norm, max(lo, hi - 25), hi):
            return "range"
        if cx.UNCERTAINTY.search(norm, lo, hi):
            return "uncertainty"
        if head.integer and not head.unit and (cx.SPACE_GROUP.search(norm, lo, hi) or (
                self.miller and len(head.digits) in (3, 4) and cx.MILLER_BEFORE.search(norm, lo, hi))):
            return "index"
        if head.unit in ("", "K", "degC", "degF") and cx.TEMPERATURE.search(norm, lo, hi):
            return "temperature"  # not "at room temperature (2.82 eV at 4 K)": a gap, at another temperature
        if cx.LATTICE.search(norm, lo, hi):
            return "lattice_parameter"
        if head.unit in ("angstrom", "nm", "pm", "um", "") and cx.WAVELENGTH.search(norm, lo, hi):
            return "instrument_setting"
        if self.instrument is not None and self.instrument.search(norm, lo, hi):
            return "instrument_setting"
        if cx.DIFFERENCE.search(norm, lo, hi):
            return "other"
        return None

    def sentence_reason(self, scan: Scan, n: Number, run: Run) -> str | None:
        """Negated ("no peak at 35°"), hedged ("maybe 30°"), retracted ("30.1°, but that is wrong"). A list
        shares the words before its first member; what follows is read after each number that ends a phrase."""
        if run.before is None:
            run.before = self._before(scan, run) or ""
        if run.before:
            return run.before
        norm = scan.norm
        after = norm[n.end:n.end + 1]
        if after and (after not in _QUIET_AFTER or after in ",;") and cx.NEGATION_AFTER.match(norm, n.end):
            return "negated"  # "near 1120 cm⁻¹ is not seen", "expected near 1120 cm⁻¹, is not seen"
        if after and after not in _QUIET_AFTER and cx.OR_BOUND_AFTER.match(norm, n.end):
            return "range"  # "down to 1000 cm⁻¹ or less"
        if self.candidates_rejected and cx.REJECTED_LINE_AFTER.match(norm, n.end):
            return "negated"  # "(a) 20 nm × 72 nm, which just reads px as nm (rejected);"
        if after and after not in ".\n" and (cx.WOULD_AFTER.match(norm, n.end) or cx.IF_WERE_AFTER.match(norm, n.end)):
            return "other"  # "3. 360 nm — would follow if the bar were 1 µm; it is not."
        last = self._list_end(scan, n, run)
        if cx.NONE_SEEN_AFTER.match(norm, last.end):
            return "negated"  # "bands at about 3660 and 3645 cm⁻¹; none appear here"
        if last is not n and last.end < len(norm) and norm[last.end] not in _QUIET_AFTER \
                and cx.NEGATION_AFTER.match(norm, last.end):
            return "negated"  # "bands at 178 and 190 cm⁻¹ are not observed": the list's negation covers every member
        if (after not in (",", ";") and self._retracted_after(scan, n, run)) \
                or (after in (",", ";") and cx.RETRACT_IMMEDIATE.match(norm, n.end)):
            return "retracted"
        s_end = run.s_end
        retracted = scan.after.get(s_end)
        if retracted is None:
            nxt = scan.sentences.next(n.start)
            retracted = scan.after[s_end] = "retracted" if nxt is not None and cx.RETRACT_LEAD.match(norm, nxt[0]) \
                and not cx.RANKING_ONLY.match(norm, nxt[0]) and not cx.CONFIRMED_CHECK.match(norm, nxt[0]) \
                and not cx.CLASS_ONLY_CORRECTION.fullmatch(norm, nxt[0], nxt[1]) else ""
        return retracted or None

    @staticmethod
    def _retracted_after(scan: Scan, n: Number, run: Run) -> bool:
        """A revision word after the number in its sentence ("28.4°, which is wrong"). In a sentence that is itself
        the correction ("Correction: the value is 0.12 eV/atom, not meV; I misread the unit"), a word after a
        semicolon or in the first person tells of the earlier error, not of this number."""
        norm = scan.norm
        m = cx.RETRACT_AFTER.search(norm, n.end, min(run.s_end, n.end + 60))
        if m is None:
            return False
        return not (cx.RETRACT_LEAD.match(norm, run.s_start) and ";" in norm[n.end:m.start()])

    @staticmethod
    def _list_end(scan: Scan, n: Number, run: Run) -> Number:
        """The last member of the list ``n`` belongs to (found once per run, so linear over the chain)."""
        last = run.cache.get("list_end")
        if last is None or last.index < n.index:
            nums = scan.nums
            i = n.index
            while i + 1 < len(nums) and nums[i + 1].run == n.run and nums[i + 1].link == "list":
                i += 1
            last = run.cache["list_end"] = nums[i]
        return last if last.run == n.run else n

    def _before(self, scan: Scan, run: Run) -> str | None:
        norm, head = scan.norm, run.head
        key = ("non-commitment", run.s_start)
        first = scan.memo.get(key)
        if first is None:  # the sentence's first non-committing phrase, found once per sentence (linear time)
            m = cx.NON_COMMITMENT.search(norm, run.s_start, run.s_end)
            first = scan.memo[key] = m.end() if m else -1
        non_committal = 0 <= first <= min(run.s_end, head.end + 200)
        if non_committal and head.end < first and _CLASS_ONLY_HEDGE.match(norm, first, min(run.s_end, first + 120)):
            non_committal = False  # "~0.6 µB per Fe, but I cannot say whether it counts as magnetic or non-magnetic": only the class is open
        if non_committal:
            return "hedged"  # "I am not sure whether it is 150 nm or 300 nm" (not a negation)
        key = ("some-others", run.s_start)
        if key not in scan.memo:  # once per sentence: a 1 MB one-line chain holds 10⁵ runs
            scan.memo[key] = _SOME_OTHERS.search(norm, run.s_start, run.s_end) is not None
        if scan.memo[key]:
            return "hedged"  # "some studies find 0.5 µB per Ru, others a non-magnetic ground state": no choice made
        if cx.NO_SUBJECT.match(norm, run.s_start) and cx.PRESENT_AFTER.match(norm, run_end(scan, run), run.s_end):
            return "negated"  # "No D or G band of sp² carbon (≈1350 and ≈1580 cm⁻¹) is present."
        c_start = cx.clause_start(norm, run.s_start, head.start)
        before = norm[c_start:head.start]
        neg = cx.NEGATION_BEFORE.search(before)
        if neg and not cx.NEGATION_BLOCK.search(before, neg.start() + 2):  # "without SOC the gap is only 0.1 eV"
            return "negated"
        contrast = None
        for m in cx.OTHER_SUBJECT.finditer(norm, max(run.s_start, head.start - 120), head.start):
            contrast = m
        if contrast is not None and not cx.MAIN_CLAUSE.search(norm, contrast.end(), head.start) \
                and not self.back_to_subject(scan, contrast.end(), head.start) \
                and not cx.closed_aside(norm, max(run.s_start, contrast.start() - 60), contrast.start(), head.start):
            return "other_property"
        if cx.RETRACT_BEFORE.search(norm, max(run.s_start, head.start - 80), head.start) \
                and not cx.RELABELLED_AFTER.match(norm, run_end(scan, run)):
            return "retracted"
        if self.superseded_answers and scan.answer is not None and head.start < scan.answer[0]:
            line = cx.line_start(norm, head.start)
            if _ANSWER_LINE.match(norm, line):
                end = cx.line_end(norm, head.start)
                if end >= 0 and _REVISION.search(norm, end, scan.answer[0]):
                    return "retracted"  # "Answer: gapped, 0.6 eV … On reflection, … Answer: metallic": a superseded answer
        if cx.HEDGE.search(norm, run.lo, head.start) and cx.ALTERNATIVES.search(norm, run.lo, min(run.s_end, head.end + 60)):
            return "hedged"
        if cx.FACTOR_BEFORE.search(norm, max(run.s_start, head.start - 30), head.start) and not head.unit:
            return "other"  # "the Boltzmann factor (≈ 0.41 at 295 K)"
        if cx.COUNTERFACTUAL.search(norm, max(run.s_start, head.start - 120), head.start):
            return "other"
        would = None
        for would in cx.WOULD.finditer(norm, max(run.s_start, head.start - 90), head.start):
            pass
        if would is not None and not _TURN.search(norm, would.start() + 5, head.start):
            return "other"
        if self.between_difference.search(norm, max(run.s_start, head.start - 60), head.start):
            return "other"
        if _IF.search(norm, max(run.s_start, head.start - 120), head.start) \
                or cx.HEDGE.search(norm, max(run.s_start, head.start - 120), head.start):
            nxt = scan.sentences.next(head.start)
            if nxt is not None and cx.NON_COMMITMENT.search(norm, nxt[0], min(nxt[1], nxt[0] + 200)):
                return "hedged"  # "if it says 1 µm the flower is 600 nm ... I cannot tell which"
        return None

    def back_to_subject(self, scan: Scan, lo: int, hi: int) -> bool:
        """Whether a main clause about the asked thing starts between a contrast ("Unlike TiS2, …") and a number."""
        return False

    def _echo(self, scan: Scan, n: Number, run: Run, bare: bool) -> bool:
        """A number copied from the question; never one in the Answer line, which is the model's own assertion."""
        if n.unit:
            hit = common(n.unit, n.value) in scan.echo
        else:
            hit = bare and key(n.value) in scan.echo_values
        if not hit or (not self.answer_echo and scan.in_answer(n)):
            return False
        return n.unit in _UNIT_REASON or not self.explicit(scan, run)

    def explicit(self, scan: Scan, run: Run) -> bool:
        """Whether the words before the number say it *is* the asked quantity (then an echo still counts)."""
        return False

    def _answer_is_list(self, scan: Scan) -> bool:
        """Whether the Answer line is clearly a list of the asked quantity, so bare numbers take its unit."""
        if scan.answer is None or self.answer_unit is None:
            return False
        a, b = scan.answer
        if b - a > 20_000:
            b = a + 20_000
        return all(w.lower() in self.answer_words for w in re.findall(r"[^\W\d_]+", scan.norm[a:b]))

    # -- the family's part ----------------------------------------------------------------
    def own_reason(self, scan: Scan, n: Number, run: Run) -> str | None:
        """A family's reasons that belong to the number itself (a bare 111 in a diffraction chain is an index)."""
        return None

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """The unit a bare list outside the Answer line takes when its words name the asked quantity."""
        return None

    def rejected_as(self, scan: Scan, n: Number, reason: str) -> tuple[str, float | None, str]:
        """How a rejected number is recorded: kind "number" unless the family knows better (a wavelength)."""
        return "number", (n.value if n.value == n.value else None), n.unit

    def template(self, scan: Scan, run: Run, unit: str) -> Template:
        """What the numbers of ``run`` in ``unit`` are: a reason, or (kind, factor, claim unit)."""
        raise NotImplementedError
