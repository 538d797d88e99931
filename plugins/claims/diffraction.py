"""Reading 2θ and d-spacing claims (the diffraction oracle's asked quantity).

- An angle in degrees is a 2θ claim unless it is a lattice angle (α = 90°), an instrument setting (step,
  FWHM, ω), a range or uncertainty; a θ-only statement ("θ = 14.22°", "Bragg angle 14.22°") is doubled to 2θ.
- A length in Å (or nm, ×10) is a d-spacing only where the words say so ("d =", "d(111)", "d-spacing",
  "interplanar spacing", or a sentence about planes/reflections); "a = 5.43 Å" is a lattice parameter, a
  bond length is another property, and λ is an instrument setting. A stated radiation or wavelength other
  than Cu Kα is exposed as a ``wavelength`` entry in ``rejected`` and a note, for the oracle to use.
"""

from __future__ import annotations

import bisect
import math
import re

from matpcr.records import Claim, Extraction
from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.numbers import Number
from matpcr_plugins.claims.reader import QuantityReader, Run, Scan, Template
from matpcr_plugins.xrd.radiation import CU_KA


_INSTRUMENT = cx.attached(r"\bstep(?:\s+(?:size|width|of))?\b(?!\s*\d)|\bcorrection\b|\bbin\s+width\b|\bthreshold\b|\bFWHM\b|\bfull[- ]width\b|\bhalf[- ]maximum\b|\bwidths?\b|"
                          r"\bbroadening\b|\bresolution\b|\bdivergence\b|\bslits?\b|\bSoller\b|\bscan (?:speed|rate)\b|"
                          r"\bincidence(?: angle)?\b|\bω\b|\bomega\b|\bgrazing\b|\bzero[- ]shift\b|\bβ_?\w*\s*[=≈]|"
                          r"\bintegral breadth\b|\bcounting time\b|\bdwell\b")
_OTHER_ANGLE = cx.attached(r"\brotat\w*\b|\btilt\w*\b|\bangle between\b|\bbond angles?\b|\bdihedral\b|\btorsion\b|"
                           r"\binterplanar angle\b|\bazimuth\w*\b|\bψ|\bφ|\bχ|\bbetween the\b[^.\n]{0,30}\bplanes\b[^.\n]{0,10}")
_THETA_ONLY = re.compile(r"(?<![\w])(?:θ(?:_?\{?\w{1,5}\}?)?|Bragg angles?|θ values?|theta values?|half[- ]angles?)"
                         rf"(?:\s*\([^()]{{0,12}}\))?{cx.LINK}\s*$", re.I)
# "the Bragg angles θ of the three strongest reflections are 19.11°": θ named as the subject of a list
_THETA_SUBJECT = re.compile(r"(?:\bBragg angles?\b|(?<![\w])θ\b(?!\s*[-–/]\s*(?:twotheta|2θ)))(?:[^.\n\d=]{0,50}\b(?:are|is)|(?:(?!twotheta)[^.\n=:]){0,60}:)\s*(?:about|approximately|~|≈)?\s*$",
                            re.I)  # "… are 19.11°", "Bragg angles θ for the 111, 220 and 311 planes: 11.90°"
# a generic fingerprint of a reference phase, not a reading of this pattern
_FINGERPRINT = re.compile(r"\bfingerprints?\b|\btextbook\b|\btypically\b", re.I)
# a peak width named with its peak before the value: "The FWHM of Pt(111) is 0.31°"
_WIDTH_OF = re.compile(r"\b(?:FWHM|full[- ]width(?: at half[- ]maximum)?|integral breadth|width)\s+of\s+"
                       r"(?:[^.;\n\d()]|\([^()\n]{0,8}\)){0,25}?\s*(?:is|=|:|≈|of)\s*(?:about|approximately|~|≈)?\s*$", re.I)
# a width turned into a size right after it: "with 0.22° gives ≈ 40 nm"
_SCHERRER_AFTER = re.compile(r"\s*(?:gives?|yields?|corresponds?\s+to|→)\s*(?:an?\s+)?(?:(?:Scherrer|crystallite)\s+size\s+(?:of\s+)?)?"
                             r"(?:≈|~|about|approximately)?\s*\d+(?:\.\d+)?\s*nm\b", re.I)
