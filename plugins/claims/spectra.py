"""Reading Raman-shift claims (the spectrum oracle's asked quantity).

A wavenumber in cm⁻¹ is a band position unless it is a range ("500–540 cm⁻¹"), an uncertainty, an
instrument setting (spectral resolution, FWHM/linewidth, step, calibration line) or a difference between
bands ("shifted by 5 cm⁻¹"). Its sign is kept: "−520 cm⁻¹" claims −520 (an anti-Stokes line the oracle
judges as written). A laser line in nm is an instrument setting.
"""

from __future__ import annotations

import re

from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.reader import QuantityReader, Run, Scan, Template

_INSTRUMENT = cx.attached(r"\bresolution\b|\bFWHM\b|\bfull[- ]width\b|\bhalf[- ]maximum\b|\bline ?widths?\b|\bband ?widths?\b|"
                          r"\bwidths?\b|\bbroadening\b|\bstep(?:\s+(?:size|width))?\b|\bcalibrat\w*\b|\bgrating\b|"
                          r"\bpixel\b|\bbin(?:\s+width)?\b|\bbinned\b|\bmax-pooled\b|\bsampling\b|\blaser\b|\bexcitation\b|"
                          r"\bpower\b|\bcut-?off\b|\bnotch\b|\bedge filter\b|\bdispersion\b|\bslit\b")


_ASKED_LIST = re.compile(r"(?:\bbands?|\bpeaks?|\bmodes?|\blines?|\bRaman shifts?|\bshifts?|\bwavenumbers?)\b[^.\n\d]{0,40}?"
                         r"(?:\bare\b|\bis\b|\bat\b|[:=≈]|\baround\b|\bnear\b|\babout\b|\bapproximately\b|\bof\b)"
                         r"(?:\s+(?:the|at|about|approximately|around|roughly|near|~|≈))*\s*$", re.I)


# a computed value contrasted with the measurement is another property (the oracle judges the measured spectrum)
_COMPUTED = re.compile(r"\bDFT\b|\btheor\w*|\bpredict\w*|\bcalculat\w*|\bcomputed\b|\bsimulat\w*|\bliterature\b|"
                       r"\breference\b|\bRRUFF\b|\bdatabase\b|\breported\b|\bcalibrat\w*|\bstandard\b", re.I)


# the band of the asked spectrum named right before the number: "the main band of this spectrum is at 4 cm⁻¹" (an
# asserted band, even when the number is copied from the question)
_EXPLICIT = re.compile(r"(?:\bbands?|\bpeaks?|\bmodes?|\blines?|\bRaman shifts?|\bshifts?)\b[^.\n\d]{0,40}?"
                       r"(?:\bis\b|\bare\b|\bat\b|[:=≈])(?:\s+(?:at|about|approximately|around|roughly|near|~|≈))*\s*$", re.I)
# not a band of the sample: a cosmic-ray spike or an artefact; a reference value "from bulk Si at 520.5 cm⁻¹"
_ARTEFACT = re.compile(r"\bcosmic[- ]rays?\b|\bspikes?\b|\bartefacts?\b|\bartifacts?\b|\bplasma lines?\b|"
                       r"\b(?:from|than|relative to|compared (?:to|with)|vs\.?|versus)\s+(?:the\s+)?bulk\b|\bbulk\s+(?:value|reference)\b|"
                       r"\bfor comparison\b", re.I)


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

    def template(self, scan: Scan, run: Run, unit: str) -> Template:
        if unit == "cm-1":
            clause = min(cx.clause_start(scan.norm, run.s_start, run.head.start, 80),
                         cx.open_paren(scan.norm, max(run.s_start, run.head.start - 120), run.head.start))
            if _COMPUTED.search(scan.norm, clause, run.head.start) or _ARTEFACT.search(scan.norm, clause, run.head.start):
                return "other_property"
            return ("raman_shift", 1.0, "cm-1")
        if unit in ("nm", "um"):
            return "instrument_setting"  # a laser or scattered-light wavelength
        return "other_property"
