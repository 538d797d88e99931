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

import re
from collections import Counter
from functools import lru_cache
from math import gcd
from typing import Any

from matpcr.records import Claim, Extraction
from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.numbers import ELEMENTS, Number
from matpcr_plugins.claims.reader import QuantityReader, Run, Scan, Template
from matpcr_plugins.claims.text import normalize

HEDGE = re.compile(r"\b(?:may|might|could|possibly|perhaps|maybe|either|i guess|uncertain|unclear|not sure|unsure|"
                   r"cannot (?:be )?determined?|can't (?:be )?determined?|cannot tell|can't tell|cannot say|can't say|"
                   r"hard to say|difficult to say|unknown|undetermined|not certain|no idea)\b", re.I)
_NON_COMMITTAL = re.compile(r"^\W*(?:uncertain|unsure|not sure|unknown|undetermined|cannot (?:be )?determined?|"
                            r"can't (?:be )?determined?|cannot tell|can't tell|cannot say|no idea|n/?a|none)\b", re.I)
_WOULD = re.compile(r"\bwould\s+(?:be|give|have|carry|yield|lie|sit)\b", re.I)
_NEGATOR = re.compile(r"(?:\bnot\b|n't\b|\bnever\b|\bno longer\b|\bneither\b|\bnor\b|\bfar from\b)(?:\s+(?:\w+\s+){0,2})?$", re.I)
_NEG_BLOCK = re.compile(r"\bbut\b|\bhowever\b|[,;:]|\bonly\b|\bjust\b", re.I)
_YES_NO = re.compile(r"\W*(yes|no)\b\s*(?:[.,;:!)(—–-]|$)", re.I)
_RELATIVE = re.compile(r"\b(?:which|that)\s+(?:is|are)\s+(?:an?\s+)?$", re.I)


class _ClassCue:
    """Class words of one family: ``(pattern, class)`` pairs tried in order at each position (negated forms and
    longer phrases first), how a negation flips each class, and what "yes"/"no" answer."""

    def __init__(self, cues: list[tuple[str, str]], flip: dict[str, str | None], yes: str | None, no: str | None,
                 answer_only: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
        self.pattern = re.compile("|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(cues)), re.I)
        self.groups = [name for _, name in cues]
        both = list(answer_only) + cues
        self.answer_pattern = re.compile("|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(both)), re.I)
        self.answer_groups = [name for _, name in both]
        self.flip = flip
        self.yes, self.no = yes, no

    def find(self, text: str, lo: int, hi: int, answer: bool) -> list[tuple[int, int, str]]:
        pattern, groups = (self.answer_pattern, self.answer_groups) if answer else (self.pattern, self.groups)
        out = []
        if answer:
            m = _YES_NO.match(text, lo, hi)
            if m:
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
      r"\bthermodynamically\s+unfavou?rable\b|\bphase[- ]separat\w+", "unstable"),
     (rf"\bmetastab\w+|\bnear[- ]hull\b|\bnear\s+the\s+{_HULL}|\bclose\s+to\s+the\s+{_HULL}|\b(?:slightly|just)\s+above\s+the\s+{_HULL}",
      "metastable"),
     (rf"\b(?:thermodynamically|energetically)\s+stable\b|\bstable\b|\b(?:on|at)\s+the\s+{_HULL}|"
      r"\bground[- ]state\s+(?:phase|structure|compound)\b", "stable"),
     (rf"\babove\s+the\s+{_HULL}", "unstable")],
    {"stable": "unstable", "unstable": "stable", "metastable": None}, "stable", "unstable")
METALLICITY = _ClassCue(
    [(r"\bnon-?metal(?:lic)?\b|\binsulat\w+|\bsemi-?conduct\w+|\bgapped\b|\bwide[- ]gap\b", "gapped"),
     (r"\bsemi-?metal(?:lic)?\b|\bhalf-?metal(?:lic)?\b|\bmetal(?:lic)?\b|\bzero[- ](?:band[- ]?)?gap\b|\bgapless\b|"
      r"\bno\s+(?:\w+\s+)?(?:band[- ]?)?gap\b|\bconductor\b|\bconducting\b|\bconducts\b", "metallic"),
     (r"\b(?:has|have|having|possesses|opens?)\s+an?\s+(?:(?:finite|non-?zero|sizable|sizeable|clear|direct|indirect|"
      r"wide|small|large|moderate|narrow)\s+)?(?:band[- ]?)?gap\b(?!\s*(?:of|=|:|≈|~|\())", "gapped")],
    {"metallic": "gapped", "gapped": "metallic"}, None, None)  # "yes" to "metallic or gapped?" says neither
