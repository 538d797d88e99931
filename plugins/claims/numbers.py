"""Numbers, their units, and how neighbouring numbers relate (lists, ranges, uncertainties).

One regex pass finds every number with the unit that follows it; one more linear pass links neighbours:
"3.14, 1.92 and 1.64 Å" is a list sharing its trailing unit, "10–80°" and "between 500 and 540 cm⁻¹" are
ranges, "28.4 ± 0.1°" is a value and its uncertainty. No regex ever spans a whole list, so the cost stays
linear in the chain's length however many numbers a model writes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

# scientific notation (5.2e2, 1.2×10^3 after normalisation), signs, thousands separators ("1,085")
_NUMBER = (r"(?<![\w.^])(?<![A-Za-z]-)(?P<sign>±\s*|[-+](?=\.?\d))?"
           r"(?P<mant>(?=\d+,\d)(?:\d{1,3}(?:,\d{3})+(?![\d,])(?:\.\d+)?|(?<!\d,)\d+,\d{1,2}(?=(?:\s*(?:,|and|or|&)\s*\d+,\d{1,2})*\s?(?:°|cm-1|nm|µm|Å|eV|mm|µB)(?!\w)))"
           # a space separates thousands: "13 040 nm", "144 800 nm" (not the stutter "200 200 nm"), "1 085 cm-1" (a
           # shift has one thousands digit at most, so "156 282 465 cm-1" is a list without commas)
           r"|(?=\d{1,3}(?: \d{3}){1,4} ?(?:nm|µm|mm|Å|×)(?!\w))(?!(?P<rep>\d{3}) (?P=rep)(?!\d))\d{1,3}(?: \d{3}){1,4}"
           r"|(?=\d \d{3} ?cm-1(?!\w))\d \d{3}"
           r"|\d+(?:\.\d+)?(?!\d)|\.\d+)(?![.,]\d)"
           r"(?:[eE](?P<e1>[-+]?\d{1,3})(?![\w])|\s*[×xX*]\s*10\s*\^\s*\(?(?P<e2>[-+]?\s*\d{1,3})\)?)?"
           r"(?P<unc>\(\d{1,3}\))?")  # 28.443(2)°: the digits in brackets are the uncertainty of the last digits

_PER = r"\s*(?:/|per|×|\s)\s*"
_BASIS = (r"(?P<basis>atoms?|at\.|sites?|f\.?\s?u\.?|formula[- ]units?|unit[- ]cells?|cells?|"
          r"[A-Z][a-z]?(?![a-zA-Z])(?!\d*[A-Z]))")  # "per Fe", not "per ScFe₂ formula unit"
# canonical units; the alternation order matters (longest spellings first)
_UNIT = (r"(?P<unit>°\s*C(?![a-zA-Z])|°\s*F(?![a-zA-Z])|°|[kK]\s*[xX×](?![\w])|K(?![\wα])|(?:wt|at|mol|vol)\s*\.?\s*%|cm-1|Å\s*\^?\s*-\s*1|Å(?:[ \t]*\^[ \t]*)?[23](?!\d|[.,]\d)|Å|"
         r"(?:nm|µm|mm|pm|Å)\s*(?:/|per)\s*(?:px|pixels?)|(?:nm|µm|mm|pm|Å)\s*(?:px|pixels?)\s*\^?\s*-\s*1|nm(?:[ \t]*\^[ \t]*)?[23](?!\d|[.,]\d)|nm|µm(?:[ \t]*\^[ \t]*)?[23](?!\d|[.,]\d)|µm|mm|pm|cm(?![\w-])(?!\s*\^)|"
         r"m?eV\s*(?:/|per)\s*(?:Å|nm|m)\s*\^?\s*2(?!\d|\.\d)|"  # "20 meV/Å²": an energy per area (surface, exfoliation)
         r"m?eV(?:" + _PER + r"(?:atoms?|at\.|f\.?\s?u\.?|formula[- ]units?|cells?)(?:\s*\^\s*-\s*1)?(?![a-z]))?|"
         r"(?<![a-z])eV|keV|kJ\s*/\s*mol|kcal\s*/\s*mol|"
         r"µB(?:\s*(?:/|per|on\s+each|on)\s*" + _BASIS + r")?|"
         r"kV|mV|V(?![\w])|mA|µA|nA|mW|W(?![\w])|GPa|MPa|Hz|kHz|%|px|pixels?|(?<=[ \t])(?:s|sec|min|h)(?![\w])|"
         r"[k]?[×xX](?![\w])(?!\s*[\d(.])|g\s*/\s*cm\^?3|counts?(?![\w])|cps(?![\w])|cts(?![\w])|"
         # metres, only after a negative power of ten (a length in SI): "2.1 × 10⁻⁷ m", "2.1e-7 m" (not "k ≈ 3e-17 m²/s")
         r"(?:(?<=\^-\d)|(?<=\^-\d\d)|(?<=\^-\d[ \t])|(?<=\^-\d\d[ \t])|(?<=[eE]-\d)|(?<=[eE]-\d\d)|(?<=[eE]-\d[ \t])|"
         r"(?<=[eE]-\d\d[ \t]))m(?![\w^²³/]))")
_TOKEN = re.compile(_NUMBER + r"(?:[ \t]*" + _UNIT + r")?")

_LIST_GAP = re.compile(r"\s*(?:(?:,|;|/|&|\+|\band\b|\bor\b|,\s*(?:and|or)\b|\bas well as\b|\bplus\b)\s*(?:≈\s*)?)?\s*", re.I)
_RANGE_GAP = re.compile(r"\s*(?:–|-|\bto\b|\bthrough\b|\buntil\b|\bup to\b|\bdown to\b|\.\.\.?|…)\s*", re.I)
_AND_GAP = re.compile(r"\s*(?:\band\b|&)\s*", re.I)
_BY = re.compile(r"\bby\s+(?:about|roughly|around|approximately|some|~|≈)?\s*$|\bby$", re.I)
_WORDY = re.compile(r"[A-Za-z]{2,}")  # "5 eV) gives ±3.7 µB": words between make the ± a sign, not an uncertainty
_PM_GAP = re.compile(r"\s*±\s*")
_BETWEEN = re.compile(r"\b(?:between|from)\s*(?:[^\W\d]{1,12}\s*(?:=|≈|of)?\s*)?$", re.I)

_ENERGY_BASIS = re.compile(r"atoms?|at\.|sites?", re.I)
_FU_BASIS = re.compile(r"f\.?\s?u\.?|formula[- ]units?", re.I)
_CELL_BASIS = re.compile(r"(?:unit[- ])?cells?", re.I)


@dataclass(slots=True, eq=False)
class Number:
    """A number as written. ``start``/``end`` index the normalised text (``end`` includes the unit)."""

    value: float
    start: int
    num_end: int
    end: int
    unit: str = ""            # canonical unit, "" for a bare number
    text: str = ""
    integer: bool = False
    digits: str = ""          # the mantissa as written (Miller indices such as 111)
    explicit_sign: str = ""
    inherited_unit: bool = False
    link: str = ""            # how it joins the previous number: "list", "range", "pm"
    run: int = 0              # numbers of one list/range share a run id
    reason: str = ""          # set when structure alone rejects it (range, uncertainty, ...)
    index: int = 0            # position in the chain's list of numbers


@lru_cache(maxsize=1024)
def canonical_unit(raw: str) -> str:
    """The canonical name of a unit spelling matched by ``_UNIT``."""
    u = raw.replace(" ", "")
    if re.fullmatch(r"(?:nm|µm|mm|pm|Å)(?:(?:/|per)(?:px|pixels?)|(?:px|pixels?)\^?-1)", u):
        return "length/px"
    if re.fullmatch(r"(?:wt|at|mol|vol)\.?%", u):
        return "fraction"
    if re.fullmatch(r"[kK][xX×]", u):
        return "times"
    if u.startswith("°C"):
        return "degC"
    if u.startswith("°F"):
        return "degF"
    if u == "°":
        return "deg"
    if u == "K":
        return "K"
    if u.startswith("Å"):
        if u.endswith("-1"):
            return "angstrom^-1"
        if u[-1] in "23":
            return "angstrom^" + u[-1]
        return "angstrom"
    if u.startswith("nm"):
        return "nm^" + u[-1] if u[-1] in "23" else "nm"
    if u.startswith("µm"):
        return "um^" + u[-1] if u[-1] in "23" else "um"
    if u in ("mm", "pm", "cm", "cm-1", "keV", "kV", "mV", "V", "mA", "µA", "nA", "mW", "W", "GPa", "MPa", "Hz", "kHz", "%"):
        return u
    if u.startswith(("eV", "meV")):
        scale = "meV" if u.startswith("meV") else "eV"
        rest = raw[len(scale):].strip()
        rest = re.sub(r"^(?:/|per|×)\s*", "", rest).strip()
        rest = re.sub(r"\s*\^\s*-\s*1$", "", rest)
        if re.fullmatch(r"(?:Å|nm|m)\s*\^?\s*2", rest):
            return f"{scale}/area"
        if not rest:
            return scale
        if _ENERGY_BASIS.fullmatch(rest):
            return f"{scale}/atom"
        if _FU_BASIS.fullmatch(rest):
            return f"{scale}/fu"
        return f"{scale}/cell"
    if u.startswith("µB"):
        rest = re.sub(r"^(?:/|per|on\s+each|on)\s*", "", raw[2:].strip()).strip()
        if not rest:
            return "muB"
        if _ENERGY_BASIS.fullmatch(rest):
            return "muB/atom"
        if _FU_BASIS.fullmatch(rest):
            return "muB/fu"
        if _CELL_BASIS.fullmatch(rest):
            return "muB/cell"
        return "muB/element:" + rest
    if u in ("kJ/mol", "kcal/mol"):
        return u
    if u in ("px", "pixel", "pixels"):
        return "px"
    if u in ("s", "sec", "min", "h"):
        return "time"
    if u.lower() in ("×", "x", "k×", "kx"):
        return "times"
    if u.startswith("g/cm"):
        return "g/cm3"
    if u in ("count", "counts", "cps", "cts"):
        return "counts"
    return u


_NUM = re.compile(_NUMBER)
_UNIT_AT = re.compile(r"(?:[ \t]*|-(?=[a-zA-Zµ°Å]))" + _UNIT)  # "a 2.4-eV gap", "a 50-nm rod"
_NO_UNIT = frozenset(",;)]}|\n\r0123456789")


def tokenize(norm: str) -> list[Number]:
    """Every number in ``norm`` with its unit, linked into lists, ranges and value ± uncertainty."""
    out: list[Number] = []
    append = out.append
    unit_at = _UNIT_AT.match
    size = len(norm)
    no_unit = _NO_UNIT
    consumed = 0
    count = 0
    make = Number
    for m in _NUM.finditer(norm):
        start, end = m.span()
        if start < consumed:
            continue  # inside the unit of the previous number ("atom^-1")
        sign, mant, e1, e2, unc = m.group("sign", "mant", "e1", "e2", "unc")
        num_end = end
        unit = ""
        if end < size:
            c = norm[end]
            if c not in no_unit and not (c == " " and (end + 1 >= size or norm[end + 1] in no_unit)):
                u = unit_at(norm, end)
                if u is not None:
                    unit = canonical_unit(u.group("unit"))
                    end = u.end()
                    if unit.startswith("muB/element:") and unit[12:] not in ELEMENTS:
                        unit = "muB"  # "2 µB so" / "µB in": not an element
                        end = u.start("unit") + 2
        consumed = end
        if " " in mant:
            mant = mant.replace(" ", "")
        if "," in mant and len(mant) - mant.index(",") <= 3:
            mant = mant.replace(",", ".")  # a decimal comma: "31,7°"
        if e1 is None and e2 is None and "," not in mant:
            value = float(mant)
            integer = "." not in mant
        else:
            integer = False
            try:
                value = float(mant.replace(",", ""))
                exponent = e1 or e2
                if exponent is not None:
                    value = float(f"{value * 10.0 ** int(exponent.replace(' ', '')):.12g}")  # 6.230E+01 is 62.3
            except (ValueError, OverflowError):
                value = math.nan
            if value != value or value in (math.inf, -math.inf):
                append(make(math.nan, start, num_end, end, unit, "", False, mant, "", False, "", 0, "other", count))
                count += 1
                continue
            integer = "." not in mant and e1 is None and e2 is None
        if sign:
            sign = sign.strip()
            if sign == "-":
                value = -value
        append(make(value, start, num_end, end, unit, "", integer, mant, sign or "", False, "", 0,
                    "uncertainty" if sign == "±" else "", count))
        count += 1
    _link(norm, out)
    return out


# a short label between list members: "1086 (ν1), 712 (ν4), 282 cm⁻¹"
_LABEL_CLOSE = re.compile(r"\)\s*(?:,|;|,?\s*and|,?\s*or)\s*", re.I)
_LABELLED_GAP = re.compile(r"\s*\([^()\n]{1,15}\)\s*(?:,|;|,?\s*and|,?\s*or)\s*", re.I)
_LIST_GAPS = frozenset({", ", ",", "; ", ";", " , ", ", and ", " or ", ", or ", " / "})


def _link(norm: str, nums: list[Number]) -> None:
    """Join neighbours into runs (lists, ranges, ±) and share a trailing unit across a list."""
    run = 0
    prev = None
    for cur in nums:
        if prev is None:
            prev = cur
            continue
        gap_start, gap_end = prev.end, cur.start
        link = ""
        if gap_end - gap_start <= 14:
            gap = norm[gap_start:gap_end]
            if gap in _LIST_GAPS and not cur.explicit_sign:
                link = "list"  # the common case, without a regex
            elif (cur.explicit_sign == "±" and not _WORDY.search(gap) and ";" not in gap and ":" not in gap and "\n" not in gap) \
                    or _PM_GAP.fullmatch(gap):  # not "Ni: ±1.52 µB; S: ±0.08 µB", two labelled values
                link = "pm"
            elif cur.explicit_sign == "-" and gap.strip() == "" and "\n" not in gap and prev.explicit_sign != "±" \
                    and _same_quantity(prev, cur):
                link = "range"  # "500-540": the dash is not a minus sign
                cur.value = -cur.value
                cur.explicit_sign = ""
            elif "\n" not in gap and _RANGE_GAP.fullmatch(gap) and _same_quantity(prev, cur) \
                    and not _BY.search(norm, max(0, prev.start - 12), prev.start):
                link = "range"  # but "shifted by −0.15° to 34.27°" is a change and its result
            elif _AND_GAP.fullmatch(gap) and _BETWEEN.search(norm, max(0, prev.start - 30), prev.start) \
                    and _same_quantity(prev, cur) and not (cur.value == -prev.value != 0):
                link = "range"  # not "alternate between +2.6 and −2.6 µB": two opposite values
            elif gap == " (" and cur.integer and not cur.unit and norm[cur.num_end:cur.num_end + 1] == ")" and prev.link != "label":
                link = "label"  # "28.4 (111), 47.3 (220) and 56.1 (311) degrees": an index labelling its value
            elif prev.link == "label" and _LABEL_CLOSE.fullmatch(gap):
                link = "list"
            elif gap.strip() == "" and "\n" not in gap:
                link = "space"  # "464.5 21040": a restated table row, or a list without commas
            elif "\n" not in gap and (_LIST_GAP.fullmatch(gap) or _LABELLED_GAP.fullmatch(gap)):
                link = "list"
        if not link:
            run += 1
        cur.link, cur.run = link, run
        prev = cur
    # share units inside a run: a trailing unit applies backwards ("3.14, 1.92 and 1.64 Å"), and a leading one
    # forwards to numbers that end the phrase ("28.4°, 47.3, 56.1")
    start = 0
    for i in range(1, len(nums) + 1):
        if i == len(nums) or nums[i].run != nums[start].run:
            if i - start > 1:
                _share(norm, nums[start:i])
            start = i


def _same_quantity(a: Number, b: Number) -> bool:
    """Both ends of a range measure one thing: "10–80°" but not "31.70° – 30522 counts"."""
    return not a.unit or not b.unit or a.unit == b.unit


_WORD_AFTER = re.compile(r"[ \t]*(?:[A-Za-z(θ]|→|->|⟶|=>)|-[A-Za-z]")  # "220 → 45.4°": a label mapped to a value takes no unit


_COMPOUND_AFTER = re.compile(r"-[A-Za-z]")  # "4-rings give 470–520 cm⁻¹": a number in a compound word takes no unit


def _share(norm: str, group: list[Number]) -> None:
    if len(group) < 2:
        return
    labels = [n for n in group if n.link == "label"]
    group = [n for n in group if n.link != "label"]  # an index label never takes the list's unit
    unit = ""
    if labels and labels[-1] is not None:  # "... 56.1 (311) degrees": the unit after the last label
        last = labels[-1]
        u = _UNIT_AT.match(norm, last.num_end + 1) if norm[last.num_end:last.num_end + 1] == ")" else None
        if u is not None and last.num_end > group[-1].start:
            unit = canonical_unit(u.group("unit"))
    for n in reversed(group):
        if n.unit:
            unit = n.unit
        elif unit and n.reason == "" and not _COMPOUND_AFTER.match(norm, n.end):
            n.unit, n.inherited_unit = unit, True
    unit = ""
    for n in group:
        if n.unit and not n.inherited_unit:
            unit = n.unit
        elif not n.unit and unit and not _WORD_AFTER.match(norm, n.end):
            n.unit, n.inherited_unit = unit, True
    if len(group) < 2:
        return
    for a, b in zip(group, group[1:]):
        if b.link == "range":
            a.reason = a.reason or "range"
            b.reason = b.reason or "range"
        elif b.link == "pm":
            b.reason = b.reason or "uncertainty"


#: element symbols, so "per Fe" is an element basis and "µB so" or "µB in" never is
ELEMENTS = frozenset("""H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr
Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os
Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr""".split())