_AT_BEFORE = re.compile(r"\bat\s*$")
_PERIOD = re.compile(r"\b(?:period|periodicity|spacing)\s+of\s+(?:about\s+|~\s*|≈\s*)?$|\bfringes?\b[^.\n\d]{0,30}$", re.I)
# the value is said to belong to a phase that is not the one asked: "…near 33.74°; that phase is not the one asked about"
_NOT_ASKED_AFTER = re.compile(r"\bnot\s+the\s+(?:one|phase|material)\s+(?:asked|in question)|\bnot\s+the\s+asked\b", re.I)
_TWO_THETA = re.compile(r"twotheta|diffraction angle|scattering angle", re.I)
_D_ATTACHED = cx.attached(r"\bspaced\b|\bplanes?\b[^.\n]{0,20}\bspaced\b|(?<![\w])d\s*(?:_?\s*\w{1,5})?\s*(?:\(\s*[\d\s\-–,̄]{1,12}\))?\s*[=≈:]|\bd-?spacings?\b|\bd values?\b|"
                          r"\binterplanar(?:\s+(?:spacings?|distances?))?\b|\bspacings?\b|\bd_?hkl\b|\bd\(\w+\)|\bd\s+of\b|"
                          r"\bplanes?\b|\bd\b")
_D_SENTENCE = re.compile(r"\bspaced\b|\bplanes?\b|(?<![\w])d\s*(?:_?\s*\w{1,5})?\s*(?:\(\s*[\d\s\-–,̄]{1,12}\))?\s*[=≈:]|d-?spacing|interplanar|"
                         r"\bspacings?\b|\bd_?hkl\b|\bd\(|\bd values?\b", re.I)
_OTHER_LENGTH = re.compile(r"\bbond\b|\bradi(?:us|i)\b|\bdistances?\b|\bsize\b|\bcrystallite\b|\bScherrer\b|\bthickness\b|"
                           r"\bgrain\b|\bparticle\b|\bcoherence\b|\bvolume\b|\bseparation\b|\blength\b", re.I)
_SIZE = re.compile(r"\bcrystallite\b|\bScherrer\b|\bgrain size\b|\bparticle size\b|\bthickness\b", re.I)
_BARE_A = re.compile(r"[ \t]?A(?![\w(])")
_OTHER_BARE = cx.attached(r"\bintensit(?:y|ies)\b|\bcounts?\b|\bheights?\b|\bareas?\b|\bZ\s*=|\bdensity\b|"
                          r"\bmultiplicit(?:y|ies)\b|\bstructure factor\b|\bF_?\w*\s*=")
_REFERENCE = cx.attached(r"\breference\b|\bbulk\b|\bliterature\b|\breported\b|\bICDD\b|\bPDF\b|\bJCPDS\b|"
                         r"\b(?:moves?|shifts?|shifted|changes?|changed|goes|went)\s+from\b")
# a reference value named anywhere in its clause ("Bulk anatase has its (101) at 25.28°", "for comparison bulk TiN has
# (200) at 42.74°") or cited right after the number ("25.28° (JCPDS 21-1272)")
_REFERENCE_CLAUSE = re.compile(r"\bbulk\b|\breference\b|\bliterature\b|\breported\b|\bICDD\b|\bPDF\b|\bJCPDS\b|"
                               r"\bfor comparison\b|\bcompared (?:to|with)\b|\btextbook\b|\btabulated\b", re.I)
# a length that the words right after it make a size: "in these 8 nm particles", "a 20 nm thick film"
_SIZE_AFTER = re.compile(r"[ \t]*(?:-[ \t]*)?(?:particles?|crystallites?|grains?|crystals?|nanoparticles?|thick|thickness|"
                         r"film|layers?|wide|diameter|sized?|domains?)\b", re.I)
# sin θ, cos θ: a Bragg half-angle inside a formula
_TRIG = re.compile(r"\b(?:sin|cos|tan)\s*\(?\s*$", re.I)
# the next member of a parallel list after a θ value: ", and for (220) it is", "; (311):"
_PARALLEL = re.compile(r"\s*(?:[,;]\s*)?(?:and\s+)?(?:for\s+)?(?:the\s+)?(?:\(\s*\d{3}\s*\)|\d{3})\s*(?:(?:reflection|peak|line|plane)s?\s*)?"
                       r"(?:it\s+is|is|=|:|at|of)?\s*(?:about|approximately|≈|~)?\s*", re.I)
