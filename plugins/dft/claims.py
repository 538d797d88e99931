"""Reading stability, metallicity and magnetism claims from what models write.

Built on the shared claim reader (``matpcr_plugins.claims``): numbers, units, lists, sentences, hedges and
negations are found the same way for every oracle. Two kinds of claim per family (docs/oracles.md):

- the *class* (stable / unstable / metastable; metallic / gapped; magnetic / nonmagnetic): at most one per
  chain, the final commitment: the Answer line when it names a class, else the last sentence that does (a
  sentence copied from the question commits to nothing). A negation flips a class ("not metallic" is gapped,
  "does not lie on the hull" is unstable, "no net moment" is nonmagnetic); a hedge that commits to nothing
  gives no class claim. With no class word, an asserted gap or net moment sets it (nonzero gap → gapped,
  0 eV → metallic; nonzero moment → magnetic, 0 µB → nonmagnetic); E_hull never does.
- *magnitudes* (E_hull in eV/atom or eV/fu; the band gap in eV, experimental values included; moments in µB
  per atom, formula unit, cell or element) are read anywhere in the chain when stated for the asked material:
  other energies (formation, reaction, band edges, a minority-spin gap), settings (cutoff, U) and values of
  another material or phase are rejected with their reason.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from functools import lru_cache
from math import gcd
from typing import Any

from matpcr.records import Claim, Extraction
from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.numbers import ELEMENTS, Number
from matpcr_plugins.claims.reader import (QuantityReader, Run, Scan, Template, column_header as _column_header, run_end,
                                          run_reason_of)
from matpcr_plugins.claims.text import normalize

HEDGE = re.compile(r"\b(?:may|might|could|possibly|perhaps|maybe|either|i guess|uncertain|unclear|not sure|unsure|"
                   r"cannot (?:be )?determined?|can't (?:be )?determined?|cannot tell|can't tell|cannot say|can't say|"
                   r"hard to say|difficult to say|unknown|undetermined|not certain|no idea)\b", re.I)
_NON_COMMITTAL = re.compile(r"^\W*(?:uncertain|unsure|not sure|unknown|undetermined|cannot (?:be )?determined?|"
                            r"can't (?:be )?determined?|cannot tell|can't tell|cannot say|cannot decide|can't decide|undecided|no idea|n/?a|none)\b|"
                            r"^\W*either\b[^\n]*\bor\b[^\n]*\b(?:undetermined|undecided|can'?t\s+(?:tell|decide)|cannot\s+(?:tell|decide))\b|"
                            # "Answer: metallic or a very small gap — can't tell": the options, then no choice
                            r"^[^\n]{0,200}?\bor\b[^\n]{0,200}?(?:\s[—–-]|[;:,(])\s*(?:undetermined|undecided|can'?t\s+(?:tell|decide|say)|"
                            r"cannot\s+(?:tell|decide|say))\b", re.I)
_WOULD = re.compile(r"\bwould\s+(?:be|give|have|carry|yield|lie|sit|lower|raise|reduce|increase|shift|change|open|close|widen|bring)\b", re.I)
_NEGATOR = re.compile(r"(?:\bnot\b|n't\b|\bnever\b|\bno longer\b|\bneither\b|\bnor\b|\bfar from\b|\bunlikely\b)(?:\s+(?:\w+\s+){0,2})?$", re.I)
_NEG_BLOCK = re.compile(r"\bbut\b|\bhowever\b|[,;:]|\bonly\b|\bjust\b", re.I)
_SET_ASIDE_AFTER = re.compile(r"[^.\n]{0,100}?\bI\s+(?:set\s+(?:it|this|that|them)\s+aside|(?:disregard|discard|ignore)\s+(?:it|this|that|them)|"
                             # "… open a small gap of ~0.03 eV; I stay with the plain PBE picture": the other method set aside
                             r"(?:stay|stick|remain)\s+with\s+(?:the\s+)?(?:plain|standard|pure|bare|semi-?local)?\s*(?:PBE|GGA|LDA|DFT)\b)",
                             re.I)
_YES_NO = re.compile(r"\W*(yes|no)\b\s*(?:[.,;:!)(—–-]|$)", re.I)
_RELATIVE = re.compile(r"\b(?:which|that)\s+(?:(?:is|are)\s+(?:an?\s+)?)?$", re.I)


_LETTER = r"(?=[^\W\d_])"


class _ClassCue:
    """Class words of one family: ``(pattern, class)`` pairs tried in order at each position (negated forms and
    longer phrases first), how a negation flips each class, and what "yes"/"no" answer."""

    def __init__(self, cues: list[tuple[str, str]], flip: dict[str, str | None], yes: str | None, no: str | None,
                 answer_only: list[tuple[str, str]] = (),  # type: ignore[assignment]
                 yes_unless: re.Pattern[str] | None = None) -> None:
        # every class word starts with a letter: the lookahead lets the engine skip the digits and punctuation of a
        # long chain without trying each alternative there (10× faster on a 1 MB list of numbers, same matches)
        self.pattern = re.compile(_LETTER + "(?:" + "|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(cues)) + ")", re.I)
        self.groups = [name for _, name in cues]
        both = list(answer_only) + cues
        self.answer_pattern = re.compile(_LETTER + "(?:" + "|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(both)) + ")",
                                         re.I)
        self.answer_groups = [name for _, name in both]
        self.flip = flip
        self.yes, self.no = yes, no
        self.yes_unless = yes_unless  # an answer line where "yes"/"no" answers another question ("Yes, 1.8 eV")

    def find(self, text: str, lo: int, hi: int, answer: bool) -> list[tuple[int, int, str]]:
        pattern, groups = (self.answer_pattern, self.answer_groups) if answer else (self.pattern, self.groups)
        out = []
        if answer:
            m = _YES_NO.match(text, lo, hi)
            if m and not (self.yes_unless and self.yes_unless.search(text, lo, hi)):
                name = self.yes if m.group(1).lower() == "yes" else self.no
                if name:
                    out.append((m.start(1), m.end(1), name))
        for m in pattern.finditer(text, lo, hi):
            out.append((m.start(), m.end(), groups[int(m.lastgroup[1:])]))  # type: ignore[index]
        return out


_HULL = r"(?:convex[- ])?hull"
STABILITY = _ClassCue(
    [(rf"\bnot\s+(?:\w+\s+)?(?:on|at)\s+the\s+{_HULL}|\boff\s+the\s+{_HULL}|\b(?:well|far|significantly|substantially)\s+"
      rf"above\s+the\s+{_HULL}|\bunstable\b|\bdecompos(?:es|ing|e|ed)\b(?!\s+energy)|"
      r"\bthermodynamically\s+unfavou?rable\b|\bphase[- ]separat\w+|\binstability\b|\bprone\s+to\s+decomposition\b|"
      r"\bdecomposition\s+is\s+(?:\w+\s+)?(?:favou?red|favou?rable|expected|spontaneous)\b|\bnot\s+(?:\w+\s+){0,3}synthesi[sz]able\b",
      "unstable"),
     (rf"\bmetastab\w+|\bnear[- ]hull\b|\bnear\s+the\s+{_HULL}|\bclose\s+to\s+the\s+{_HULL}|\b(?:slightly|just)\s+above\s+the\s+{_HULL}",
      "metastable"),
     (rf"\b(?:thermodynamically|energetically)\s+stable\b|\bstable\b|\b(?:on|at)\s+the\s+{_HULL}|"
      r"\bground[- ]state\s+(?:phase|structure|compound)\b|\b(?:thermodynamically|energetically)\s+(?:favou?red|favou?rable|preferred)\b|"
      r"\b(?:is|as|be)\s+(?:the|a)\s+(?:\w+\s+)?ground[- ]state\b(?!\s+(?:of\s+)?(?:energy|moment|spin|magnet))", "stable"),
     (rf"\babove\s+the\s+{_HULL}", "unstable")],
    {"stable": "unstable", "unstable": "stable", "metastable": None}, "stable", "unstable",
    [(r"\bground[- ]state\b", "stable")])
METALLICITY = _ClassCue(
    [(r"\bnon-?metal(?:lic)?\b|\binsulat\w+|\bsemi-?conduct\w+|\bgapped\b|\bwide[- ]gap\b|\b(?:non-?zero|finite)\s+(?:band[- ]?)?gap\b",
      "gapped"),
     (r"\bsemi-?metal(?:lic)?\b|\bhalf-?metal(?:lic)?\b|\bmetal(?:lic)?\b|\bzero[- ](?:band[- ]?)?gap\b|\bgapless\b|"
      r"\bno\s+(?:\w+\s+)?(?:band[- ]?)?gap\b|\bconductor\b|\bconducting\b|\bconducts\b|"
      r"\bgap\s+(?:closes|vanishes|is\s+closed)\b|\bmetal-like\b|\b(?:fermi\s+level|E_?F)\s+(?:\w+\s+)?(?:crosses|cuts|lies\s+(?:with)?in|falls\s+in)\s+"
      r"(?:the\s+|several\s+|partially\s+filled\s+|\w+\s+){0,3}bands?\b|\bbands?\s+(?:\w+\s+)?cross(?:es|ing)?\s+(?:the\s+)?(?:fermi\s+level|E_?F)\b",
      "metallic"),
     (r"\b(?:has|have|having|possesses|opens?)\s+an?\s+(?:(?:finite|non-?zero|sizable|sizeable|clear|direct|indirect|"
      r"wide|small|large|moderate|narrow)\s+)?(?:band[- ]?)?gap\b(?!\s*(?:of|=|:|≈|~|\())", "gapped")],
    # "yes"/"no" answer the question's first clause, "is X metallic": "Yes" is metallic, "No" gapped
    {"metallic": "gapped", "gapped": "metallic"}, "metallic", "gapped",
    [(r"E_?\s*\{?g\}?\s*>\s*0(?![.,]\d)", "gapped")], re.compile(r"\d|gap", re.I))
MAGNETISM = _ClassCue(
    [(r"\bnon-?magnetic\b|\bdiamagnetic\b|\bparamagnetic\b|\bantiferromagnet\w*|\bno\s+(?:net\s+)?(?:magnetic\s+)?"
      r"(?:moment|magneti[sz]ation)\b|\bzero\s+(?:net\s+)?(?:magnetic\s+)?(?:moment|magneti[sz]ation)\b|\bunpolari[sz]ed\b|"
      r"\b(?:moments?|spins?)\s+(?:\w+\s+)?(?:cancel|compensate)\w*|\bfully\s+compensated\b|\bspin[- ]paired\b|"
      r"\bnet\s+moment\s+vanishes\b|\bnot\s+(?:\w+\s+)?magnetic\b|\b(?:net\s+|total\s+)?(?:magnetic\s+)?(?:moment|magneti[sz]ation)"
      r"\s+(?:is|are|was|equals?)\s+(?:\w+\s+)?(?:zero|nil)\b", "nonmagnetic"),
     (r"\bferromagnet\w*|\bferrimagnet\w*|\bmagnetically\s+ordered\b|\b(?:is|are|be|being)\s+(?:(?!not\b)\w+\s+)?magnetic\b|"
      r"\bmagnetic\s+(?:ground\s+state|order(?:ing)?)\b", "magnetic")],
    {"magnetic": "nonmagnetic", "nonmagnetic": "magnetic"}, "magnetic", "nonmagnetic",
    [(r"\bmagnetic\b", "magnetic")])

# -- the asked material ------------------------------------------------------------------------------
# a bracketed group holds two or more elements or carries a count ("(PO4)3", "(OH)2", "(Mn)2"); "Fe(B)" is a site label
_FORMULA = re.compile(r"(?<![A-Za-z0-9(])((?:[A-Z][a-z]?\d*(?:\.\d+)?|\((?:[A-Z][a-z]?\d*(?:\.\d+)?){2,6}\)\d*(?:\.\d+)?|"
                      r"\([A-Z][a-z]?\d*\)\d+){1,10})"
                      r"(?![A-Za-z0-9(])")
_ELEMENT_GROUP = re.compile(r"([A-Z][a-z]?)(\d*(?:\.\d+)?)")
_PAREN_GROUP = re.compile(r"\(([^()]*)\)(\d*(?:\.\d+)?)")


def _expand(m: re.Match[str]) -> str:
    """ "(PO4)3" → "P3O12": a bracketed group multiplied out, so Na3V2(PO4)2F3 is one formula, not three."""
    times = float(m.group(2)) if m.group(2) else 1.0
    out = []
    for element, n in _ELEMENT_GROUP.findall(m.group(1)):
        count = (float(n) if n else 1.0) * times
        out.append(element + (f"{count:g}" if count != 1 else ""))
    return "".join(out)


_ROMAN_PAREN = re.compile(r"\((?:I{1,3}|IV|VI{0,3})\)")


@lru_cache(maxsize=8192)
def composition(token: str) -> tuple[tuple[str, float], ...] | None:
    """A formula token's reduced composition, or None if it is not a formula (PBE, BCC, a lone element)."""
    if "(" in token:
        if _ROMAN_PAREN.search(token):
            return None  # "Mn(II)", "Fe(III)": a site or an oxidation state, not iodine or vanadium
        token = _PAREN_GROUP.sub(_expand, token)
    groups = _ELEMENT_GROUP.findall(token)
    if len(groups) < 2 or "".join(e + n for e, n in groups) != token or not any(c.islower() or c.isdigit() for c in token):
        return None
    counts: Counter[str] = Counter()
    for element, n in groups:
        if element not in ELEMENTS:
            return None
        counts[element] += float(n) if n else 1.0
    if all(v == int(v) for v in counts.values()):
        g = 0
        for v in counts.values():
            g = gcd(g, int(v))
        counts = Counter({k: v / g for k, v in counts.items()})
    return tuple(sorted(counts.items()))


@lru_cache(maxsize=4096)
def asked_formula(question: str) -> tuple[tuple[str, float], ...] | None:
    """The composition the question asks about (the first formula in it)."""
    for m in _FORMULA.finditer(normalize(question).norm):
        comp = composition(m.group(1))
        if comp is not None:
            return comp
    return None


_UNIT_AFTER = re.compile(r"[\s-]*(?:planes?|layers?|sheets?|octahedr\w*|tetrahedr\w*|chains?|groups?|units?|"
                         r"sublattices?|clusters?|dimers?|slabs?|blocks?|polyhedr\w*|bonds?|type|prototype|structure[- ]type)\b", re.I)


_ROMAN_SITE = re.compile(r"[A-Z][a-z]?(?:I{1,3}|IV|VI{0,2})")
_SITE_WORD_AFTER = re.compile(r"\s+(?:sites?|sublattices?|positions?)\b", re.I)
_ROW_LABEL_AFTER = re.compile(r"[ \t]*(?:\([^()|\n]{0,24}\)[ \t]*)?[|&]")
_CLAUSE_TURN = re.compile(r"[,;]|\byet\b|\bbut\b", re.I)
_REACTANT = re.compile(r"\s*\+\s*\d*\s*[A-Z]")
_REACTANT_BEFORE = re.compile(r"\+\s*\d*\s*$")
_SUBSTRATE_BEFORE = re.compile(r"\b(?:grown|deposited|sputtered|epitaxial)\b[^.;\n]{0,30}?\bon\s+(?:an?\s+|the\s+)?$", re.I)
_PRECURSORS_BEFORE = re.compile(r"\b(?:made|prepared|synthesi[sz]ed|obtained|formed)\s+(?:from|out\s+of)\s+"
                                r"(?:[^\s,;.]+(?:,\s*|\s+and\s+|\s*\+\s*))*$", re.I)
_SUBSTRATE_AFTER = re.compile(r"\s*(?:\(\d{3}\)\s*)?substrates?\b", re.I)


def other_material(scan: Scan, run: Run, n: Number) -> bool:
    """Whether the nearest formula before the number in its sentence names a different material."""
    asked = getattr(scan, "asked", None)
    if asked is None:
        return False
    last = None
    last_end = 0
    for m in _FORMULA.finditer(scan.norm, max(run.s_start, run.head.start - 150), run.head.start):
        if _UNIT_AFTER.match(scan.norm, m.end()):
            continue  # "the CuO2 planes", "FeO6 octahedra": a building block of the asked material
        if _COMPETITORS.search(scan.norm, max(run.s_start, m.start() - 60), m.start()):
            continue  # "Against BaS, HfS2 and Ba3Hf2S7, the perovskite is 22 meV/atom above the hull": the competing phases
        if (_REACTANT.match(scan.norm, m.end()) or _REACTANT_BEFORE.search(scan.norm, max(0, m.start() - 4), m.start())) \
                and _CLAUSE_TURN.search(scan.norm, m.end(), run.head.start):
            continue  # "formation energy from Cr₂O₃ + V₂O₅": the reactants of a reaction energy, not a material claimed about
        if _ROMAN_SITE.fullmatch(m.group(1)) and (_ROW_LABEL_AFTER.match(scan.norm, m.end()) or _SITE_WORD_AFTER.match(scan.norm, m.end())):
            continue  # "| CoI | 1.83 |", "| FeII (6g) | 2.3 |", "the MnI site": a site label, not cobalt iodide
        if _PRECURSORS_BEFORE.search(scan.norm, max(run.s_start, m.start() - 60), m.start()) \
                and _CLAUSE_TURN.search(scan.norm, m.end(), run.head.start):
            continue  # "LiCaN, made from Li3N and Ca3N2, is on the hull": the starting materials, not the subject
        if _SUBSTRATE_BEFORE.search(scan.norm, max(0, m.start() - 30), m.start()) or _SUBSTRATE_AFTER.match(scan.norm, m.end()):
            continue  # "films grown on MgO", "on SrTiO3 substrates": the substrate, not the material measured
        if _HULL_PHASES_AFTER.match(scan.norm, m.end()):
            continue  # "above the Cu + N2 hull", "the C–CO2 tie line", "with CsI and CsCu2I3 as its neighbours": the hull's phases
        if _closed_valued_aside(scan.norm, run.s_start, m, run.head.start):
            continue  # "its gap is ~0.15 eV (the sulfide CuGaS2 keeps ≈ 0.7 eV), while the measured gap is 1.23 eV": an aside with its own value
        comp = composition(m.group(1))
        if comp is not None:
            last, last_end = comp, m.end()
    if last is None or last == asked:
        return False
    # "Only Mg2Si exists in the Mg–Si system; this hypothetical phase is 0.11 eV/atom above the hull"
    return not _BACK_TO_ASKED.search(scan.norm, last_end, run.head.start)


def _closed_valued_aside(norm: str, s_start: int, m: re.Match[str], end: int) -> bool:
    """Whether the formula sits in a bracket closed before ``end`` that holds its own number, with a clause turn
    between the bracket and ``end``."""
    opening = norm.rfind("(", max(s_start, m.start() - 80), m.start())
    if opening < 0 or ")" in norm[opening:m.start()]:
        return False
    closing = norm.find(")", m.end(), end)
    if closing < 0 or "(" in norm[m.end():closing]:
        return False
    return bool(re.search(r"\d", norm[m.end():closing])) and _CLAUSE_TURN.search(norm, closing, end) is not None


_HULL_PHASES_AFTER = re.compile(r"(?:\s*(?:\+|–|-|,|and)\s*[A-Z][A-Za-z0-9]{0,15})*\s*(?:(?:convex\s+)?hull|tie[- ]line|"
                                r"as\s+(?:its\s+)?(?:neighbou?r|competitor|competing)\w*)\b", re.I)
_COMPETITORS = re.compile(r"\b(?:against|into|between|relative to|with respect to|versus|vs\.?|competing(?:\s+phases?)?|competitors?|"
                          r"(?:diagram|system)\s+(?:also\s+)?(?:contains|includes|holds)|combinations?\s+of|mixtures?\s+of)"
                          r"(?:\s*:)?\s+(?:the\s+)?(?:[^\s,;.]+(?:,\s*|\s+and\s+|\s*\+\s*))*$", re.I)
_BACK_TO_ASKED = re.compile(r";|\b(?:this|the asked|the given|the present|our)\s+(?:\w+\s+)?(?:phase|compound|structure|"
                            r"material|polymorph|cell|one|crystal)\b", re.I)


# -- class statements ----------------------------------------------------------------------------
def _committed_class(scan: Scan, cues: _ClassCue) -> tuple[str, tuple[int, int]] | str | None:
    """The class the model commits to with its span in the normalised text; "hedged" when the commitment is
    a hedge; None when no statement names a class. An Answer line or sentence that only offers the classes as
    alternatives ("The answer is 'stable' or 'unstable'") leaves an earlier commitment standing."""
    norm = scan.norm
    offered = False
    answer = scan.answer
    if answer is None and _BARE_YES_NO.fullmatch(norm):
        answer = (0, len(norm))  # the whole chain is "Yes." or "No."
    if answer is not None:
        lo, hi = answer
        found = _json_classes(cues, norm, lo, hi, cues.find(norm, lo, hi, True))
        declined = _NON_COMMITTAL.match(norm[lo:hi])
        if declined and (not found or not re.match(r"\W*(?:none|n/?a)\b", declined.group(), re.I)):
            return "hedged"  # "Answer: cannot decide (metallic or ~0.3 eV)": the classes it names are the options
        if found:
            result = _sentence_class(scan, cues, found, lo, hi, True)
            if result is not _OFFERED:
                return result
            offered = True
    question = getattr(scan, "question_norm", "")
    echoes: dict[tuple[int, int], bool] = {}  # per sentence, so a sentence of n class words is read once, not n times
    hits = [h for h in _json_classes(cues, norm, 0, len(norm), cues.find(norm, 0, len(norm), False))
            if not _echoes_question(scan, h[0], question, echoes)
            and not _RELATIVE.search(norm, max(0, h[0] - 20), h[0]) and not _label_phrase(norm, h[0], h[2])]
    hits += _answered_questions(scan, cues)
    hits.sort()
    starts = [h[0] for h in hits]
    last = len(hits)
    while last:  # the last sentence with a class word, then the one before it while sentences only offer options
        lo, hi = scan.sentences.bounds(hits[last - 1][0])
        first = bisect.bisect_left(starts, lo, 0, last)
        result = _sentence_class(scan, cues, hits[first:last], lo, hi, False)
        if result is not _OFFERED:
            return result
        offered = True
        last = first
    return "hedged" if offered else None


_OFFERED = "offered"  # a sentence that offers the classes as alternatives and chooses none
_BARE_YES_NO = re.compile(r"\W*(?:yes|no)\W*", re.I)
_JSON_CLASS = re.compile(r"(?=[\"'A-Za-z-])[\"']?(?:is_)?(?P<word>[A-Za-z-]{4,20})[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>true|false|yes|no)\b", re.I)
#: a negated class with a condition attached ("not stable at room temperature", "not stable in air") says nothing
#: about the DFT class at 0 K
_CONDITION_AFTER = re.compile(r"\s+(?:at|in|under|against|towards?)\s+(?:room|ambient|high|elevated|low|air|water|moist|humid|"
                              r"oxygen|oxidi[sz]\w*|finite|\d)", re.I)
#: the purpose clause of a plan ("To determine the stability of X, ...") asserts nothing
_PURPOSE = re.compile(r"^\W*(?:\d+\.\s*)?(?:(?:in\s+order\s+)?to|let'?s|we\s+(?:need|want|have)\s+to)\s+(?:\w+\s+)?"
                      r"(?:determine|find|check|assess|evaluate|decide|establish|see|know|judge|answer)\b|\bwhether\b", re.I)


_BOOLEAN_VALUE = re.compile(r"[:=][ \t]*[\"']?(?:true|false|yes|no)\b", re.I)


