"""Reading feature-size claims (the microscopy oracle's asked quantity).

Any length (Å, nm, µm, mm, pm) is a feature size in nm, sign kept ("−50 nm" claims −50, which the oracle
rejects as non-positive), unless it is an instrument setting (working distance, spot or pixel size, field
of view, scale bar, resolution), a range, an uncertainty, or the scale-bar length copied from the question.
Pixel counts and magnifications are never sizes; bare numbers take no unit (the task asks for one).
"""

from __future__ import annotations

import re

from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.reader import QuantityReader, Run, Scan, Template

TO_NM = {"nm": 1.0, "um": 1e3, "mm": 1e6, "angstrom": 0.1, "pm": 1e-3, "cm": 1e7}

_INSTRUMENT = cx.attached(r"\bWD\b|\bworking distance\b|\bspot(?: size)?\b|\bpixel(?: size)?\b|\bfield of view\b|\bFOV\b|"
                          r"\bHFW\b|\bfield width\b|\bimage (?:width|height|size)\b|\bscale ?bar(?:\s+(?:of|labell?ed|length|reads|shows))?\b|"
                          r"\bresolution\b|\baperture\b|\bprobe(?: size| current)?\b|\bbeam\b|\bEHT\b|\bvoltage\b|"
                          r"\bMag\s*=|\btilt\b|\bcoat(?:ed|ing)?\b|\bsputter\w*|\bcalibration\b|\bper pixel\b|\bmarker\b|\bbar\b|\blabell?ed\b")
_OTHER = re.compile(r"\bcrystallite\b|\bScherrer\b|\bXRD\b|\bcoherent\b|\bwavelength\b|\blattice\b|"
                    r"\bd-?spacing\b|\bcommercial\b|\bnominal\b|\bmanufacturer\b|\bliterature\b|\breported\b|"
                    r"\bdatasheet\b|\baspect ratio\b|\bratio\b|\bperimeter\b|\bcircumference\b|\boutline length\b|"
                    r"\bAFM\b|\bTEM\b|\bDLS\b|\bBET\b|\bfringes?\b", re.I)
_EXPLICIT = cx.attached(r"\bdiameters?\b|\b(?:particle|grain|feature|crystal)\s+(?:size|diameter|width)\b|"
                        r"\b(?:particles?|grains?|crystals?|wires?|rods?|spheres?)\s+(?:is|are|measures?|of)\b")


# the field of view or scale bar named earlier in the clause, with no feature named in between
_FIELD = re.compile(r"\bfield of view\b|\bFOV\b|\bimage (?:width|height|size|spans|covers|is)\b|\b(?:whole|entire) image\b|"
                    r"\bfield width\b|\bHFW\b|\bscale ?bar\b|\b(?:each|one|per|a single) pixel\b|\bpixel size\b|\b1 px\b", re.I)
_FEATURE = re.compile(r"\bparticles?\b|\bgrains?\b|\bfeatures?\b|\bdiameter\b|\bagglomerat\w*|\bcrystals?\b|\bwires?\b|"
                      r"\brods?\b|\bspheres?\b|\bpores?\b|\bsize\b", re.I)


class MicroscopyReader(QuantityReader):
    family = "sem"
    answer_unit = None
    instrument = _INSTRUMENT
    echo_first = True

    def template(self, scan: Scan, run: Run, unit: str) -> Template:
        factor = TO_NM.get(unit)
        if factor is None:
            return "other_property"
        clause = cx.clause_start(scan.norm, run.s_start, run.head.start, 80)
        if _OTHER.search(scan.norm, clause, run.head.start):
            return "other_property"  # a crystallite size, a literature value
        field = None
        for m in _FIELD.finditer(scan.norm, clause, run.head.start):
            field = m
        if field is not None and not _FEATURE.search(scan.norm, field.end(), run.head.start):
            return "instrument_setting"  # "the field of view is 1024 px × 7.41 nm/px ≈ 7.6 µm"
        return ("feature_size", factor, "nm")

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_EXPLICIT.search(scan.norm, max(run.s_start, run.head.start - 50), run.head.start))