MAGNETISM = _ClassCue(
    [(r"\bnon-?magnetic\b|\bdiamagnetic\b|\bparamagnetic\b|\bantiferromagnet\w*|\bno\s+(?:net\s+)?(?:magnetic\s+)?"
      r"(?:moment|magneti[sz]ation)\b|\bzero\s+(?:net\s+)?(?:magnetic\s+)?(?:moment|magneti[sz]ation)\b|\bunpolari[sz]ed\b|"
      r"\b(?:moments?|spins?)\s+(?:\w+\s+)?(?:cancel|compensate)\w*|\bfully\s+compensated\b|\bspin[- ]paired\b|"
      r"\bnet\s+moment\s+vanishes\b|\bnot\s+(?:\w+\s+)?magnetic\b", "nonmagnetic"),
     (r"\bferromagnet\w*|\bferrimagnet\w*|\bmagnetically\s+ordered\b|\b(?:is|are|be|being)\s+(?:(?!not\b)\w+\s+)?magnetic\b|"
      r"\bmagnetic\s+(?:ground\s+state|order(?:ing)?)\b", "magnetic")],
    {"magnetic": "nonmagnetic", "nonmagnetic": "magnetic"}, "magnetic", "nonmagnetic",
    [(r"\bmagnetic\b", "magnetic")])

# -- the asked material ------------------------------------------------------------------------------
_FORMULA = re.compile(r"(?<![A-Za-z0-9])((?:[A-Z][a-z]?\d*(?:\.\d+)?){1,8})(?![A-Za-z0-9])")
_ELEMENT_GROUP = re.compile(r"([A-Z][a-z]?)(\d*(?:\.\d+)?)")


@lru_cache(maxsize=8192)
def composition(token: str) -> tuple[tuple[str, float], ...] | None:
    """A formula token's reduced composition, or None if it is not a formula (PBE, BCC, a lone element)."""
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


def other_material(scan: Scan, run: Run, n: Number) -> bool:
    """Whether the nearest formula before the number in its sentence names a different material."""
    asked = getattr(scan, "asked", None)
    if asked is None:
        return False
    last = None
    for m in _FORMULA.finditer(scan.norm, max(run.s_start, run.head.start - 100), run.head.start):
        comp = composition(m.group(1))
        if comp is not None:
            last = comp
    return last is not None and last != asked


# -- class statements ----------------------------------------------------------------------------
def _committed_class(scan: Scan, cues: _ClassCue) -> tuple[str, tuple[int, int]] | str | None:
    """The class the model commits to with its span in the normalised text; "hedged" when the commitment is
    a hedge; None when no statement names a class."""
    norm = scan.norm
    found: list[tuple[int, int, str]] = []
    is_answer = False
    lo = hi = 0
    if scan.answer is not None:
        lo, hi = scan.answer
        found = cues.find(norm, lo, hi, True)
        is_answer = bool(found)
        if not found and _NON_COMMITTAL.match(norm[lo:hi]):
            return "hedged"
    if not found:
        question = getattr(scan, "question_norm", "")
        hits = [h for h in cues.find(norm, 0, len(norm), False) if not _echoes_question(scan, h[0], question)
                and not _RELATIVE.search(norm, max(0, h[0] - 20), h[0])]
        if not hits:
            return None
        lo, hi = scan.sentences.bounds(hits[-1][0])
        found = [h for h in hits if lo <= h[0] < hi]
    classes = []
    for start, end, name in found:
        if _RELATIVE.search(norm, max(lo, start - 20), start):
            continue  # "a band gap of 1.0, which is a non-metal element": not said of the material
        before = norm[max(lo, start - 30):start]
        neg = _NEGATOR.search(before)
        if neg and not _NEG_BLOCK.search(before, neg.start()):
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
    if len(names) == 1 or is_answer:
        return classes[0]
    if names == {"metastable", "unstable"}:  # "metastable; it decomposes into ...": the more specific statement
        return next(c for c in classes if c[0] == "metastable")
    return classes[-1]


def _echoes_question(scan: Scan, pos: int, question: str) -> bool:
    """A sentence copied from the question ("is X metallic (zero band gap) or ...?") commits to nothing."""
    if not question:
        return False
    lo, hi = scan.sentences.bounds(pos)
    sentence = scan.norm[lo:hi].strip()
    if sentence.endswith("?"):
        return True  # a question, not a commitment
    if len(sentence) < 24 or not _ALTERNATIVE.search(sentence):
        return False  # "X is thermodynamically stable, i.e. on or within ..." restates the question as an assertion
    # the question's alternative copied out ("X is metallic (zero band gap) or does it have a band gap.")
    return any(sentence[i:i + 24] in question for i in range(0, len(sentence) - 23, 6))