def _json_classes(cues: _ClassCue, norm: str, lo: int, hi: int, found: list[tuple[int, int, str]]
                  ) -> list[tuple[int, int, str]]:
    """Class keys with a boolean value (JSON/YAML: ``"metallic": false``, ``is_stable: yes``): false flips the class."""
    keyed: list[tuple[int, int, str]] = []
    spans: list[tuple[int, int]] = []
    if _BOOLEAN_VALUE.search(norm, lo, hi) is None:
        return found  # no ": true"/"= no" anywhere: no class key to read (one fast scan instead of a look at every word)
    for m in _JSON_CLASS.finditer(norm, lo, hi):
        word = cues.pattern.fullmatch(m.group("word"))
        if word is None:
            continue
        name: str | None = cues.groups[int(word.lastgroup[1:])]  # type: ignore[index]
        if m.group("value").lower() in ("false", "no"):
            name = cues.flip.get(name)  # type: ignore[arg-type]
        spans.append((m.start(), m.end()))
        if name:
            keyed.append((m.start("word"), m.end("word"), name))
    if not spans:
        return found
    span_starts = [a for a, _ in spans]

    def inside(pos: int) -> bool:  # the plain reading of a key the boolean already settled
        i = bisect.bisect_right(span_starts, pos) - 1
        return i >= 0 and pos < spans[i][1]

    return sorted([h for h in found if not inside(h[0])] + keyed)


def _answered_questions(scan: Scan, cues: _ClassCue) -> list[tuple[int, int, str]]:
    """ "Is NbN metallic? Yes.": a yes or no right after the chain's own question answers it."""
    out = []
    for m in re.finditer(r"\?\s+(yes|no)\b", scan.norm, re.I):
        lo, _ = scan.sentences.bounds(m.start())
        asked = cues.find(scan.norm, lo, m.start(), False)
        if len(asked) == 1:
            name: str | None = asked[0][2]
            if m.group(1).lower() == "no":
                name = cues.flip.get(name)  # type: ignore[arg-type]
            if name:
                out.append((m.start(1), m.end(1), name))
    return out


def _sentence_class(scan: Scan, cues: _ClassCue, found: list[tuple[int, int, str]], lo: int, hi: int,
                    is_answer: bool) -> tuple[str, tuple[int, int]] | str | None:
    """The class one sentence (or the Answer line) commits to."""
    norm = scan.norm
    classes = []
    for start, end, name in found:
        if _RELATIVE.search(norm, max(lo, start - 20), start):
            continue  # "a band gap of 1.0, which is a non-metal element": not said of the material
        if not is_answer and _PURPOSE.search(norm[cx.clause_start(norm, lo, start, 200):start]):
            continue  # "To determine the thermodynamically stable of VCu3S4, we need ...": a plan, not a claim
        if not is_answer and _CONDITIONAL.search(norm, max(lo, start - 150), start):
            continue  # "if it is more than 0.05 eV/atom it is unstable": the criterion, not a verdict
        before = norm[max(lo, start - 30):start]
        neg = _NEGATOR.search(before)
        if neg and not _NEG_BLOCK.search(before, neg.start()):
            if _CONDITION_AFTER.match(norm, end):
                continue  # "thermodynamically stable, but not stable at room temperature"
            name = cues.flip.get(name)
        if name and not _magnitude_phrase(norm, start, end, name):
            classes.append((name, (start, end)))
    if not classes:
        return None
    first = classes[0][1][0] if is_answer else classes[-1][1][0]
    clause = cx.clause_start(norm, lo, first, 80)
    if HEDGE.search(norm, clause, first) or (not is_answer and len({c for c, _ in classes}) > 1 and HEDGE.search(norm, lo, hi)):
        return "hedged"
    names = {c for c, _ in classes}
    if len(names) > 1 and any(a[0] != b[0] and b[1][0] - a[1][1] <= 40 and cx.ALTERNATIVES.search(norm, a[1][1], b[1][0])
                              for a, b in zip(classes, classes[1:])):
        return _OFFERED  # "The answer is 'stable' or 'unstable'": two classes offered as alternatives, no choice made
    if len(names) == 1 or is_answer:
        return classes[0]
    if names == {"metastable", "unstable"}:  # "metastable; it decomposes into ...": the more specific statement
        return next(c for c in classes if c[0] == "metastable")
    return classes[-1]


def _echoes_question(scan: Scan, pos: int, question: str, seen: dict[tuple[int, int], bool]) -> bool:
    """A sentence copied from the question ("is X metallic (zero band gap) or ...?") commits to nothing."""
    if not question:
        return False
    bounds = scan.sentences.bounds(pos)
    if bounds not in seen:
        seen[bounds] = _echoed_sentence(scan.norm[bounds[0]:bounds[1]].strip(), question)
    return seen[bounds]


def _echoed_sentence(sentence: str, question: str) -> bool:
    if sentence.endswith("?"):
        return True  # a question, not a commitment
    if len(sentence) >= 24 and sentence in question:
        return True  # the question's own sentence copied out ("... otherwise say it is non-magnetic."): an instruction
    if len(sentence) < 24 or not _ALTERNATIVE.search(sentence):
        return False  # "X is thermodynamically stable, i.e. on or within ..." restates the question as an assertion
    # the question's alternative copied out ("X is metallic (zero band gap) or does it have a band gap.")
    return any(sentence[i:i + 24] in question for i in range(0, len(sentence) - 23, 6))


_CONDITIONAL = re.compile(r"\bif\b(?:[^.;\n]|\.(?=\d)){0,80}?(?:\b(?:less|more|greater|smaller|below|above|within|exceeds?|larger|"
                          r"higher|lower)\b|[<>≤≥])(?:[^.;\n]|\.(?=\d)){0,60}$", re.I)
_ALTERNATIVE = re.compile(r"\bor\s+(?:does|do|is|are|has|have|not)\b|\bwhether\b", re.I)
_MAGNITUDE_BEFORE = re.compile(r"\d\s*(?:m?eV(?:\s*(?:/|per)\s*(?:atom|f\.?u\.?|formula unit))?)?\s*\)?\s*$")


def _label_phrase(norm: str, start: int, name: str) -> bool:
    """"The energy above the hull is ...": the label of a magnitude, not a class statement."""
    return name in ("unstable", "metastable") and bool(_LABEL_BEFORE.search(norm, max(0, start - 20), start))


_LABEL_BEFORE = re.compile(r"(?:energy|distance|height|E_?hull)\s*$", re.I)


def _magnitude_phrase(norm: str, start: int, end: int, name: str) -> bool:
    """"0.03 eV/atom above the hull" is a magnitude, not an "unstable" class statement."""
    if _label_phrase(norm, start, name):
        return True
    if name in ("unstable", "metastable") and re.match(r"\s*(?:(?:slightly|just)\s+)?above", norm[start:end], re.I):
        return bool(_MAGNITUDE_BEFORE.search(norm, max(0, start - 30), start))
    return False


@lru_cache(maxsize=4096)
def _question_counts(question: str) -> frozenset[float]:
    """Integers the question states (atom counts, space-group numbers)."""
    return frozenset(float(m.group(0)) for m in re.finditer(r"(?<![\w.])\d{2,4}(?![\w.])", question))


# a calculation setting named after its value: "a 520 eV cutoff", "0.05 eV smearing"
_SETTING_AFTER = re.compile(r"\s*(?:plane-wave\s+|kinetic[- ]energy\s+)?(?:cut-?off|ENCUT|smearing)\b|"
                            r"\s*(?:starting|initial)\s+(?:guess|moment|value|configuration)\b", re.I)


_ONSET_SUBJECT = re.compile(r"\b(?:absorption|absorbance|transmission|reflectivity|photoconductivity|luminescence|onset|edge|spectrum)\b", re.I)


class _DFTReader(QuantityReader):
    """Magnitudes are judged number by number (the words right after one matter: "0.03 eV/atom above the hull")."""

    cues: _ClassCue
    class_kind = ""
    magnitude_kind = ""
    lane_by_result = True
    echo_first = True
    answer_echo = True  # "Answer: stable (within 0.05 eV/atom)" restates the question's threshold
    superseded_answers = True
    #: cues that make a number a calculation setting (cutoff energy, Hubbard U, smearing)
    setting = re.compile(r"(?:\bcut-?off\b|\bENCUT\b|\bstart(?:ed|ing|s)?\s+(?:with|from|at)\b|"
                         r"\bstart(?:ed|ing|s)?\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,3}(?:run|calculation|relaxation|SCF)\s+(?:with|from|at)\b|\bstart\s+of\b|\binitial\s+moments?\b|\binitiali[sz]\w*\b|(?<![·⋅*×])\bJ(?:_\w+)?\s*=|(?<!\+)\bU\s*(?:_\w+|\(\s*[A-Z][a-z]?\s*\))?\s*[=≈~]|\bU_?eff\b|\bHubbard\b|\bsmearing\b|\bk-?(?:point|mesh|grid)s?\b)"
                         rf"[^.\n|\d]{{0,20}}{cx.LINK}\s*$", re.I)

    def lane_follows(self, scan: Scan, n: Number, prev: Number) -> bool:
        """A positive member right after a positive claim, with no sign of its own, takes that claim's verdict: the
        judges look at the words around the list and the sign, and between two members there are no words."""
        return n.value > 0 and prev.value > 0 and not n.explicit_sign and not prev.explicit_sign

    def prepare(self, scan: Scan) -> None:
        question = getattr(scan.item, "text", None) or ""
        scan.asked = asked_formula(question) if question else None
        scan.question_norm = normalize(question).norm if question else ""
        scan.counts = _question_counts(scan.question_norm) if question else frozenset()

    def _echo(self, scan: Scan, n: Number, run: Run, bare: bool) -> bool:
        """Also an atom count or space-group number copied from the question as a "16 eV" or "6 µB"."""
        if n.integer and n.value >= 10 and n.value in scan.counts and not scan.in_answer(n) and not self.explicit(scan, run):
            return True
        return super()._echo(scan, n, run, bare)

    def template(self, scan: Scan, run: Run, unit: str) -> Template:
        return ("", 1.0, unit)

    def back_to_subject(self, scan: Scan, lo: int, hi: int) -> bool:
        """ "Unlike TiS2, which PBE makes a semimetal, ZrS2 keeps a gap of 1.1 eV": the asked formula after a comma."""
        asked = getattr(scan, "asked", None)
        if asked is None:
            return False
        for m in _FORMULA.finditer(scan.norm, lo, hi):
            if composition(m.group(1)) == asked and scan.norm[lo:m.start()].rstrip().endswith((",", ";")):
                return True
        return False

    def apply(self, scan: Scan, n: Number, run: Run, template: Template) -> str | tuple[str, float, str]:
        assert not isinstance(template, str)
        if run_reason_of(run, n):
            return run.reason
        if scan.in_answer(n) and _NON_COMMITTAL.match(scan.norm[scan.answer[0]:scan.answer[1]]):
            return "hedged"  # "Answer: undetermined (metallic or ~0.05 eV)": the value is one of the options
        if _WOULD.search(scan.norm, cx.clause_start(scan.norm, run.s_start, run.head.start, 60), run.head.start):
            return "other"  # "in the ferromagnetic state the moment would be 10 µB": a state the chain rejects
        if _SET_ASIDE_AFTER.match(scan.norm, n.end, run.s_end):
            return "other"  # "0.38 eV is quoted …, but that run used U = 1 eV; I set it aside"
        setting = self.setting.search(scan.norm, run.lo, run.head.start)
        if setting is not None and setting.group().lower().startswith("start") \
                and _ONSET_SUBJECT.search(scan.norm, cx.clause_start(scan.norm, run.s_start, setting.start(), 60), setting.start()):
            setting = None  # "optical absorption starts at 3.2 eV": an onset, not a starting value of the run
        if setting is not None or _SETTING_AFTER.match(scan.norm, n.end):
            return "instrument_setting"  # "U = 5.3 eV", "a 520 eV cutoff"
        result = self.judge(scan, n, run, template[2])
        if not isinstance(result, str) and other_material(scan, run, n):
            return "other_property"
        return result

    def run_reason(self, scan: Scan, run: Run) -> str | None:
        reason = super().run_reason(scan, run)
        return None if reason in ("lattice_parameter", "instrument_setting") else reason

    def judge(self, scan: Scan, n: Number, run: Run, unit: str) -> str | tuple[str, float, str]:
        raise NotImplementedError

    def finish(self, scan: Scan, extraction: Extraction) -> None:
        found = _committed_class(scan, self.cues)
        if found == "hedged":
            extraction.notes.append(f"{self.class_kind} statement is hedged: no class claim")
            return
        if found is None:
            derived = self.class_from_magnitudes(scan, extraction.claims)
            if derived is not None:
                extraction.claims.insert(0, derived)
            return
        name, (start, end) = found  # type: ignore[misc]
        span = scan.text.span(start, end)
        extraction.claims.insert(0, Claim(self.class_kind, name, "", span, scan.text.original[span[0]:span[1]]))

    def class_from_magnitudes(self, scan: Scan, claims: list[Claim]) -> Claim | None:
        """With no class word, the asserted magnitude sets the class (the Answer line's, else the last one)."""
        return None


# a material named inside a label: "the band gap of KTl2InF6 is", "the energy above the hull of this compound is"
_OF_MATERIAL = r"(?:\s+(?:of|for|in)\s+(?:the\s+)?(?:[A-Z][A-Za-z0-9()]{0,24}|material|compound|structure|system|crystal))?"

# -- stability -----------------------------------------------------------------------------------
_HULL_WORDS = re.compile(r"hull|above|higher|ground state|metastab|E_?\s*\{?\s*hull|distance|lower in energy|less stable", re.I)
# (w38) "ΔH_hull" is the hull distance in enthalpy: "at 12 GPa the enthalpy puts it on the hull (ΔH_hull = 0)"
# (w38) the asked cell named in the label: "the hull distance of this Cs3Sb cell is 0.02", "E_hull of the D0_3 cell: 0"
_OF_CELL = r"(?:\s+(?:of|for)\s+(?:this|the|the\s+asked|the\s+given)\s+(?:[^\s,;:.]{1,16}\s+)?(?:cell|phase|structure|polymorph|compound))?"
_HULL_LABEL = re.compile(r"(?:(?<![A-Za-z])E_?\s*\{?\s*hull\}?|E_?above_?hull|(?<![A-Za-z])E\s+above\s+(?:the\s+)?hull|energy above (?:the )?(?:convex )?hull|hull energy|"
                         rf"(?:distance|height) (?:from|to|above) (?:the )?(?:convex )?hull|above[- ]hull|Δ[EH]_?hull|hull distance)(?:\s+itself)?{_OF_MATERIAL}"
                         rf"{_OF_CELL}{cx.LINK}\s*$", re.I)
# "sits above the hull by 38 meV/atom", "higher in energy than the hull by 0.1 eV/atom": the distance itself
_HULL_BY = re.compile(r"(?:\b(?:above|over|off)\s+(?:the\s+)?(?:convex\s+hull|hull|[^,.;\n]{1,30}?\s+tie[- ]line)|\bhigher(?:\s+in\s+energy)?(?:\s+than\s+"
                      r"(?:the\s+)?(?:convex\s+)?hull)?),?\s+by\s*(?:about|approximately|roughly|only|just|~|≈)?\s*$", re.I)
_OTHER_ENERGY = re.compile(r"formation|ΔH(?!_?hull)|\binversion\b|(?<![A-Za-z])E_?f\b|enthalp|cohesive|decompos|reaction|binding|total energy|"
                           r"lattice energy|band ?gap|\bgap\b|(?<![A-Za-z])E_?g\b|work function|fermi|per bond|activation|"
                           r"barrier|adsorption|chemical potential|ΔE_?d\b|(?<![A-Za-z])E_?d\b|ΔE_?r\b|exchange|(?<!thermo)dynamically|"
                           r"phonon|polymorph|\b(?:(?:anti)?ferro|ferri|non-?)magnetic\s+(?:configuration|ordering|order|state|solution|"
                           r"arrangement|alignment)|\bconfiguration\b|\balignment\b|\bantisite\b|\bdisorder(?:ed)?\b|"
                           # (w38) the cost of splitting the compound into others is a decomposition energy: "breaking
                           # it up into NaCl + CuCl2 would cost 31 meV/atom"
                           r"\b(?:split(?:ting)?|break(?:ing)?)\s+(?:it|this|them)\s+(?:up\s+|apart\s+)?into\b", re.I)
# a database's value per atom in a stability chain is its energy above the hull: "Materials Project lists 0.000 eV/atom"
_DATABASE = re.compile(r"\bMaterials Project\b|\bMP\b|\bOQMD\b|\bAFLOW\b|\bAlexandria\b|\bJARVIS\b|\bGNoME\b|\bdatabase\b")
# "the OQMD value is 0": a database's number for the asked material, unit left out
_DATABASE_VALUE = re.compile(r"\b(?:Materials Project|MP|OQMD|AFLOW|Alexandria|JARVIS|GNoME)\s+(?:value|entry)\s*(?:is|=|:)\s*$")
_TERM = re.compile(r"\bterm\b|\bcorrection\b|\bcontribution\b|\bentrop\w*|\b-?TS\b", re.I)
# (w40) a correction named in the clause before a conjoined one is that clause's setting, not the number's: "on the
# hull with the D3 dispersion correction, and about 8 meV/atom above it in plain PBE"
_CONJOINED_TURN = re.compile(r"[,;]\s*(?:and|but|while|whereas|yet)\b", re.I)


def _term_before(norm: str, lo: int, hi: int) -> bool:
    """A correction/term word before the number (from ``lo`` to ``hi``) in the number's own clause."""
    term = None
    for term in _TERM.finditer(norm, lo, hi):
        pass
    return term is not None and _CONJOINED_TURN.search(norm, term.end(), hi) is None
# the named phase is below the asked one: "the δ phase (Pnma) is lower by 0.082 eV/atom" is the asked one's distance
_LOWER_BY = re.compile(r"\b(?:is|lies|sits)\s+(?:\w+\s+)?lower(?:\s+in\s+energy)?\s+by\s*(?:about|approximately|only|~|≈)?\s*$", re.I)
# "it lies 45 meV/atom below the hull of the competing phases": a decomposition energy, not a distance above the hull
_PROSE_ENERGY = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)[ \t]*(meV|eV)(?=[ \t]*(?:/|per\b))")
# "PBE puts β on the hull and α just above it — the latter by 4 meV/atom": how far above it the phase lies
_ABOVE_IT_BY = re.compile(r"\b(?:above|higher\s+than)\s+(?:it|that|them|the\s+(?:convex\s+)?hull)\s*(?:[—–,:;-]\s*)?"
                          r"(?:the\s+latter\s+|(?:just|only)\s+)?by\s*(?:about\s+|~\s*|≈\s*)?$", re.I)
# (w40) a distance restated in the other basis after "i.e.": "about 0.10 eV per formula unit above the hull, i.e.
# 0.05 eV/atom" is the asked cell's distance per atom, even when it equals the question's threshold
_RESTATED_HULL_BEFORE = re.compile(r"\bm?eV\b[^.;\n\d]{0,40}?\b(?:above|off|over|from)\s+(?:the\s+)?(?:convex\s+)?hull\s*,?\s*"
                                   r"(?:i\.\s?e\.|that\s+is|in\s+other\s+words)\s*,?\s*(?:about\s+|roughly\s+|~\s*|≈\s*)?$", re.I)
_BELOW_HULL_AFTER = re.compile(r"\s*below\s+(?:the\s+)?(?:convex\s+)?hull\b", re.I)
_HULL_AFTER = re.compile(r"\s*(?:\([^()]{0,20}\)\s*)?(?:(?:above|from|off|over|to)\s+(?:the\s+)?(?:convex\s+)?hull|"
                         r"(?:of\s+)?E_?hull|"
                         # "0.09 eV/atom above α-Fe + Fe₄N": above the assemblage it decomposes into, i.e. the hull there
                         r"above\s+(?:the\s+)?(?:[^\W\d][^\s,;+]{0,20}\s*\+\s*){1,3}[^\W\d][^\s,;.+]{0,20})", re.I)
# "…, with the perovskite 11 meV/atom higher": an absolute phrase naming another structure beside the asked one
_WITH_OTHER_BEFORE = re.compile(r"\bwith\s+(?:the|its|an?)\s+(?P<name>[^\W\d][\w′'-]*(?:\s+[^\W\d][\w′'-]*)?)\s*(?:\([^()\n]{0,20}\)\s*)?"
                                r"(?:(?:lying|sitting|being|at|about|roughly|only|just)\s+|[~≈]\s*){0,2}$", re.I)


_ASKED_PHASE = re.compile(r"(?=[^\W\d])(?:\b(?:asked|this|given)\s+(?:structure|phase|polymorph)\s+is\s+(?:the\s+)?(?!not\b|a\b|an\b|on\b|above\b|in\b)(?P<a>[^\W\d][\w′'-]*(?: [a-z][\w-]*)?)|"
                          # (w38) not an article: "the question is about the 0 K hull" names no phase
                          r"\b(?:question|prompt|task)\s+(?:asks|is)\s+about\s+(?:the\s+)?(?!(?:the|a|an)\b)(?P<c>[^\W\d][\w′'-]*)|"
                          r"(?P<b>(?:[^\W\d][\w′'-]*\s+)?[^\W\d][\w′'-]*)\s*\(\s*(?:this|the asked)\s+(?:structure|phase|polymorph)\b|"
                          r"\b(?:asked|given)\s+(?P<d>(?-i:[a-zα-ω][a-z′'-]{2,}))\s+(?:cell|structure|phase|polymorph)\b|"
                          # (w38) "the asked C2/m cell is the γ form": the polymorph's name before "form"
                          r"\b(?:asked|given)\s+(?:[^\s,;.]{1,16}\s+)?cell\s+is\s+(?:the\s+)?(?P<e>[^\W\d][\w′'-]*)\s+(?:form|phase|polymorph|modification)\b|"
                          # (w40) a Greek-letter polymorph named for "this cell" or "the question's structure", an adjective
                          # allowed before it: "this cell is the δ phase", "the question's structure is the yellow δ polymorph"
                          r"\b(?:this|question['’]?s)\s+(?:cell|structure)\s+is\s+(?:the\s+)?(?:[a-z]{2,20}\s+)?(?P<f>[α-ω][′']?)(?:-|\s+)"
                          r"(?:form|phase|polymorph|modification)\b)",
                          re.I)
_ASKED_CUE = re.compile(r"(?=[agqptAGQPT])(?:\b(?:asked|given|question|prompt|task)\b|\bthis\s+(?:structure|phase|polymorph|cell)\b)", re.I)
# where the subject of a distance begins: "…, and brookite 4 meV/atom above it"
_SUBJECT_START = re.compile(r"[.;,:\n(]|\band\b|\bwhile\b|\bwhereas\b|\bbut\b")
# a bullet's label: "- Tetragonal LLZO (I4₁/acd): on the hull, 0 meV/atom"
# (w38) with a long aside in brackets after the name: "- δ-phase (a quench product of the melt, never annealed): 31 meV/atom"
_BULLET_LABEL = re.compile(r"[ \t]*(?:[-*•]|\d+\.)[ \t]+(?P<name>[^:\n|]{2,40}?)[ \t]*(?:\([^()\n]{0,60}\)[ \t]*)?:")
# crystal systems, to tell the asked polymorph from others ("trigonal", "rhombohedral" and "hexagonal" are one family)
_SYSTEMS = {"triclinic": "triclinic", "monoclinic": "monoclinic", "orthorhombic": "orthorhombic", "tetragonal": "tetragonal",
            "trigonal": "hexagonal", "rhombohedral": "hexagonal", "hexagonal": "hexagonal", "cubic": "cubic"}
_SYSTEM_WORD = re.compile(r"(?<!pseudo-)(?<!pseudo)\b(triclinic|monoclinic|orthorhombic|tetragonal|trigonal|rhombohedral|hexagonal|cubic)\b",
                          re.I)
_SG_NUMBER = re.compile(r"space group\s+(?:[^\s,()]+\s*\(\s*)?(\d{1,3})\b", re.I)


