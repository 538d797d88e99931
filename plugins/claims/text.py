"""A normalised view of a chain that still knows where every character came from.

Models spell the same thing many ways (2θ, 2\\theta, two-theta; cm⁻¹, cm^{-1}; µm, μm, um; Å, \\AA). The
reader works on one canonical spelling, but a claim's ``span`` must index the chain the model wrote, so
every rewrite keeps an offset map back to the original. Each rewrite is one linear regex pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

#: chains longer than this are cut (with a note): a degenerate output must not stall a run
MAX_CHARS = 1_000_000

def _per_cm(m: re.Match[str]) -> str:
    """"988/cm" is 988 cm⁻¹; "in 1/cm" is the unit alone."""
    before = m.string[m.start() - 1] if m.start() > 0 else " "
    if m.group(1) == "1" and not (before.isalnum() or before == "."):
        return "cm-1"
    return m.group(1) + " cm-1"


_SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")

Repl = str | Callable[[re.Match[str]], str]

def _json_quantity(m: re.Match[str]) -> str:
    """A machine-readable key as the label a reader knows, the unit in the key after the number."""
    key = m.group("key").lower()
    label = "E_hull" if "hull" in key else "threshold" if key == "threshold" else \
        f"{key.split('_')[0].upper()} band gap" if key.endswith("_gap") and not key.startswith("band") else "band gap"
    unit = ""
    if m.group("unit"):
        unit = " " + ("meV" if m.group("unit").lower() == "mev" else "eV")
        basis = (m.group("basis") or "").lower()
        if basis:
            unit += "/atom" if basis == "atom" else "/f.u."
    return f"{label} = {m.group('num')}{unit}"


def _json_diffraction(m: re.Match[str]) -> str:
    """"d_angstrom": 3.231 reads "d = 3.231 Å"; "two_theta_deg": 27.61 reads "2θ = 27.61°"."""
    key, num = m.group("key").lower(), m.group("num")
    if key.startswith("d"):
        unit = {"nm": "nm", "pm": "pm"}.get((m.group("unit") or "").lower(), "Å")
        return f"d = {num} {unit}"
    return f"twotheta = {num}°"


def _json_moment(m: re.Match[str]) -> str:
    """A moment key: "site_moment_Co_muB": 2.7 reads "m_Co = 2.7 µB"; "net_moment_muB_per_fu": 0 reads "net moment =
    0 µB/f.u."."""
    element = m.group("el") or m.group("el2")  # "m_Fe1_muB": the element of a numbered site
    basis = (m.group("basis") or m.group("basis2") or ("cell" if m.group("cell") else "")).lower()
    per = {"atom": "/atom", "fu": "/f.u.", "f_u": "/f.u.", "formula_unit": "/f.u.", "cell": "/cell"}.get(basis, "")
    label = f"m_{element}" if element else "net moment" if m.group("net") else "site moment" if m.group("site") or m.group("m") \
        else "magnetic moment"
    return f"{label} = {m.group('num')} µB{per}"


def _moment_block(m: re.Match[str]) -> str:
    """A YAML mapping of site moments ("moments_muB:" over "  Mn: 3.52" and "  Cr: [2.93, -2.93]"): each child reads
    "m_Mn = 3.52 µB", so the element and the unit reach every number."""
    lines = []
    for line in m.group("body").splitlines(keepends=True):
        child = re.match(r"([ \t]+)([A-Z][a-z]?)(?:\d{1,2}|_\w{1,12})?([ \t]*:[ \t]*)(.*?)(\s*)$", line, re.S)  # "Fe1:", "Fe_4f:"
        if child is None:
            lines.append(line)
            continue
        indent, element, colon, value, tail = child.groups()
        numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
        if not numbers or not re.fullmatch(r"\[?\s*-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)*\s*\]?", value.strip()):
            lines.append(line)
            continue
        lines.append(f"{indent}m_{element} = " + ", ".join(f"{x} µB" for x in numbers) + tail)
    return m.group("head") + "".join(lines)