_ALTERNATIVE = re.compile(r"\bor\s+(?:does|do|is|are|has|have|not)\b|\bwhether\b", re.I)
_MAGNITUDE_BEFORE = re.compile(r"\d\s*(?:m?eV(?:\s*(?:/|per)\s*(?:atom|f\.?u\.?|formula unit))?)?\s*\)?\s*$")


def _magnitude_phrase(norm: str, start: int, end: int, name: str) -> bool:
    """"0.03 eV/atom above the hull" is a magnitude, not an "unstable" class statement."""
    if name in ("unstable", "metastable") and re.match(r"\s*(?:(?:slightly|just)\s+)?above", norm[start:end], re.I):
        return bool(_MAGNITUDE_BEFORE.search(norm, max(0, start - 30), start))
    return False


@lru_cache(maxsize=4096)
def _question_counts(question: str) -> frozenset[float]:
    """Integers the question states (atom counts, space-group numbers)."""
    return frozenset(float(m.group(0)) for m in re.finditer(r"(?<![\w.])\d{2,4}(?![\w.])", question))


class _DFTReader(QuantityReader):
    """Magnitudes are judged number by number (the words right after one matter: "0.03 eV/atom above the hull")."""

    cues: _ClassCue
    class_kind = ""
    magnitude_kind = ""
    fast_lane = False
    echo_first = True
    answer_echo = True  # "Answer: stable (within 0.05 eV/atom)" restates the question's threshold
    #: cues that make a number a calculation setting (cutoff energy, Hubbard U, smearing)
    setting = re.compile(r"(?:\bcut-?off\b|\bENCUT\b|\bU\s*(?:_\w+)?\s*=|\bU_?eff\b|\bHubbard\b|\bsmearing\b|\bk-?(?:point|mesh|grid)s?\b)"
                         rf"[^.\n]{{0,20}}{cx.LINK}\s*$", re.I)

    def read(self, chain: str, item: Any = None) -> Extraction:
        return super().read(chain, item)

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

    def apply(self, scan: Scan, n: Number, run: Run, template: Template) -> str | tuple[str, float, str]:
        assert not isinstance(template, str)
        if run.reason:
            return run.reason
        if _WOULD.search(scan.norm, cx.clause_start(scan.norm, run.s_start, run.head.start, 60), run.head.start):
            return "other"  # "in the ferromagnetic state the moment would be 10 µB": a state the chain rejects
        if self.setting.search(scan.norm, run.lo, run.head.start):
            return "instrument_setting"
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


# -- stability -----------------------------------------------------------------------------------
_HULL_WORDS = re.compile(r"hull|above|higher|ground state|metastab|E_?\s*\{?\s*hull|distance|lower in energy|less stable", re.I)
_HULL_LABEL = re.compile(r"(?:E_?\s*\{?\s*hull\}?|E_?above_?hull|energy above (?:the )?(?:convex )?hull|hull energy|"
                         rf"(?:distance|height) (?:from|to|above) (?:the )?(?:convex )?hull|above[- ]hull|ΔE_?hull|hull distance){cx.LINK}\s*$", re.I)
_OTHER_ENERGY = re.compile(r"formation|ΔH|(?<![A-Za-z])E_?f\b|enthalp|cohesive|decompos|reaction|binding|total energy|"
                           r"lattice energy|band ?gap|\bgap\b|(?<![A-Za-z])E_?g\b|work function|fermi|per bond|activation|"
                           r"barrier|adsorption|chemical potential|ΔE_?d\b|(?<![A-Za-z])E_?d\b|ΔE_?r\b|exchange|dynamically|"
                           r"phonon|polymorph", re.I)
_HULL_AFTER = re.compile(r"\s*(?:\([^()]{0,20}\)\s*)?(?:(?:above|from|off|over|to)\s+(?:the\s+)?(?:convex\s+)?hull|"
                         r"(?:of\s+)?E_?hull)", re.I)