@lru_cache(maxsize=4096)
def _asked_system(question: str) -> str | None:
    """The crystal system of the asked cell, from the space-group number the question states."""
    m = _SG_NUMBER.search(question)
    if m is None:
        return None
    n = int(m.group(1))
    for top, name in ((2, "triclinic"), (15, "monoclinic"), (74, "orthorhombic"), (142, "tetragonal"), (194, "hexagonal"),
                      (230, "cubic")):
        if 1 <= n <= top:
            return name
    return None


# a Hermann–Mauguin symbol: "Pnma", "Pmn2_1", "P6_3/mmc", "Fm-3m", "I4_1/amd" (a capital lattice letter, then digits,
# screw/bar marks and the glide letters)
_STRUKTURBERICHT = re.compile(r"A15|C1[45]|C36|C1b|L1[0-2]|L2[01]|B[1-3]|D0_?\d{1,2}")  # "E_hull(A15)": a structure type
_SG_SYMBOL = re.compile(r"(?<![\w/-])([PIFCABR](?=[\w/-]*[\d-]|[abcdemn]{3})[-\d_/{}abcdemn]{2,12})(?![\w/])")
_SG_IN_QUESTION = re.compile(r"space group\s+(\S{2,16})\s*\(", re.I)


def _sg_key(symbol: str) -> str:
    return re.sub(r"[_{}\s]", "", symbol)


@lru_cache(maxsize=4096)
def _asked_space_group(question: str) -> str | None:
    m = _SG_IN_QUESTION.search(question)
    return _sg_key(m.group(1).rstrip(",")) if m and _SG_SYMBOL.fullmatch(m.group(1).rstrip(",")) else None


_ASKED_HERE = re.compile(r"\b(?:this|the asked|the given)\s+(?:structure|phase|polymorph|cell)\b", re.I)
_LABEL_START = re.compile(r"[,;\n]|\|")
_PHASE_LABEL = re.compile(r"[\s|*]*(?P<name>[^\W\d][\w′' -]{1,24}?)\s*(?:\([^()\n]{0,20}\))?\s*[|:=]?\s*", re.I)
_NOT_A_PHASE = re.compile(r"hull|energy|\b(?:E|above|lies|is|are|at|of|asked|this|answer|distance|value|total|which)\b", re.I)
_GROUND_SEGMENT = re.compile(r"\bground[- ]state\b|\b(?:sits|lies|is|are)\s+on\s+the\s+(?:convex\s+)?hull\b", re.I)
_SEGMENT_START = re.compile(r"[.;\n]")


# another form named as the subject, and an energy relative to another structure after the number
_FORM_SUBJECT = re.compile(r"(?<!this )(?<!asked )(?<!given )\b(?:form|polymorph|polytype|modification|precipitate|assemblage|mixture|(?:competing|rival)\s+(?:[\w′'-]+\s+){0,2}?(?:structure|phase)|(?:non-?magnetic|ferromagnetic|antiferromagnetic|FM|AFM|NM)\s+"
                           r"(?:cell|state|configuration|solution))\b", re.I)
# (w38) on the number's own line: in a key–value block the next line's "Band gap ...... 3.9 eV" is another row
# ("E_hull ..... 0.004 eV/atom" over "Band gap ..... 2.6 eV" stays the distance)
_GAP_AFTER = re.compile(r"[ \t]*(?:optical|band|direct|indirect|fundamental)?[ \t]*(?:band[ \t]*)?gap\b", re.I)
_OUTDATED = re.compile(r"\b(?:older|outdated|earlier|previous|obsolete)\s+(?:database\s+|MP\s+|OQMD\s+|(?-i:[A-Z][A-Z0-9+]{1,8})\s+|(?-i:[a-z][a-z-]{2,20})\s+)?(?:versions?|releases?|entry|entries|values?|reports?|stud(?:y|ies)|papers?|calculations?|work)\b"
                       r"[^.;\n]{0,30}?\b(?:listed|gave|give|put|quoted|reported|had|call|called|found|find|claimed)\b[^.;\n]{0,30}$", re.I)  # "… listed it at 0.06 eV/atom"
_COSTS_BEFORE = re.compile(r"\b(?:arrangement|configuration|ordering|variant|stacking)\s+(?:would\s+)?costs?\s+(?:about\s+|roughly\s+|~\s*|≈\s*)?$", re.I)
_PREDICATE_BEFORE = re.compile(r"\b(?:is|as)\s+(?:the|a|an)\s+(?:[\w-]+\s+){0,3}$", re.I)  # "Aragonite is the high-pressure polymorph"
_RELATIVE_AFTER = re.compile(r"\s*(?:higher|lower|above|below)\b(?!\s+(?:the\s+)?(?:convex\s+)?hull)(?!\s+(?:the\s+)?(?:[\w-]+\s+){0,3}tie)", re.I)
_HIGHER_AFTER = re.compile(r"\s*higher\b(?!\s+(?:than\s+)?(?:the\s+)?(?:convex\s+)?hull)", re.I)
_HIGHER_BY = re.compile(r"\bhigher(?:\s+in\s+energy)?\s+by\s*(?:about|approximately|roughly|only|just|~|≈)?\s*$", re.I)
# a one-word name as the subject of a clause after a turn: "; slawsonite comes out 6 meV/atom higher"
_NAMED_SUBJECT = re.compile(r"\s*(?:and\s+|while\s+|whereas\s+)?(?!(?:it|this|that|which|its|the|a|an|we|I|PBE|DFT|GGA)\b)"
                            r"(?P<name>[^\W\d][\w′'-]*)\s+(?:comes?\s+out|lies|sits|is|ends\s+up)\s+(?:(?:about|only|just|roughly)\s+|[~≈]\s*)?", re.I)
# a per-atom energy standing alone after the subject, the terse answer to the hull question: "Ti2SnC, a MAX phase; 0.000 eV/atom."
_BARE_CLAUSE = re.compile(r"\s*(?:(?:about|approximately|roughly|~|≈)\s*)?")
_CLAUSE_END = re.compile(r"[ \t]*(?:\.|\n|$)")
_THRESHOLD_BEFORE = re.compile(r"\b(?:threshold|criterion|tolerance)\b[^.;)\n\d]{0,20}$", re.I)
# the basis stated at the head of the clause: "Per formula unit (21 atoms) the spinel is 0.42 eV above the hull"
_PER_FU_BEFORE = re.compile(r"\bper\s+(?:formula\s+unit|f\.?\s?u\.?)(?![\w.])(?![^.\n]{0,60}\bper\s+atom\b)", re.I)
# (w40) the basis after the unit with the formula named in it: "which is 0.045 eV per Mn₂O₃ formula unit"
_PER_NAMED_FU_AFTER = re.compile(r"\s*per\s+(?:[A-Z][A-Za-z0-9₀-₉().]{0,24}\s+)(?:formula\s+unit|f\.?\s?u\.?)(?![\w])", re.I)
# (w38) the unit written into the hull label, read by the bare numbers after it: "E_hull (meV/atom): 17", "E_hull [eV/f.u.]:
# 0.3", "E_hull per atom: 0.004", a LaTeX header "E_hull / meV atom^-1" carried into its cell, and an inline list of
# phases under one such label, "hull distances (PBE, meV/atom): Cs2S 0, CsS 12, Cs2S3 0" (each value is then its
# formula's: the nearest formula before it decides whose it is)
_LABEL_ENERGY = r"(?P<e{0}>m?eV)(?:\s*(?:/\s*|per\s+|\s+)(?P<b{0}>atom|f\.?\s?u\.?|formula\s+unit)(?:\s*\^\s*\(?-\s*1\)?)?)?"
_UNIT_IN_LABEL = re.compile(r"(?:(?<![A-Za-z])E_?\s*\{?\s*hull\}?|E_?above_?hull|energy\s+above\s+(?:the\s+)?(?:convex\s+)?hull|hull[ _]distances?|"
                            r"distances?\s+(?:from|to|above)\s+(?:the\s+)?(?:convex\s+)?hull)[ \t]*"
                            r"(?:\((?:[^()\n]{0,24}?,\s*)?" + _LABEL_ENERGY.format(1) + r"\s*\)|\[\s*" + _LABEL_ENERGY.format(2) + r"\s*\]|"
                            r"/\s*" + _LABEL_ENERGY.format(3) + r"|per\s+(?P<b4>atom|f\.?\s?u\.?|formula\s+unit))"
                            r"[ \t]*[:=][ \t]*(?:[A-Z][A-Za-z0-9]{0,20}[ \t]+\d+(?:\.\d+)?[ \t]*,[ \t]*){0,8}(?:[A-Z][A-Za-z0-9]{0,20}[ \t]+)?$", re.I)
# (w38) a value its own sentence breaks off from with a dash and "wait": "I get 0.21 eV/atom, so unstable — wait, that
# was the LDA entry" (the shared reader looks past a comma only for an immediate correction)
_WAIT_AFTER = re.compile(r"[^.;\n\d]{0,60}?[—–]\s*(?:no,?\s+)?(?:wait|hold\s+on|sorry|scratch\s+that)\b", re.I)
# (w38) the hull of a chemical system the asked formula is not in: "the Li analogue comes out 30 meV/atom above the
# Li–Ti–S hull" in a chain about Na2TiS3 is the analogue's distance
_SYSTEM_HULL_AFTER = re.compile(r"\s*(?:above|from|off|over)\s+(?:the|its)\s+(?P<sys>(?-i:[A-Z][a-z]?)(?:\s*[–-]\s*(?-i:[A-Z][a-z]?)){1,5})\s+"
                                r"(?:convex\s+)?hull\b", re.I)
# (w38) a YAML mapping under a hull key: each child is a source's distance, in the unit of the key's comment:
# "e_hull:  # meV/atom\n  mp: 12\n  oqmd: 9"
_YAML_HULL_BLOCK = re.compile(r"^[ \t]*[\"']?(?:e_?above_?hull|e_?hull|energy_above_hull|hull_distances?)[\"']?[ \t]*:[ \t]*"
                              r"(?:#[ \t]*(?P<comment>[^\n]{0,40}))?\n(?:[ \t]+[\w\"'-]{1,20}[ \t]*:[ \t]*-?[\d.]+[^\n]{0,40}\n){0,8}"
                              r"[ \t]+[\w\"'-]{1,20}[ \t]*:[ \t]*$", re.I | re.M)
_YAML_HULL_CUE = re.compile(r"hull\w*[\"']?[ \t]*:[ \t]*(?:#[^\n]*)?\n[ \t]+\S", re.I)
_COMMENT_UNIT = re.compile(r"(?P<e>m?eV)\s*(?:/\s*|per\s+)(?P<b>atom|f\.?\s?u\.?|formula\s+unit)", re.I)


def _yaml_hull_unit(scan: Scan, pos: int) -> str | None:
    """The unit of a child of a YAML hull key whose value starts at ``pos`` (eV/atom unless the key's comment says)."""
    if "yaml_hull" not in scan.memo:  # one look over the chain: most hold no such block
        scan.memo["yaml_hull"] = _YAML_HULL_CUE.search(scan.norm) is not None
    if not scan.memo["yaml_hull"]:
        return None
    block = _YAML_HULL_BLOCK.search(scan.norm, max(0, pos - 500), pos)
    if block is None:
        return None
    unit = _COMMENT_UNIT.search(block.group("comment") or "")
    if unit is None:
        return "eV/atom"
    return ("meV" if unit.group("e").lower() == "mev" else "eV") + ("/atom" if unit.group("b").lower() == "atom" else "/fu")


# (w38) the hull distance stated outright as a value, even a negative one or one equated with another energy: "The
# energy above the hull is the formation energy, -0.3 eV/atom" asserts (wrongly) E_hull = -0.3 eV/atom
_EQUATED_BEFORE = re.compile(r"(?=[eEhH])(?:\benergy\s+above\s+(?:the\s+)?(?:convex\s+)?hull|(?<![A-Za-z])E_?\s*\{?\s*hull\}?|\bE_?above_?hull|"
                             r"\bhull\s+distance)\s*(?:is|=|:)\s*(?:(?:the|its)\s+(?:formation|decomposition|reaction)\s+energy\s*,\s*)?$", re.I)
_OPERAND_AFTER = re.compile(r"\s*[-–−+×*/]\s*[(\d-]")


def _equated(scan: Scan, n: Number, run: Run) -> bool:
    """Whether the hull label is stated right before the number as its value (not as an operand of arithmetic)."""
    return not _OPERAND_AFTER.match(scan.norm, n.end) \
        and _EQUATED_BEFORE.search(scan.norm, max(run.s_start, run.head.start - 80), run.head.start) is not None  # not "E_hull = -1.702 - (-1.731)"


# (w38) a rough value refined, not withdrawn, by the next sentence: "~0.06 eV/atom. Actually the entry reads 0.057."
_REFINE_LEAD = re.compile(r"[\s*_]*(?:actually|in\s+fact|more\s+precisely|to\s+be\s+precise)\b", re.I)
# (w38) the indicative conclusion drawn from a hypothetical: "adding it would make it a vertex, so its hull distance is 0"
_SO_HULL_BEFORE = re.compile(r"\b(?:so|hence|thus|therefore)\s*,?\s+(?:its\s+(?:own\s+)?|the\s+)?(?:hull\s+distance|energy\s+above\s+"
                             r"(?:the\s+)?(?:convex\s+)?hull|E_?\s*\{?\s*hull\}?)\s*(?:is|=|:)\s*(?:about\s+|~\s*|≈\s*)?$", re.I)
# (w38) a bare number right after the class in the Answer line is the distance, per atom: "Answer: unstable, 0.21"
_CLASS_ANSWER = re.compile(r"\b(?:stable|unstable|metastable)\s*(?:[,:;(]|[—–-]|with)\s*(?:(?:E_?hull|e_above_hull)\s*(?:=|:|≈|~)?\s*)?"
                           r"(?:about|approximately|~|≈)?\s*$", re.I)
_UNIT_LABEL_CUE = re.compile(r"(?:hull\}?|distances?)[ \t]*(?:\(|\[|/|per\s)", re.I)


_ROW = re.compile(r"[ \t]*(?:[-*•]|\||\d{1,2}[.)])")
_ASKED_MARK = re.compile(r"[(,]\s*(?:the\s+)?asked(?:\s+(?:one|phase|structure|cell))?\s*[),]|\bthis\s+(?:structure|cell|phase)\b", re.I)


def _unmarked_row(scan: Scan, pos: int) -> bool:
    """A row of a list or table of phases where another row marks the asked one ("δ-MoC (rock salt, asked)")."""
    if "rows" not in scan.memo:
        scan.memo["rows"] = cx.RowBlocks.of(scan.norm, _ROW)
        scan.memo["marked"] = {}  # block start → whether some row of it is marked as the asked one
    block = scan.memo["rows"].block(pos)
    if block is None:
        return False
    top, end, line = block
    norm = scan.norm
    line_end = cx.line_end(norm, pos)
    if _ASKED_MARK.search(norm, line, len(norm) if line_end < 0 else line_end) or _HULL_LABEL.search(norm, line, pos):
        return False  # the asked row, or a row that is the hull distance itself ("- PBE E_hull: 0.12 eV/atom")
    marked = scan.memo["marked"]
    if top not in marked:
        marked[top] = _ASKED_MARK.search(norm, top, end) is not None
    return marked[top]


def _rounds_to(rough: Number, value: float) -> bool:
    """Whether ``value`` is a more precise figure that rounds to ``rough`` as written (0.068 to "0.07")."""
    decimals = len(rough.digits.split(".", 1)[1]) if "." in rough.digits else 0
    return value != rough.value and round(value, decimals) == rough.value


def _numbers_between(scan: Scan, lo: int, hi: int) -> list[Number]:
    starts = scan.memo.get("hull_number_starts")
    if starts is None:
        starts = scan.memo["hull_number_starts"] = [m.start for m in scan.nums]
    return scan.nums[bisect.bisect_left(starts, lo):bisect.bisect_left(starts, hi)]


def _refined_by_next(scan: Scan, n: Number) -> bool:
    """Whether the next sentence opens with "actually"/"in fact" and states a more precise figure for ``n``."""
    nxt = scan.sentences.next(n.start)
    if nxt is None or not _REFINE_LEAD.match(scan.norm, nxt[0]):
        return False
    return any(_rounds_to(n, m.value) for m in _numbers_between(scan, nxt[0], nxt[1])[:8])


def _refined_unit(scan: Scan, run: Run) -> str | None:
    """The unit of the rough value the sentence of a bare number refines ("Actually the entry reads 0.057")."""
    if not _REFINE_LEAD.match(scan.norm, run.s_start):
        return None
    prev = scan.sentences.previous(run.head.start)
    if prev is None:
        return None
    for m in _numbers_between(scan, prev[0], prev[1])[-8:]:
        if m.unit in ("eV/atom", "meV/atom", "eV/fu", "meV/fu") and _rounds_to(m, run.head.value):
            return m.unit
    return None


def _labelled_clause_start(scan: Scan, run: Run, width: int) -> int:
    """Where the clause of the run's head begins; (w38) for a value right after a bullet's label, the label's start:
    "- monoclinic P2_1/c (the low-T form): 0.012 eV/atom" names the structure the value is for."""
    norm, head = scan.norm, run.head
    start = cx.clause_start(norm, run.s_start, head.start, width)
    line = cx.line_start(norm, head.start)
    if head.start - line <= 120:
        bullet = _BULLET_LABEL.match(norm, line)
        if bullet is not None and bullet.end() <= head.start and start <= bullet.end():
            return line
    return start


def _asked_row(scan: Scan, pos: int) -> bool:
    """Whether ``pos`` sits in a table row whose first cell marks it as the asked one ("| Cs2Se (this cell) |")."""
    norm = scan.norm
    bar = _ROW_BAR.match(norm, cx.line_start(norm, pos))
    if bar is None or bar.end() > pos:
        return False
    close = norm.find("|", bar.end(), min(pos, bar.end() + 200))  # bounded: a label cell is short
    return close > 0 and _ASKED_MARK.search(norm, bar.end(), close) is not None


_ROW_BAR = re.compile(r"[ \t]*\|")


def _hull_label_row(text: str, line: int, pos: int) -> bool:
    """(w40) A table row whose first cell is the hull distance itself, not a phase: "| E above hull | 0.56 eV/f.u. |"
    beside "| E above hull | 0.028 eV/atom |" is one distance in two bases, not two phases' rows."""
    bar = _ROW_BAR.match(text, line)
    if bar is None or bar.end() > pos:
        return False
    close = text.find("|", bar.end(), pos)
    return close > 0 and _HULL_LABEL.search(text, bar.end(), close) is not None


_ANSWER_LINE_AT = re.compile(r"^[ \t>*#-]*(?:final\s+|draft\s+|initial\s+|first\s+)?answer\b[^\n]*", re.I | re.M)
_LEADING_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


