"""Reading Raman-shift claims (the spectrum oracle's asked quantity).

A wavenumber in cm⁻¹ is a band position unless it is a range ("500–540 cm⁻¹"), an uncertainty, an
instrument setting (spectral resolution, FWHM/linewidth, step, calibration line) or a difference between
bands ("shifted by 5 cm⁻¹"). Its sign is kept: "−520 cm⁻¹" claims −520 (an anti-Stokes line the oracle
judges as written). A laser line in nm is an instrument setting.
"""

from __future__ import annotations

import re

from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.numbers import Number
from matpcr_plugins.claims.reader import QuantityReader, Run, Scan, Template, column_header, run_end

_INSTRUMENT = cx.attached(r"\bresolution\b|\bFWHM\b|\bfull[- ]width\b|\bhalf[- ]maximum\b|\bline ?widths?\b|\bband ?widths?\b|"
                          r"\bwidths?\b|\bbroadening\b|\bstep(?:\s+(?:size|width))?\b|\bcalibrat\w*\b|\bgrating\b|"
                          r"\bpixel\b|\bbin(?:\s+width)?\b|\bbinned\b|\bmax-pooled\b|\bsampling\b|\blaser\b|\bexcitation\b|"
                          r"\bpower\b|\bcut-?off\b|\bwidths?\s*,|\bprominence\b|\bthreshold\b|\bsignal-to-noise\b|\bS/N\b|\bSNR\b|\bnotch\b|\bedge filter\b|\bdispersion\b|\bslit\b|"
                          r"\bscattered\s+(?:light|photons?|line|at)\b|\bcut-?on\b|\bcuts?\s+(?:on|off)\b|\bRayleigh\b|\bk_?B?T\s*[≈=~]")
# an absolute wavenumber (the laser line, the scattered photon) is not a shift: "the Stokes band at 18451 cm⁻¹ absolute"
# an offset from the laser line is not a band: "the R line at 685 nm, about 4200 cm⁻¹ from the 532 nm laser"
_FROM_LASER_AFTER = re.compile(r"\s*(?:away\s+)?from\s+the\s+(?:\d+(?:\.\d+)?\s*nm\s+)?(?:laser|excitation|exciting|Rayleigh)\b", re.I)
_WAVELENGTH_EQUALS = re.compile(r"\d\s*nm\s*[=≈]\s*$")
_ABSOLUTE_AFTER = re.compile(r"[ \t]*\(?(?:absolute|abs\.)(?!\s+(?:accuracy|error|uncertainty|precision))", re.I)


_ASKED_LIST = re.compile(r"(?:\bbands?|\bpeaks?|\bmodes?|\blines?|\bRaman shifts?|\bshifts?|\bwavenumbers?|\bstretch(?:es|ing)?|"
                         r"\bbend(?:s|ing)?|\bbreathing)\b[^.\n\d]{0,40}?"
                         r"(?:\bare\b|\bis\b|\bat\b|[:=≈]|\baround\b|\bnear\b|\babout\b|\bapproximately\b|\bof\b)"
                         r"(?:\s+(?:the|at|about|approximately|around|roughly|near|~|≈))*\s*$", re.I)


# a computed value contrasted with the measurement is another property (the oracle judges the measured spectrum)
_COMPUTED = re.compile(r"\bDFT\b|\bDFPT\b|\bPBE\w*|\bLDA\b|\bGGA\b|\bHSE\w*|\bab initio\b|\btheor\w*|\bpredict\w*|"
                       r"\bcalculat\w*|\bcomputed\b|\bsimulat\w*|\bliterature\b|\breference\b|\bRRUFF\b|\bdatabase\b|\breported\b|\bcalibrat\w*|\bstandard\b|\blit\.|\bcf\.|"
                       r"\bet al\b|\bwho\s+reports?\b|\bpublished\b|\btextbook\b|\bref\.|\brecogni[sz]ed\s+by\b|"
                       r"\bcharacteri[sz]ed\s+by\b|\bfingerprint\s+(?:is|are|consists)\b|"
                       r"\b(?:monolayer|bilayer|bulk\s+crystal)\s*(?:gives|has|shows|≈|=|~)|"
                       r"\bexpected\s+(?:[\w-]+\s+){0,3}?(?:near|at|around|≈|~|of)\s*$|\bASTM\b|\bNIST\b|\bcertified\b|"
                       r"\bFTIR\b|\binfrared\b|\bIR\s+(?:spectrum|band|absorption)\b|\babsorption\b|\bin\s+(?:the\s+)?bulk\b|"
                       r"\banalogu?e\s+of\b|\bin\s+the\s+IR\b|\bchecked\s+(?:on|against|with)\b|\b(?:its|the\s+other|another)\s+polymorphs?\b|"
                       r"\brelated\b[^.;\n\d]{0,25}\bform\b|\b[\w-]*exchanged\s+form\b|\bshare\s+(?:the\s+)?(?:[\w-]+\s+){0,3}bands?\b", re.I)