class StabilityReader(_DFTReader):
    family = "stability"
    class_kind = "stability"
    cues = STABILITY

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_HULL_LABEL.search(scan.norm, run.lo, run.head.start))

    def judge(self, scan: Scan, n: Number, run: Run, unit: str) -> str | tuple[str, float, str]:
        if unit not in ("eV", "meV", "eV/atom", "meV/atom", "eV/fu", "meV/fu"):
            return "other_property"
        norm, head = scan.norm, run.head
        c_start = cx.clause_start(norm, run.s_start, head.start, 60)
        other = None
        for m in _OTHER_ENERGY.finditer(norm, max(run.s_start, head.start - 60), head.start):
            other = m
        label = _HULL_LABEL.search(norm, run.lo, head.start) or _HULL_AFTER.match(norm, n.end)
        if other is not None and not label and other.start() >= c_start - 40:
            return "other_property"  # a formation, reaction or decomposition energy
        if not label and not _HULL_WORDS.search(norm, max(run.s_start, head.start - 100), min(run.s_end, n.end + 60)):
            return "other"  # an energy per atom that is not said to be a distance to the hull
        value = n.value / 1000.0 if unit.startswith("meV") else n.value
        return ("e_above_hull", round(value, 9), "eV/fu" if unit.endswith("/fu") else "eV/atom")


# -- metallicity ---------------------------------------------------------------------------------
_GAP_LABEL = re.compile(rf"(?:band[- ]?gap|\bgap|E_?\s*\{{?\s*g(?:ap)?\}}?|\bEg)(?:\s*\([^()]{{0,12}}\))?{cx.LINK}\s*$", re.I)
_OTHER_EV = re.compile(r"formation|ΔH|enthalp|cohesive|E_?\s*hull|\bhull\b|decomposition|binding|total energy|work function|"
                       r"fermi|E_?F\b|exchange|splitting|bandwidth|band width|activation|barrier|plasma|phonon|ionization|"
                       r"affinity|crystal field|spin-orbit|anisotropy|VBM|CBM|valence band|conduction band|band edge|"
                       r"relative to|overlap|density", re.I)
# a gap, but not the material's: a spin channel of a half-metal, another phase
_OTHER_GAP = re.compile(r"minority|majority|spin channel|spin-up|spin-down|\bphase\b|polymorph", re.I)
_EDGE_AFTER = re.compile(r"\s*(?:below|above|under|from)\s+(?:the\s+)?(?:conduction|valence|fermi|CBM|VBM|E_?F\b|band edge)", re.I)
_DIRECT = re.compile(r"(?<!in)direct\s+(?:band[- ]?)?gap|gap at Γ", re.I)
_INDIRECT = re.compile(r"\bindirect", re.I)
_SETTING_AFTER = re.compile(r"\s*(?:plane-wave\s+|kinetic[- ]energy\s+)?(?:cut-?off|ENCUT|smearing)\b", re.I)


class MetallicityReader(_DFTReader):
    family = "metallicity"
    class_kind = "metallicity"
    cues = METALLICITY

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_GAP_LABEL.search(scan.norm, run.lo, run.head.start))

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """"a band gap of 1.0000e+00": a gap stated without its unit is read in eV, the unit the question asks for."""
        return "eV" if _GAP_LABEL.search(scan.norm, max(run.s_start, run.head.start - 40), run.head.start) else None

    def judge(self, scan: Scan, n: Number, run: Run, unit: str) -> str | tuple[str, float, str]:
        if unit not in ("eV", "meV"):
            return "other_property"  # per atom / per formula unit energies are never a gap
        norm, head = scan.norm, run.head
        c_start = cx.clause_start(norm, run.s_start, head.start, 60)
        label = _GAP_LABEL.search(norm, max(run.s_start, head.start - 40), head.start)
        if _SETTING_AFTER.match(norm, n.end):
            return "instrument_setting"  # "a 520 eV cutoff"
        if _EDGE_AFTER.match(norm, n.end):
            return "other_property"  # "0.2 eV below the conduction band": a band-edge energy
        if _OTHER_GAP.search(norm, max(c_start, head.start - 50), head.start):
            return "other_property"  # a minority-spin gap of a half-metal, the gap of another phase
        if _DIRECT.search(norm, max(c_start, head.start - 50), head.start) and _INDIRECT.search(norm):
            return "other_property"  # the direct gap at Γ of an indirect-gap material
        other = None
        for m in _OTHER_EV.finditer(norm, max(c_start, head.start - 50), head.start):
            other = m
        if other is not None and not (label and label.start() > other.start()):
            return "other_property"  # formation energy, band edges
        value = n.value / 1000.0 if unit == "meV" else n.value
        return ("band_gap", round(value, 9), "eV")

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
_ION = re.compile(r"(?<![A-Za-z0-9])([A-Z][a-z]?)(?:\^?\d?[+-](?!\d)|(?![a-zA-Z0-9]))")
_NOT_ELEMENTS = frozenset({"I", "In", "As", "At", "Be", "He", "No", "Am", "A", "B"})
_MOMENT_WORDS = re.compile(r"moments?|carr(?:y|ies)|→|->|has|have|gives?|holds?|bears?|with|:|=|spin|contribut\w*|"
                           r"each|local|site", re.I)