class StabilityReader(_DFTReader):
    family = "stability"
    class_kind = "stability"
    cues = STABILITY

    def finish(self, scan: Scan, extraction: Extraction) -> None:
        """A polymorph "on the hull (0 eV/atom)" beside a nonzero distance asserted for the asked one is the
        ground-state phase's value, not the asked material's (the asked one cannot be at both)."""
        hull = [c for c in extraction.claims if c.kind == "e_above_hull"]
        if any(float(c.value) > 0 for c in hull):
            original = scan.text.original
            for c in hull:
                if float(c.value) != 0:
                    continue
                lo = max(0, c.span[0] - 120)
                cut = [m.end() for m in _SEGMENT_START.finditer(original, lo, c.span[0])]
                if _GROUND_SEGMENT.search(original, cut[-1] if cut else lo, c.span[0]):
                    extraction.claims.remove(c)
                    extraction.rejected.append(Claim(c.kind, c.value, c.unit, c.span, c.text, "other_property"))
        self._other_polymorphs(scan, extraction)
        self._rows_not_restated(scan, extraction)
        self._draft_values(scan, extraction)
        super().finish(scan, extraction)

    @staticmethod
    def _draft_values(scan: Scan, extraction: Extraction) -> None:
        """(w38) A draft answer the chain then revises ("I get 0.09 eV/atom.\nAnswer: unstable\n\nWait — that run used
        the wrong reference; redone, it is 0.02 eV/atom.\nAnswer: stable"): a distance stated in the draft, before the
        superseded Answer line, is withdrawn with it when the revision states another distance and never this one."""
        hull = [c for c in extraction.claims if c.kind == "e_above_hull"]
        if len(hull) < 2:
            return
        original = scan.text.original
        lines = [m for m in _ANSWER_LINE_AT.finditer(original)]
        draft_start = 0
        for line, later in zip(lines, lines[1:]):
            if cx.RETRACT_LEAD.match(original, line.end()) and not cx.RANKING_ONLY.match(original, line.end()):
                draft = [c for c in hull if draft_start <= c.span[0] < line.start()]
                revised = [c for c in hull if c.span[0] >= line.end()]
                for c in draft:
                    number = _LEADING_NUMBER.match(c.text)
                    if revised and all(r.value != c.value for r in revised) and number is not None \
                            and not re.compile(rf"(?<![\d.]){re.escape(number.group())}(?!\d)").search(original, line.end()):
                        extraction.claims.remove(c)
                        extraction.rejected.append(Claim(c.kind, c.value, c.unit, c.span, c.text, "retracted"))
            draft_start = line.end()

    @staticmethod
    def _rows_not_restated(scan: Scan, extraction: Extraction) -> None:
        """A hull table of several phases whose prose then restates exactly one row's value ("At 72 meV/atom the LN
        phase is outside the window"): that row is the asked phase's, the other rows are the competitors'."""
        original = scan.text.original
        rows = []
        for c in extraction.claims:
            if c.kind == "e_above_hull":
                lo = max(0, c.span[0] - 200)  # bounded: a row's label is short
                line = original.rfind("\n", lo, c.span[0])
                line = lo if line < 0 else line + 1
                if original[line:c.span[0]].lstrip().startswith("|") and not _hull_label_row(original, line, c.span[0]):
                    rows.append(c)
        if not 2 <= len(rows) <= 8:
            return
        stated = set()
        for line in original.split("\n"):  # line by line: linear even in one long line
            if not line.lstrip().startswith("|"):
                for m in _PROSE_ENERGY.finditer(line):
                    stated.add(round(float(m.group(1)) / (1000.0 if m.group(2) == "meV" else 1.0), 9))
        restated = [c for c in rows if float(c.value) in stated]
        if len(restated) != 1 or len({float(c.value) for c in rows}) < 2:
            return
        for c in rows:
            if float(c.value) != float(restated[0].value):
                extraction.claims.remove(c)
                extraction.rejected.append(Claim(c.kind, c.value, c.unit, c.span, c.text, "other_property"))

    @staticmethod
    def _other_polymorphs(scan: Scan, extraction: Extraction) -> None:
        """When the chain names the asked polymorph ("the asked structure is zinc blende", "anatase (this
        structure)"), a distance written as the value of another labelled polymorph ("brookite 0.06 eV/atom", a
        table row "| rock salt | 0.310 |") is that phase's, not the asked material's."""
        original = scan.text.original
        m = _ASKED_PHASE.search(original) if _ASKED_CUE.search(original) else None  # the cue is a cheap first look
        if m is None:
            return
        asked = (m.group("a") or m.group("b") or m.group("c") or m.group("d") or m.group("e") or m.group("f") or "").strip().lower()
        if not asked:
            return
        for c in [c for c in extraction.claims if c.kind == "e_above_hull"]:
            lo = max(0, c.span[0] - 80)
            cut = [b.end() for b in _SUBJECT_START.finditer(original, lo, c.span[0])]
            subject = None
            for subject in cx.MINERAL.finditer(original, cut[-1] if cut else lo, c.span[0]):
                pass
            if subject is not None:  # "Rutile lies 9 meV/atom above it", "and sillimanite 0.006 eV/atom above it"
                name = subject.group(1).lower()
                if asked not in name and name not in asked:
                    extraction.claims.remove(c)
                    extraction.rejected.append(Claim(c.kind, c.value, c.unit, c.span, c.text, "other_property"))
                continue
            lo_line = max(0, c.span[0] - 200)
            line = original.rfind("\n", lo_line, c.span[0])
            line = lo_line if line < 0 else line + 1
            if original[line:c.span[0]].lstrip().startswith("|"):
                cells = original[line:c.span[0]].strip().split("|")  # ["", label, ..., ""]
                name = re.sub(r"\([^()]*\)", "", cells[1]).strip().lower() if len(cells) >= 3 else ""
            else:
                lo = max(line, c.span[0] - 60)
                cut = [b.end() for b in _LABEL_START.finditer(original, lo, c.span[0])]
                label = _PHASE_LABEL.fullmatch(original, cut[-1] if cut else lo, c.span[0])
                if label is not None:
                    name = label.group("name").strip().lower()
                else:
                    bullet = _BULLET_LABEL.match(original, line)
                    if bullet is None or bullet.end() > c.span[0]:
                        continue
                    name = re.sub(r"\([^()]*\)", "", bullet.group("name")).strip().lower()
            if name and asked not in name and name not in asked and not _NOT_A_PHASE.search(name):
                extraction.claims.remove(c)
                extraction.rejected.append(Claim(c.kind, c.value, c.unit, c.span, c.text, "other_property"))

    def explicit(self, scan: Scan, run: Run) -> bool:
        """ "E_hull = 12 meV/atom", "12 meV/atom above the hull": stated as the distance, even when the number
        happens to equal the question's atom count."""
        return bool(_HULL_LABEL.search(scan.norm, run.lo, run.head.start) or _HULL_AFTER.match(scan.norm, run.head.end)
                    or _RESTATED_HULL_BEFORE.search(scan.norm, max(run.s_start, run.head.start - 80), run.head.start))

    def apply(self, scan: Scan, n: Number, run: Run, template: Template) -> str | tuple[str, float, str]:
        result = super().apply(scan, n, run, template)
        if result == "other_property" and not run_reason_of(run, n) and _asked_row(scan, run.head.start):
            # (w38) a table row marked as the asked cell is the asked material's, whatever formula a later cell
            # names: "| Cs2Se (this cell) | anti-CaF2, Fm-3m | 0.000 |" (a prototype, not another compound)
            again = self.judge(scan, n, run, template[2])  # type: ignore[index]
            if not isinstance(again, str):
                result = again
        if isinstance(result, str) or result[0] != "e_above_hull":
            return result
        system = _asked_system(getattr(scan, "question_norm", ""))
        if system is not None:
            named = None
            for m in _SYSTEM_WORD.finditer(scan.norm, _labelled_clause_start(scan, run, 60), run.head.start):
                named = m
            if named is not None and _SYSTEMS.get(named.group(1).lower()) not in (None, system) \
                    and not _LOWER_BY.search(scan.norm, named.end(), run.head.start):
                return "other_property"  # "the cubic α-phase lies 0.018 eV/atom above the hull" when the asked cell is orthorhombic
        asked_sg = _asked_space_group(getattr(scan, "question_norm", ""))
        if asked_sg is not None:
            named_sg = None
            for m in _SG_SYMBOL.finditer(scan.norm, _labelled_clause_start(scan, run, 80), run.head.start):
                named_sg = m
            if named_sg is not None and _sg_key(named_sg.group(1)) != asked_sg and not _STRUKTURBERICHT.fullmatch(named_sg.group(1)) \
                    and not _LOWER_BY.search(scan.norm, named_sg.end(), run.head.start):
                return "other_property"  # "the γ-phase (Pmn2_1) is 0.021 eV/atom above the hull" when the asked cell is Pnma
        return result

    def run_reason(self, scan: Scan, run: Run) -> str | None:
        reason = super().run_reason(scan, run)
        if reason == "other" and (_HULL_BY.search(scan.norm, max(run.lo, run.head.start - 60), run.head.start)
                                  or _LOWER_BY.search(scan.norm, max(run.lo, run.head.start - 30), run.head.start)
                                  or _ABOVE_IT_BY.search(scan.norm, max(run.s_start, run.head.start - 60), run.head.start)):
            # "above the hull by 38 meV/atom" is the distance, not a difference of two values; so is "the δ phase is
            # lower by 0.082 eV/atom" (the asked one lies that far above it)
            return None
        return reason

    def sentence_reason(self, scan: Scan, n: Number, run: Run) -> str | None:
        reason = super().sentence_reason(scan, n, run)
        norm, head = scan.norm, run.head
        if reason == "other" and _SO_HULL_BEFORE.search(norm, max(run.s_start, head.start - 60), head.start) \
                and cx.WOULD.search(norm, max(run.s_start, head.start - 90), head.start):
            return None  # (w38) "including it would turn it into a vertex, hence its E_hull is 0": the conclusion
        if reason == "retracted" and n.unit and _refined_by_next(scan, n):
            return None  # (w38) "~0.06 eV/atom. Actually the entry reads 0.057.": a refinement, not a withdrawal
        return reason

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """"E_hull = 0" said of the asked material: a distance to the hull without its unit is read in eV/atom."""
        refined = _refined_unit(scan, run)
        if refined is not None:
            return refined  # (w38) "~0.06 eV/atom. Actually the entry reads 0.057": the rough value's unit
        lo = max(run.s_start, run.head.start - 60)  # (w38) room for a label naming the cell: "energy above the hull of this Cs3Sb cell is"
        if scan.in_answer(run.head) and _CLASS_ANSWER.search(scan.norm, max(scan.answer[0], run.head.start - 40), run.head.start) \
                and not cx.ARITHMETIC_AFTER.match(scan.norm, run.head.end):
            return "eV/atom"  # "Answer: unstable, 0.21"
        yaml_unit = _yaml_hull_unit(scan, run.head.start)
        if yaml_unit is not None:
            return yaml_unit  # "hull_distance:  # eV/atom" over "  oqmd: 0.007"
        if "unit_label" not in scan.memo:  # one look over the chain: most never write a unit into the label
            scan.memo["unit_label"] = _UNIT_LABEL_CUE.search(scan.norm) is not None
        labelled = _UNIT_IN_LABEL.search(scan.norm, max(run.s_start, run.head.start - 200), run.head.start) \
            if scan.memo["unit_label"] else None
        if labelled is not None:  # "E_hull [meV/f.u.]: 120": the label's own unit
            energy = next((labelled.group(f"e{i}") for i in (1, 2, 3) if labelled.group(f"e{i}")), None) or "eV"
            basis = next((labelled.group(f"b{i}") for i in (1, 2, 3, 4) if labelled.group(f"b{i}")), None) or "atom"
            return ("meV" if energy.lower() == "mev" else "eV") + ("/atom" if basis.lower() == "atom" else "/fu")
        return "eV/atom" if _HULL_LABEL.search(scan.norm, lo, run.head.start) \
            or _DATABASE_VALUE.search(scan.norm, lo, run.head.start) else None

    def judge(self, scan: Scan, n: Number, run: Run, unit: str) -> str | tuple[str, float, str]:
        if unit not in ("eV", "meV", "eV/atom", "meV/atom", "eV/fu", "meV/fu"):
            return "other_property"
        if (n.value < 0 and not _equated(scan, n, run)) or (_term_before(scan.norm, max(run.s_start, n.start - 30), n.start)
                                                            and not _HULL_LABEL.search(scan.norm, max(run.s_start, n.start - 30), n.start)):
            return "other_property"  # "a −TS term of −0.03 eV/atom": a correction, never a distance to the hull
        norm, head = scan.norm, run.head
        if _WAIT_AFTER.match(norm, n.end, run.s_end):
            return "retracted"  # "E_hull = 0.21 eV/atom, so unstable — wait, I misread the table"
        if _BELOW_HULL_AFTER.match(norm, n.end):
            return "other_property"  # a decomposition energy written as a distance below the hull
        system = _SYSTEM_HULL_AFTER.match(norm, n.end)
        asked = getattr(scan, "asked", None)
        if system is not None and asked is not None \
                and not set(re.findall(r"[A-Z][a-z]?", system.group("sys"))) <= {element for element, _ in asked}:
            return "other_property"  # "42 meV/atom above the Rb–Sn–O hull" when the asked compound is K2SnO3
        if _THRESHOLD_BEFORE.search(norm, max(run.s_start, head.start - 40), head.start):
            return "question_echo"  # "threshold = 0.05 eV/atom": the question's criterion restated
        c_start = cx.clause_start(norm, run.s_start, head.start, 60)
        if _GAP_AFTER.match(norm, n.end):
            return "other_property"  # "a 2.8 eV optical gap" in a stability chain
        if _OUTDATED.search(norm, max(run.s_start, head.start - 80), head.start):
            return "negated"  # "older database versions listed it at 0.06 eV/atom": a value the chain sets against the current one
        if _COSTS_BEFORE.search(norm, max(run.s_start, head.start - 60), head.start):
            return "other_property"  # "the inverse cation arrangement costs 45 meV/atom": another configuration's energy
        if _RELATIVE_AFTER.match(norm, n.end) and not _HULL_LABEL.search(norm, run.lo, head.start):
            with_other = _WITH_OTHER_BEFORE.search(norm, max(run.s_start, head.start - 60), head.start)
            if with_other is not None and not _NOT_A_PHASE.search(with_other.group("name")) \
                    and not _ASKED_HERE.search(with_other.group()) and not _ASKED_MARK.search(with_other.group()):
                return "other_property"  # "the ilmenite cell is on the hull, with the perovskite 11 meV/atom higher"
            subject = None
            for subject in _FORM_SUBJECT.finditer(norm, max(run.s_start, head.start - 100), head.start):
                pass
            if subject is not None and not _ASKED_HERE.search(norm, max(run.s_start, subject.start() - 30), head.start) \
                    and not _ASKED_MARK.search(norm, subject.start(), head.start) \
                    and not _PREDICATE_BEFORE.search(norm, max(run.s_start, subject.start() - 40), subject.start()):
                return "other_property"  # "the cristobalite-type form comes out 2 meV/atom above it": another polymorph's energy
        if _HIGHER_BY.search(norm, max(run.s_start, head.start - 40), head.start):
            subject = None
            for subject in _FORM_SUBJECT.finditer(norm, max(c_start, head.start - 100), head.start):
                pass
            if subject is not None and not _ASKED_MARK.search(norm, subject.start(), head.start) \
                    and not _ASKED_HERE.search(norm, max(run.s_start, subject.start() - 30), head.start):
                return "other_property"  # "the competing A + B assemblage is higher by 14 meV/atom": a decomposition energy
        if c_start > run.s_start and _HIGHER_AFTER.match(norm, n.end) and not _HULL_LABEL.search(norm, run.lo, head.start):
            named = _NAMED_SUBJECT.fullmatch(norm, c_start, head.start)
            if named is not None and (composition(named.group("name")) is None or composition(named.group("name")) != getattr(scan, "asked", None)):
                return "other_property"  # "…on the hull; slawsonite comes out 6 meV/atom higher": another phase, relative to the asked one
        other = None
        for m in _OTHER_ENERGY.finditer(norm, max(run.s_start, head.start - 60), head.start):
            if not cx.closed_aside(norm, max(run.s_start, m.start() - 60), m.start(), head.start):
                other = m  # (not a word of an aside describing the subject: "Sanidine (the disordered high-T form) sits …")
        if _unmarked_row(scan, head.start):
            return "other_property"  # "- γ-MoC (WC type): 0.02 eV/atom" beside "- δ-MoC (rock salt, asked): 0.19 eV/atom"
        header = _column_header(scan, head.start)
        label = _HULL_LABEL.search(norm, run.lo, head.start) or _HULL_AFTER.match(norm, n.end) or (
            header is not None and _HULL_WORDS.search(header)) or (
            scan.in_answer(n) and _CLASS_ANSWER.search(norm, max(scan.answer[0], head.start - 40), head.start)) or (
            _yaml_hull_unit(scan, head.start) is not None) or _equated(scan, n, run)  # (w38)
        if other is not None and other.group().lower() == "polymorph" \
                and _ASKED_HERE.search(norm, other.end(), head.start):
            other = None  # "the 1T polymorph (this structure) lies 0.28 eV/atom above 2H": the asked polymorph
        if not label and unit.endswith("/atom") and _DATABASE.search(norm, c_start, head.start) and other is None:
            label = True  # "Materials Project lists 0.000 eV/atom for this cell", "OQMD 0.068 eV/atom"
        if other is not None and not label and other.start() >= c_start - (0 if other.group().lower() == "polymorph" else 40):
            return "other_property"  # a formation, reaction or decomposition energy
        if not label and not _hull_words_near(scan, run, n):
            prev = scan.sentences.previous(head.start)
            bare = c_start > 0 and norm[c_start - 1] in ";:" and unit.endswith("/atom") \
                and _BARE_CLAUSE.fullmatch(norm, c_start, head.start) is not None and _CLAUSE_END.match(norm, n.end) is not None \
                and not _OTHER_ENERGY.search(norm, run.s_start, head.start)
            if not bare and (prev is None or head.start - prev[0] > 400 or _OTHER_ENERGY.search(norm, run.s_start, head.start)
                             or not _HULL_WORDS.search(norm, prev[0], prev[1])):
                return "other"  # an energy per atom said to be a distance to the hull neither here nor just before
        value = n.value / 1000.0 if unit.startswith("meV") else n.value
        per_fu = unit.endswith("/fu") or (unit in ("eV", "meV") and (_PER_FU_BEFORE.search(norm, max(run.s_start, head.start - 80),
                                                                                          head.start) is not None
                                                                    or _PER_NAMED_FU_AFTER.match(norm, n.end) is not None))
        return ("e_above_hull", round(value, 9), "eV/fu" if per_fu else "eV/atom")


def _hull_words_near(scan: Scan, run: Run, n: Number) -> bool:
    """Hull words from 100 characters before the list's head to 60 after this member. The first match after the
    window's start is found once per list, so a list of 10⁵ hull energies costs one scan, not one per member."""
    lo = max(run.s_start, run.head.start - 100)
    first = run.cache.get("hull_words")
    if first is None:  # up to 60 characters past the list's last member: bounded by the list, not the sentence
        m = _HULL_WORDS.search(scan.norm, lo, min(run.s_end, run_end(scan, run) + 60))
        first = run.cache["hull_words"] = m.end() if m else -1
    return 0 <= first <= min(run.s_end, n.end + 60)


# -- metallicity ---------------------------------------------------------------------------------
# (w38) the band-to-band edge names the gap itself: "past the exciton line, the band-to-band onset sits at about 6.1 eV"
_GAP_LABEL = re.compile(r"(?:band(?:[- ]?gap|-to-band\s+(?:absorption\s+|optical\s+)?(?:edge|onset|threshold)(?:\s+(?:lies|sits|falls))?)|"
                        rf"(?<!mid-)(?<!mid)\bgap|E_?\s*\{{?\s*g(?:ap)?\}}?|\bEg)"
                        rf"(?:\s+energy)?{_OF_MATERIAL}(?:\s*\([^()]{{0,12}}\))?"
                        r"(?:\s+between\s+(?:the\s+)?(?:top\s+of\s+the\s+)?(?:valence|VBM)[^.\n]{0,40}?(?:conduction|CBM)"
                        r"(?:\s+(?:bands?|band\s+minimum|band\s+edges?|states|manifolds?))?)?"
                        rf"{cx.LINK}\s*$", re.I)
_OTHER_EV = re.compile(r"\b(?:lowers?|raises?|reduces?|shifts?)\b[^.;\n]{0,40}\bby\s+(?:another\s+)?(?:about\s+|~\s*|≈\s*)?$|formation|Burstein|ΔH|enthalp|cohesive|\bemission\b|E_?\s*hull|\bhull\b|decomposition|binding|total energy|work function|"
                       r"\benergy\b|Urbach|\bexciton|\btransitions?\b|"
                       r"fermi|E_?F\b|exchange|splitting|\binterband\b|bandwidth|band width|activation|barrier|plasma|phonon|ionization|"
                       r"affinity|crystal field|spin-orbit|anisotropy|VBM|CBM|valence band|conduction band|band edge|"
                       r"relative to|overlap|density|\bvalleys?\b|\bset to\b|conduction state|valence state|plasmon|"
                       r"\b(?:old|older|earlier|historical|outdated|obsolete)\s+(?:\w+\s+)?(?:(?:reports?|values?|estimates?)\s+(?:of\s+)?)?$|"
                       r"Δ_?\{?\s*SO|pseudo-?gap|\blattice\s+(?:constant|parameter)s?\b", re.I)
# another form of the material: "A 1T′ monolayer is … an insulator with a bulk gap of about 55 meV"
_OTHER_FORM = re.compile(r"\bsingle[- ]layers?\b|\bmonolayer'?s?\b|\bbilayers?\b|\bfew-layers?\b|\bnanoribbons?\b|\bquantum dots?\b|\bnanosheets?\b", re.I)
_FOR_COMPARISON = re.compile(r"\bfor\s+comparison\b", re.I)  # "anatase, for comparison, is 3.2 eV"
# another polytype or phase named in a "For comparison" sentence: "3C-SiC", "the α-phase"
# a compound named by an acronym as the subject of a comparison value ("CZTS itself gets"); method names are not compounds
_ACRONYM_SUBJECT = re.compile(r"(?<![\w-])(?!(?:PBE|HSE|HSE06|DFT|GGA|LDA|SOC|MBJ|ARPES|STS|XPS|VASP|SCAN|DOS|TB|EELS|UPS|RPA|PAW)\b)"
                              r"([A-Z]{3,6})\b(?:\s+itself)?\s+(?:gets|has|shows|gives|comes\s+out|sits|is|lies|reaches)\b")
_NAMED_FORM = re.compile(r"\b\d[A-Z]-[A-Z]|\bpolytypes?\b|\bpolymorphs?\b|\bphases?\b|[αβγδ]-[A-Z]")
# an apposition ("Its work function is high, about 6.9 eV"): the number belongs to the clause before the comma
_APPOSITION = re.compile(r"\s*(?:about|approximately|roughly|around|~|≈|i\.e\.,?|namely)?\s*$", re.I)
# a gap, but not the material's: a spin channel of a half-metal, another phase; (w38) a gap opened only locally in k,
# not across the zone: "SOC splits the crossing along Γ–M, a local gap of ~40 meV, while the pockets survive"
_OTHER_GAP = re.compile(r"Burstein|Moss-shift|minority|majority|spin channel|spin-up|spin-down|\bphase\b|polymorph|polytype|\bDirac[- ]point\s+gap\b|"
                        r"\bsurface(?:[- ]state)?\s+gap\b|\bslab\b|\blocal\s+(?:band\s+)?gaps?\b", re.I)
_OTHER_EV_AFTER = re.compile(r"\s*(?:interband|plasma|plasmon|exciton\w*|work function|electron affinity|ionization|photons?)\b|\s*[×·⋅*]\s*(?:Å|nm|m|cm)\b|\s*,?\s*(?:is|are|was)\s+(?:an?\s+|the\s+)?(?:interband|"
                             r"optical\s+transition|exciton)|\s*short\s+of\b", re.I)
# "3.5 eV — the strong direct optical absorption at L, which is not the fundamental gap"; "~0.6 eV separates this
# split-off band from the main conduction band"; (w38) with no article, in the plural: "the Eu²⁺ lines (about 2.9 eV)
# are 4f–5d transitions, not band gaps"
_NOT_THE_GAP_AFTER = re.compile(r"[^.\n]{0,80}?\bnot\s+(?:(?:the|a)\s+(?:fundamental\s+|band\s+)?gap|(?:fundamental|band)[- ]gaps?)\b|"
                                r"\s*separates\s+[^.\n]{0,60}?\bfrom\s+[^.\n]{0,30}?conduction\s+band|"
                                r"[^.\n]{0,80}?\bintra-?conduction-?band\b|"
                                r"[^.\n]{0,60}?\b(?:comes?|stems?|arises?|results?)\s+from\s+(?:\w+\s+){0,2}(?:oxidation|oxidi[sz]ed|contamina\w*|impurit\w*|defects?|"
                                r"surface|plasmon\w*)|[^.\n]{0,100}?\brather\s+than\s+(?:an?\s+|the\s+)?(?:intrinsic|fundamental|true|real|bulk)\s+(?:band\s*)?gap\b", re.I)
# "the optical absorption onset lies higher, ≈ 3.3 eV, because the Γ transition is parity-forbidden" (an onset, not a gap)
_FORBIDDEN_AFTER = re.compile(r"[^.\n]{0,60}?\b(?:parity|dipole|symmetry)[- ]forbidden\b", re.I)
_COMPARISON_LABEL = re.compile(r"\([^()\n]{0,30}\bfor\s+comparison\s*\)\s*:?\s*$", re.I)  # "- PBE (inverse cell, for comparison): 2.6 eV"
_OVERLAP = re.compile(r"\boverlap\b", re.I)  # "a small band overlap near Γ (~0.1 eV)"
_EMISSION = re.compile(r"\bemission\b|\bemits?\b|\blases\b|\blaser\s+line\b|\bphotoluminescen\w*|(?<![A-Za-z])PL(?![A-Za-z])", re.I)
_FORMER_LATTER_AFTER = re.compile(r"\s*(?:for|of|in)\s+the\s+(former|latter)\b", re.I)
_PAIR = re.compile(r"(?<![A-Za-z0-9(])([A-Z][A-Za-z0-9]{1,15})\s+and\s+([A-Z][A-Za-z0-9]{1,15})\b")


def _coreferent_other(scan: Scan, run: Run, n: Number) -> bool:
    """"X and Y … 3.1 eV for the former": the value of whichever of the pair is not the asked material."""
    which = _FORMER_LATTER_AFTER.match(scan.norm, n.end)
    asked = getattr(scan, "asked", None)
    if which is None or asked is None:
        return False
    prev = scan.sentences.previous(n.start)
    lo = prev[0] if prev is not None else run.s_start
    pair = None
    for m in _PAIR.finditer(scan.norm, lo, n.start):
        pair = m
    if pair is None:
        return False
    named = pair.group(1) if which.group(1).lower() == "former" else pair.group(2)
    comp = composition(named)
    return comp is not None and comp != asked


# "- 1.38 eV — PBE, lowest direct transition": a direct transition named after the number
_DIRECT_AFTER = re.compile(r"[ \t]*(?:[—–:-]\s*[^\n.;]{0,30}?|\(\s*(?:the\s+|a\s+)?)\bdirect\s+(?:transition|gap)\b|\s*\(\s*direct\s*\)", re.I)
# another compound named right after the value or in its aside: "- 0.9 eV — SnS in the same structure", "(LiH, for comparison: 3.0 eV)"
_FORMULA_AFTER = re.compile(r"\s*[—–]\s*([A-Z][A-Za-z0-9]{1,15})\b")
_FORMULA_COMPARED_BEFORE = re.compile(r"\(\s*([A-Z][A-Za-z0-9]{1,15})\s*,\s*(?:for\s+comparison|by\s+comparison|cf\.)\s*[:,]?\s*$|"
                                      r"\(\s*([A-Z][A-Za-z0-9]{1,15})\s*:\s*(?:about|~|≈)?\s*$|"  # "(Ta₂O₅: about 4.0 eV measured)"
                                      r"(?<![\w-])([A-Z][A-Za-z0-9]{1,15})\s+for\s+(?:reference|comparison)\s*:\s*$", re.I)
_BULLET_LINE = re.compile(r"[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+")
_EDGE_KIND = re.compile(r"(?P<cb>conduction|CBM)|(?P<vb>valence|VBM)", re.I)
# "a 0.8 eV gap in the minority channel"
_OTHER_GAP_AFTER = re.compile(r"\s*(?:\(\w*\)\s*)?(?:band[- ]?)?gap\s+(?:in|for|of)\s+(?:the\s+)?(?:minority|majority|spin[- ]up|"
                              r"spin[- ]down|other)\b|\s*\((?:another|other|a different)\s+(?:polymorph|phase|structure)\)", re.I)