# a line labelled as a reference list: "- Massicot (reference): 87, 143, 289 cm⁻¹"
_REFERENCE_LINE = re.compile(r"[ \t>]*(?:[-*•]|\d{1,2}[.)])?[ \t]*(?:\*\*)?[^:\n]{0,40}?\b(?:reference|literature|lit\.|"
                             r"database|RRUFF|reported|textbook)\b[^:\n]{0,20}:", re.I)
# a band of another compound named in a relative clause: "photo-oxidation to Pb3O4 (whose main band is at 548 cm⁻¹)"
_WHOSE = re.compile(r"(?<![\w])([A-Z][a-z]?\d*(?:[A-Z][a-z]?\d*)+|[A-Z][a-z]?\d+)\s*(?:[a-z]+\s*)?(?:\(\s*|,\s*)(?:whose|which has|which shows|(?<=\()[a-z][a-z-]{3,20}\s*,)"
                    r"[^()\n]{0,40}$")


# the band of the asked spectrum named right before the number: "the main band of this spectrum is at 4 cm⁻¹" (an
# asserted band, even when the number is copied from the question)
_EXPLICIT = re.compile(r"(?:\bbands?|\bpeaks?|\bmodes?|\blines?|\bRaman shifts?|\bshifts?)\b[^.\n\d]{0,40}?"
                       r"(?:\bis\b|\bare\b|\bat\b|[:=≈])(?:\s+(?:at|about|approximately|around|roughly|near|~|≈))*\s*$", re.I)
# not a band of the sample: a cosmic-ray spike or an artefact; a reference value "from bulk Si at 520.5 cm⁻¹"
_ARTEFACT = re.compile(r"\bcosmic[- ]rays?\b|\bspikes?\b|\bartefacts?\b|\bartifacts?\b|\bplasma lines?\b|"
                       r"\b(?:from|than|relative to|compared (?:to|with)|vs\.?|versus)\s+(?:the\s+)?(?:bulk|pristine|undoped|unstrained|"
                       r"unstressed|free-standing|free|stress-free|strain-free|relaxed|intrinsic|reference)\b|\bbulk\s+(?:value|reference)\b|"
                       r"\bfor comparison\b|\bRayleigh\b", re.I)


# a reference phase set against the sample in the same sentence: "Crystalline zircon has ν3 at 1008 cm⁻¹; this metamict
# grain shows it at 998 cm⁻¹" (the first value is the reference's)
_REFERENCE_SUBJECT = re.compile(r"\b(?:crystalline|bulk|pristine|unstrained|unstressed|undoped|well-crystalli[sz]ed|reference|"
                                r"ideal|relaxed|pure)\s+[\w-]+\s+(?:has|have|shows?|exhibits?|gives?|displays?)\b", re.I)
_SAMPLE_CONTRAST = re.compile(r"[^;\n]{0,60}?[;,]\s*(?:but\s+|whereas\s+|while\s+)?(?:this|our|here|in\s+this|the\s+(?:measured|present|"
                              r"asked|studied))\b", re.I)


# a reference form of a phase, with no sample in sight: "pure calcite has ν₁ at 1085.0 cm⁻¹"
_PURE_SUBJECT = re.compile(r"\b(?:pure|ideal|stress-free|strain-free|unstrained)\s+[\w-]+\s+(?:has|have|shows?|gives?|is\s+at)\b",
                           re.I)