_CITED_AFTER = re.compile(r"\s*[(\[]\s*(?:JCPDS|ICDD|PDF|COD|ICSD|ref\.?|reference|literature|bulk|lit\.)\b", re.I)
_ASKED_SYMBOL = re.compile(r"(?:twotheta|\b[xyz]°)\s*(?:\([^()]{0,10}\))?\s*[=≈:]\s*$|twotheta[^.\n\d=]{0,16}[=≈:]\s*$")
# "the three strongest peaks are at 28.4, 47.3 and 56.1": a bare list the words name as peak positions
_ASKED_LIST = re.compile(r"(?:\bpeaks?|\breflections?|\blines?|\bmaxima|\bangles?)\b[^.\n\d]{0,40}?"
                         r"(?:\bare\b|\bat\b|[:=≈]|\baround\b|\bnear\b|\babout\b|\bapproximately\b|\bof\b)"
                         r"(?:\s+(?:the|at|about|approximately|around|roughly|near|~|≈|twotheta\s*=?))*\s*$", re.I)
_CU_WAVELENGTHS = frozenset({1.5406, 1.54056, 1.5418, 1.54184, 1.5405, 1.54178, 1.5444, 1.54439})
_RADIATION = re.compile(r"\b(Mo|Co|Cr|Fe|Ag|Cu|W)\s*Kα[12]?|synchrotron|neutron", re.I)
_HYPOTHETICAL = re.compile(r"\bwould\b|\bif\b|\binstead of\b|\bwere\b|\bhad\b", re.I)
_TURN = re.compile(r"\bbut\b|\bhowever\b|;|\bwhereas\b", re.I)
_OTHER_RADIATION = re.compile(r"\b(?:Mo|Co|Cr|Fe|Ag|W)\s*(?:Kα|radiation|tube|source|anode)|synchrotron|neutron|"
                              r"\b(?:[Ww]ith|[Uu]sing|[Ff]or|[Uu]nder)\s+(?:a\s+)?(?:Mo|Co|Cr|Ag)\b(?![a-z\d])")
_WAVELENGTH_CUE = re.compile(r"λ|wavelength|Kα|radiation", re.I)


_WRITTEN = re.compile(r"\d+(?:\.\d+)?")


def _written_half(c: Claim) -> bool:
    """Whether the claim's value is twice the number written in its text (a θ doubled to 2θ)."""
    m = _WRITTEN.search(c.text)
    try:
        return m is not None and abs(float(c.value) - 2 * float(m.group(0))) < 1e-6 and float(c.value) != 0
    except (TypeError, ValueError):
        return False