_EDGE_AFTER = re.compile(r"\s*(?:below|above|under|beneath|from)\s+(?:the\s+)?(?:conduction|valence|fermi|CBM|VBM|E_?F\b|band edge|"
                         r"bottom\b|top\b|mid-?gap\b|(?:[\w-]+\s+){0,2}band\b)", re.I)
# the asked material's gap said to be indirect (not "unlike Si, which is indirect")
_INDIRECT_GAP = re.compile(r"\bindirect[- ]+(?:band[- ]?)?gap\b|\bindirect\s+(?:PBE|HSE\w*|DFT|GGA|LDA)\s+gap\b|\bindirect(?:[- ]gap)?\s+(?:[\w-]+[- ])?(?:semiconductor|insulator)\b|"
                           r"E_?g?\s*\(\s*ind|\(\s*indirect\b|\([^()\n]{0,20},\s*indirect\s*\)|\bgap\b[^.\n]{0,40}?\bis\s+indirect\b|\bfundamental gap is indirect\b|"
                           r"\beV\s*[—–:,-]+\s*(?:[\w+-]+\s*,\s*)?indirect\b", re.I)


def _other_gap(scan: Scan, lo: int, hi: int) -> bool:
    """Words that make a gap another one's (_OTHER_GAP), except a phase named by the asked cell's own crystal system:
    "measured (high-pressure cubic phase)" when the question's space group is cubic."""
    norm = scan.norm
    for m in _OTHER_GAP.finditer(norm, lo, hi):
        if m.group().lower() == "phase":
            system = _asked_system(getattr(scan, "question_norm", ""))
            named = [_SYSTEMS[w.group(1).lower()] for w in _SYSTEM_WORD.finditer(norm, max(lo, m.start() - 30), m.start())]
            if system is not None and named and all(x == system for x in named):
                continue
        return True
    return False


def _semimetal(scan: Scan) -> bool:
    """Whether the chain says the material has no global gap (looked up once per chain)."""
    if "semimetal" not in scan.memo:
        scan.memo["semimetal"] = _NO_GLOBAL.search(scan.norm) is not None
    return scan.memo["semimetal"]


def _no_direct_gap(scan: Scan) -> bool:
    """Whether the chain calls the asked gap indirect or absent, so a direct transition is not the gap (once per chain)."""
    if "indirect" not in scan.memo:
        scan.memo["indirect"] = _INDIRECT_GAP.search(scan.norm) is not None or _semimetal(scan)
    return scan.memo["indirect"]


_AT_CROSSINGS_AFTER = re.compile(r"[^.\n]{0,30}?\bat\s+(?:the|those|these|its|some)\s+(?:[\w-]+\s+)?(?:band\s+)?(?:crossings?|nodes?|"
                                 r"nodal\s+(?:lines?|points?)|Dirac\s+points?|Weyl\s+(?:points?|nodes?))\b|"
                                 # "a tiny gap of ~5 meV at certain k points": a local gap, not a global one
                                 r"[^.\n]{0,30}?\bat\s+(?:certain|some|a\s+few|isolated|selected)\s+k[- ]?points?\b", re.I)
_NO_GLOBAL = re.compile(r"\bno\s+(?:global|fundamental|overall)\s+gap\b|(?<!into a )(?<!becomes a )(?<!become a )\bsemi-?metal", re.I)
_GAP_KIND = re.compile(r"(?P<indirect>\bindirect\b|\bE_?g?\s*\(\s*ind)|(?P<direct>(?<![\w])direct\s+(?:optical\s+)?(?:band[- ]?)?(?:gap|transition|onset|absorption)|(?<![\w])direct\s+at\b|"
                       r"(?<![\w])direct\s*[:=≈~]?\s*(?=\d)|\bE_?g?\s*\(\s*dir|\bgap at Γ\b|\(\s*direct\s*\))|(?P<plain>\b(?:fundamental|band)\s+gap\b)", re.I)
# "the PBE underestimate (~0.6 eV) is typical": the size of a functional's error, a difference of two gaps
_ESTIMATE_ERROR_BEFORE = re.compile(r"\b(?:under|over)-?estimat(?:e|ion)(?:\s+(?:of|by|is))?\s*(?:\(\s*)?(?:about\s+|roughly\s+|~\s*|≈\s*)?$", re.I)
_SUPERCONDUCTING = re.compile(r"Δ(?:_?[^\W\d_]{1,3}|_\{[^{}]{1,6}\})?\s*(?:\([^()]{0,8}\)\s*)?[=≈:~]\s*(?:about\s*)?$|"
                              r"\bsuperconduct\w*", re.I)
_WIDTH_AFTER = re.compile(r"\s*(?:wide|broad|less|more|lower|higher|smaller|larger)\b", re.I)


_GAPPED_ANSWER = re.compile(r"\b(?:gapped|insulat\w+|semi-?conduct\w+|non-?metal\w*)\s*(?:[,:;(]|[—–-]|with)\s*"
                            r"(?:(?:a|an|the)\s+)?(?:(?:band[- ]?)?gap\s*(?:of|=|:|≈|~)?\s*)?(?:about|approximately|~|≈)?\s*$", re.I)


# "I'll go with the MP value, 0.6 eV", "I'll take 0.47 eV": the value chosen among candidates
_CHOICE = re.compile(r"\b(?:I'?ll|I\s+will|I|we'?ll|we\s+will|we)\s+(?:go\s+with|stick\s+with|take|use|adopt|choose|pick|keep)\s+"
                     r"(?:the\s+)?(?:[\w-]+\s+){0,3}?(?:(?:value|number|entry|figure|one)\s*)?[,:]?\s*(?:of\s+)?(?:about\s+|~\s*|≈\s*)?"
                     r"(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>m?eV)\b", re.I)
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
_DATABASE_WORD = re.compile(r"\bdatabases?\b|\bMaterials Project\b|\bOQMD\b|\bAFLOW\b|\bJARVIS\b|\bC2DB\b|\bentr(?:y|ies)\b", re.I)

# (w38) a smearing named by its scheme after the width: "with 0.1 eV Methfessel–Paxton smearing"
_SMEARING_AFTER = re.compile(r"[ \t]*(?:of\s+)?(?:Gaussian|Methfessel[–-]Paxton|Marzari[–-]Vanderbilt|Fermi(?:[–-]Dirac)?|cold|tetrahedron)\s+"
                             r"smearing\b", re.I)
# (w38) a table row whose label cell is a calculation setting: "| ENCUT, plane waves | 450 eV |" (the text carries the
# column header into the cell: "| ENCUT, plane waves | value = 450 eV |")
_SETTING_CELL_BEFORE = re.compile(r"[ \t]*\|[^|\n]{0,40}?\b(?:cut-?off|ENCUT|smearing)\b[^|\n]{0,20}\|[ \t]*(?:[^|\n=]{1,30}=[ \t]*)?"
                                  r"(?:[~≈][ \t]*)?$", re.I)
# (w38) the thermal energy, not a gap: "a gap of 60 meV is only about twice k_BT (≈ 25 meV at 300 K)"
_THERMAL_BEFORE = re.compile(rf"(?<![A-Za-z])k_?\{{?B?\}}?\s*T(?![A-Za-z]){cx.LINK}\s*$")
# (w38) a guess the sentence itself ends by withdrawing, past the shared reader's reach: "I first pictured a small-gap
# semiconductor, perhaps 0.2 eV, as in the sister arsenides — but that is wrong" (no other number between)
_WRONG_AFTER = re.compile(r"[^.;\n\d]{0,100}?[—–]\s*(?:but\s+)?(?:that|this)(?:'s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+right|a\s+mistake)\b",
                          re.I)
# (w38) an early report's value that the chain then denies: "older optical work listed it as a semiconductor with a
# 0.2 eV gap; it is not one"
_EARLY_WORK_BEFORE = re.compile(r"(?=[eoiEOI])\b(?:early|earlier|older|initial)\s+(?:[\w-]+\s+){0,2}?(?:reports?|papers?|stud(?:y|ies)|work|"
                                r"measurements?|calculations?|authors)\b[^.;\n]{0,80}$", re.I)
_DENIED_AFTER = re.compile(r"[^.;\n\d]{0,40}?(?:[;—–]|,\s*but)\s*(?:it|this|that|they|(?-i:[A-Z][A-Za-z0-9]{1,15}))\s+(?:is|are|was|were)\s*"
                           r"(?:not|n't)\b(?!\s+(?:only|just)\b)", re.I)
# (w40) a value the sentence then gives to a calculation other than the asked one, or says it does not use: "with
# SOC and U = 3 eV a gap of ~0.2 eV appears, which is not the calculation asked about"; "… about 0.4 eV opens, but
# that is not the plain PBE setting asked for, so I don't use it"
_NOT_ASKED_AFTER = re.compile(r"[^.;\n\d]{0,60}?\b(?:which|that|this|it)(?:'s|\s+is|\s+was)\s+not\s+(?:the\s+)?(?:[\w+/-]+\s+){0,3}?"
                              r"(?:calculation|setting|functional|method|level\s+of\s+theory)\s+(?:(?:being\s+)?asked\s+(?:about|for)|in\s+question)\b|"
                              r"[^.;\n\d]{0,100}?\bI\s+(?:don't|do\s+not|won't|will\s+not)\s+use\s+(?:it|this|that|them)\b", re.I)
# (w40) a first impression the sentence turns away from: "My first instinct was a gap near 1.8 eV, but that is the
# sulfide's" (the value is withdrawn, whatever it is then given to)
_FIRST_IMPRESSION_BEFORE = re.compile(r"\b(?:my|our|the)\s+(?:first|initial|gut|immediate)\s+(?:instinct|guess|thought|impression|hunch|"
                                      r"reaction|expectation)\s+(?:was|is)\b[^.;\n\d]{0,40}$", re.I)
_BUT_AFTER = re.compile(r"[^.;\n\d]{0,30}?\bbut\b", re.I)
# (w38) a value said of a structure other than the asked cell's, named by its space-group symbol ("the monoclinic
# P2₁/c polymorph, relaxed alike, comes out at 2.9 eV" when the asked cell is Pnma; a table row "| low-T | Cmcm |
# 2.6 eV |") or by its prototype ("wurtzite GaP is a wide-gap semiconductor — PBE ≈ 1.6 eV" when the asked cell is
# Fm-3m); the last structure named before the value in its sentence decides, unless the sentence turns back to the
# asked cell ("here", "this cell", "but", ";")
_SG_NAME = re.compile(r"(?<![\w/-])([PIFCABR](?=[\w/\u0304-]*[\d-]|[abcdemn]{3})[-\d_/{}abcdemn\u0304]{2,12})(?![\w/])")
_PROTOTYPE = re.compile(r"(?<![\w-])(zinc-?blende|sphalerite|rock-?salt|rock\s+salt|wurtzite|rutile|anatase|fluorite|CsCl|NiAs)"
                        r"(?:[- ]type)?(?![\w-])", re.I)
_PROTOTYPE_SG = {"zincblende": 216, "sphalerite": 216, "rocksalt": 225, "wurtzite": 186, "rutile": 136, "anatase": 141,
                 "fluorite": 225, "cscl": 221, "nias": 194}
_PROTOTYPE_QUALIFIED = re.compile(r"\b(?:distorted|ordered|defect|double|layered|filled|stuffed|derived|anti|inverse|half)[- ]?$", re.I)
_BACK_TO_ASKED_CELL = re.compile(r"\b(?:this|the\s+asked|the\s+given|our|the\s+question'?s)\s+(?:[\w-]+\s+)?(?:structure|phase|polymorph|cell|one)\b|"
                                 r"\bhere\b|\basked\b|[;]|\b(?:but|whereas|while|unlike|instead)\b", re.I)


_SG_SETTINGS = {"Pbnm": "Pnma", "Pnam": "Pnma", "Pmcn": "Pnma", "Cmca": "Cmce", "Cmma": "Cmme", "Ccca": "Ccce"}


def _sg_name_key(symbol: str) -> str:
    """"Fm3̄m" (a combining bar), "Fm3m" (no bar) and "Fm-3m" are one symbol; so are common settings of one group
    ("Pbnm" and "Pnma")."""
    key = re.sub(r"[-\u0304]", "", _sg_key(symbol))
    return _SG_SETTINGS.get(key, key)


def _other_structure(scan: Scan, run: Run, n: Number) -> bool:
    """Whether the last structure the sentence (or table row) names before the value is not the asked cell's."""
    norm, head = scan.norm, run.head
    asked = scan.memo.get("asked-structure")
    if asked is None:  # the asked symbol and number, found once per chain
        question = getattr(scan, "question_norm", "")
        number = _SG_NUMBER.search(question)
        sg = _asked_space_group(question)
        asked = scan.memo["asked-structure"] = (_sg_name_key(sg) if sg is not None else None,
                                                int(number.group(1)) if number is not None else None)
    asked_sg, asked_number = asked
    if asked_sg is None and asked_number is None:
        return False
    named_any = scan.memo.get("structure-names")
    if named_any is None:  # whether the chain names any structure at all, looked up once per chain
        named_any = scan.memo["structure-names"] = (_SG_NAME.search(norm) is not None, _PROTOTYPE.search(norm) is not None)
    lo = max(run.s_start, head.start - 200)
    named = None
    for m in _SG_NAME.finditer(norm, lo, head.start) if named_any[0] else ():
        symbol, rest = m.group(1), m.group(1)[1:]
        if rest.isalpha() and not (re.fullmatch(r"[abcemn]{3}", rest) or symbol == "Fddd"):
            continue  # "Band gap": a word (a letters-only symbol is three glides, a d glide only in Fddd)
        if re.search(r"[abcdemn/\u0304-]", rest) and not _STRUKTURBERICHT.fullmatch(symbol):
            named = (m, asked_sg is not None and _sg_name_key(symbol) != asked_sg)
    for m in _PROTOTYPE.finditer(norm, lo, head.start) if named_any[1] else ():
        if named is None or m.start() > named[0].start():
            key = re.sub(r"[\s-]", "", m.group(1)).lower()
            named = (m, asked_number is not None and _PROTOTYPE_SG[key] != asked_number
                     and not _PROTOTYPE_QUALIFIED.search(norm, max(0, m.start() - 12), m.start()))
    if named is None or not named[1]:
        return False
    return not _BACK_TO_ASKED_CELL.search(norm, named[0].end(), head.start)


class MetallicityReader(_DFTReader):
    family = "metallicity"
    class_kind = "metallicity"
    cues = METALLICITY
    difference_after = True  # "the 0.04 eV difference", "a gap 0.3 eV larger than Si's"

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_GAP_LABEL.search(scan.norm, run.lo, run.head.start))

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """"a band gap of 1.0000e+00": a gap stated without its unit is read in eV, the unit the question asks for;
        so is a bare number right after the gapped class in the Answer line ("Answer: gapped, 0.87")."""
        if _GAP_LABEL.search(scan.norm, max(run.s_start, run.head.start - 40), run.head.start):
            return "eV"
        if scan.in_answer(run.head) and _GAPPED_ANSWER.search(scan.norm, max(scan.answer[0], run.head.start - 40), run.head.start) \
                and not cx.ARITHMETIC_AFTER.match(scan.norm, run.head.end):
            return "eV"
        return None

    def judge(self, scan: Scan, n: Number, run: Run, unit: str) -> str | tuple[str, float, str]:
        if unit not in ("eV", "meV"):
            return "other_property"  # per atom / per formula unit energies are never a gap
        norm, head = scan.norm, run.head
        if _SMEARING_AFTER.match(norm, n.end) or _SETTING_CELL_BEFORE.match(norm, cx.line_start(norm, head.start), head.start):
            return "instrument_setting"  # "0.2 eV Gaussian smearing", "| ENCUT, plane waves | 450 eV |"
        if _THERMAL_BEFORE.search(norm, max(run.s_start, head.start - 40), head.start):
            return "other"  # "twice k_BT (≈ 25 meV at 300 K)": the thermal energy the gap is compared with
        if _WRONG_AFTER.match(norm, n.end, run.s_end):
            return "retracted"  # "a small-gap semiconductor, perhaps 0.2 eV, as in the sister arsenides — but that is wrong"
        if _EARLY_WORK_BEFORE.search(norm, max(run.s_start, head.start - 140), head.start) and _DENIED_AFTER.match(norm, n.end):
            return "negated"  # "older optical work listed it as a semiconductor with a 0.2 eV gap; it is not one"
        if _FIRST_IMPRESSION_BEFORE.search(norm, max(run.s_start, head.start - 80), head.start) and _BUT_AFTER.match(norm, n.end, run.s_end):
            return "retracted"  # (w40) "My first instinct was a gap near 1.8 eV, but that is the sulfide's"
        if _NOT_ASKED_AFTER.match(norm, n.end, run.s_end):
            return "other"  # (w40) "… a gap of ~0.2 eV appears, which is not the calculation asked about"
        c_start = cx.clause_start(norm, run.s_start, head.start, 60)
        label = _GAP_LABEL.search(norm, max(run.s_start, head.start - 90), head.start)
        edge = _EDGE_AFTER.match(norm, n.end)
        if edge:
            before = None
            for before in _EDGE_KIND.finditer(norm, c_start, head.start):
                pass
            after = _EDGE_KIND.search(edge.group())
            if not (before and after and (before.group("cb") is None) != (after.group("cb") is None)):
                return "other_property"  # "0.2 eV below the conduction band": a band-edge energy
            if (before.group("cb") is not None) == bool(re.match(r"\s*(?:below|under|beneath)", edge.group())):
                return "other_property"  # "the conduction-band bottom 0.3 eV below the valence-band top": an overlap
            # "the CBM lies 1.1 eV above the VBM": the separation of the two edges is the gap itself
        if c_start > run.s_start and ((norm[c_start - 1] == "," and _APPOSITION.fullmatch(norm, c_start, head.start))
                                      or re.match(r"\s*(?:whose|which|where)\b", norm[c_start:c_start + 12])):
            c_start = cx.clause_start(norm, run.s_start, c_start - 1, 60)  # "the Cmcm phase, whose PBE gap is 0.39 eV"
        label_start = cx.label_start(norm, run.s_start, c_start)  # "- minority spin: a 450 meV gap"
        question = getattr(scan, "question_norm", "")
        lo = max(run.s_start, head.start - 60)
        if (cx.COMPARISON_LEAD.match(norm, run.s_start) and _NAMED_FORM.search(norm, max(run.s_start, head.start - 200), head.start)) \
                or (_FOR_COMPARISON.search(norm, lo, head.start) and (cx.MINERAL.search(norm, lo, head.start)
                                                                      or _NAMED_FORM.search(norm, lo, head.start))):
            return "other_property"  # "For comparison, 3C-SiC has an experimental gap of 2.36 eV"
        if _FOR_COMPARISON.search(norm, lo, head.start):
            acronym = _ACRONYM_SUBJECT.search(norm, lo, head.start)
            key = ("acronym-defined", acronym.group(1)) if acronym is not None else None
            if key is not None and key not in scan.memo:
                scan.memo[key] = f"({acronym.group(1)})" in norm  # once per acronym, not once per number
            if key is not None and not scan.memo[key]:
                return "other_property"  # "For comparison, CZTS itself gets about 0.1 eV": a related compound named by its acronym
        if _OTHER_FORM.search(norm, max(run.s_start, head.start - 150), head.start) and not _OTHER_FORM.search(question):
            return "other_property"  # a monolayer, a nanoribbon: another form of the asked bulk material
        paren = norm.rfind("(", max(run.s_start, head.start - 30), head.start)  # "The 2H polytype is a semiconductor (PBE gap 0.8 eV)"
        lead = None if paren < 0 or ")" in norm[paren:head.start] else (cx.clause_start(norm, run.s_start, paren, 60), paren)
        if _other_gap(scan, max(label_start, head.start - 50), head.start) or _OTHER_GAP_AFTER.match(norm, n.end) \
                or (lead is not None and (_other_gap(scan, *lead) or _OVERLAP.search(norm, *lead))):
            return "other_property"  # a minority-spin gap of a half-metal, the gap of another phase
        if _other_structure(scan, run, n):
            return "other_property"  # "the monoclinic P2₁/c polymorph … comes out at 2.9 eV" when the asked cell is Pnma
        if not label and (_EMISSION.search(norm, *lead) if lead is not None
                          else _EMISSION.search(norm, max(c_start, head.start - 50), head.start)):
            return "other_property"  # "the Ce³⁺ emission at 380 nm (3.26 eV)": a line's photon energy, not a gap
        if n.value < 0:
            return "other_property"  # a band inversion or overlap energy: a gap is never negative
        if _ESTIMATE_ERROR_BEFORE.search(norm, max(run.s_start, n.start - 40), n.start):
            return "other"  # "the PBE underestimate (~0.6 eV)": a difference between two gaps, not a gap
        if _SUPERCONDUCTING.search(norm, max(run.s_start, n.start - 40), n.start):
            return "other_property"  # a superconducting gap Δ
        if _WIDTH_AFTER.match(norm, n.end):
            return "other_property"  # "the d band is 3.5 eV wide": a bandwidth
        kind = None
        for m in _GAP_KIND.finditer(norm, max(run.s_start, n.start - 60), n.start + 1):  # +1: "direct 5.13 eV" looks ahead
            kind = m
        if ((kind is not None and kind.group("direct")) or _DIRECT_AFTER.match(norm, n.end)) and _no_direct_gap(scan):
            return "other_property"  # the direct gap at Γ of an indirect-gap material, a local gap of a semimetal
        if _COMPARISON_LABEL.search(norm, max(run.s_start, head.start - 50), head.start):
            return "other_property"
        if _coreferent_other(scan, run, n):
            return "other_property"  # "PBE gives 3.1 eV for the former and 3.9 eV for the latter": the former is not asked
        named = _FORMULA_AFTER.match(norm, n.end) or _FORMULA_COMPARED_BEFORE.search(norm, max(run.s_start, n.start - 40), n.start)
        if named is not None and getattr(scan, "asked", None) is not None:
            comp = composition(next(g for g in named.groups() if g))
            if comp is not None and comp != scan.asked:
                return "other_property"  # "- 0.9 eV — SnS in the same structure, for comparison"
        if _AT_CROSSINGS_AFTER.match(norm, n.end) and _semimetal(scan):
            return "other_property"  # "SOC opens tiny gaps, ~20 meV, at those crossings": local gaps of a semimetal
        if _OTHER_EV_AFTER.match(norm, n.end) or _NOT_THE_GAP_AFTER.match(norm, n.end) \
                or (_FORBIDDEN_AFTER.match(norm, n.end) and "gap" not in norm[max(run.s_start, head.start - 40):head.start]):
            return "other_property"  # "the 2.1 eV interband absorption edge", "a 2.0 eV plasma edge"
        other = None
        line = cx.line_start(norm, head.start)
        lo = min(c_start, label_start)
        if _BULLET_LINE.match(norm, line) and head.start - line <= 100:
            lo = line  # "- the 3d–4s splitting at Γ away from the gap edge, about 2.6 eV": the bullet names the quantity
        for m in _OTHER_EV.finditer(norm, max(lo, head.start - 100), head.start):
            other = m
        if other is not None and not label:
            return "other_property"  # formation energy, band edges (a gap label attached to the number wins)
        value = n.value / 1000.0 if unit == "meV" else n.value
        return ("band_gap", round(value, 9), "eV")

    def finish(self, scan: Scan, extraction: Extraction) -> None:
        """Of database values offered side by side, the one the chain then picks ("I'll go with the MP value, 0.6 eV")
        is the claim; the others, merely not chosen, are `other`."""
        original = scan.text.original
        gaps = sorted((c for c in extraction.claims if c.kind == "band_gap"), key=lambda c: c.span[0])
        stated = {c.value for c in gaps}
        starts = [c.span[0] for c in gaps]
        dropped: set[int] = set()
        for choice in _CHOICE.finditer(original) if len(gaps) > 1 else ():
            value = round(float(choice.group("num")) / (1000.0 if choice.group("unit") == "meV" else 1.0), 9)
            ends = [m.end() for m in _SENTENCE_END.finditer(original, max(0, choice.start() - 400), choice.start())]
            lo = ends[-2] if len(ends) >= 2 else max(0, choice.start() - 400)
            if value not in stated or not _DATABASE_WORD.search(original, lo, choice.start()):
                continue
            for i in range(bisect.bisect_left(starts, lo), bisect.bisect_left(starts, choice.start())):
                if gaps[i].value != value:
                    dropped.add(i)
        for i in sorted(dropped):
            c = gaps[i]
            extraction.claims.remove(c)
            extraction.rejected.append(Claim(c.kind, c.value, c.unit, c.span, c.text, "other"))
        super().finish(scan, extraction)

    def class_from_magnitudes(self, scan: Scan, claims: list[Claim]) -> Claim | None:
        gaps = [c for c in claims if c.kind == "band_gap"]
        chosen = _chosen(scan, gaps)
        if chosen is None:
            return None
        return Claim("metallicity", "metallic" if float(chosen.value) == 0 else "gapped", "", chosen.span, chosen.text)