# a literature value named after the numbers: "close to the 368, 330 and 224 cm⁻¹ reported by Wang et al."
_ARTEFACT_AFTER = re.compile(r"\s*(?:cm-1\s*)?(?:row|band|peak|line|feature)?\s*(?:is|was)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}?"
                             r"(?:cosmic|spike|artefact|artifact|plasma|noise|neon|lamp|calibration)|"
                             r"\s*(?:cm-1\s*)?\)?,?\s*(?:lies|lie|falls|fall|is|are)\s+(?:beyond|outside)\s+the\s+(?:table|window|range|rows?|listed)|"
                             r"\s*(?:is|was)\s+used\s+(?:only\s+)?(?:to|for)\s+(?:the\s+)?calibrat", re.I)
# another polytype as the subject: "3C-SiC has a single TO at 796 cm⁻¹"
_POLYTYPE_SUBJECT = re.compile(r"\b(\d[CHR]-[A-Z][A-Za-z0-9]*)\s+(?:would\s+)?(?:has|have|shows?|puts?|gives?|sits?)\b")
# another polymorph named by its Greek prefix as the subject: "γ-Glycine has its C–C stretch near 888 cm⁻¹" in a chain
# whose sample is α-glycine
_GREEK_FORM = re.compile(r"(?<![\w-])([α-ω])-([A-Za-z][a-z]{2,})\b")
_GREEK_SUBJECT = re.compile(r"(?<![\w-])([α-ω])-([A-Za-z][a-z]{2,})\s+(?:would\s+)?(?:has|have|shows?|puts?|gives?|sits?)\b")
# a sentence that lists what a candidate phase should show: "Expected strongest band ≈ 255 cm⁻¹, plus 452 and 716 cm⁻¹."
_EXPECTED_LEAD = re.compile(r"[\s*_>#-]*(?:expected|predicted|anticipated)\b", re.I)
# a reference form named after the numbers: "TO at 796 cm⁻¹ and LO at 972 cm⁻¹ in unstrained bulk"
_IN_REFERENCE_FORM_AFTER = re.compile(r"\s*(?:in|for|of)\s+(?:the\s+|an?\s+)?(?:unstrained|relaxed|stress-free|strain-free|"
                                      r"pure|free-standing)?\s*bulk\b|\s*(?:in|for|of)\s+(?:the\s+|an?\s+)?(?:unstrained|relaxed|"
                                      r"stress-free|strain-free|pristine|undoped|ideal|perfect)\b", re.I)
_IN_MINERAL_AFTER = re.compile(r"\s*(?:in|for|of)\s+(?:the\s+|pure\s+)?" + cx.MINERAL.pattern[2:], re.I)
# a sentence set in another mineral: "In pyrite the latter is found at 343 cm⁻¹."
_IN_MINERAL_LEAD = re.compile(r"[\s*_>#-]*in\s+(?:the\s+|pure\s+)?" + cx.MINERAL.pattern[2:], re.I)
_SNR_WORD = re.compile(r"signal-to-noise|S/N|SNR", re.I)
_SNR_BEFORE = re.compile(r"\b(?:signal-to-noise|S/N|SNR)\b[^.\d\n]{0,30}$", re.I)
_REPORTED_AFTER = re.compile(r"\s*(?:\([^()\n]{0,30}\)\s*)?(?:reported|quoted|listed|given|tabulated|published)\s+(?:by|in|for)\b|"
                             r"\s*(?:in|from)\s+(?:the\s+)?(?:literature|RRUFF|database|reference)\b", re.I)

_MINERAL = cx.MINERAL
_other_mineral = cx.other_mineral


def _cited(norm: str, lo: int, pos: int) -> bool:
    """A citation before the number in its sentence: "Rutt and Nicola (1974) report 1094 cm⁻¹", "Dawson et al. [12]
    reported it at 3652 cm⁻¹"; not one closed inside an earlier aside ("(cf. 247 cm⁻¹ in Tompsett et al.) and 636.4"),
    nor one before a semicolon ("(Smith & Jones, 1991) put it at 874 cm⁻¹; ours is 875.9 cm⁻¹")."""
    semi = norm.rfind(";", lo, pos)
    if semi >= 0:
        lo = semi + 1
    for m in cx.CITATION.finditer(norm, lo, pos):
        if m.group().startswith("(") or ")" not in norm[m.end():pos]:
            return True
    return False


