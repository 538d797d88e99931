"""Reading stability, metallicity and magnetism claims from what models write.

The final commitment counts: the "Answer:" line when there is one, else the last sentence that uses a
class keyword. A hedge that commits to nothing ("may or may not be stable") is no claim (unparsable).
"""

from __future__ import annotations

import re

from matpcr.records import Claim
from matpcr_plugins.quantities import normalize

HEDGE = re.compile(r"\b(may|might|could|possibly|either|uncertain|unclear|not sure|cannot (?:be )?determine)\b", re.I)
_SENTENCES = re.compile(r"(?<=[.!?\n])\s+")
_ANSWER = re.compile(r"\banswer\s*[*]*\s*[:=]", re.I)

STABLE = re.compile(r"\b(thermodynamically stable|is stable|are stable|be stable|stable phase|stable compound|"
                    r"(?:lies|lie|sits|is|located) on the (?:convex )?hull|on the convex hull|ground[- ]state phase|"
                    r"^\s*stable\b|yes\b)", re.I)
UNSTABLE = re.compile(r"\b(unstable|metastable|not (?:thermodynamically )?stable|decompos\w*|above the (?:convex )?hull|"
                      r"off the (?:convex )?hull|not on the (?:convex )?hull|^\s*no\b)", re.I)
METAL = re.compile(r"\b(metal(?:lic)?|semi-?metal(?:lic)?|zero (?:band )?gap|gapless|no band ?gap|conductor|^\s*yes\b)", re.I)
NONMETAL = re.compile(r"\b(insulat\w+|semiconduct\w+|non-?metal(?:lic)?|not metallic|wide[- ]gap|^\s*no\b)", re.I)
GAP = re.compile(r"\b(?:band ?gap|gap|E_?g)\b[^.\n\d]{0,25}?(\d+(?:\.\d+)?)\s*eV", re.I)
BARE_EV = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*eV\b")  # in an answer line to the gap question, "1.1 eV" is the gap
NONMAG = re.compile(r"\b(non-?magnetic|diamagnetic|antiferromagnet\w*|no (?:net )?magnetic moment|zero (?:net )?"
                    r"(?:magnetic )?moment|not magnetic|unpolari[sz]ed|^\s*no\b)", re.I)
MAG = re.compile(r"\b(ferromagnet\w*|ferrimagnet\w*|is magnetic|magnetic (?:ordering|order|ground state)|"
                 r"^\s*yes\b)", re.I)  # "spin-polarised" only echoes the question
_MU_B = r"(?:µ\s*_?\s*B|μ\s*_?\s*B|\\mu_?\s*\{?B\}?|mu_?B|u_?B|Bohr magnetons?)"
MOMENT = re.compile(rf"(\d+(?:\.\d+)?)\s*{_MU_B}\s*(?:/|per)?\s*(f\.?\s*u\.?|formula unit|atom|site|cell|unit cell|"
                    rf"[A-Z][a-z]?(?![a-z]))?", re.I)


def committed_text(chain: str, keywords: list[re.Pattern[str]]) -> str | None:
    """The part of the chain that holds the model's commitment, or None if nothing commits."""
    text = normalize(chain or "")
    marks = list(_ANSWER.finditer(text))
    if marks:
        return text[marks[-1].end():].strip().split("\n")[0]
    sentences = [s for s in _SENTENCES.split(text) if any(k.search(s) for k in keywords)]
    return sentences[-1] if sentences else None


def _classify(segment: str, positive: re.Pattern[str], negative: re.Pattern[str]) -> str | None:
    pos = [m.start() for m in positive.finditer(segment)]
    neg = [m.start() for m in negative.finditer(segment)]
    if HEDGE.search(segment):
        return None  # a hedge commits to nothing
    if pos and neg:
        # "metastable" and "not stable" also contain the positive cue; the negative wins when they overlap
        if all(any(abs(p - n) < 12 for n in neg) for p in pos):
            return "negative"
        return None
    if pos:
        return "positive"
    if neg:
        return "negative"
    return None


def stability_claims(chain: str) -> list[Claim]:
    segment = committed_text(chain, [STABLE, UNSTABLE])
    if not segment:
        return []
    cls = _classify(segment, STABLE, UNSTABLE)
    if cls is None:
        return []
    return [Claim("stability", "stable" if cls == "positive" else "unstable", "", (0, 0), segment[:120])]


def metallicity_claims(chain: str) -> list[Claim]:
    segment = committed_text(chain, [METAL, NONMETAL, GAP])
    if not segment:
        return []
    gap = GAP.search(segment) or BARE_EV.search(segment)
    if gap:
        return [Claim("band_gap", float(gap.group(1)), "eV", gap.span(), gap.group(0))]
    cls = _classify(segment, METAL, NONMETAL)
    if cls is None:
        return []
    return [Claim("metallicity", "metallic" if cls == "positive" else "gapped", "", (0, 0), segment[:120])]


def magnetism_claims(chain: str) -> list[Claim]:
    segment = committed_text(chain, [MAG, NONMAG, MOMENT])
    if not segment:
        return []
    moment = MOMENT.search(segment)
    if moment:
        basis = (moment.group(2) or "cell").strip().lower().replace(" ", "")
        basis = {"f.u.": "fu", "fu": "fu", "f.u": "fu", "formulaunit": "fu", "site": "atom", "unitcell": "cell"}.get(basis, basis)
        if moment.group(2) and re.fullmatch(r"[A-Z][a-z]?", moment.group(2).strip()):
            basis = "element:" + moment.group(2).strip()
        return [Claim("magnetic_moment", float(moment.group(1)), f"muB/{basis}", moment.span(), moment.group(0))]
    cls = _classify(segment, MAG, NONMAG)
    if cls is None:
        return []
    return [Claim("magnetism", "magnetic" if cls == "positive" else "nonmagnetic", "", (0, 0), segment[:120])]