def _chosen(scan: Scan, claims: list[Claim]) -> Claim | None:
    """The magnitude the model answers with: the Answer line's, else the last one stated."""
    if not claims:
        return None
    if scan.answer is not None:
        a, b = scan.text.span(*scan.answer)
        in_answer = [c for c in claims if a <= c.span[0] < b]
        if in_answer:
            return in_answer[-1]
    return claims[-1]


# -- magnetism -----------------------------------------------------------------------------------
_ION = re.compile(r"(?<![^\W_])([A-Z][a-z]?)(?:\^?\d?[+-](?!\d)|\d{1,2}(?=\s*[|:=≈(])|(?:\d{1,2}|I{1,3}|IV|VI{0,2})(?=\s+sites?\b)|(?![^\W_]))")  # not the N of "Néel"
_NOT_ELEMENTS = frozenset({"I", "In", "As", "At", "Be", "He", "No", "Am", "A", "B"})
_MOMENT_WORDS = re.compile(r"moments?|ends?\s+at|comes?\s+out\s+at|settles?\s+at|add(?:s|ing)?|carr(?:y|ies)|picks?\s+up|acquires?|develops?|retains?|keeps?|→|->|has|have|gives?|holds?|bears?|with|:|=|spin|contribut\w*|"
                           r"each|local|site", re.I)
_MOMENT_LABEL = re.compile(rf"(?:magnetic\s+moment|moment|magneti[sz]ation|(?<![/*])\bM\b|(?<![/*])\bm\b){_OF_MATERIAL}(?:\s*\([^()]{{0,12}}\))?"
                           rf"(?P<unit>\s+in\s+(?:units\s+of\s+)?µB(?:\s*(?:/|per)\s*(?:f\.?\s?u\.?|formula\s+units?|atoms?|"
                           rf"(?:unit\s+)?cells?))?)?{cx.LINK}\s*$", re.I)
_CELL_BEFORE = re.compile(r"\bcell\b|\bsupercell\b|\bper\s+cell\b|\bcalculation\b", re.I)
_FU_BEFORE = re.compile(r"(?<![A-Za-z])per[\s_]+formula[\s_]+unit\b|(?<![A-Za-z])per[\s_]+f\.?u\b\.?|\bformula\s+unit\b", re.I)
_ATOM_BEFORE = re.compile(r"\bper\s+(?:atom|site)\b", re.I)
_OTHER_MOMENT = re.compile(r"\bfree-ion\s+(?:value\s+|moment\s+)?(?:g_?J\s*[·⋅*×]?\s*J\s*)?(?:[=≈:]|of|is)?\s*$|effective|paramagnetic moment|μ_?eff|µ_?eff|mu_?eff|Curie|orbital moment", re.I)
_NET = re.compile(r"\bnet\b|\btotal\b|(?-i:\bM\s*=)", re.I)  # "M = 5 µB" is the total; a lower-case m is a local moment
# (w38) and a molar mass written as "M": "with M = 231.5 g/mol"
_NOT_A_MOMENT_UNIT = re.compile(r"[ \t]*(?:emu|J\s*/\s*T|[kM]?A\s*/\s*m|A\s*[·.*⋅×]?\s*m\s*(?:\^\s*2|²)|A\s*[·.*⋅×]\s*m|Oe|kA|"
                                r"g\s*(?:/\s*mol|mol\s*\^?\s*-\s*1)(?![A-Za-z]))", re.I)
# (w38) a magnetisation per volume, not a moment: "magnetisation density: 0.081 µB/Å³"
_PER_VOLUME_AFTER = re.compile(r"[ \t]*(?:/|per)[ \t]*(?:Å|nm|bohr|a_?0|cm|m)[ \t]*(?:\^[ \t]*3|³)(?![\d.])", re.I)
# (w38) the Bohr magneton converted into another unit system: "using 1 µB = 9.274e-24 J/T"
_CONVERSION_AFTER = re.compile(r"[ \t]*[=≈][ \t]*\d+(?:\.\d+)?(?:[ \t]*[×x][ \t]*10[ \t]*\^[ \t]*[-−]?[ \t]*\d{1,2}|[eE][-−+]?\d{1,2})[ \t]*"
                               r"(?:emu|erg|J|A)(?![A-Za-z])")
_PM_WITH = re.compile(r"\b(?:with|of|carry|carries|has|have|are|is|at)\s*$|(?<![\w+-])(?-i:[A-Z][a-z]?)\s$", re.I)
# a reference value the chain says is not reached: "reduced from the 1 µB spin-only value"
_NOT_REACHED = re.compile(r"\b(?:reduced|lowered|suppressed|decreased|down|less|smaller|short)\s+(?:from|than|of)\s+(?:the\s+)?"
                          r"(?:full\s+|ideal\s+|nominal\s+|spin-only\s+|ionic\s+|free-ion\s+|formal\s+)?$|"
                          r"\bbelow\s+(?:the|its|their)\s+(?:full|ideal|nominal|spin-only|ionic|free-ion|formal)\s+$", re.I)
# "the Slater–Pauling 3 µB is not reached", "(9 µB from gJ·J) is not part of this calculation": a value the result does not have
_NOT_REACHED_AFTER = re.compile(r"[^.;\d\n]{0,60}?\b(?:is|are|was|were)\s+not\s+(?:reached|attained|achieved|reali[sz]ed|"
                                r"(?:part\s+of|included\s+in|covered\s+by)\s+(?:this|the|our)\s+calculation)\b|"
                                r"[^.;\d\n]{0,20}?\b(?:serves?|is\s+used|counts?)\s+(?:only\s+)?as\s+(?:an?\s+)?(?:upper|lower|rough)?\s*(?:reference|bound|limit)\b", re.I)
# "the naive expectation": "One might naively expect the spin-only 1 µB per Cu"
_EXPECT_BEFORE = re.compile(r"\b(?:might|would|could)\s+(?:naively\s+|na[iï]vely\s+|at\s+first\s+)?expect\b[^.;\n]{0,40}$", re.I)
# (w38) what an alternative arrangement would leave: "(antiparallel order would leave just 2 µB per formula unit)"
_WOULD_LEAVE_BEFORE = re.compile(r"\b(?:would|could)\s+(?:then\s+)?(?:leave|produce|result\s+in|end\s+up\s+(?:at|with))\s+"
                                 r"(?:(?:only|just|about|roughly|some|a\s+net(?:\s+of)?|a\s+total(?:\s+of)?)\s+|[~≈]\s*){0,2}$", re.I)
# a Slater–Pauling value the result only comes "close to" is a reference, not the moment
_SP_BEFORE = re.compile(r"\bSlater ?[–-] ?Pauling\b", re.I)
_SP_ONLY_CLOSE = re.compile(r"\b(?:close\s+to|near|approaching|just\s+(?:under|below|above|over)|slightly\s+(?:under|below|above|over)|"
                            r"a\s+(?:little|bit)\s+(?:under|below|above|over|lower\s+than|higher\s+than))\s+(?:the\s+)?Slater ?[–-] ?Pauling\b", re.I)
# "Early reports of ferromagnetic Ni3C (~0.3 µB per Ni) are now put down to unreacted Ni": a value explained away
_EARLY_REPORT_BEFORE = re.compile(r"\b(?:early|earlier|older|initial|first)\s+(?:reports?|claims?|stud(?:y|ies)|papers?|measurements?)\b[^.;\n]{0,80}$", re.I)
_EXPLAINED_AWAY_AFTER = re.compile(r"[^.;\n]{0,40}?\b(?:are|were|is|was|has\s+been|have\s+been)\s+(?:now\s+|since\s+|later\s+)?"
                                   r"(?:put\s+down|attributed|ascribed|traced(?:\s+back)?)\s+to\b", re.I)
# "~1 µB per 13-Ta Star-of-David cluster": a moment per cluster or molecule, which a small cell cannot hold
_PER_CLUSTER_AFTER = re.compile(r"\s*per\s+(?:[\w-]+\s+){0,3}?(?:clusters?|dimers?|trimers?|molecules?|polarons?)\b", re.I)
# "… 0.2 µB per V. That solution is an artefact": the next sentence sets the value aside
_ARTEFACT_NEXT = re.compile(r"[.!]?\s*(?:That|This)\s+(?:solution|state|result|value|moment)\s+(?:is|was)\s+(?:an?\s+)?(?:\w+\s+)?(?:artefact|artifact|spurious)\b", re.I)
_GJJ_NEAR = re.compile(r"\bg_?J\s*[×*]?\s*J\b|\b4f\s+moment\b")
_PM_MOMENT_AFTER = re.compile(r"\s*(?:on|at|for)\b", re.I)
# a symbol is a site only when it is not a variable ("S = 1", "GGA+U"), a count of neighbours ("4 Al neighbours")
# or part of a word
# (w38) a Wyckoff letter between the element and its value: "m(Ni, 3g) ≈ 0.6 µB"
_SITE_GAP = re.compile(r"(?:\s*(?:\d[spdf]\^?\d{1,2}\b|\d{1,2}\b|\d{1,2}[a-l]\b|\([^()]{0,16}\)|\(|\)|[spdf]\^?\d{1,2}\b|(?:high|low)-spin|[|:=≈~]|about|approximately|roughly|around|ca\.?|nearly|only|almost|"
                       r"barely|hardly|weakly|slightly|which|an?\s+(?:small|tiny|weak|modest|large|sizable)|small|tiny|essentially|practically|virtually|"
                       r"unpolari[sz]ed|(?:un|spin-?)?polari[sz]ed|anti-?parallel|parallel|aligned|at|negative|positive|,|"
                       r"alone|sites?|atoms?|ions?|sublattices?|moments?|is|are|was|"
                       r"sits?|lies?|stays?))*\s*", re.I)  # (w38) "Al sits antiparallel at −0.06 µB"
# (w38) the bracketed site may carry its number: "2.31 µB (Mn1)"; a site letter may be hyphenated: "on the B-site Co"
_BASIS_AFTER = re.compile(r"\s*\(\s*(?P<el3>(?![ABC]\d{0,2}\s*\))[A-Z][a-z]?)\d{0,2}\s*\)|\s*(?:\)\s*)?(?:of\s+(?:it|that|this|them|spin)\s+)?(?:(?:(?:that|which)\s+[\w+]+\s+(?:puts|places|finds)\s+)?(?:on|at|for|in|from|(?:is\s+|are\s+)?carried\s+by|(?:is\s+|are\s+)?(?:found|located|locali[sz]ed|sitting|residing)\s+on)\s+(?:the\s+(?:(?:layer|intercalated|apical|equatorial|octahedral|tetrahedral|interstitial|surface|bulk|[A-D](?:-sites?)?)\s+)?|each\s+(?:of\s+the\s+)?|every\s+|both\s+)?(?:(?:two|three|four|five|six|eight|\d{1,2})\s+)?"
                          r"(?:(?P<el>[A-Z][a-z]?)(?:\^?\d?[+-])?\s+(?:sites?|atoms?|ions?|sublattices?)\b|(?P<el2>[A-Z][a-z]?)(?:\^?\d?[+-])?(?=[\s,;.)]|$)"
                          r"|(?:\d+[- ]atom\s+|conventional\s+|primitive\s+|magnetic\s+|unit\s+|whole\s+)*(?:super)?cell\b))")
_PER_ION = re.compile(r"(?:\b(?:it|each|each\s+ion|each\s+one|which)\s+(?:carries|has|bears|holds)|\bgives?\s+(?:it|each)\b|"
                      r"\bspin-only\s*$|\b(?:spin-only|ionic|ordered|local|site)\s+(?:magnetic\s+)?moments?(?:\s+(?:are|is)|\s+(?:is|of|comes?\s+out\s+at|ends?\s+up\s+at|settles?\s+at))?|\bper\s+magnetic\s+(?:ion|atom|site|cation))"
                      rf"{cx.LINK}\s*$|\s*per\s+magnetic\s+(?:ion|atom|site|cation)\b", re.I)
# a moment in brackets after an ion whose clause goes on to sum the terms: "Cr³⁺ (3 µB) antiparallel to Re⁵⁺ (2 µB)
# gives the ionic estimate 1 µB/f.u." (not a relative clause after a comma: "…, which leaves 2 µB", w15)
# "the two Mn sublattices (≈ 2.9 and −2.3 µB) leave 0.6 µB/f.u.": the computed site moments in brackets, not ionic terms
_SITE_LIST_PAREN = re.compile(r"\b(?:sublattices|sites)\s*\([^()\n]{0,40}$", re.I)
_SUM_TERM_AFTER = re.compile(r"[ \t]*\)[^.;\n]{0,50}?\b(?:gives?|giving|yields?|yielding|leaves?|leaving|sums?\s+to|adds?\s+up\s+to|"
                             r"results?\s+in)\b[^.;\n\d]{0,30}\d+(?:\.\d+)?[ \t]*µB")
_CONSEQUENCE = re.compile(r"[,;]\s*(?:and\s+)?(?:so|hence|thus|therefore)\b", re.I)
_PARTIAL_MOMENT = re.compile(r"\b\d?[spdf]\s*(?:-|\s)?(?:shell|electrons?|orbitals?|states?|share|contribution|part)\b|\binterstitial\b|"
                             r"\bsublattice\s+(?:gives|carries|has|contributes|sums?\s+to|totals?)\b|"
                             r"\bsublattice\s+to\s*(?:about\s+|~\s*|≈\s*)?$|"  # (w38) "… sums to 9.6 µB and the Co2 sublattice to −4.9 µB"
                             r"\bconduction electrons\b|\b\d[spdf]/\d[spdf]\b|"
                             # (w38) a shell moment added on top of the calculation: "Adding the localised 4f moment (gJ·J = 7 µB per Gd)"
                             r"\badd(?:ing|ed|s)?\s+(?:in\s+)?(?:the\s+|a\s+|its\s+)?(?:[\w-]+\s+){0,2}?\d[spdf]\s*moments?\b", re.I)
# "7.0 µB from the localised 4f shell": the part of a site moment one shell carries
_PARTIAL_AFTER = re.compile(r"\s*(?:\w+\s+)?(?:from|of|in|on)\s+(?:the\s+)?(?:localis|localiz|itinerant|polaris|polariz)?\w*\s*"
                            r"(?<![A-Za-z])\d?[spdf](?:/\d?[spdf])*\s*(?:-|\s)?(?:shell|electrons?|orbitals?|states?|conduction)\b|"
                            r"\s*(?:spin|orbital)(?:\s+(?:part|contribution|component|moment))?\s*[,;)+]|\s*interstitial\b|"
                            r"\s*from\s+(?:the\s+)?\d[spdf]\b|"
                            # (w38) "0.36 µB resides in the interstitial region"
                            r"\s*(?:sits?|lies?|resides?|remains?|is|are|sitting|residing)\s+in\s+(?:the\s+)?interstitial\b", re.I)
# (w38) the sum over the atomic spheres, short of the total by the interstitial part: "Summing the muffin-tin spheres
# gives 3.62 µB per formula unit"
_SPHERE_SUM = re.compile(r"(?:\b(?:summing|sum\s+(?:of|over)|adding\s+up)\s+(?:the\s+|all\s+)?(?:atomic\s+|muffin[- ]tin\s+|PAW\s+)?spheres\b|"
                         r"\bspheres\s+(?:add\s+up|sum)\b)[^;\n]{0,60}$", re.I)
_IMPURITY = re.compile(r"\bantisite\s+atoms?\b|\bimpurit(?:y|ies)\b|\bdopants?\b|\bdilute\b|\badatoms?\b|\bproximity\b|\bmultilayers?\b", re.I)
_OTHER_PHASE = re.compile(r"\b(?:metastable|hypothetical|excited|higher-energy|competing|rejected)\s+(?:\w+[- ])?"
                          r"(?:FM|AFM|ferro\w*|antiferro\w*|ferri\w*|non-?magnetic|NM|high-spin|low-spin)\s+"
                          r"(?:phase|state|configuration|order\w*|solution)\b", re.I)
_NOT_GROUND = re.compile(r"\b(?:is|was)\s+not\s+the\s+ground\s+state\b|\ban?\s+(?:\w+\s+)?(?:artefact|artifact)(?![\w-])|(?-i:\bI)\s+(?:disregard|discard|ignore)\s+(?:it|this|that|them)\b|"
                         r"\bnot\s+the\s+physical\s+(?:answer|result|solution|state)\b|"
                         r"\bappears?\s+only\s+(?:if|when|under)\b|"
                         r"\b(?:lies|is|sits)\s+(?:\w+\s+){0,2}(?:above|higher\s+than)\s+the\s+(?:[\w-]+\s+){0,3}ground\s+state\b", re.I)
# (w38) "the hexagonal variant would hold about 3 µB/f.u., but that is a different polymorph"; "… ends at 1.0 µB, but
# this is a different, off-stoichiometric composition": the words right after the value give it to another phase
_DIFFERENT_AFTER = re.compile(r"[^.;\d\n]{0,40}?\b(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:an?\s+)?(?:different|distinct|separate)"
                              r"(?:,?\s+[\w-]+){0,2}?,?\s+(?:phase|polymorph|structure|compound|material|composition|state)\b", re.I)
_EACH = re.compile(r"\b(?:each|both|all)\b(?:\s+(?:with|carry|carries|carrying|has|have|having|bear|bears|hold|holds))?"
                   rf"{cx.LINK}\s*$", re.I)
_AND = re.compile(r"\band\b|&", re.I)
_MAGNETIC_ELEMENTS = frozenset("Sc Ti V Cr Mn Fe Co Ni Cu Y Zr Nb Mo Tc Ru Rh Pd Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb U Np Pu".split())


_SUBSCRIPT_SITE = re.compile(r"(?<![A-Za-z])(?:m|µ|M)\s*_\s*$")
_MOMENT_OF_SITE = re.compile(r"(?<![A-Za-z])(?:m|µ|μ|M)\s*\(\s*$")  # "m(Fe) = 1.5 µB"
_TABLE_ROW_SITE = re.compile(r"[ \t]*(?:\|[ \t]*)?([A-Z][a-z]?)(?:\d{0,2}|\^?\d?[+-]|I{1,3}|IV|VI{0,2})(?:[ \t]+\d{1,2}[a-l]\d?)?(?:[ \t]*\([^()|&\n]{0,24}\))?[ \t]*[|&]")
_PHASE_TURN = re.compile(r";|\bbut\b|\bhowever\b|\bwhereas\b|\bwhile\b|\binstead\b", re.I)


#: elements named in words, for the site a moment sits on ("the iron sites carry 2.2 µB")
ELEMENT_NAMES = {"hydrogen": "H", "lithium": "Li", "boron": "B", "carbon": "C", "nitrogen": "N", "oxygen": "O",
                 "fluorine": "F", "sodium": "Na", "aluminium": "Al", "aluminum": "Al", "silicon": "Si", "phosphorus": "P",
                 "sulfur": "S", "sulphur": "S", "chlorine": "Cl", "potassium": "K", "calcium": "Ca", "titanium": "Ti",
                 "vanadium": "V", "chromium": "Cr", "manganese": "Mn", "iron": "Fe", "cobalt": "Co", "nickel": "Ni",
                 "copper": "Cu", "zinc": "Zn", "gallium": "Ga", "germanium": "Ge", "arsenic": "As", "selenium": "Se",
                 "strontium": "Sr", "yttrium": "Y", "zirconium": "Zr", "niobium": "Nb", "molybdenum": "Mo",
                 "ruthenium": "Ru", "rhodium": "Rh", "palladium": "Pd", "silver": "Ag", "tin": "Sn", "antimony": "Sb",
                 "tellurium": "Te", "barium": "Ba", "lanthanum": "La", "cerium": "Ce", "neodymium": "Nd",
                 "samarium": "Sm", "europium": "Eu", "gadolinium": "Gd", "terbium": "Tb", "dysprosium": "Dy",
                 "holmium": "Ho", "erbium": "Er", "hafnium": "Hf", "tungsten": "W", "osmium": "Os", "iridium": "Ir",
                 "platinum": "Pt", "gold": "Au", "bismuth": "Bi", "uranium": "U"}
_ELEMENT_NAME = re.compile(r"(?<![\w-])(" + "|".join(ELEMENT_NAMES) + r")(?![\w-])", re.I)
# an aside opened right after a site moment, still open at the next number
_OPEN_ASIDE = re.compile(r"\s*(?:each|apiece)?\s*\([^()\n]{0,80}")
_RESPECTIVELY_AFTER = re.compile(r"\s*,?\s*respectively\b", re.I)
_SPIN_CANDIDATE_LINE = re.compile(r"[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+(?:\*\*)?(?:low|intermediate|high)[- ]spin\b[^:\n]{0,40}:", re.I)
_ONLY_WITH = re.compile(r"\bonly\s+(?:with|under|for|if|when)\b(?:[^.;\n]|\.(?=\d)){0,80}?\b(?:does|do|did|would|can)\b", re.I)
# "ferromagnetic 95 meV/Fe higher with 2.6 µB per Fe": the moment of a higher-lying state
_HIGHER_WITH = re.compile(r"\bhigher\b[^.;,\d]{0,15}\bwith\s*(?:about\s+|~\s*|≈\s*)?$", re.I)
_IN_FORMULA_AFTER = re.compile(r"\s*(?:per\s+[A-Z][a-z]?\s+|(?:/|per\s+)f\.?u\.?\s+)?in\s+([A-Z][A-Za-z0-9]{1,15})\b")
_MAGNETIC_ANSWER = re.compile(r"\b(?:magnetic|ferro\w*|ferri\w*)\s*(?:[,:;(]|[—–-]|with)\s*(?:about|approximately|~|≈)?\s*$", re.I)
_TABLE_ROW_M = re.compile(r"[ \t]*\|[ \t]*m_?\(?\s*([A-Z][a-z]?)(?![a-z])[^|\n]{0,24}\|")  # "| m(In) | −0.04 µB |", "| m(Co), GGA+U |"
_AVERAGE_SITE_BEFORE = re.compile(r"\b(?-i:([A-Z][a-z]?))\s+(?:atoms?\s+|ions?\s+|sites?\s+)?(?:(?:per|in\s+the)\s+(?:cell|f\.?u\.?|formula\s+unit)\s+)?"
                                  r"(?:at|with|carrying)\s+(?:an?\s+)?(?:average|mean)\s+(?:(?:of|moment\s+of)\s+)?(?:(?:about|roughly)\s+|[~≈]\s*)?$", re.I)
_ROW_BASIS = re.compile(r"[ \t]*(?:\|[^|\n]{0,30}?(?<![A-Za-z])|[A-Za-z]\w{0,30}?_)(?:per[_ \t]+|/[ \t]*)(f\.?u\.?|formula[_ ]unit|atom|cell)(?![A-Za-z])[^,|:\n]{0,10}[,|:]|"
                        # (w38) a LaTeX row labelled the same way: "Net / f.u. & $3.21$ \\"
                        r"[ \t]*[A-Za-z][A-Za-z \t]{0,20}?(?:per[ \t]+|/[ \t]*)(f\.?u\.?|formula[ ]unit|atom|cell)(?![A-Za-z])[^&\n]{0,6}&",
                        re.I)  # a CSV or table row labelled "total_per_fu," or "| net per atom |"