_PRONOUN_LEAD = re.compile(r"\W*(?:it|its|this\s+mineral|that\s+mineral|the\s+latter)\b", re.I)
_SUBJECT_LEAD = re.compile(r"[\W\d]*(?:the\s+)?")


def _pronoun_other_mineral(scan: Scan, run: Run, question: str) -> bool:
    """A sentence led by "It"/"Its" whose previous sentence opens with a mineral the question does not name:
    the pronoun's values are that mineral's ("Aragonite has to be ruled out first. It has its ν₁ at 1085 cm⁻¹")."""
    key = ("pronoun_mineral", run.s_start)
    if key not in scan.memo:
        norm, found = scan.norm, False
        if question and _PRONOUN_LEAD.match(norm, run.s_start):
            prev = scan.sentences.previous(run.head.start)
            if prev is not None:
                lead = _SUBJECT_LEAD.match(norm, prev[0])
                m = _MINERAL.match(norm, lead.end()) if lead else None
                if m is not None:
                    name = m.group(1).lower()
                    found = (name[:-1] if name.endswith("s") else name) not in question.lower()
        scan.memo[key] = found
    return scan.memo[key]


def _other_greek_form(scan: Scan, subject: re.Match[str]) -> bool:
    """The Greek-prefixed form is not the question's, and the chain names another prefix of the same compound (its
    sample's): the subject is a competing polymorph."""
    forms = scan.memo.get("greek_forms")
    if forms is None:  # every prefixed name in the chain, collected once
        forms = scan.memo["greek_forms"] = {(m.group(1), m.group(2).lower()) for m in _GREEK_FORM.finditer(scan.norm)}
    letter, name = subject.group(1), subject.group(2).lower()
    question = (getattr(scan.item, "text", None) or "").lower()
    if f"{letter}-{name}" in question:
        return False
    return any(n == name and g != letter for g, n in forms)