_MOMENT_LABEL = re.compile(rf"(?:magnetic\s+moment|moment|magneti[sz]ation|\bM\b|\bm\b)(?:\s*\([^()]{{0,12}}\))?{cx.LINK}\s*$",
                           re.I)
_CELL_BEFORE = re.compile(r"\bcell\b|\bsupercell\b|\bper\s+cell\b|\bcalculation\b", re.I)
_FU_BEFORE = re.compile(r"\bper\s+formula\s+unit\b|\bper\s+f\.?u\.?|\bformula\s+unit\b", re.I)
_ATOM_BEFORE = re.compile(r"\bper\s+(?:atom|site)\b", re.I)
_OTHER_MOMENT = re.compile(r"effective|paramagnetic moment|μ_?eff|µ_?eff|mu_?eff|Curie|orbital moment", re.I)
_IN_BRACKETS = re.compile(r"\(\s*\d*\s*$")
_NET = re.compile(r"\bnet\b|\btotal\b|\bM\s*=", re.I)
_NOT_A_MOMENT_UNIT = re.compile(r"[ \t]*(?:emu|J\s*/\s*T|A\s*/\s*m|Oe|kA)", re.I)
_PM_MOMENT = re.compile(r"moments?\s*(?:of\s*)?$", re.I)


class MagnetismReader(_DFTReader):
    family = "magnetism"
    class_kind = "magnetism"
    cues = MAGNETISM

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_MOMENT_LABEL.search(scan.norm, run.lo, run.head.start))

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """"Calculated magnetic moment: 1.0000": a moment without its unit is read per formula unit, as asked."""
        norm, head = scan.norm, run.head
        if _MOMENT_LABEL.search(norm, max(run.s_start, head.start - 40), head.start) \
                and not _OTHER_MOMENT.search(norm, max(run.s_start, head.start - 40), head.start):
            return "muB/fu"
        return None

    def classify(self, scan: Scan, n: Number, run: Run, answer_bare_ok: bool) -> str | tuple[str, float, str]:
        if n.explicit_sign == "±" and n.unit.startswith("muB") and _PM_MOMENT.search(scan.norm, max(0, n.start - 15), n.start):
            n.reason, n.value = "", abs(n.value)  # "Ni moments ±1.7 µB": antiparallel moments of 1.7, no uncertainty
        if not n.unit and _NOT_A_MOMENT_UNIT.match(scan.norm, n.end):
            return "other_property"  # "92 emu/g": a magnetisation in another unit
        return super().classify(scan, n, run, answer_bare_ok)

    def judge(self, scan: Scan, n: Number, run: Run, unit: str) -> str | tuple[str, float, str]:
        if not unit.startswith("muB"):
            return "other_property"
        norm, head = scan.norm, run.head
        if _OTHER_MOMENT.search(norm, max(run.s_start, head.start - 40), head.start):
            return "other_property"  # an effective paramagnetic moment, an orbital moment
        if unit != "muB":
            return ("magnetic_moment", n.value, unit)
        return ("magnetic_moment", n.value, "muB/" + self._basis(scan, run))

    @staticmethod
    def _basis(scan: Scan, run: Run) -> str:
        """The basis the words nearest before an unqualified "x µB" name: an element ("each Cr carries", "Fe³⁺ →"),
        the cell, the formula unit or an atom; "net"/"total" or nothing is the calculation's total (per cell)."""
        norm, head = scan.norm, run.head
        lo = max(run.s_start, head.start - 45)
        found: list[tuple[int, str]] = []
        for m in _ION.finditer(norm, lo, head.start):
            symbol = m.group(1)
            if symbol in ELEMENTS and symbol not in _NOT_ELEMENTS and _MOMENT_WORDS.search(norm, m.end(), head.start) \
                    and not _IN_BRACKETS.search(norm, max(0, m.start() - 6), m.start()):
                found.append((m.start(), "element:" + symbol))
        c_start = cx.clause_start(norm, run.s_start, head.start, 60)
        for pattern, basis in ((_ATOM_BEFORE, "atom"), (_FU_BEFORE, "fu"), (_CELL_BEFORE, "cell"), (_NET, "cell")):
            for m in pattern.finditer(norm, max(c_start, lo), head.start):
                found.append((m.start(), basis))
        return max(found)[1] if found else "cell"

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