# "it rises to about 2.3 µB at expanded volume": a moment of another lattice
_AT_OTHER_VOLUME = re.compile(r"\s*at\s+(?:an?\s+)?(?:expanded|larger|enlarged|compressed|strained)\s+(?:volume|lattice|cell)\b", re.I)
# "elemental hcp Co (1.6 µB per atom)", "bcc Fe itself has 2.2 µB per atom": the pure element, another material
_ELEMENTAL = re.compile(r"\belemental\b|\b(?:bcc|fcc|hcp|α-)\s*(?:Fe|Co|Ni|Gd|Cr|Mn|iron|cobalt|nickel)\b", re.I)
# (w38) a unitless value labelled with the moment of one element: a column headed "m(Co)", which the text carries into
# the cell as "| AFM | m(Co) = 2.71 |"
_M_OF_ELEMENT_BEFORE = re.compile(r"(?<![A-Za-z])(?-i:[mµ])_?\(\s*([A-Z][a-z]?)(?:\d{1,2}|\^?\d?[+-]|_\w{1,4})?(?:\s*,[^()=\n]{0,12})?\s*\)"
                                  r"(?:\s*\([^()\n]{0,8}\))?\s*[=≈:]\s*$")
# (w38) VASP's OSZICAR field: "F= -.4521E+02 E0= -.4520E+02 mag= 3.9981" is the whole cell's magnetisation
_MAG_FIELD_BEFORE = re.compile(r"(?<![\w-])mag=[ \t]*$")
# (w38) a sentence or bullet opened by its basis, with only arithmetic before the value: "Per formula unit: 15.6 / 2 =
# 7.8 µB", "- per f.u.: 3.4 µB"
_BASIS_OPENER = re.compile(r"\s*(?:[-*•–]\s*)?per[ \t]+(formula[ \t]+unit|f\.?\s?u\.?|atom|cell)[ \t]*[:,][^A-Za-z\n]{0,40}$", re.I)
# (w38) a Slater–Pauling total with no basis is per formula unit: "the Slater–Pauling rule M = Z − 24 = 3 µB holds"
_SP_EQUALS_BEFORE = re.compile(r"\bSlater ?(?:–|--?) ?Pauling\b[^.;\n()]{0,40}=\s*$", re.I)
# (w38) the site values in brackets right after a moment with its unit, themselves without one
_SITE_ASIDE_BEFORE = re.compile(r"µB[^()\n]{0,24}\(\s*(?:[A-Z][a-z]?\d{0,2}\s*[≈=:~]?\s*[-−+]?\d+(?:\.\d+)?(?:\s+each)?\s*[,;]\s*){0,6}"
                                r"(?P<el>[A-Z][a-z]?)\d{0,2}\s*[≈=:~]?\s*$")
# (w38) ions named only by their site, in a compound with one magnetic element: "4.3 µB on the octahedral ions and
# 4.1 µB on the tetrahedral ones" in Mn₃O₄ (not "on the oxygen sites")
_ON_IONS_AFTER = re.compile(r"\s*(?:on|for|at)\s+(?:the\s+|each\s+(?:of\s+the\s+)?|all\s+|both\s+)?(?-i:[a-z][\w-]*\s+){0,2}"
                            r"(?:ions?|cations?|ones|species|sites?|magnetic\s+atoms?)\b", re.I)
# (w38) a total per a cell of another size than the one the question poses: "12.0 µB per conventional 16-atom cubic
# cell" when the computational cell has 4 atoms is neither the posed cell's nor a formula unit's
_CELL_SIZE_AFTER = re.compile(r"\s*(?:per|in|for)\s+(?:the\s+|a\s+|one\s+|each\s+)?(?:conventional\s+|primitive\s+)?(\d{1,4})[- ]atom\b"
                              r"[^.;,\n\d]{0,20}?\b(?:super)?cell\b", re.I)
_POSED_ATOMS = re.compile(r"\b(\d{1,4})\s+atoms\s+in\s+the\s+computational\s+cell\b", re.I)
# (w38) "Both Fe and Co order; the former ends at 2.7 µB and the latter at 1.6 µB": the pair named before
_FORMER_LATTER_BEFORE = re.compile(r"\bthe\s+(former|latter)\b[^.;\d\n]{0,40}$", re.I)
_ELEMENT_PAIR = re.compile(r"(?<![A-Za-z0-9])([A-Z][a-z]?)(?:\^?\d?[+-])?\s*,?\s*(?:and|&)\s+([A-Z][a-z]?)(?:\^?\d?[+-])?(?![A-Za-z0-9])")
# (w38) "per magnetic ion" right after the value, beating a cell named before it: "in the 12-atom cell … 2.7 µB per
# magnetic ion" (with one magnetic element, README w2)
_PER_MAGNETIC_AFTER = re.compile(r"\s*per\s+magnetic\s+(?:ion|atom|site|cation)\b", re.I)
_NET_BARE = re.compile(r"\bnet\s*(?:moment\s*)?(?:[=≈~:]|of|is)\s*$", re.I)  # "net ≈ 0", "Net: 0" (a bare "net 0" restates the class)
# (w38) a JSON/YAML key that names its basis around the unit: "total_moment_cell_muB": 8.0, "net_spin_muB_per_cell: 7.9"
_UNIT_KEY_BEFORE = re.compile(r"[\"']?\b(?P<key>[A-Za-z][A-Za-z_]{0,60}?_(?:µB|mu_?B)(?:_per_[A-Za-z_]{1,20})?|(?:µB|mu_?B)_per_[A-Za-z_]{1,20})"
                              r"[\"']?[ \t]*[:=][ \t]*$")
# (w38) a record of one site that names its element: "- {element: Ni, wyckoff: 3b, m: 0.62}" (the text drops the braces),
# "Co: {spin: 1.62, orbital: 0.14}", "magmom_site_muB": {"Cr": 2.91, "Te": -0.11}
_SITE_RECORD_BEFORE = re.compile(r"\b(?:element|el|species|atom|site)[\"']?[ \t]*:[ \t]*[\"']?(?P<el>[A-Z][a-z]?)\d{0,2}[\"']?"
                                 r"(?:[ \t]*,[ \t]*[\"']?\w{1,20}[\"']?[ \t]*:[ \t]*[\w.\"'-]{1,12}){0,3}[ \t]*,[ \t]*"
                                 r"[\"']?(?:m|mz|m_z|spin|moment|magmom)[\"']?[ \t]*:[ \t]*$|"
                                 r"^[ \t]*[\"']?(?P<el2>[A-Z][a-z]?)\d{0,2}[\"']?[ \t]*:[ \t]*\{?[ \t]*[\"']?(?:m|mz|m_z|spin|moment|magmom)[\"']?[ \t]*:[ \t]*$|"
                                 r"(?:magmom|moments?)\w{0,12}[\"']?[ \t]*:[ \t]*\{?[ \t]*"
                                 r"(?:[\"'][A-Z][a-z]?\d{0,2}[\"'][ \t]*:[ \t]*[-−+]?\d+(?:\.\d+)?[ \t]*,[ \t]*){0,8}"
                                 r"[\"'](?P<el3>[A-Z][a-z]?)\d{0,2}[\"'][ \t]*:[ \t]*$", re.M)
# (w38) also the inverse-power form: "GGA gives 2.96 μ_B f.u.⁻¹", "M = 5.1 µB·f.u.⁻¹" (read "µB f.u.^-1", "µB×f.u.^-1")
# (w38) and "per formula unit" cut off where a small model's chain ends: "… is 4.4 µB per formu"
_FU_AFTER = re.compile(r"\s*per\s+(?:[A-Z][A-Za-z0-9]{1,15}\s+)?(?:formula\s+unit|f\.\s?u\.)|"
                       r"[ \t]*×?[ \t]*f\.?\s?u\.?[ \t]*\^[ \t]*\{?[ \t]*-[ \t]*1(?![\d.])|"
                       r"[ \t]*per[ \t]+form(?:u(?:la?)?)?(?:[ \t]+u(?:n(?:it?)?)?)?[ \t]*$", re.I)
_SITE_LABEL_BEFORE = re.compile(r"\bsites?\s+(?:[IVX]{1,4}|\d{1,2}|[a-h])\s*\(\s*(?:≈|~|about)?\s*$")
_SITE_LABEL_AFTER = re.compile(r"\s*\(\s*(?:M\d|[AB]|site\s+\w{1,4}|\d{1,2}[a-l]|oct\w*|tet\w*)\s*\)")  # "4.4 µB (M1)"
_ION_LINE = re.compile(r"^[ \t]*(?:[-*•]\s*)?(?i:magnetic\s+)?(?i:ion)\s*:\s*([A-Z][a-z]?)(?![a-z])", re.M)
_FOR_OTHER_FORM_AFTER = re.compile(r"[^.;,\n]{0,30}?\b(?:for|in|of)\s+(?:an?\s+|the\s+)?(?:isolated\s+|free-standing\s+|exfoliated\s+)?"
                                   r"(?:monolayers?|bilayers?|few-layers?|nanoribbons?|nanosheets?|thin\s+films?)\b", re.I)
_SUM_OVER_AFTER = re.compile(r"\s*(?:in\s+total\s+)?from\s+(?:the\s+|all\s+)?(?:two|three|four|five|six|seven|eight|nine|ten|twelve|\d{1,2})\s+"
                             r"[A-Z][a-z]?\b|"  # "8 µB from the five Co": a sum over a sublattice
                             # "~0.29 µB of each spin spread over the four Cl ligands": a share summed over several atoms
                             # (w38) also with a verb: "the remaining 0.45 µB is distributed over the four Cl ligands"
                             r"(?:\s+of\s+(?:each|the|every)\s+[\w-]+)?(?:\s+(?:is|are|gets|get))?\s+(?:spread|distributed|shared|smeared)\s+(?:over|among|across|between)\s+(?:the\s+|all\s+)?"
                             r"(?:two|three|four|five|six|seven|eight|nine|ten|twelve|\d{1,2})\s+(?:[A-Z][a-z]?\b|ligands|neighbou?rs)")
_ROW_ION = re.compile(r"\|\s*([A-Z][a-z]?)\^?\d?[+-]\s*\|")
_VERSUS = re.compile(r"\s*(?:\([^()\n]{0,30}\)\s*)?,?\s*(?:versus|vs\.?|compared\s+(?:with|to)|against)\s*(?:about|~|≈)?\s*")
_FORMULA_LABEL = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z0-9]{1,15})\s*:\s*$")
_EACH_AFTER = re.compile(r"\s*(?:each|apiece|on\s+it|on\s+each)\b", re.I)  # "the two Mn, 3.9 µB each", "0.02 µB on it"
_RESPECTIVELY_WORD = re.compile(r"(?=[rR])respectively", re.I)
_RESPECTIVELY_NEAR = re.compile(r"\brespectively\b|[\n;]|\.(?!\d)", re.I)
_SYMBOL_LIST = re.compile(r"(?<![A-Za-z0-9])([A-Z][a-z]?)((?:\s*,\s*[A-Z][a-z]?)*)\s*,?\s*and\s+([A-Z][a-z]?)(?![A-Za-z0-9])")


def _respective_element(scan: Scan, run: Run, n: Number) -> str | None:
    """The element paired with ``n`` by position when a list of elements and a list of moments end in "respectively"."""
    nums, norm = scan.nums, scan.norm
    members = run.cache.get("members")
    if members is None:  # found once per list: every member asks
        members = [run.head]
        i = run.head.index
        while i + 1 < len(nums) and nums[i + 1].run == run.head.run and nums[i + 1].link == "list":
            i += 1
            members.append(nums[i])
        run.cache["members"] = members
    if len(members) < 2 or not _RESPECTIVELY_AFTER.match(norm, members[-1].end):
        return None
    position = n.index - run.head.index
    if not 0 <= position < len(members) or members[position] is not n:
        return None
    symbols = None
    for m in _SYMBOL_LIST.finditer(norm, max(run.s_start, run.head.start - 120), run.head.start):
        symbols = [m.group(1), *re.findall(r"[A-Z][a-z]?", m.group(2)), m.group(3)]
    if symbols is None or len(symbols) != len(members) or not all(el in ELEMENTS for el in symbols):
        return None
    return symbols[position]


_LABEL_VALUE_AFTER = re.compile(r"\s*[:=≈]\s*[-−+]?\d")  # "- B: −0.1 µB", "and B ≈ −0.15 µB": a label, not a word
_LINE_LABEL_BEFORE = re.compile(r"(?:^|\n)[ \t]*(?:[-*•|]\s*)?$|\band\s+$|,\s*$")
# (w38) a CSV row labelled by a symbol that is also a word: "In,4c,-0.02" under "site,wyckoff,m_muB"
_ROW_START_BEFORE = re.compile(r"(?:^|\n)[ \t]*$")
# (w38) a site letter subscripted to an element: "m(Ni_B) = 0.6 µB" is the B site of nickel, not boron
_ELEMENT_SUBSCRIPTED = re.compile(r"(?<![A-Za-z])([A-Z][a-z]?)$")  # "Fe" in "Fe_B" (not the "m" of "m_B")


def _site_element(norm: str, m: "re.Match[str]", symbol: str) -> bool:
    if symbol not in ELEMENTS:
        return False
    start, end = m.start(), m.end()
    before = _ELEMENT_SUBSCRIPTED.search(norm, max(0, start - 4), start - 1) if start > 1 and norm[start - 1] == "_" else None
    if before is not None and before.group(1) in ELEMENTS:
        return False  # (w38) "m(Ni_B) = 0.6 µB": the B site of nickel, not boron (the element before the "_" is the site)
    if symbol in _NOT_ELEMENTS:  # "I", "In", "As": words, unless they are the subscript of a moment ("m_I = −0.1 µB")
        return bool(start > 0 and norm[start - 1] == "_" or _SUBSCRIPT_SITE.search(norm, max(0, start - 6), start)
                    or (_LABEL_VALUE_AFTER.match(norm, end) and _LINE_LABEL_BEFORE.search(norm, max(0, start - 30), start))
                    or (norm.startswith(",", end) and _ROW_START_BEFORE.search(norm, max(0, start - 8), start)))  # (w38) CSV "In,4c,-0.02"
    if start > 0 and norm[start - 1] in "+/":
        return False  # GGA+U, PBE+U
    if symbol in ("K", "T") and re.search(r"\d\s*$", norm[max(0, start - 3):start]):
        return False  # "T_N ≈ 480 K", "in 7 T": a unit, not potassium or tritium
    if norm[max(0, start - 2):start] == "T_":
        return False  # "T_N", "T_C": a transition temperature, not nitrogen or carbon
    if start > 0 and norm[start - 1] == "_" or _SUBSCRIPT_SITE.search(norm, max(0, start - 6), start) \
            or _MOMENT_OF_SITE.search(norm, max(0, start - 6), start):
        return True  # "m_Ni = 0.23 µB", "m_{Ni}", "m(Fe)": the element is the subscript or argument of a moment
    if start > 1 and norm[start - 2].isalpha() and (norm[start - 1] == "(" or (norm[start - 1] == "," and "(" in norm[max(0, start - 8):start])):
        return False  # the site label in "Fe(A,C)" (but not the element column of "4a,Mn,-1.6")
    if re.match(r"\s*=\s*[-+−]?\d", norm[end:end + 8]) or re.match(r"\s+neighbou?rs?\b", norm[end:end + 14]):
        return False  # "S = 1" is a spin, "4 Al neighbours" are not the site
    return True


_LONE_ELEMENT = re.compile(r"\bMaterial:\s*([A-Z][a-z]?)\s*[,(\n]")


def _single_magnetic(scan: Scan) -> str | None:
    asked = getattr(scan, "asked", None)
    if not asked:  # an element asked on its own ("Material: Mn, …") is no formula, but its one magnetic element
        lone = _LONE_ELEMENT.search(getattr(scan, "question_norm", "") or "")
        return lone.group(1) if lone is not None and lone.group(1) in _MAGNETIC_ELEMENTS else None
    magnetic = [e for e, _ in asked if e in _MAGNETIC_ELEMENTS]
    return magnetic[0] if len(magnetic) == 1 else None


# "the Ni moment, started at 2 µB, relaxes to 0.01 µB": the same site's moment after the run
_EVOLVES = re.compile(r"\s*,?\s*(?:and\s+)?(?:then\s+|finally\s+)?(?:relax(?:es|ed)?|converg(?:es|ed)|settl(?:es|ed)|end(?:s|ed)(?:\s+up)?|"
                      r"drops?|dropped|falls?|fell|collapse[sd]?|decay(?:s|ed)?|shrinks?|shrank|grows?|grew|rises?|rose)\s+(?:back\s+)?"
                      r"(?:to|at)\s*(?:about\s+|~\s*|≈\s*)?", re.I)
_IN_TOTAL_AFTER = re.compile(r"[ \t]{1,3}(?:in\s+total|in\s+all|altogether|overall)\b", re.I)
_MOMENT_OF_SYMBOL = re.compile(r"\bmoment\s+(?:of|on)\s+([A-Z][a-z]?)\s*(?:is|=|:|was)\s*(?:about\s+|~\s*|≈\s*)?$")
# a participle or verb between a moment and its site: "induced on Pt", "sits on every Cr", "inside the Mn sphere"
_SITE_VERB_AFTER = re.compile(r"\s*(?:(?:is\s+|are\s+)?(?:induced|spill(?:s|ing)?|leak(?:s|ing)?|sits?|sitting|resides?|residing)\s+(?:on|onto)|"
                              r"(?:inside|within|in)(?=\s+(?:the|each|every)\s+\S+\s+(?:sphere|muffin[- ]tin)))\s+"
                              r"(?:the\s+|each\s+|every\s+|both\s+)?(?:(?P<el>[A-Z][a-z]?)(?![A-Za-z])|(?P<name>(?i:" + "|".join(ELEMENT_NAMES) + r"))s?\b)")
_LIST_JOIN = re.compile(r"\s*(?:,|;|/|&|\band\b|,\s*and\b)\s*", re.I)
_TOTAL_AFTER = re.compile(r"\s*(?:in\s+)?(?:total|net|overall|altogether)\b", re.I)
_PM_MOMENT = re.compile(r"moments?\s*(?:of\s*|[=:]\s*|are\s+|is\s+)?$|(?<![A-Za-z])m\s*(?:\(\s*[A-Z][a-z]?\s*\)\s*)?=\s*$|(?<![A-Za-z])[A-Z][a-z]?\s*[:=]\s*(?:small|tiny|weak|about|roughly)?,?\s*$|"
                        r"\b(?:sulfur|sulphur|oxygen|nitrogen|carbon|iron|cobalt|nickel|manganese|chromium|copper)\s*$|(?<![A-Za-z])[A-Z][a-z]?\d{0,2}\s*(?:\([^()\n]{0,8}\))?\s*[:=]\s*$")  # "- Mn: ±4.52 µB", "V1: ±0.95 µB"


_M_HEADER = re.compile(r"\W*m_?\(?\s*([A-Z][a-z]?)\s*\)?\s*(?:\(\s*(?:µB|muB)\s*\))?\W*$")
_ENERGY_HEADER = re.compile(r"Δ\s*E|(?<![A-Za-z])E(?![A-Za-z_])|\benergy\b", re.I)
_CELL_NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?")


def _losing_row(scan: Scan, pos: int) -> bool:
    """A row of a table of magnetic configurations with an energy column ("| FM | +145 | 3.30 |" beside "| AFM | 0 |
    0.00 |") whose energy is not the lowest: the moments of a state the table itself rejects."""
    norm = scan.norm
    line = cx.line_start(norm, pos)
    if not norm.startswith("|", line):
        return False
    tables = scan.memo.setdefault("config_tables", {})
    top = line
    while top > 0:
        prev = cx.line_start(norm, top - 1)
        if not norm.startswith("|", prev):
            break
        top = prev
    table = tables.get(top)
    if table is None:  # {row start: energy} for the rows of one table, found once per table
        table = tables[top] = {}
        rows, at = [], top
        while at < len(norm) and norm.startswith("|", at):
            end = norm.find("\n", at)
            end = len(norm) if end < 0 else end
            rows.append((at, norm[at:end].strip().strip("|").split("|")))
            at = end + 1
        if len(rows) >= 4 and set(rows[1][1][0].strip()) <= set("-: "):
            column = next((i for i, cell in enumerate(rows[0][1]) if i > 0 and _ENERGY_HEADER.search(cell)
                           and "µB" not in cell and "muB" not in cell), None)
            if column is not None:
                for start, cells in rows[2:]:
                    numbers = _CELL_NUMBER.findall(cells[column]) if column < len(cells) else []
                    if numbers:
                        table[start] = float(numbers[-1].replace("−", "-"))
    if len(table) < 2 or line not in table:
        return False
    return table[line] > min(table.values()) + 1e-9


_CONFIG_LINE = re.compile(r"[ \t]*[-*•]\s*(?:FM|AFM|NM|ferro\w*|antiferro\w*|ferri\w*|non-?magnetic|[A-Z]-type(?:\s+AFM)?)\b[^:\n]{0,20}:"
                          r"[^\n]*\b\d+(?:\.\d+)?\s*m?eV(?:/\S+|\s+per\s+\S+)?\s+(?:higher|above)\b", re.I)


def _losing_line(norm: str, pos: int) -> bool:
    """A bullet of one configuration whose energy the line itself puts higher ("- AFM: 2.80 µB per Mn, 0 µB net, 18
    meV/f.u. higher"): the moments of a state the chain ranks below another."""
    return _CONFIG_LINE.match(norm, cx.line_start(norm, pos)) is not None