class SpectraReader(QuantityReader):
    family = "raman"
    answer_unit = "cm-1"
    answer_words = frozenset({"cm", "at", "and", "or", "the", "approximately", "approx", "about", "around", "roughly", "ca",
                              "bands", "band", "peaks", "peak", "main", "strongest", "three", "shifts", "shift", "raman",
                              "positions", "are", "is", "of", "near", "modes", "mode", "lines"})
    instrument = _INSTRUMENT
    difference_after = True

    def bare_unit(self, scan: Scan, run: Run) -> str | None:
        """"The main bands of this spectrum are the 1003, 1004, ...": the words name the asked quantity."""
        if _ASKED_LIST.search(scan.norm, max(run.s_start, run.head.start - 80), run.head.start):
            return "cm-1"
        return None

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_EXPLICIT.search(scan.norm, max(run.s_start, run.head.start - 80), run.head.start))

    def own_reason(self, scan: Scan, n: Number, run: Run) -> str | None:
        if n.unit == "cm-1" and (_ABSOLUTE_AFTER.match(scan.norm, n.end) or _FROM_LASER_AFTER.match(scan.norm, n.end)
                                 or _WAVELENGTH_EQUALS.search(scan.norm, max(0, n.start - 16), n.start)):
            return "instrument_setting"  # "532 nm = 18797 cm⁻¹": a wavelength written as an absolute wavenumber
        snr = scan.memo.get("snr")
        if snr is None:  # whether the chain names a signal-to-noise ratio at all, looked up once
            snr = scan.memo["snr"] = _SNR_WORD.search(scan.norm) is not None
        if snr and _SNR_BEFORE.search(scan.norm, max(0, n.start - 60), n.start):
            return "instrument_setting"  # "Signal-to-noise on the main band is about 85"
        return None

    def template(self, scan: Scan, run: Run, unit: str) -> Template:
        if unit == "cm-1":
            norm, head = scan.norm, run.head
            clause = min(cx.clause_start(norm, run.s_start, head.start, 80),
                         cx.open_paren(norm, max(run.s_start, head.start - 120), head.start))
            cell = norm.rfind("|", clause, head.start)
            if cell >= 0:
                clause = cell + 1  # a table cell is its own clause: "| DFT = 137 cm-1 | measured = 144 cm-1 |"
            if _COMPUTED.search(norm, clause, head.start) or _ARTEFACT.search(norm, clause, head.start):
                return "other_property"
            lead = cx.paren_lead(norm, run.s_start, head.start)
            if lead is not None and (_COMPUTED.search(norm, *lead) or _ARTEFACT.search(norm, *lead)):
                return "other_property"  # "calibrated on the Si line (520.7 cm⁻¹)", "relative to pristine graphene (1580 cm⁻¹)"
            if _REFERENCE_SUBJECT.search(norm, clause, head.start) and _SAMPLE_CONTRAST.match(norm, head.end):
                return "other_property"
            greek = _GREEK_SUBJECT.search(norm, max(run.s_start, head.start - 80), head.start)
            if greek is not None and _other_greek_form(scan, greek):
                return "other_property"  # "γ-Glycine has its C–C stretch near 888 cm⁻¹" when the sample is α-glycine
            polytype = _POLYTYPE_SUBJECT.search(norm, max(run.s_start, head.start - 80), head.start)
            if polytype is not None and polytype.group(1).lower() not in (getattr(scan.item, "text", None) or "").lower():
                return "other_property"  # "3C-SiC has a single TO at 796 cm⁻¹" in a chain about 6H-SiC
            if cx.COMPARISON_LEAD.match(norm, run.s_start) or _PURE_SUBJECT.search(norm, clause, head.start) \
                    or _EXPECTED_LEAD.match(norm, run.s_start):
                return "other_property"
            header = column_header(scan, head.start)
            if header is not None and (_COMPUTED.search(header) or _ARTEFACT.search(header)):
                return "other_property"  # a "PBE (cm⁻¹)" or "literature" column beside the measured one
            question = getattr(scan.item, "text", None) or ""
            if _pronoun_other_mineral(scan, run, question):
                return "other_property"  # "Aragonite has to be ruled out first. It has its ν₁ at 1085 cm⁻¹ too, …"
            in_lead = _IN_MINERAL_LEAD.match(norm, run.s_start) if head.start - run.s_start <= 200 else None
            if in_lead is not None and question and in_lead.group(1).lower().rstrip("s") not in question.lower() \
                    and ";" not in norm[in_lead.end():head.start] and not cx.SAMPLE_WORDS.search(norm, in_lead.end(), head.start):
                return "other_property"  # "In pyrite the latter is found at 343 cm⁻¹": the sentence is set in another mineral
            line_start = cx.line_start(norm, head.start)
            near = max(clause, line_start, head.start - 60)
            if lead is not None:
                near = min(near, max(lead[0], line_start))  # "distinguishes it from gypsum (≈1008 cm⁻¹)"
            if _other_mineral(norm, max(run.s_start, line_start, head.start - 200), near, head.start, question):
                return "other_property"
            in_mineral = _IN_MINERAL_AFTER.match(norm, run_end(scan, run))
            if in_mineral is not None and question and in_mineral.group(1).lower().rstrip("s") not in question.lower():
                return "other_property"  # "634 cm⁻¹ here versus 612 cm⁻¹ in rutile"
            if _REPORTED_AFTER.match(norm, run_end(scan, run)) or _ARTEFACT_AFTER.match(norm, head.end) \
                    or _ARTEFACT_AFTER.match(norm, run_end(scan, run)) \
                    or _IN_REFERENCE_FORM_AFTER.match(norm, run_end(scan, run)):
                return "other_property"  # "… reported by Wang et al.", "the 1121.8 row is a cosmic-ray spike"
            if _cited(norm, max(run.s_start, head.start - 200), head.start):
                return "other_property"  # "Dawson et al. [12] reported it at 3652 cm⁻¹ and … about 3656 cm⁻¹ at 80 K"
            line = norm.rfind("\n", max(0, head.start - 160), head.start) + 1
            label = _REFERENCE_LINE.match(norm, line) if line or head.start < 160 else None
            if label is not None and label.end() <= head.start:
                return "other_property"
            whose = _WHOSE.search(norm, max(run.s_start, head.start - 80), head.start)
            if whose is not None and whose.group(1) not in question:
                return "other_property"
            return ("raman_shift", 1.0, "cm-1")
        if unit in ("nm", "um"):
            return "instrument_setting"  # a laser or scattered-light wavelength
        return "other_property"