# a µ that is not already the canonical µB: a list of 10⁵ moments written "µB" need not be rewritten to itself
_NON_CANONICAL_MU = re.compile(r"µ(?!B(?![a-zA-Z]))")
# (pattern, replacement, triggers), applied in order; a rule runs only when one of its trigger strings occurs in
# the lower-cased text (or a trigger pattern matches the text), so a long chain pays only for the spellings it uses
_RULES: list[tuple[re.Pattern[str], Repl, tuple[str | re.Pattern[str], ...]]] = [
    # siunitx: \SI{3.247}{\angstrom}, \si{\nano\metre}
    (re.compile(r"\\(?:SI|si|qty|unit|num)(?![a-zA-Z])"), " ", ("\\si", "\\qty", "\\unit", "\\num")),
    (re.compile(r"\\angstrom(?![a-zA-Z])"), "Å", ("\\angstrom",)),
    (re.compile(r"\\ang\s*\{([^{}\n]{1,20})\}"), lambda m: m.group(1) + "°", ("\\ang{", "\\ang {")),
    (re.compile(r"\\nano\\met(?:er|re)(?![a-zA-Z])|\\nm(?![a-zA-Z])"), "nm", ("\\n",)),
    (re.compile(r"\\micro\\met(?:er|re)(?![a-zA-Z])|\\um(?![a-zA-Z])|\\micron(?![a-zA-Z])"), "µm", ("\\micro", "\\um")),
    (re.compile(r"\\milli\\met(?:er|re)(?![a-zA-Z])"), "mm", ("\\milli",)),
    (re.compile(r"\\per\\centi\\met(?:er|re)(?![a-zA-Z])|\\centi\\met(?:er|re)\s*\\tothe\s*\{?\s*-1\s*\}?|\\wn(?![a-zA-Z])"),
     "cm-1", ("\\centi", "\\wn")),
    (re.compile(r"\\milli\\electronvolt(?![a-zA-Z])|\\meV(?![a-zA-Z])"), "meV", ("\\milli", "\\mev")),
    (re.compile(r"\\electronvolt(?![a-zA-Z])|\\eV(?![a-zA-Z])"), "eV", ("\\electronvolt", "\\ev")),
    (re.compile(r"\\kelvin(?![a-zA-Z])"), "K", ("\\kelvin",)),
    (re.compile(r"\\degreeCelsius(?![a-zA-Z])|\\celsius(?![a-zA-Z])"), "°C", ("celsius",)),
    (re.compile(r"\\bohrmagneton(?![a-zA-Z])|\\muB(?![a-zA-Z])"), "µB", ("\\bohr", "\\mub")),
    (re.compile(r"\\per\\atom(?![a-zA-Z])"), "/atom", ("\\per",)),
    (re.compile(r"\\per\\(?:pixel|px)(?![a-zA-Z])"), "/px", ("\\per",)),  # \SI{5}{\nano\metre\per\pixel}
    (re.compile(r"\\(?:pixel|px)(?![a-zA-Z])"), "px", ("\\pixel", "\\px")),
    # JSON/YAML keys that carry their quantity and unit: "band_gap_eV": 0.61, e_hull_meV_per_atom: 46
    (re.compile(r"[\"']?\b(?P<key>e_?above_?hull|e_?hull|energy_above_hull|hull_distance|band_?gap(?:_(?:pbe\+u|pbe|hse06|hse|scan|expt|exp|experimental|optical|gw|g0w0|mbj|soc))?|(?:(?:pbe|hse|hse06|scan|exp|expt|experimental|optical|gw|g0w0|mbj)_){1,2}gap|gap_(?:pbe|hse|hse06|scan|exp|expt|experimental|optical|gw|g0w0|mbj)|"
                r"e_?gap|e_?g(?:_(?:pbe|hse06|hse|scan|expt|exp|experimental|optical|gw|g0w0|mbj))?|gap|threshold)(?:_(?P<unit>m?ev)(?:_(?:per_)?(?P<basis>atom|fu|f_u|formula_unit))?)?[\"']?[ \t]*:[ \t]*"
                r"(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d.])", re.I), _json_quantity, ("_gap", "gap_", "hull", "band", "threshold_", "eg_", "e_g")),
    # (w40) a per-pixel key: "nm_per_px: 0.667" reads "0.667 nm/px" (no "pixel size" words, which would make the
    # keys after it on the line read as the field), '"scale_um_per_px": 0.025' likewise
    (re.compile(r"[\"']?\b(?:[a-z][a-z_]{0,30}?_)?(?P<unit>nm|um|µm)_per_(?:px|pixel)[\"']?[ \t]*:[ \t]*(?P<num>\d+(?:\.\d+)?)(?![\d.])"),
     lambda m: f"{m.group('num')} {m.group('unit')}/px", ("_per_px", "_per_pixel")),
    # "feature_diameter_nm: 184.4" reads "feature diameter = 184.4 nm", "pixel_size_nm: 3.125" reads "pixel size = 3.125 nm"
    (re.compile(r"[\"']?\b(?P<key>[a-z][a-z_]{1,40}?)_(?P<unit>nm|um|µm|mm|px)[\"']?[ \t]*:[ \t]*(?P<num>-?\d+(?:\.\d+)?)(?![\d.])"),
     lambda m: f"{m.group('key').replace('_', ' ')} = {m.group('num')} {m.group('unit')}", ("_nm", "_um", "_µm", "_mm", "_px")),
    (re.compile(r"[\"']?\b(?P<key>d(?:_?spacing)?|two_?theta|2_?theta)_(?P<unit>angstrom|A|nm|pm|deg|degrees)[\"']?[ \t]*:[ \t]*"
                r"(?P<num>\d+(?:\.\d+)?)(?![\d.])"), _json_diffraction, ("_angstrom", "_a\"", "_nm", "_pm", "_deg")),
    (re.compile(r"(?=[\"'slmMntc])[\"']?\b(?:(?:site_|local_)?(?:mag(?:netic)?_)?moment_(?P<el>[A-Z][a-z]?)\d{0,2}(?:_[a-z]{1,5}\d?|_\d{1,2}[a-l])?|"
                r"m_(?P<el2>[A-Z][a-z]?)\d{0,2}(?:_[a-z]{1,5}\d?|_\d{1,2}[a-l])?|M_(?P<basis2>cell|fu|atom)|(?:m_)?(?P<cell>cell_)?(?P<net>net|total)(?:_(?:mag(?:netic)?_)?"
                r"(?:moment|magneti[sz]ation))?|(?P<site>site_|local_)?(?:(?:mag(?:netic)?_)?moment|(?P<m>m)))_(?:mu_?B|µB|μB)(?:_per_(?P<basis>atom|fu|f_u|formula_unit|cell))?"
                r"[\"']?[ \t]*:[ \t]*(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d.])"), _json_moment, ("moment", "_mub", "_µb", "_μb")),
    (re.compile(r"^(?P<head>[ \t]*[\"']?(?:(?:site_|local_)?(?:mag(?:netic)?_)?moments?|sites?)_(?:mu_?B|µB|μB)[\"']?[ \t]*:[ \t]*\n)"
                r"(?P<body>(?:[ \t]+[A-Z][a-z]?(?:\d{1,2}|_\w{1,12})?[ \t]*:[ \t]*[^\n]*(?:\n|$))+)", re.M), _moment_block, ("moments_", "moment_", "sites_", "site_")),
    (re.compile(r"\{\s*\\(?:rm|bf|it|sf|tt)\s+([^{}\n]{0,40})\}"), lambda m: m.group(1), ("\\",)),  # {\rm eV/atom}
    (re.compile(r"\\text(?:subscript|superscript)\s*\{([^{}\n]{0,12})\}"), lambda m: m.group(1), ("\\textsu",)),  # BaTiS\textsubscript{3}
    (re.compile(r"\\(?:mathrm|text|textrm|textit|textbf|mathit|mathbf|rm|mbox|operatorname)\s*\{((?:[^{}\n]|\{[^{}\n]{0,10}\}){0,40})\}"),
     lambda m: m.group(1), ("\\",)),
    # a fraction reads as a bracketed division: "\frac{5\,\mu m}{125} = 40 nm" is "(5 µm / 125) = 40 nm" (the
    # denominator is not a value in the numerator's unit)
    (re.compile(r"\\[dt]?frac\s*\{((?:[^{}\n]|\{[^{}\n]{0,10}\}){1,40})\}\s*\{((?:[^{}\n]|\{[^{}\n]{0,10}\}){1,40})\}"),
     lambda m: f"({m.group(1)} / {m.group(2)})", ("\\frac", "\\dfrac", "\\tfrac")),
    (re.compile(r"(?<=[A-Za-z)\]])(?<![dθ])\$?_\{?(\d{1,3}(?:\.\d{1,3})?)\}?\$?(?![a-z{_]|\d)"), lambda m: m.group(1), ("_",)),  # NaMnO$_2$, Fe_3O_4
    (re.compile(r"\*\*|__"), " ", ("**", "__")),  # markdown emphasis
    (re.compile(r"\$"), " ", ("$",)),  # math delimiters: "464 cm$^{-1}$"
    # angles and degrees (°C is kept apart: it is a temperature)
    (re.compile(r"\^\s*\{?\s*\\circ(?:\s*\})?|\\circ|\\degree|\\deg(?![a-z])|[º˚∘]|\^\s*\{?\s*o(?:\s*\})?(?![\w])"), "°",
     ("\\circ", "\\deg", "º", "˚", "∘", "^")),
    (re.compile(r"℃"), "°C", ("℃",)),
    (re.compile(r"(?<![a-z])(?:degrees?|deg)\.?\s*(?:celsius|centigrade|C)(?![a-zA-Z])", re.I), "°C", ("deg",)),
    (re.compile(r"(?<![a-z])(?:degrees?|deg)(?![a-z])\.?", re.I), "°", ("deg",)),
    (re.compile(r"\\(?:var)?theta(?![a-z])|ϑ|Θ|θ"), "θ", ("theta", "ϑ", "θ")),
    (re.compile(r"2(?<![\w.]2)\s*[-_ ]?\s*(?:θ|[tT]heta|THETA)(?![a-z])"), "twotheta", ("θ", "theta")),
    (re.compile(r"(?<![\w.])two\s*[-_ ]?\s*(?:θ|theta)(?![a-z])", re.I), "twotheta", ("two",)),
    (re.compile(r"(?<![a-z])theta(?![a-z])", re.I), "θ", ("theta",)),
    (re.compile(r"\\lambda(?![a-z])|(?<![a-z])lambda(?![a-z])"), "λ", ("lambda",)),
    (re.compile(r"\\alpha(?![a-z])"), "α", ("\\alpha",)),
    (re.compile(r"\\beta(?![a-z])"), "β", ("\\beta",)),
    (re.compile(r"\\gamma(?![a-z])"), "γ", ("\\gamma",)),
    (re.compile(r"\\Delta(?![a-z])"), "Δ", ("\\delta",)),
    (re.compile(r"K(?<![\w]K)\s*[-_]?\s*\{?\s*(?:α|alpha)(?:\s*\})?|K(?<![\w]K)a(?=[\s12,.;:)\]]|$)"), "Kα", ("kα", "k α", "kalpha", "k-alpha",
                                                                                                    "k_", "ka")),
    (re.compile(r"\\AA(?![a-z])|\\mathring\s*\{?\s*A\s*\}?|[ÅÅ]"), "Å", ("\\aa", "\\mathring", "å", "Å")),
    (re.compile(r"(?<![a-z])[aåAÅ]ngstr[oö]ms?(?![a-z])", re.I), "Å", ("ngstr",)),
    (re.compile(r"(?=[\\µμmub])(?-i:(?!µB(?![a-zA-Z])))(?:\\mu|[µμ])\s*_?\s*\{?\s*(?:\\(?:rm|mathrm|text)\s*\{?\s*)?B(?:\s*\})*(?![a-z])|(?<![a-z])mu_?\s*B(?![a-z])|(?<=[\d\s])u_?B(?![a-zA-Z])|(?<=[\d\s])BM(?![a-zA-Z])|(?<![a-z])Bohr\s+magnetons?(?![a-z])", re.I),
     "µB", ("mu", _NON_CANONICAL_MU, "μ", "bohr", "ub", "u_b", "bm")),
    (re.compile(r"(?=[\\µμmu])(?:\\mu|[µμ])\s*m(?![a-z])|(?<![a-z])(?:microns?|micromet(?:er|re)s?|um)(?![a-z])", re.I), "µm",
     ("mu", "µ", "μ", "micro", "um")),
    (re.compile(r"(?<![a-z])nanomet(?:er|re)s?(?![a-z])", re.I), "nm", ("nanomet",)),
    (re.compile(r"(?<![a-z])millimet(?:er|re)s?(?![a-z])", re.I), "mm", ("millimet",)),
    (re.compile(r"(?<![a-z])picomet(?:er|re)s?(?![a-z])", re.I), "pm", ("picomet",)),
    (re.compile(r"(?<![a-z])electron[- ]?volts?(?![a-z])", re.I), "eV", ("electron",)),
    (re.compile(r"cm\s*\}?\s*(?:\^\s*\{?\s*\(?\s*[-−–‒]\s*1(?:\s*\))?(?:\s*\})?|⁻\s*¹|[-−–]\s*1(?![\d.]))"), "cm-1", ("cm",)),
    (re.compile(r"(\d)\s*/\s*cm(?![\w-])"), _per_cm, ("/cm", "/ cm")),
    (re.compile(r"(?<![a-z])(?:reciprocal centimet(?:er|re)s?|wave\s*numbers?)(?![a-z])", re.I), "cm-1",
     ("reciprocal", "wavenumber", "wave number")),
    (re.compile(r"[−‒﹣－]"), "-", ("−", "‒", "﹣", "－")),
    # en dash: a range between numbers; a dash after a line break is a bullet and keeps its line
    (re.compile(r"–|[ \t]--?[ \t]"), " – ", ("–", " -")),
    (re.compile(r"[—―]"), " — ", ("—", "―")),          # em dash: a clause break, never a range
    (re.compile(r"\\pm(?![a-z])|\+\s*/\s*-|\+-(?=\s*\d)|\+/−"), "±", ("\\pm", "+")),
    (re.compile(r"\\times(?![a-z])|\\cdot(?![a-z])|[·⋅∙]"), "×", ("\\times", "\\cdot", "·", "⋅", "∙")),
    (re.compile(r"[₀₁₂₃₄₅₆₇₈₉]+"), lambda m: m.group(0).translate(_SUBSCRIPT), tuple("₀₁₂₃₄₅₆₇₈₉")),
    (re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+"), lambda m: "^" + m.group(0).translate(_SUPERSCRIPT), tuple("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")),
    (re.compile(r"\\(?:approx|simeq|sim)(?![a-z])"), "≈", ("\\approx", "\\sim")),
    # intensity letters glued to a band list: "825.3vs, 795.8s, 724.6w cm⁻¹" reads "825.3, 795.8, 724.6 cm⁻¹"
    (re.compile(r"(?<=\d\.\d)(?<=\d)(?:vvs|vs|vw|sh|br|s|m|w)(?=\s*(?:,|;|cm\b|cm⁻|$))|(?<=\d\.\d\d)(?:vvs|vs|vw|sh|br|s|m|w)"
                r"(?=\s*(?:,|;|cm\b|cm⁻|$))", re.M), "", ("vs", "s,", "m,", "w,", "w ", "s ", "m ")),
    # align columns: "d_{111} &= 2.465 Å &\Rightarrow 2θ &= 36.45°"
    (re.compile(r"&\s*(?=[=≈→]|\\(?:Rightarrow|implies)(?![a-z]))"), " ", ("&",)),
    (re.compile(r"\\Rightarrow(?![a-z])|\\implies(?![a-z])|\\to(?![a-z])|⇒"), " → ", ("\\rightarrow", "\\implies", "\\to", "⇒")),  # "42 \times 0.667 \approx 28 nm"
    (re.compile(r"\\(?:left|right|quad|qquad|big|Big)(?![a-z])|\\[,;:! ]|[\u2009\u202f\u00a0\u2002\u2003$~{}]"), " ",
     ("\\", "\u2009", "\u202f", "\u00a0", "\u2002", "\u2003", "$", "~", "{", "}")),
    (re.compile(r"≃|∼"), "≈", ("≃", "∼")),
]


@dataclass
class _Pass:
    """The edits of one rewrite, in output coordinates, for mapping positions back (searchsorted)."""

    out_start: np.ndarray
    out_end: np.ndarray
    in_start: np.ndarray
    in_end: np.ndarray
    shift: np.ndarray  # cumulative (output length - input length) up to and including each edit


@dataclass
class Text:
    """``norm`` is the canonical text; ``spans`` maps positions in it back to the original chain."""

    original: str
    norm: str
    passes: list[_Pass] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def spans(self, starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
        """Original spans of ``norm[starts[i]:ends[i]]``, all at once (one searchsorted per rewrite)."""
        if not starts:
            return []
        s = np.asarray(starts, dtype=np.int64)
        e = np.asarray(ends, dtype=np.int64)
        for p in reversed(self.passes):
            j = np.searchsorted(p.out_start, s, side="right") - 1
            inside = (j >= 0) & (s < p.out_end[np.maximum(j, 0)])
            back = np.where(j >= 0, p.shift[np.maximum(j, 0)], 0)
            s = np.where(inside, p.in_start[np.maximum(j, 0)], s - back)
            k = np.searchsorted(p.out_start, e, side="left") - 1
            inside = (k >= 0) & (e <= p.out_end[np.maximum(k, 0)])
            back = np.where(k >= 0, p.shift[np.maximum(k, 0)], 0)
            e = np.where(inside, p.in_end[np.maximum(k, 0)], e - back)
        return list(zip(s.tolist(), np.maximum(e, s).tolist()))

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``norm[start:end]``."""
        return self.spans([start], [end])[0]

    def snippet(self, start: int, end: int) -> str:
        a, b = self.span(start, end)
        return self.original[a:b]


def _apply(text: str, pattern: re.Pattern[str], repl: Repl) -> tuple[str, _Pass | None]:
    if isinstance(repl, str):
        spans = [m.span() for m in pattern.finditer(text)]
        if not spans:
            return text, None
        if all(a < b for a, b in spans):  # the common case, vectorised: sub() in C, the edit table in numpy
            table = np.asarray(spans, dtype=np.int64)
            grow = len(repl) - (table[:, 1] - table[:, 0])
            before = np.concatenate(([0], np.cumsum(grow)[:-1]))
            out_start = table[:, 0] + before
            return pattern.sub(repl.replace("\\", "\\\\"), text), _Pass(out_start, out_start + len(repl), table[:, 0],
                                                                        table[:, 1], np.cumsum(grow))
    edits = [(m.start(), m.end(), repl(m) if callable(repl) else repl) for m in pattern.finditer(text) if m.end() > m.start()]
    return _splice(text, edits)


def _splice(text: str, edits: list[tuple[int, int, str]]) -> tuple[str, _Pass | None]:
    """Replace each ``text[a:b]`` with its ``r`` (edits sorted, not overlapping), keeping the offset map."""
    if not edits:
        return text, None
    pieces: list[str] = []
    rows: list[tuple[int, int, int, int]] = []
    last = out = 0
    for a, b, r in edits:
        pieces.append(text[last:a])
        out += a - last
        pieces.append(r)
        rows.append((out, out + len(r), a, b))
        out += len(r)
        last = b
    pieces.append(text[last:])
    table = np.asarray(rows, dtype=np.int64)
    shift = np.cumsum((table[:, 1] - table[:, 0]) - (table[:, 3] - table[:, 2]))
    return "".join(pieces), _Pass(table[:, 0], table[:, 1], table[:, 2], table[:, 3], shift)


_TABLE_CELL = re.compile(r"(?<=\|)[ \t]*(?:[~≈∼][ \t]*)?([-+−±]?\d+(?:\.\d+)?)(?P<unit>[ \t]*(?:pm|nm|Å|µm|μm|eV|meV|cm-1|cm⁻¹|°))?"
                         r"(?:[ \t]*\([^()|\d\n]{1,20}\))?[ \t]*(?=\|)")  # "| 0.00 (inverted) |": a note after the number
# a column of row numbers: "| band | shift (cm⁻¹) |" over "| 1 | 447.2 |" (the 1 is an enumeration, not a band)
_RANK_HEADER = re.compile(r"^(?:band|peak|rank|#|no\.?|n|index|line|order|row|step|entry)$", re.I)
_TABLE_SEPARATOR = re.compile(r"^\s*\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*$")
_HEADER_UNIT = re.compile(r"^(.*?)\s*(?:\(([^()]{1,20})\)|/\s*(\S{1,12}))\s*(?:[,;]\s*[^(),;|/]{1,20})?$")  # "m (µB), PBE+U"


_UNITISH = re.compile(r"eV|Å|\\AA|ngstr|nm|µm|μm|um\b|°|deg|cm|µ_?B|μ_?B|mu_?B|\\mu|Bohr", re.I)
_GENERIC_HEADER = re.compile(r"^\W*(?:values?|results?|quantity|number|amount|magnitude|data|calc(?:ulated)?|computed|"
                             r"PBE|DFT|this work|(?:PBE|DFT|GGA|calculated|computed|reported)\s+values?)\W*$", re.I)


_BARE_UNIT_HEADER = re.compile(r"^(?:nm|µm|μm|um|Å|pm|mm|cm-1|cm⁻¹|cm\^-1|cm\^\{-1\}|1/cm|eV|meV|°|deg|px|µ_?B|μ_?B)$")


def _cell_label(head: str, row_label: str, column: int) -> tuple[str, str]:
    """The name and unit a bare table number takes: its column header's, or, under a generic header ("| quantity |
    value |"), its row label's ("| E_hull (eV/atom) | 0.021 |" reads "E_hull = 0.021 eV/atom")."""
    if _BARE_UNIT_HEADER.match(head):
        return "", head  # "| # | px | nm |": the header is the column's unit
    label = _HEADER_UNIT.match(head)
    name, unit = (label.group(1), label.group(2) or label.group(3)) if label else (head, "")
    if unit and label is not None and label.group(2) and not _UNITISH.search(unit) and unit not in ("#", "no.", "No."):
        name, unit = head, ""  # "| LaPO4 (monazite) |": a name in brackets, not a unit
    if unit in ("#", "no.", "No."):
        unit = ""
    if column > 0 and not unit and row_label:
        row = _HEADER_UNIT.match(row_label)
        row_unit = (row.group(2) or row.group(3)) if row else ""
        if row_unit and _UNITISH.search(row_unit):
            return row.group(1), row_unit
        if _GENERIC_HEADER.match(name):
            return row_label, ""
    return name, unit


def _table_headers(text: str) -> dict[int, list[str]]:
    """For each data row of a markdown table (by its line start), the header cells of its table."""
    out: dict[int, list[str]] = {}
    lines = text.split("\n")
    pos = 0
    header: list[str] | None = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("|"):
            if header is None and i + 1 < len(lines) and _TABLE_SEPARATOR.match(lines[i + 1]):
                header = [c.strip() for c in stripped.strip("|").split("|")]
            elif header is not None and not _TABLE_SEPARATOR.match(line):
                out[pos] = header
        else:
            header = None
        pos += len(line) + 1
    return out


def _tables(text: str) -> tuple[str, _Pass | None]:
    """Write each bare number of a markdown table with its column's header and unit ("| 2θ (°) |" over "| 31.77 |"
    reads "2θ = 31.77 °"), so the cues and units of the header reach the number."""
    if "|" not in text or "-|" not in text.replace(" ", ""):
        return text, None
    headers = _table_headers(text)
    if not headers:
        return text, None

    def cell(m: re.Match[str]) -> str:
        line_start = text.rfind("\n", 0, m.start()) + 1
        header = headers.get(line_start)
        if header is None:
            return m.group(0)
        column = text.count("|", line_start, m.start()) - (1 if text[line_start:m.start()].lstrip().startswith("|") else 0)
        if not 0 <= column < len(header) or not header[column]:
            return m.group(0)
        line_end = text.find("\n", m.start())
        cells = text[line_start:line_end if line_end >= 0 else len(text)].strip().strip("|").split("|")
        if m.group("unit"):  # "| d |" over "| 221.7 pm |": the header names the quantity, the cell keeps its unit
            head = header[column]
            if _HEADER_UNIT.match(head) or _BARE_UNIT_HEADER.match(head) or _RANK_HEADER.match(head) or len(head) > 24:
                return m.group(0)
            return f" {head} = {m.group(1)}{m.group('unit')} "
        if _RANK_HEADER.match(header[column]):
            return m.group(0)
        name, unit = _cell_label(header[column], cells[0].strip() if cells else "", column)
        if not name:
            return f" {m.group(1)} {unit} "
        return f" {name} = {m.group(1)} {unit} ".replace("  ", " ")

    return _apply(text, _TABLE_CELL, cell)


_TEX_TABLE = re.compile(r"\\begin\{(?:tabular|array)\*?\}(?:\{[^{}\n]*\})*(.*?)\\end\{(?:tabular|array)\*?\}", re.S)
_TEX_ROW_END = re.compile(r"\\\\")
_TEX_RULE = re.compile(r"\\(?:hline|toprule|midrule|bottomrule|cline\{[^{}]*\})")
_TEX_NUMBER = re.compile(r"^([ \t\n]*\$?[ \t]*)([-+−]?\d+(?:\.\d+)?)[ \t]*\$?[ \t\n]*$")  # "$-3.3$" too


def _tex_tables(text: str) -> tuple[str, _Pass | None]:
    """A LaTeX tabular gets the same treatment as a markdown table: each bare number of a body row is written with
    its column's header and unit ("2$\\theta$ (deg) & ..." over "28.44 & ..." reads "2$\\theta$ = 28.44 deg")."""
    if "\\begin{" not in text or "&" not in text:
        return text, None
    edits: list[tuple[int, int, str]] = []
    for m in _TEX_TABLE.finditer(text):
        start = m.start(1)
        body = m.group(1)
        rows: list[tuple[int, str]] = []
        last = 0
        for r in _TEX_ROW_END.finditer(body):
            rows.append((start + last, body[last:r.start()]))
            last = r.end()
        if body[last:].strip():
            rows.append((start + last, body[last:]))
        header: list[str] | None = None
        for row_start, row in rows:
            if not _TEX_RULE.sub("", row).strip():
                continue
            cells: list[tuple[int, str]] = []
            pos = 0
            for cell in row.split("&"):
                cells.append((row_start + pos, cell))
                pos += len(cell) + 1
            if header is None:
                header = [_TEX_RULE.sub("", c).strip() for _, c in cells]
                continue
            row_label = _TEX_RULE.sub("", cells[0][1]).strip()
            for column, (cell_start, cell) in enumerate(cells):
                number = _TEX_NUMBER.match(_TEX_RULE.sub(lambda r: " " * len(r.group()), cell))
                if number is None or column >= len(header) or not header[column]:
                    continue
                name, unit = _cell_label(header[column], row_label, column)
                a = cell_start + len(number.group(1))
                b = a + len(number.group(2))
                edits.append((a, b, f" {name} = {number.group(2)} {unit or ''} ".replace("  ", " ")))
    return _splice(text, edits)


_CSV_HEADER = re.compile(r"^[ \t]*([A-Za-z_][\w ()/°⁻¹-]{0,40}(?:,[ \t]*[A-Za-z_][\w ()/°⁻¹-]{0,40}){1,})[ \t]*$", re.M)
_CSV_NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


_GENERIC_VALUE = frozenset({"value", "values", "val", "result", "number", "amount"})
_CSV_PAIR_ROW = re.compile(r"[^,\n]+,[^,\n]+\n[^,\n]+,[^,\n]+(?:\n|$)")


def _two_column_rows(text: str, pos: int) -> bool:
    return _CSV_PAIR_ROW.match(text, pos) is not None


def _csv_tables(text: str) -> tuple[str, _Pass | None]:
    """A CSV block ("material,metallic,band_gap_eV,method" over "KI,false,6.0,experiment") gets the same treatment as a
    markdown table: each numeric or boolean cell is written "header: value", so the key's quantity and unit reach the
    number (and "metallic: false" reads like the JSON key it is)."""
    if text.count(",") < 3:
        return text, None
    edits: list[tuple[int, int, str]] = []
    for header in _CSV_HEADER.finditer(text):
        names = [c.strip() for c in header.group(1).split(",")]
        pos = header.end() + 1
        if len(names) == 2 and not _two_column_rows(text, pos):
            continue  # "method,gap_eV" heads a block only over at least two rows of "name,value"; else it is prose
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            cells = text[pos:end].split(",")
            if len(cells) != len(names) or not text[pos:end].strip():
                break
            at = pos
            # "property,value" over "e_above_hull_eV_atom,0.006": under a generic header the row's key names the number
            key = cells[0].strip()
            keyed = len(names) == 2 and names[1].lower() in _GENERIC_VALUE and bool(key) and not _CSV_NUMBER.fullmatch(key)
            for column, (name, cell) in enumerate(zip(names, cells)):
                value = cell.strip()
                if _CSV_NUMBER.fullmatch(value) or value.lower() in ("true", "false", "yes", "no"):
                    start = at + cell.index(value)
                    edits.append((start, start + len(value), f"{key if keyed and column == 1 else name}: {value}"))
                at += len(cell) + 1
            pos = end + 1
    return _splice(text, sorted(edits)) if edits else (text, None)


# a run of whitespace longer than any layout needs; cues written as "\\s*" around a number backtrack over such a
# run once per optional step (cubic in its length: 200 spaces after a moment took seconds), so it is squeezed
_LONG_SPACE = re.compile(r"\s{9,}")


def _squeeze(m: re.Match[str]) -> str:
    """A long whitespace run as layout reads it: up to two line breaks, then at most 8 characters of indent."""
    run = m.group()
    breaks = run.count("\n")
    if not breaks:
        return run[:8]
    return "\n" * min(breaks, 2) + run[run.rfind("\n") + 1:][:8]


def normalize(chain: str | None, max_chars: int = MAX_CHARS) -> Text:
    """Canonical text with an offset map; chains over ``max_chars`` are cut and the cut is noted."""
    original = chain if isinstance(chain, str) else ("" if chain is None else str(chain))
    notes: list[str] = []
    if len(original) > max_chars:
        notes.append(f"chain truncated at {max_chars} characters (of {len(original)})")
        original = original[:max_chars]
    text = original
    passes: list[_Pass] = []
    text, edits = _apply(text, _LONG_SPACE, _squeeze)
    if edits is not None:
        passes.append(edits)
    text, edits = _tables(text)
    if edits is not None:
        passes.append(edits)
    text, edits = _tex_tables(text)
    if edits is not None:
        passes.append(edits)
    text, edits = _csv_tables(text)
    if edits is not None:
        passes.append(edits)
    low = text.lower()
    chars = set(low)
    for pattern, repl, triggers in _RULES:
        if not any(t[0] in chars and t in low if t.__class__ is str else t.search(text) is not None for t in triggers):
            continue
        text, edits = _apply(text, pattern, repl)
        if edits is not None:
            passes.append(edits)
            low = text.lower()
            chars = set(low)
    text, edits = _apply(text, _LONG_SPACE, _squeeze)  # again: rewrites blank out markup ("**", "{", "~") into runs
    if edits is not None:
        passes.append(edits)
    return Text(original, text, passes, notes)