class MagnetismReader(_DFTReader):
    family = "magnetism"
    class_kind = "magnetism"
    cues = MAGNETISM

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_MOMENT_LABEL.search(scan.norm, run.lo, run.head.start))

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """"Calculated magnetic moment: 1.0000": a moment without its unit is read per formula unit, as asked; so is a
        bare number right after the magnetic class in the Answer line ("Answer: magnetic, 3")."""
        norm, head = scan.norm, run.head
        if scan.in_answer(head) and _MAGNETIC_ANSWER.search(norm, max(scan.answer[0], head.start - 30), head.start) \
                and not cx.ARITHMETIC_AFTER.match(norm, head.end):
            return "muB/fu"
        if _NET_BARE.search(norm, max(run.s_start, head.start - 20), head.start) and not cx.ARITHMETIC_AFTER.match(norm, head.end):
            return "muB/fu"  # "Answer: non-magnetic (antiferromagnetic, net ≈ 0)", "Net: 0"
        if _MAG_FIELD_BEFORE.search(norm, max(0, head.start - 8), head.start):
            return "muB/cell"  # (w38) VASP's OSZICAR "mag= 3.9981": the magnetisation of the whole cell
        line = max(cx.line_start(norm, head.start), head.start - 200)
        key = _UNIT_KEY_BEFORE.search(norm, line, head.start)
        if key is not None:
            words = set(key.group("key").lower().replace("f_u", "fu").replace("formula_unit", "fu").split("_"))
            basis = next((b for b in ("cell", "fu", "atom") if b in words), None)
            if basis is not None and "site" not in words and ("orbital" not in words or "total" in words):
                return "muB/" + basis  # (w38) "total_moment_cell_muB": 8.0, "net_spin_muB_per_cell: 7.9", "per_fu_muB": 4.0
        record = _SITE_RECORD_BEFORE.search(norm, line, head.start)
        if record is not None:
            el = record.group("el") or record.group("el2") or record.group("el3")
            if el in ELEMENTS:
                return "muB/element:" + el  # (w38) "{element: Ni, m: 0.62}", "Co: {spin: 1.62, …}", "magmom_site_muB": {"Cr": 2.91}
        site = _M_OF_ELEMENT_BEFORE.search(norm, max(run.s_start, head.start - 30), head.start)
        if site is not None and site.group(1) in ELEMENTS:
            return "muB/element:" + site.group(1)  # (w38) a unitless column headed "m(Co)": the text reads "m(Co) = 2.71"
        aside = _SITE_ASIDE_BEFORE.search(norm, max(run.s_start, head.start - 120), head.start)
        if aside is not None and aside.group("el") in ELEMENTS and aside.group("el") not in _NOT_ELEMENTS:
            return "muB/element:" + aside.group("el")  # (w38) "M = 3.02 µB per formula unit (Fe ≈ 2.6, Ni ≈ 0.4 each)"
        label = _MOMENT_LABEL.search(norm, max(run.s_start, head.start - 60), head.start)
        if label and not _OTHER_MOMENT.search(norm, max(run.s_start, head.start - 40), head.start):
            unit = (label.group("unit") or "").lower()  # "moment in µB per formula unit is 0.0"
            return "muB/atom" if "atom" in unit else "muB/cell" if "cell" in unit else "muB/fu"
        return None

    def lane_follows(self, scan: Scan, n: Number, prev: Number) -> bool:
        """As for every DFT family, and the member sits on the same site as the one before ("Fe(oct): 4.02 µB,
        3.60 µB"), unless the list pairs its members with elements "respectively"."""
        if not super().lane_follows(scan, n, prev):
            return False
        respectively = scan.memo.get("respectively")
        if respectively is None:  # looked up once: most chains never say it, and then no member need look
            respectively = scan.memo["respectively"] = _RESPECTIVELY_WORD.search(scan.norm) is not None
        if respectively:
            ahead = _RESPECTIVELY_NEAR.search(scan.norm, n.end, min(len(scan.norm), n.end + 400))
            if ahead is not None and ahead.group().lower() == "respectively":
                return False
        if n.unit != "muB":
            return True  # "µB/f.u.", "µB per Fe": the unit carries its basis
        basis = scan.memo.get(("basis", prev.index))
        if basis is None:
            return False
        scan.memo[("basis", n.index)] = basis
        return True

    def classify(self, scan: Scan, n: Number, run: Run, answer_bare_ok: bool) -> str | tuple[str, float, str]:
        if n.explicit_sign == "±" and n.unit.startswith("muB") and n.link != "pm" and (
                n.unit != "muB" or _PM_MOMENT.search(scan.norm, max(0, n.start - 15), n.start)
                or _PM_MOMENT_AFTER.match(scan.norm, n.end) or _PM_WITH.search(scan.norm, max(0, n.start - 8), n.start)):
            n.reason, n.value = "", abs(n.value)  # "Ni moments ±1.7 µB": antiparallel moments of 1.7, no uncertainty
        if not n.unit and _NOT_A_MOMENT_UNIT.match(scan.norm, n.end):
            return "other_property"  # "92 emu/g": a magnetisation in another unit
        return super().classify(scan, n, run, answer_bare_ok)

    def judge(self, scan: Scan, n: Number, run: Run, unit: str) -> str | tuple[str, float, str]:
        if not unit.startswith("muB") or _PER_VOLUME_AFTER.match(scan.norm, n.end):
            return "other_property"
        if _CONVERSION_AFTER.match(scan.norm, n.end):
            return "other"  # "1 µB = 9.274e-24 J/T": the unit written out in another system, not a moment
        size = _CELL_SIZE_AFTER.match(scan.norm, n.end)
        if size is not None:
            posed = _POSED_ATOMS.search(getattr(scan, "question_norm", "") or "")
            if posed is not None and int(posed.group(1)) != int(size.group(1)):
                return "other"  # (w38) "12.0 µB per conventional 16-atom cell" when the posed cell has 4 atoms: neither basis
        if _losing_row(scan, n.start) or _losing_line(scan.norm, n.start):
            return "other_property"  # a configuration the table's energies reject
        norm, head = scan.norm, run.head
        if _OUTDATED.search(norm, max(run.s_start, head.start - 80), head.start):
            return "negated"  # "Some older reports call CoTe ferromagnetic with 0.9 µB per Co; that is not what GGA gives"
        if _OTHER_MOMENT.search(norm, max(run.s_start, head.start - 40), head.start):
            return "other_property"  # an effective paramagnetic moment, an orbital moment
        if _EARLY_REPORT_BEFORE.search(norm, max(run.s_start, head.start - 100), head.start) and _EXPLAINED_AWAY_AFTER.match(norm, n.end):
            return "negated"
        if _PER_CLUSTER_AFTER.match(norm, n.end) or _ARTEFACT_NEXT.match(norm, run.s_end):
            return "other"
        if _SUM_TERM_AFTER.match(norm, n.end) and not _SITE_LIST_PAREN.search(norm, max(run.s_start, n.start - 60), n.start):
            return "other"  # "Cr³⁺ (3 µB) antiparallel to Re⁵⁺ (2 µB) gives 1 µB/f.u.": the terms of an ionic sum
        if _NOT_REACHED.search(norm, max(run.s_start, n.start - 40), n.start) or _EXPECT_BEFORE.search(norm, max(run.s_start, n.start - 60), n.start) \
                or _WOULD_LEAVE_BEFORE.search(norm, max(run.s_start, n.start - 60), n.start):
            return "other"  # "reduced from the 1 µB spin-only value": a reference the moment does not reach
        if _SP_BEFORE.search(norm, max(run.s_start, n.start - 60), n.start):
            if "sp_close" not in scan.memo:
                scan.memo["sp_close"] = [m.start() for m in _SP_ONLY_CLOSE.finditer(norm)]
            if any(p > n.end for p in scan.memo["sp_close"]):
                return "other"  # "Slater–Pauling gives 1 µB/f.u. … total 1.05 µB/f.u., close to the Slater–Pauling value": a reference only approached
        if _NOT_REACHED_AFTER.match(norm, n.end):
            return "other_property" if _GJJ_NEAR.search(norm, max(run.s_start, n.start - 40), min(run.s_end, n.end + 40)) else "other"
        lo = max(run.s_start, n.start - 50)
        for m in _CONSEQUENCE.finditer(norm, lo, n.start):
            lo = m.end()  # "TiCl3 has one d electron, so it has 1 µB per Ti": the count is the reason, not a part of the moment
        if _PARTIAL_MOMENT.search(norm, lo, n.start) or _PARTIAL_AFTER.match(norm, n.end) \
                or _SUM_OVER_AFTER.match(norm, n.end):
            return "other_property"  # a shell- or orbital-resolved part (the 4f share), an interstitial moment
        prev = scan.nums[n.index - 1] if n.index > 0 else None
        if _SPHERE_SUM.search(norm, max(run.s_start, n.start - 60, prev.end if prev is not None and prev.unit.startswith("muB") else 0), n.start):
            return "other_property"  # "Summing the PAW spheres, 2 × 1.2 + 0.9 = 3.3 µB": the sphere sum, not the total
        if _IMPURITY.search(norm, cx.clause_start(norm, run.s_start, n.start, 80), n.start) \
                or _IMPURITY.search(norm, n.end, min(run.s_end, n.end + 40)):
            return "other_property"  # "dilute Fe impurities polarise a cloud carrying ~10 µB": not the asked crystal's
        s_start, s_end = run.s_start, run.s_end
        phase = None
        for m in _OTHER_PHASE.finditer(norm, max(s_start, n.start - 200), n.start):
            phase = m
        if _SPIN_CANDIDATE_LINE.match(norm, cx.line_start(norm, n.start)) \
                or _ONLY_WITH.search(norm, max(s_start, n.start - 120), n.start):
            return "other"  # "- high spin: 5 µB per Co" among the listed options; "only with U … does … appear, with 1 µB"
        if (phase is not None and not _PHASE_TURN.search(norm, phase.end(), n.start)) \
                or _NOT_GROUND.search(norm, n.end, min(s_end, n.end + 200)) or _AT_OTHER_VOLUME.match(norm, n.end) \
                or _DIFFERENT_AFTER.match(norm, n.end) \
                or _HIGHER_WITH.search(norm, max(s_start, n.start - 40), n.start):
            return "other_property"  # the moments of another magnetic phase (FM FeRh above its transition)
        form = None
        for form in _OTHER_FORM.finditer(norm, max(s_start, n.start - 120), n.start):
            pass
        if ((form is not None and not _CLAUSE_TURN.search(norm, form.end(), n.start)) or _FOR_OTHER_FORM_AFTER.match(norm, n.end)) \
                and not _OTHER_FORM.search(getattr(scan, "question_norm", "")):
            return "other_property"  # "the isolated monolayer is often quoted near 2.8 µB": another form of the crystal
        asked = getattr(scan, "asked", None)
        if asked is not None and len(asked) > 1:
            elemental = _ELEMENTAL.search(norm, max(s_start, n.start - 40), n.start)
            if elemental is not None and ")" not in norm[elemental.end():n.start] and "," not in norm[elemental.end():n.start] \
                    and not _PHASE_TURN.search(norm, elemental.end(), n.start):
                return "other_property"
        other = _IN_FORMULA_AFTER.match(norm, n.end)
        if other is not None and getattr(scan, "asked", None) is not None:
            comp = composition(other.group(1))
            if comp is not None and comp != scan.asked:
                return "other_property"  # "(≈ 0.9 µB per Fe in BaFe₂As₂)": another compound's moment
        if unit == "muB/atom" and "site" in norm[n.num_end:n.end].lower():
            symbol = _single_magnetic(scan)  # "2.85 µB per site" with one magnetic element: that element's site moment
            if symbol is not None:
                return ("magnetic_moment", n.value, "muB/element:" + symbol)
        if unit == "muB/atom" and asked is not None and len(asked) > 1:  # (in elemental Mg, "Mg … per atom" is the material's)
            subject = None  # (w38) "Al is polarised antiparallel at −0.05 µB per atom": per Al atom, not the cell average
            for m in _ION.finditer(norm, cx.clause_start(norm, s_start, n.start, 60), n.start):
                subject = m
            if subject is not None and _site_element(norm, subject, subject.group(1)) \
                    and _SITE_GAP.fullmatch(norm, subject.end(), n.start):
                return ("magnetic_moment", n.value, "muB/element:" + subject.group(1))
        if unit != "muB":
            return ("magnetic_moment", n.value, unit)
        return ("magnetic_moment", n.value, "muB/" + self._basis(scan, run, n))

    @classmethod
    def _basis(cls, scan: Scan, run: Run, n: Number) -> str:
        basis = cls._find_basis(scan, run, n)
        scan.memo[("basis", n.index)] = basis
        return basis

    @staticmethod
    def _find_basis(scan: Scan, run: Run, n: Number) -> str:
        """The basis the words nearest before an unqualified "x µB" name: an element ("each Cr carries", "Fe³⁺ →",
        a site label "Fe(A) −4.0 µB", "Mn1 | +3.72"), the cell, the formula unit or an atom; words right after it
        ("on the Cr sites", "for the 20-atom cell"); a pronoun ("so it carries 2 µB") refers to the ion named
        earlier in the sentence; "net"/"total" or nothing is the calculation's total (per cell)."""
        norm = scan.norm
        if _FU_AFTER.match(norm, n.end):
            return "fu"  # "3.0 µB per ScFe₂ formula unit"
        opener = _BASIS_OPENER.match(norm, run.s_start, n.start)
        if opener is not None:  # (w38) "Per formula unit: 15.6 / 2 = 7.8 µB": the label opening the sentence is the basis
            basis = opener.group(1).lower()
            return basis if basis in ("atom", "cell") else "fu"
        if _SP_EQUALS_BEFORE.search(norm, max(run.s_start, n.start - 60), n.start):
            return "fu"  # (w38) "the Slater–Pauling rule M = Z − 24 = 3 µB": the rule counts per formula unit
        if _PER_MAGNETIC_AFTER.match(norm, n.end) and _single_magnetic(scan) is not None:
            return "element:" + _single_magnetic(scan)  # (w38) "in the 12-atom cell … 2.7 µB per magnetic ion": not the cell's
        ions = _ON_IONS_AFTER.match(norm, n.end)
        if ions is not None and not _ELEMENT_NAME.search(ions.group()) and _single_magnetic(scan) is not None:
            return "element:" + _single_magnetic(scan)  # (w38) "4.3 µB on the octahedral ions" with Mn the one magnetic element
        after = _BASIS_AFTER.match(norm, n.end)
        if after is not None:
            el = after.group("el") or after.group("el2") or after.group("el3")
            if el:
                if el in ELEMENTS and el not in _NOT_ELEMENTS and not (el in ("K", "T") and re.search(r"\d", after.group())):
                    return "element:" + el
            else:
                return "cell"
        which = _FORMER_LATTER_BEFORE.search(norm, max(run.s_start, n.start - 60), n.start)
        if which is not None:  # (w38) "Both Fe and Co order; the former ends at 2.7 µB": the pair named before it
            pair = None
            for pair in _ELEMENT_PAIR.finditer(norm, max(run.s_start, which.start() - 200), which.start()):
                pass
            if pair is not None and pair.group(1) in ELEMENTS and pair.group(2) in ELEMENTS:
                return "element:" + pair.group(1 if which.group(1).lower() == "former" else 2)
        average = _AVERAGE_SITE_BEFORE.search(norm, max(run.s_start, n.start - 60), n.start)
        if average is not None and average.group(1) in ELEMENTS and average.group(1) not in _NOT_ELEMENTS:
            return "element:" + average.group(1)  # "22 Fe per cell at an average 2.24 µB": the mean moment of one Fe
        site = _SITE_VERB_AFTER.match(norm, n.end)
        if site is not None:  # "0.28 µB induced on Pt", "3 µB sits on every Cr", "0.1 µB spilling onto the oxygens"
            el = site.group("el") or ELEMENT_NAMES.get((site.group("name") or "").lower())
            if el in ELEMENTS and el not in _NOT_ELEMENTS:
                return "element:" + el
        total = _IN_TOTAL_AFTER.match(norm, n.end)
        if total is not None and not _EACH_AFTER.match(norm, total.end()):
            return "fu" if _FU_AFTER.match(norm, total.end()) else "cell"  # "the two V align, 4 µB in total": the cell's total
        label = _FORMULA_LABEL.search(norm, max(0, n.start - 24), n.start)
        if label is not None and getattr(scan, "asked", None) is not None and composition(label.group(1)) == scan.asked:
            return "fu"  # "3. Ni3Fe: 4.71 µB": a row labelled with the asked formula is one formula unit's moment
        prev = scan.nums[n.index - 1] if n.index > 0 else None
        if prev is not None and prev.unit.startswith("muB") and _VERSUS.fullmatch(norm, prev.end, n.start):
            inherited = prev.unit[4:] if prev.unit != "muB" else scan.memo.get(("basis", prev.index))
            if inherited:
                return inherited  # "about 1.9 µB per Fe versus 0.36 µB from neutron diffraction": the same site
        paired = _respective_element(scan, run, n)
        if paired is not None:
            return "element:" + paired  # "Fe and Co carry about 2.75 and 1.75 µB respectively"
        line = cx.line_start(norm, n.start)
        ion = _ROW_ION.search(norm, line, n.start) if norm.startswith("|", line) else None
        if ion is not None and ion.group(1) in ELEMENTS:
            return "element:" + ion.group(1)  # "| B (16d) | Mn³⁺ | +3.8 |": the ion column names the site's element
        row = _TABLE_ROW_SITE.match(norm, line)
        if row is not None and row.end() <= n.start and row.group(1) in ELEMENTS and row.group(1) not in ("A", "No"):
            return "element:" + row.group(1)  # a table row labelled by its site: "| Co | 1.02 |", "| Fe(A) | −4.0 |"
        row = _TABLE_ROW_M.match(norm, line)
        if row is not None and row.end() <= n.start and row.group(1) in ELEMENTS:
            return "element:" + row.group(1)  # "| m(In) | −0.04 µB |": the moment of In, whatever the word "In" means elsewhere
        header = _column_header(scan, n.start) if norm.startswith("|", line) else None
        column = _M_HEADER.match(header) if header else None
        if column is not None and column.group(1) in ELEMENTS:
            return "element:" + column.group(1)  # a column headed "m(Fe)": "| stripe | 2.0 µB |"
        row = _ROW_BASIS.match(norm, line)
        if row is not None and row.end() <= n.start:
            basis = (row.group(1) or row.group(2)).lower()
            return basis if basis in ("atom", "cell") else "fu"
        lo = max(run.s_start, n.start - 60)
        prev = scan.nums[n.index - 1] if n.index > 0 else None
        if prev is not None and prev.unit == "muB" and _LIST_JOIN.fullmatch(norm, prev.end, n.start) \
                and not _TOTAL_AFTER.match(norm, n.end):
            inherited = scan.memo.get(("basis", prev.index))
            if inherited is not None:
                return inherited  # "Fe(oct): +4.02 µB and +3.60 µB": the next member of a list of one site's moments
        if prev is not None and prev.unit.startswith("muB") and prev.end > lo and not _EVOLVES.fullmatch(norm, prev.end, n.start):
            lo = prev.end  # "Fe carries 3.7 µB and Mo −0.3 µB": the words after the previous moment are this one's
        named = _MOMENT_OF_SYMBOL.search(norm, lo, n.start)
        asked = getattr(scan, "asked", None)
        if named is not None and asked is not None and named.group(1) in {e for e, _ in asked}:
            return "element:" + named.group(1)  # "The magnetic moment of B is 0.5 µB" in CrB: boron, not a B site
        found: list[tuple[int, str]] = []
        for m in _ION.finditer(norm, lo, n.start):
            symbol = m.group(1)
            if _site_element(norm, m, symbol) and (_MOMENT_WORDS.search(norm, m.end(), n.start)
                                                   or _SITE_GAP.fullmatch(norm, m.end(), n.start)):
                found.append((m.start(), "element:" + symbol))
        for m in _ELEMENT_NAME.finditer(norm, lo, n.start):  # "nitrogen is almost unpolarised (0.02 µB)"
            if _MOMENT_WORDS.search(norm, m.end(), n.start) or _SITE_GAP.fullmatch(norm, m.end(), n.start):
                found.append((m.start(), "element:" + ELEMENT_NAMES[m.group(1).lower()]))
        c_start = cx.clause_start(norm, run.s_start, n.start, 60)
        bases: list[tuple[int, str]] = []
        for pattern, basis in ((_ATOM_BEFORE, "atom"), (_FU_BEFORE, "fu"), (_CELL_BEFORE, "cell")):
            for m in pattern.finditer(norm, max(c_start, lo), n.start):
                bases.append((m.start(), basis))
        found.extend(bases)
        for m in _NET.finditer(norm, max(c_start, lo), n.start):
            # "net"/"total" is the calculation's total, in the basis named before it ("per formula unit the net moment";
            # "the cell (2 Cr) carries M = 6.0 µB", where the Cr between is not the site)
            named = [b for b in bases if b[0] < m.start()]
            found.append((m.start(), max(named)[1] if named else "cell"))
        if _EACH_AFTER.match(norm, n.end):
            # "the two Mn²⁺ in the cell hold 4.57 µB apiece", "8 Fe³⁺ up, 4 down, 5 µB each": the nearest site named
            sites = [f for f in found if f[1].startswith("element:")]
            sites += [(m.start(), "element:" + m.group(1)) for m in _ION.finditer(norm, lo, n.start)
                      if _site_element(norm, m, m.group(1))]
            if sites:
                return max(sites)[1]
        if found:
            return max(found)[1]
        if prev is not None and prev.unit.startswith("muB") and _OPEN_ASIDE.fullmatch(norm, prev.end, n.start):
            inherited = prev.unit[4:] if prev.unit != "muB" else scan.memo.get(("basis", prev.index))
            if inherited is not None and inherited.startswith("element:"):
                return inherited  # "Each Mn carries about 3.0 µB (neutron diffraction; GGA gives 3.2 µB)": the same site
        each = _EACH.search(norm, max(run.s_start, n.start - 30), n.start)
        if each is not None and each.start() - run.s_start <= 3:
            prev_sentence = scan.sentences.previous(n.start)
            if prev_sentence is not None:  # "Co²⁺ sits on A and Cr³⁺ on B. Both carry 3 µB.": the first ion (finish adds the rest)
                for m in _ION.finditer(norm, *prev_sentence):
                    if _site_element(norm, m, m.group(1)):
                        return "element:" + m.group(1)
        if _PER_ION.search(norm, max(run.s_start, n.start - 40), n.start) or _PER_ION.match(norm, n.end) \
                or _EACH_AFTER.match(norm, n.end):
            # "it carries 2 µB", "the spin-only moment is 4 µB", "3.7 µB per magnetic ion": the ion named earlier
            symbol = None
            for m in _ION.finditer(norm, max(run.s_start, n.start - 200), n.start):
                if _site_element(norm, m, m.group(1)):
                    symbol = m.group(1)
            if symbol is None:
                symbol = _single_magnetic(scan)
            if symbol is None and _ION_LINE.search(norm, max(0, run.s_start - 120), run.s_start):
                symbol = _ION_LINE.search(norm, max(0, run.s_start - 120), run.s_start).group(1)  # "ion: Co2+" a line above
            if symbol is not None:
                return "element:" + symbol
        if _SITE_LABEL_BEFORE.search(norm, max(run.s_start, n.start - 20), n.start) or _SITE_LABEL_AFTER.match(norm, n.end):
            symbol = _single_magnetic(scan)  # "site I (≈2.8 µB)" of α-Mn: a site of the one magnetic element
            if symbol is not None:
                return "element:" + symbol
        return "cell"

    def finish(self, scan: Scan, extraction: Extraction) -> None:
        """"Mn²⁺ and Fe³⁺ are both d⁵, each with 5 µB": "each" over a list of ions gives the moment to every one."""
        norm = scan.norm
        added = []
        have = {(c.kind, c.value, c.unit) for c in extraction.claims}
        for n in scan.nums:
            if not n.unit.startswith("muB") or n.unit != "muB":
                continue
            s_start, _ = scan.sentences.bounds(n.start)
            each = _EACH.search(norm, max(s_start, n.start - 30), n.start)
            if each is None:
                continue
            lead = s_start
            if each.start() - s_start <= 3:  # "Both carry 3 µB." after a sentence that names the two ions
                prev = scan.sentences.previous(n.start)
                lead = prev[0] if prev is not None else s_start
            head = norm[max(lead, n.start - 200):each.start()]
            symbols = []
            for m in _ION.finditer(head):
                if _site_element(head, m, m.group(1)) and m.group(1) not in symbols:
                    symbols.append(m.group(1))
            if len(symbols) < 2 or not _AND.search(head):
                continue
            claims = [c for c in extraction.claims if c.kind == "magnetic_moment" and c.value == n.value
                      and c.unit.startswith("muB/element:") and scan.text.span(n.start, n.end)[0] == c.span[0]]
            if not claims:
                continue
            for symbol in symbols:
                key = ("magnetic_moment", n.value, "muB/element:" + symbol)
                if key not in have:
                    have.add(key)
                    added.append(Claim(*key, claims[0].span, claims[0].text))
        extraction.claims.extend(added)
        super().finish(scan, extraction)

    def class_from_magnitudes(self, scan: Scan, claims: list[Claim]) -> Claim | None:
        net = [c for c in claims if c.kind == "magnetic_moment" and not c.unit.startswith("muB/element:")]
        chosen = _chosen(scan, net)
        if chosen is None:
            return None
        return Claim("magnetism", "nonmagnetic" if float(chosen.value) == 0 else "magnetic", "", chosen.span, chosen.text)


def stability_claims(chain: str, item: Any = None) -> list[Claim]:
    return StabilityReader().read(chain, item).claims


def metallicity_claims(chain: str, item: Any = None) -> list[Claim]:
    return MetallicityReader().read(chain, item).claims


def magnetism_claims(chain: str, item: Any = None) -> list[Claim]:
    return MagnetismReader().read(chain, item).claims