class DiffractionReader(QuantityReader):
    family = "xrd"
    answer_unit = "deg"
    answer_words = frozenset({"twotheta", "θ", "at", "and", "or", "the", "approximately", "approx", "about", "around",
                              "roughly", "ca", "peaks", "peak", "reflections", "reflection", "strongest", "three", "main",
                              "lines", "positions", "angles", "values", "are", "is", "of", "near", "deg"})
    instrument = _INSTRUMENT
    miller = True
    difference_after = True

    def finish(self, scan: Scan, extraction: Extraction) -> None:
        if scan.memo.get("theta_doubled"):
            self._merge_theta(extraction)
        stated = [c for c in extraction.rejected if c.kind == "wavelength"]
        if not stated and ("Kα" in scan.norm or "synchrotron" in scan.norm or "neutron" in scan.norm):
            for m in _RADIATION.finditer(scan.norm):
                s_start, s_end = scan.sentences.bounds(m.start())
                if _HYPOTHETICAL.search(scan.norm, s_start, s_end):
                    continue  # "with Mo Kα it would be at 13.0°": the committed values are for Cu Kα
                if not m.group(0).lower().startswith("cu"):
                    span = scan.text.span(*m.span())
                    stated.append(Claim("wavelength", None, "angstrom", span, scan.text.original[span[0]:span[1]],
                                        "instrument_setting"))
                    extraction.rejected.append(stated[-1])
                    break
        for c in stated:
            if c.value is None:
                extraction.notes.append(f"stated radiation {c.text.strip()} (not Cu Kα); no wavelength given")
            elif abs(float(c.value) - CU_KA) > 0.01:
                extraction.notes.append(f"stated wavelength {float(c.value):g} Å (not Cu Kα)")

    @staticmethod
    def _merge_theta(extraction: Extraction) -> None:
        """θ = 9.14° beside 2θ = 18.27° is one claim: a doubled θ within rounding of a stated 2θ is dropped."""
        claims = extraction.claims
        doubled = {id(c) for c in claims if c.kind == "two_theta" and _written_half(c)}
        if not doubled:
            return
        direct = sorted(float(c.value) for c in claims if c.kind == "two_theta" and id(c) not in doubled)
        keep = []
        for c in claims:
            if id(c) in doubled:
                v = float(c.value)
                i = bisect.bisect_left(direct, v - 0.021)
                if any(w != v for w in direct[i:bisect.bisect_right(direct, v + 0.021)]):
                    continue
            keep.append(c)
        extraction.claims[:] = keep

    def rejected_as(self, scan: Scan, n: Number, reason: str) -> tuple[str, float | None, str]:
        if reason == "instrument_setting" and n.unit in ("angstrom", "nm") and math.isfinite(n.value):
            s_start, _ = scan.sentences.bounds(n.start)
            if _WAVELENGTH_CUE.search(scan.norm, max(s_start, n.start - 60), n.start):
                return "wavelength", round(n.value * (10.0 if n.unit == "nm" else 1.0), 6), "angstrom"
        return super().rejected_as(scan, n, reason)

    def own_reason(self, scan: Scan, n: Number, run: Run) -> str | None:
        if n.unit:
            return None
        if n.integer and (100 <= abs(n.value) <= 999 or (len(n.digits) == 4 and n.digits.startswith("1")
                                                        and n.value < 1100 and "0" not in n.digits[1:])):
            return "index"  # a bare three-digit integer: Miller indices (111, 220) or a space-group number
        if n.value in _CU_WAVELENGTHS and run.bare is None:
            return "instrument_setting"  # λ of Cu Kα inside a calculation ("sin θ = 1.5418/5.640")
        if run.bare is None:
            other = run.cache.get("other_bare")
            if other is None:
                other = run.cache["other_bare"] = bool(
                    _OTHER_BARE.search(scan.norm, max(run.s_start, run.head.start - 40), run.head.start))
            if other:
                return "other_property"  # an intensity, a count, Z = 4
        return None

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """"2θ = 15.20" and the template's "y° = 1.5418" name their quantity without a unit after the number."""
        if _ASKED_SYMBOL.search(scan.norm, max(0, run.head.start - 20), run.head.start):
            return "deg"
        if _BARE_A.match(scan.norm, run.head.end) and _D_ATTACHED.search(scan.norm, run.lo, run.head.start):
            return "angstrom"  # "d(111) = 3.2666 A": Å written as a plain A
        if run.head.link != "label" and _ASKED_LIST.search(scan.norm, max(run.s_start, run.head.start - 80), run.head.start) \
                and not _D_SENTENCE.search(scan.norm, max(run.s_start, run.head.start - 40), run.head.start):
            return "deg"
        return None

    def template(self, scan: Scan, run: Run, unit: str) -> Template:
        found = self._template(scan, run, unit)
        if found.__class__ is tuple and found[1] == 2.0:
            scan.memo["theta_doubled"] = True  # some θ was doubled: finish() merges it with a stated 2θ
        return found

    def _template(self, scan: Scan, run: Run, unit: str) -> Template:
        norm, head = scan.norm, run.head
        lo, hi = run.lo, head.start
        if _REFERENCE.search(norm, lo, hi) or cx.COMPARISON_LEAD.match(norm, run.s_start):
            return "other_property"  # "For comparison, α-Al₂O₃ puts (104) at 35.15°"
        lead = cx.paren_lead(norm, run.s_start, hi)
        if lead is not None and _REFERENCE_CLAUSE.search(norm, *lead):
            return "other_property"  # "0.6% larger than bulk BFO (3.94 Å)"
        question = getattr(scan.item, "text", None) or ""
        line_start = cx.line_start(norm, hi)
        if cx.other_mineral(norm, max(run.s_start, line_start, hi - 200), max(cx.clause_start(norm, run.s_start, hi, 80),
                                                                            line_start, hi - 60), hi, question) \
                or _NOT_ASKED_AFTER.search(norm, head.end, min(run.s_end, head.end + 120)):
            return "other_property"  # "brookite has a characteristic (121) line near 30.8°", "…; that phase is not the one asked"
        if self._measured(scan):  # a measured pattern: a reference value named in the clause is not a reading of it
            aside = cx.open_paren(norm, max(run.s_start, hi - 200), hi)  # inside "(ICDD 21-1276, where ... at 27.45°)"
            if _CITED_AFTER.match(norm, head.end) \
                    or _REFERENCE_CLAUSE.search(norm, min(aside, cx.clause_start(norm, run.s_start, hi)), hi):
                return "other_property"
        radiation = None
        for m in _OTHER_RADIATION.finditer(norm, max(run.s_start, hi - 80), hi):
            radiation = m
        if radiation is not None and _HYPOTHETICAL.search(norm, radiation.end(), hi) \
                and not _TURN.search(norm, radiation.end(), hi):
            return "other"  # "with Mo Kα the (111) would be at 13.0°": a value for another wavelength
        if unit == "deg":
            if _OTHER_ANGLE.search(norm, lo, hi):
                return "other_property"
            if _WIDTH_OF.search(norm, max(run.s_start, hi - 40), hi) or (
                    _SCHERRER_AFTER.match(norm, head.end) and not _AT_BEFORE.search(norm, max(0, hi - 6), hi)):
                return "instrument_setting"  # "The FWHM of Pt(111) is 0.31°", "rutile (110) with 0.22° gives ≈ 40 nm"
            if _PERIOD.search(norm, max(run.s_start, hi - 40), hi):
                return "other_property"  # "Laue fringes with a period of 0.29°"
            if _FINGERPRINT.search(norm, max(run.s_start, hi - 200), hi):
                return "other_property"  # "calcite's fingerprint is one dominant line near 29.4°"
            if _TWO_THETA.search(norm, max(lo, hi - 25), hi):
                return ("two_theta", 1.0, "deg")
            if _TRIG.search(norm, max(lo, hi - 8), hi):
                return ("two_theta", 2.0, "deg")  # "2 sin 14.22°": θ inside Bragg's law, doubled
            theta_key = ("theta-sentence", run.s_start)
            if _THETA_ONLY.search(norm, lo, hi) or _THETA_SUBJECT.search(norm, max(run.s_start, hi - 80), hi):
                if _THETA_SUBJECT.search(norm, max(run.s_start, hi - 80), hi):
                    scan.memo[theta_key] = True  # "the Bragg angles θ ... are 19.11° for (111), 22.21° for (200)"
                scan.memo[("theta-end", run.s_start)] = head.end
                return ("two_theta", 2.0, "deg")  # a θ-only statement, doubled
            theta_end = scan.memo.get(("theta-end", run.s_start))
            if theta_end is not None and theta_end <= hi and _PARALLEL.fullmatch(norm, theta_end, hi):
                scan.memo[("theta-end", run.s_start)] = head.end
                return ("two_theta", 2.0, "deg")  # "θ for (111) is 14.2°, and for (220) it is 23.7°": the same θ list
            if scan.memo.get(theta_key) and not _TWO_THETA.search(norm, max(run.s_start, hi - 200), hi):
                return ("two_theta", 2.0, "deg")  # a later member of that sentence's θ list
            return ("two_theta", 1.0, "deg")
        if unit in ("angstrom", "nm", "pm"):
            factor = {"nm": 10.0, "pm": 0.01}.get(unit, 1.0)
            if _SIZE.search(norm, max(run.s_start, head.start - 40), head.start) or _SIZE_AFTER.match(norm, head.end):
                return "other_property"  # "a crystallite size D = 12 nm" (Scherrer), not a d-spacing
            if _D_ATTACHED.search(norm, lo, hi):
                return ("d_spacing", factor, "angstrom")
            clause = cx.clause_start(norm, run.s_start, head.start)
            if _OTHER_LENGTH.search(norm, clause, head.start):
                return "other_property"
            if _D_SENTENCE.search(norm, max(run.s_start, head.start - 200), min(run.s_end, head.end + 200)):
                return ("d_spacing", factor, "angstrom")
            return "other_property"
        return "other_property"

    @staticmethod
    def _measured(scan: Scan) -> bool:
        """Whether the chain reads a measured pattern (the question gives one, or the chain is about a film or sample)
        rather than predicting the lines of a crystal structure, where a literature value is the answer itself."""
        measured = scan.memo.get("measured")
        if measured is None:
            question = (getattr(scan.item, "text", None) or "").lower()
            measured = scan.memo["measured"] = bool(scan.table) or "measured" in question or "film" in question
        return measured

    def explicit(self, scan: Scan, run: Run) -> bool:
        lo = max(run.s_start, run.head.start - 40)
        return bool(_D_ATTACHED.search(scan.norm, lo, run.head.start) or _TWO_THETA.search(scan.norm, lo, run.head.start))
