"""What the words around a number say about it: the cues that make a number *not* a claim.

Every cue is matched on a short window that ends at the number (``pattern.search(text, lo, hi)`` with the
pattern anchored at ``$``), so a cue must be *attached* to its number: "step size of 0.02°" rejects 0.02°,
but in "the FWHM of the 28.4° peak" 28.4° stays a peak position. Sentence-level cues (hedges, negations,
retractions) look at the clause the number sits in. All windows are bounded, so the cost per number is
constant.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, Callable

# words that may sit between a cue and its number: "step size of about 0.02°", "WD = 2.8 mm"
LINK = (r"(?:\s*(?:[=:≈<>≤≥~(]|\([^()]{0,14}\)|\bis\b|\bwas\b|\bare\b|\bwere\b|\bbe\b|\bof\b|\babout\b|\bapproximately\b|\bapprox\.?|"
        r"\baround\b|\broughly\b|\bnearly\b|\bca\.?|\bcirca\b|\bset to\b|\bat\b|\bby\b|\bonly\b|\bjust\b|\bsome\b|"
        r"\btypically\b|\bclose to\b|\bnear\b|\bapprox\b|\bestimated\b|\bcalculated\b|\bcomputed\b|\bgiven\b|"
        r"\bthe\b|\ba\b|\ban\b|\bwith\b|\bvalue\b|\bvalues\b|\bhere\b|\bfor\b|"
        r"\b(?:falls?|drops?|rises?|increases?|decreases?|shrinks?|grows?|opens?|narrows?|widens?|goes)\s+(?:up\s+|down\s+)?to\b)\s*)*")


def attached(cue: str, flags: int = re.I) -> re.Pattern[str]:
    """A pattern that matches when ``cue`` is followed only by linking words up to the window's end."""
    return re.compile(rf"(?:{cue})\s*(?:\([^()]{{0,12}}\))?{LINK}\s*$", flags)


# a one-sided bound is a range with one end: "above 70°", ">1.5 eV", "at least 2 µB"
BOUND = re.compile(r"(?:[<>≤≥]=?|\bexceeds?\b|\bmore than\b|\bless than\b|\blonger than\b|\bshorter than\b|\bwider than\b|\bthicker than\b|\bat least\b|\bat most\b|\bover\b|\bunder\b|\babove\b|"
                   r"\bbelow\b|(?<!\bit )(?<!\bthem )(?<!\bthis )(?<!\bthat )\bup to\b|\bin excess of\b|\bexceeding\b|\bgreater than\b|\bsmaller than\b|\blower than\b|"
                   r"\bhigher than\b|\blarger than\b)\s*(?:(?:twotheta|2θ|θ|d)\s*[=≈]?\s*)?(?:about|approximately|~|≈)?\s*$", re.I)
# a bound written after its number: "shift it down to 1000 cm⁻¹ or less", "2 µm or more"
OR_BOUND_AFTER = re.compile(r"\s*(?:or|and)\s+(?:less|more|lower|higher|below|above|smaller|larger|greater|fewer)\b", re.I)
# a list the next clause says is absent: "adds O–H bands at about 3660 and 3645 cm⁻¹; none appear here"
NONE_SEEN_AFTER = re.compile(r"\s*[;,]\s*(?:but\s+)?(?:none|neither)\s+(?:of\s+(?:them|these|those)\s+)?(?:appears?|is|are|was|were|"
                             r"shows?\s+up|can\s+be\s+seen|is\s+seen|are\s+seen|is\s+present|are\s+present)\b", re.I)
# a candidate line the chain turns down: "(a) 20 nm × 72 nm, which just reads px as nm (rejected);"
REJECTED_LINE_AFTER = re.compile(r"[^\n]{0,80}?(?:\(\s*(?:rejected|discarded|ruled out|wrong)\s*\)|[—–;]\s*(?:rejected|discarded|"
                                 r"ruled out|wrong)\b)|,\s*which\s+[^\n.;]{0,60}?\b(?:is|are)\s+(?:wrong|incorrect)\b", re.I)
# a value the words after it make hypothetical: "360 nm — would follow if the bar were 1 µm", "its 144 cm⁻¹ band would be
# outside the window"
WOULD_AFTER = re.compile(r"\s*\)?\s*(?:[—–,]\s*)?(?:(?:which|that)\s+)?(?:\w+\s+)?would\s+(?:follow|be|apply|result|hold|appear|give)\b", re.I)
# a sentence that sets other phases or things against the asked one: "For comparison, celestine has ν₁ at 1000 cm⁻¹"
COMPARISON_LEAD = re.compile(r"\s*\W*\s*(?:(?:for|by|in)\s+comparison|compared?\s+(?:with|to)|for\s+reference)\b", re.I)
# a sentence whose subject is negated: "No D or G band (≈1350 and ≈1580 cm⁻¹) is present."
NO_SUBJECT = re.compile(r"\W*(?:no|none\s+of|neither)\b(?![-\w])", re.I)
PRESENT_AFTER = re.compile(r"[^;:]{0,40}?\b(?:is|are|was|were)\s+(?:present|seen|observed|visible|detected|found)\b", re.I)
# a value the chain withdraws by name, wherever else it was stated: "so the 57.6 nm figure is wrong", "scrap the 381 cm⁻¹
# value"
VALUE_WITHDRAWN_BEFORE = re.compile(r"\b(?:scrap|drop|discard|withdraw|disregard)\s+(?:the|that|this|my)\s*$", re.I)
THE_BEFORE = re.compile(r"\b(?:the|that|this|my|and)\s*$", re.I)
VALUE_WITHDRAWN_AFTER = re.compile(r"\s*(?:[\w-]+\s+)?(?:figure|value|number|estimate|result|reading)\s+(?:is|was)\s+"
                                   r"(?:wrong|incorrect|off|a\s+mistake)\b|"
                                   r"(?:[^.;\n]|\.(?=\d)){0,60}?\b(?:is|was|are|were)\s+not\s+reproduced\b|"
                                   r"\s*(?:and\s+\d+(?:\.\d+)?\s*)?(?:cm-1\s*)?(?:bands?|peaks?|lines?|reflections?)\s+(?:is|are)\s+"
                                   r"(?:absent|missing|not\s+(?:seen|observed|present))\b", re.I)
# "Sorry — 0.9 eV is what the orthorhombic γ phase gives": an apology, then the value handed to something else
# "the length is not 20.9 µm": the chain denies the value
VALUE_DENIED_BEFORE = re.compile(r"\b(?:is|are|was|were)\s+not\s+(?:about\s+|around\s+|~\s*)?$|(?<=\d)[^\n.;]{1,25},\s*not\s*$", re.I)
APOLOGY_BEFORE = re.compile(r"\b(?:sorry|oops|correction|my mistake)\b\s*[—–:,;-]*\s*$", re.I)
REASSIGNED_AFTER = re.compile(r"\s*(?:is|was)\s+(?:actually\s+|really\s+)?(?:what|the\s+(?:value|gap|number|figure)\s+(?:of|for)|"
                              r"for|from)\b", re.I)
# a section whose heading says its numbers are not the sample's: "## Not from this image", "### Things that are not the gap"
# (bold labels reach the reader with their ** turned into spaces: "**Not from the image.** XPS …" reads
# " Not from the image.  XPS …")
_HEADING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+(?P<title>[^\n]{0,80})$|\*\*(?P<bold>[^*\n]{1,60})\*\*|(?P<label>[A-Z][^.:\n]{2,60}[.:])[ \t]{2})",
                      re.M)
_EXCLUDED_TITLE = re.compile(r"\bnot\s+(?:from|in|on|of)\s+(?:this|the)\s+(?:image|micrograph|spectrum|pattern|sample|measurement|"
                             r"calculation|frame)|\bnot\s+the\s+(?:gap|band|bands|answer|asked|sample)\b|\bthings\s+that\s+are\s+not\b|"
                             r"\bother\s+(?:techniques|methods|characteri[sz]ation)\b|\b(?:the\s+other|other|related)\s+(?:polymorph|phase|polytype|"
                             r"material|compound)s?\b|\(\s*(?:for\s+)?context\s*\)", re.I)


def excluded_sections(text: str, answer_start: int) -> list[tuple[int, int]]:
    """The spans of sections whose heading says their numbers are not the asked sample's, each ending at the next
    heading or at the Answer line."""
    heads = [(m.start(), m.end(), bool(_EXCLUDED_TITLE.search(m.group("title") or m.group("bold") or m.group("label"))))
             for m in _HEADING.finditer(text)]
    out = []
    for i, (_, end, excluded) in enumerate(heads):
        if excluded:
            stop = heads[i + 1][0] if i + 1 < len(heads) else len(text)
            if end < answer_start:
                stop = min(stop, answer_start)
            out.append((end, stop))
    return out


def in_spans(spans: list[tuple[int, int]], pos: int) -> bool:
    """Whether ``pos`` lies in one of the sorted, disjoint ``spans`` (a bisect: linear time over a chain)."""
    i = bisect.bisect_right(spans, (pos, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= pos < spans[i][1]


# a counterfactual written after its value: "or 34.4 nm if the bar were 200 nm, which it is not"
IF_WERE_AFTER = re.compile(r"\s*,?\s*if\s+[^.;\n]{0,40}?\b(?:were|had\s+been)\b", re.I)
# a ratio or factor, not a value: "weaker by the Boltzmann factor (≈ 0.41"
FACTOR_BEFORE = re.compile(r"\bfactors?\s*(?:of\s*|\(\s*)?(?:≈|~|about|approximately)?\s*$", re.I)
# a literature citation in the sentence before the number: "Dawson et al. [12] reported it at 3652 cm⁻¹ …"
CITATION = re.compile(r"\bet al\b|\[\d{1,3}(?:[,–-]\d{1,3})*\]|\(\s*(?:19|20)\d\d\s*\)|"
                      r"\((?-i:[A-Z])[^()\n\d]{1,50}?,\s*(?:19|20)\d\d[a-z]?\s*\)", re.I)  # "(Kolesov & Geiger, 1998)"
UNCERTAINTY = attached(r"±|\bagreement\s+(?:to|within)\b|\buncertaint(?:y|ies)\b|\berrors?(?: bars?)?\b|\bprecision\b|\baccuracy\b|\btolerance\b|"
                       r"\bwithin\b|\bdeviations?\b|\bσ|\bstandard deviation\b|\bstd\.?\b|\berror of\b|\b\+/-")
TEMPERATURE = attached(r"\btemperatures?\b|\bT\s*=|\bT_\w+\s*=|\banneal(?:ed|ing)?\b|\bcalcin(?:ed|ation)\b|\bsinter(?:ed|ing)\b|"
                       r"\bheated\b|\bheating\b|\bcooled\b|\bmelting point\b|\bT_?[cmN]\b|\bCurie\b|\bNéel\b|\bNeel\b")
SPACE_GROUP = attached(r"\bspace[- ]group(?:\s+(?:number|no\.?|#))?|\bSG\b|\bNo\.|\bno\.|\bnumber\b|#|\bIT\b|"
                       r"\binternational tables?\b")
MILLER_BEFORE = attached(r"\bhkl\b|\bMiller(?: indices| index)?\b|\bplanes?\b|\breflections?\b|\bindices\b|\bindexed as\b|"
                         r"\bfamily\b|\bdirection\b|\bpeaks?\b|\blines?\b")
MILLER_AFTER = re.compile(r"\s*(?:\)|\]|\})?\s*(?:reflections?|peaks?|planes?|lines?(?!\s*/)|diffraction|facets?|orientation|"
                          r"texture|direction|spacing)\b", re.I)
LATTICE = attached(r"(?<![\w.])(?:[abc]\s*(?:_?0)?|a\s*=\s*b|b\s*=\s*c|a\s*=\s*b\s*=\s*c)\s*[=≈:]|"
                   r"\blattice\s+(?:parameters?|constants?|spacing|edges?)\b|\bcell\s+(?:parameters?|constants?|edges?|lengths?)\b|"
                   r"\b[abc]-axis\b|\bunit[- ]cell\s+(?:length|edge|dimension)s?\b|\bcubic\s+(?:cell|lattice)\s+(?:of|with)\b|"
                   r"[αβγ]\s*[=≈:]|\b(?:alpha|beta|gamma)\s*[=≈:]|\blattice angles?\b|\bcell angles?\b|"
                   r"(?<![\w.])[abc]\s*,\s*[abc](?:\s*,\s*[abc])?\s*=")
WAVELENGTH = attached(r"(?-i:λ)(?:_\w+)?|\bwavelengths?\b|\bKα[12]?\b|\bKβ\b|\bradiation\b|\bX-?rays?\b(?! diffraction)|"
                      r"\blaser\b|\bexcitation\b|\bexcited\b|\bsource\b")
DIFFERENCE = attached(r"\b(?:separation|splitting|difference)\s*,|\bshift(?:ed)? by\b|\bshifts? of\b|\boffset\b|\bdifference\b|Δ\s*(?:twotheta|θ|d|x|λ|k)?\s*[=≈]|\bseparat(?:ed|ion)\b|"
                      r"\bsplitting\b|\bapart\b|\bincrement\b|\bspacing between\b|\bdisplaced by\b|\bdecrease[sd]? by\b|"
                      r"\bincrease[sd]? by\b|\bmoves? by\b|\bdiffers? by\b|"
                      r"(?<!accompanied )(?<!followed )(?<!represented )(?<!flanked )(?<!joined )(?<!dominated )(?<!given )"
                      r"(?<!marked )(?<!led )(?<!compensated )(?<!offset )(?<!balanced )(?<!countered )\bby\b|\bdrift(?:ed|s)?\b")

# a hypothetical value: "under Cu Kα the (110) line would sit at 40.30°", "which would make the edge 0.84 µm"
WOULD = re.compile(r"\bwould\s+(?:\w+\s+)?(?:expect|predict|need|require|add|sit|be|lie|appear|make|give|put|place|fall|occur|move|shift|push|raise|lower|read|become|yield|"
                   r"show|have|display|exhibit|produce|look|contain)\b"
                   r"(?:[^.\n;]|\.(?=\d)|\b(?:e\.g|i\.e|cf)\.){0,70}$", re.I)  # a decimal point ("2 × 1332.5 = 2665") does not end the clause
# "the separation between A1g and E2g is 24.8 cm-1": a difference of two values, not a value
BETWEEN_DIFFERENCE = re.compile(r"\b(?:separation|difference|splitting|spacing|offset|shift)\s+between\b[^.\n]{0,40}$", re.I)
# a difference written after its number: "a Kα2 shoulder 0.1° higher", "bands 24 cm⁻¹ apart", "50 nm larger"
DIFFERENCE_AFTER = re.compile(r"[ \t]*(?:(?:below|above)\s+(?:that|those|the\s+one)\s+of|(?:below|above)\s+[a-z]{3,}(?:'s|’s)\s|(?:below|above|under|over)\s+the\s+"
                              r"(?:bulk|reference|literature|unstrained|relaxed|expected|nominal)\s+(?:value|position|line|band)|(?:down|up|red|blue)-?shift(?:ed|s)?|splitting|difference|higher|lower|apart|away|further|wider|narrower|larger|smaller|bigger|shorter|"
                              r"longer|between\s+(?:them|the|these|those|both|its|their))\b", re.I)
# the position of one bin ("the 29.48° bin", "the neighbouring 1013.0 bin") rather than a bin width
BIN_POSITION = re.compile(r"\b(?:the|this|that|neighbou?ring|adjacent|next|previous)\s*$", re.I)
# numbers a cue *after* them rejects: "28.4 (2)" style uncertainty is handled by the tokenizer
NEGATION_AFTER = re.compile(r"\s*\)?\s*(?:\([^()]{0,20}\)\s*)?,?\s*(?:;\s*(?:not\s+(?:seen|observed|present|detected)|absent)\b|"
                            r"but\s+(?:PBE|DFT|GGA|the\s+calculation|our\s+calculation|it|this)\s+(?:does|did)\s*(?:not|n't)\s+reproduce\b|"
                            r";\s*(?:I|we)\s+(?:do|did|could|can)\s*(?:not|n't)\s+reproduce\b|"
                            # "a 0.15 eV gap, which PBE does not reproduce": a reported value the calculation does not find
                            r"(?:(?:[\w-]{1,30}\s+)?[\w-]{1,30},\s*)?(?:which|that)\s+(?:PBE|DFT|GGA|LDA|(?:the|our)\s+calculations?|it|this|we|I)\s+"
                            r"(?:does|did|do|could|can)\s*(?:not|n't)\s+reproduce\b|(?:is|was|are|were)\s+(?:not|n't)\s+(?:a\s+|an\s+|the\s+)?"
                            r"(?:real\s+|genuine\s+|true\s+|actual\s+)?(?:peak|reflection|band|line|mode|observed|present|seen|"
                            r"visible|allowed|there|expected|found|reproduced|confirmed|resolved|resolvable)\b|(?:isn't|aren't|wasn't)\s+(?:a\s+)?(?:peak|reflection|band|"
                            r"observed|present|there)\b|(?:is|are|was|were)?\s*(?:absent|missing|forbidden|extinct)\b|"
                            r"(?:does|do|did)\s+not\s+(?:appear|exist|show|occur)|(?:doesn't|don't|didn't)\s+(?:appear|exist|show|occur)|"
                            r"(?:cannot|can't|could not|couldn't|would not|wouldn't)\s+(?:fit|be|exist|appear|occur)|"
                            r"(?:\S+\s+){0,4}?(?:band|peak|mode|line|reflection)s?\s+(?:of\s+(?:the\s+)?[\w-]+\s+)?(?:is|are|was|were)\s+(?:not|n't)\s+"
                            r"(?:resolved|seen|observed|detected|present|visible|found)\b)",
                            re.I)
NEGATION_BEFORE = re.compile(r"(?:\bno\b(?!\s+(?:SOC|spin[–-]orbit\s+coupling|\+?U|Hubbard\s+U)\b)|\bnot\b|n't\b|\bnever\b|\bnone\b|"
                             r"\bwithout\b(?!\s+(?:SOC|spin[–-]orbit(?:\s+coupling)?|\+?U|Hubbard\s+U|relaxation|D3|vdW|dispersion)\b\s*,?\s*"
                             r"(?:it|the\s+(?:gap|value|moment|result))\s+(?:is|was|comes\s+out|gives?|becomes?)\b)|\babsent\b|\bnor\b|\bnothing\b|[❌✗✘]|"
                             r"\black(?:s|ing)?\b|\brather than\b|\binstead of\b)[^,;:.\n]{0,30}$", re.I)
NEGATION_BLOCK = re.compile(r"\s[—–]\s|\band\s+(?:then\s+)?(?:measures?|spans?|is|are|has|shows?|gives?|reads?)\b|\bbut\b|\bhowever\b|\binstead\b|\bonly\b|\brather\b|\bother than\b|\bnot only\b|"
                            r"\bother\b|\bexcept\b|\bnot just\b|\bif not\b", re.I)
# hedged means an explicit non-commitment: words that decline to choose, or a hedge over alternatives ("might be
# at 25.3° or at 27.4°"); approximate wording ("about", "~", "probably") still asserts
NON_COMMITMENT = re.compile(r"(?=[cnuhdie])\b(?:can't tell|cannot tell|can not tell|not sure|unsure|uncertain|unclear|can't say|cannot say|"
                            r"cannot decide|can't decide|cannot determine|can't determine|not confident|no way to know|"
                            r"hard to say|difficult to say|i don't know|either way|undecided)\b", re.I)
HEDGE = re.compile(r"\b(?:maybe|perhaps|possibly|might|may|could|either|whether|i guess)\b", re.I)
ALTERNATIVES = re.compile(r"\bor\b", re.I)
# counterfactual values are not claims about the sample: "if it were Cu, the peak would be at 43.3°"
COUNTERFACTUAL = re.compile(r"\btempting\s+to\s+(?:read|say|take|think|call|write)\b[^\n;.]*$|\bif\b[^\n;]{0,40}\b(?:were|had been)\b[^\n;]*$|\bhad\s+(?:the|it|this|they|we)\b[^\n;.]{0,40}\bbeen\b[^\n;]*$|\bif\b[^\n;]{0,60}\binstead\b[^\n;]*$", re.I)
RETRACT_AFTER = re.compile(r"—\s*no\b(?!\s+(?:(?:net|local|magnetic|spin|ordered|induced)\s+)?(?:moments?|magneti[sz]ation|polari[sz]ation|states|gap|splitting|order|ordering)\s+(?:forms?|develops?|appears?|survives?|remains?|opens?|exists?|is|on|at)\b)|[—–;]\s*correction\b|\bcorrection\s*:|\b(?:no,? wait|wait|sorry|i mean|upside down|typo|at first(?!\s+glance)|mis-?remember\w*|misspoke|mis-?read|wrong|incorrect|mistake|mistaken|error in|erroneous|not right|isn't right|doesn't fit|"
                           r"does not fit|doesn't match|does not match|can't be right|cannot be right|too (?:high|low|large|small)|"
                           r"recalculat\w*|recomput\w*|redo|re-?check\w*|correcting\b|scratch that|let me re\w+|mis-?add\w*|I\s+forgot)\b", re.I)
RETRACT_LEAD = re.compile(r"[\s*_]*[—–-]?\s*(?:on\s+re-?reading\s+the\s+(?:label|scale|bar|units?)|sorry|wait|hmm+|oops|no(?=\s*[,—–.!:;-])|no,?\s+(?:wait|that|actually)\b|actually|correction|hold on|on second thought|scratch that|"
                          r"that(?:'s| is| was) (?:wrong|incorrect|not right)|(?:this|that) (?:is|was) (?:wrong|a mistake)|"
                          r"i made (?:a|an) (?:mistake|error)|let me re\w+|that\s+(?:does\s+not|doesn't)\s+match|i\s+mis-?add\w*|"
                          # the next sentence calls the value impossible: "… = 4.1 µm? That can't be — the rod is thinner
                          # than the bar.", "That is far too small for a grain — re-reading the bar, it says 5 µm."
                          r"that\s+(?:can(?:'|’)t|cannot|can\s+not)\s+be(?:\s+right|\s+correct)?(?=\s*[—–,.!;:-])|"
                          r"that(?:'s|\s+is|\s+was)\s+(?:(?:far|much|way)\s+)?too\s+(?:big|large|small)\b"
                          r"(?=[^.;\n]{0,60}?\b(?:re-?read\w*|redo\w*|re-?measur\w*|re-?check\w*|let\s+me\s+re\w+)))", re.I)
# "712 cm⁻¹? No — that is the ring deformation and it is weaker": a "no" that only demotes the band in the ranking
RANKING_ONLY = re.compile(r"[\s*_]*(?:[—–-]\s*)?no\s*[,—–.!:;-]\s*(?:that|it|this)(?:'s|\s+is|\s+was)\s+[^.;\n]{0,60}?"
                          r"\b(?:weaker|less\s+intense|not\s+the\s+(?:strongest|main|most\s+intense|dominant))\b", re.I)
# (w40) a check that confirms the figure, ending on its verdict: "= 118.75 nm. Wait, let me double-check the division:
# 200/32 = 6.25, yes." (not "Wait, let me recheck: 200/32 = 6.5, not 6.25.")
CONFIRMED_CHECK = re.compile(r"[\s*_]*(?:[—–-]\s*)?(?:(?:wait|hold\s+on|hmm+)\s*[,—–.!:;-]?\s*)?(?:let\s+me|let's|I'll)\s+"
                             r"(?:double-?|re-?|quickly\s+)?(?:check|verify|confirm)\b(?:[^\n.;!?]|\.(?=\d)){0,120}?"
                             r"[,;:—–-]\s*(?:yes|yep|correct|right|confirmed|(?:that|it)\s+checks\s+out)\b[ \t]*[.!]", re.I)
# "… E_hull = 0.014 eV/atom relative to PbO + PbO₂. Correction: stable.": a correction that names only a class revises
# the earlier class word, not the numbers before it
CLASS_ONLY_CORRECTION = re.compile(r"[\s*_]*(?:[—–-]\s*)?(?:correction|actually|on\s+second\s+thought)\s*(?:[:,—–-]\s*)?"
                                   r"(?:it\s+is\s+|it'?s\s+|the\s+answer\s+is\s+)?(?:(?:thermodynamically|dynamically)\s+)?"
                                   r"(?:stable|unstable|metastable|metallic|gapped|magnetic|non-?magnetic|insulating|an?\s+(?:metal|insulator|semiconductor))"
                                   r"[ \t]*[.!]?[ \t]*", re.I)
RETRACT_BEFORE = re.compile(r"\b(?:initially|at first|first|originally|earlier|previously|mistakenly|wrongly|incorrectly)\b"
                            r"[^.\n]{0,40}\b(?:thought|guess(?:ed)?|said|got|wrote|computed|calculated|estimated|assumed|"
                            r"claimed|stated|had|put|placed|read|assigned|measured|took|listed|wrote down|picked|reported|typed|recalled)\b[^.\n]{0,30}$|\b(?:instead of|rather than|not)\s*$|\bi (?:guessed|wrongly)\b[^.\n]{0,30}$",
                            re.I)
# "I first wrote 6.6 eV, but that is the HSE06 number": the value is relabelled as another method's, not withdrawn
RELABELLED_AFTER = re.compile(r"[^.;\n\d]{0,20}?\bbut\s+(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:the|an?)\s+"
                              r"(?:HSE\w*|GW|G0W0|mBJ|PBE0|SCAN|hybrid(?:-functional)?|experimental|measured|neutron)\s+"
                              r"(?:number|value|gap|figure|result|moment)\b", re.I)
ENUMERATION = re.compile(r"(?:^|\n)[ \t>]*(?:[-*][ \t]*)?(?:step[ \t]*|#|no\.[ \t]*|peak[ \t]*|band[ \t]*|\|[ \t]*)?$", re.I)
ENUMERATION_AFTER = re.compile(r"[ \t]*(?:[.:)|](?!\d)|\*\*)")
ORDINAL = re.compile(r"(?:st|nd|rd|th)\b")
INSTRUMENT_AFTER = re.compile(r"[ \t]*(?:wide\s+)?(?:(?P<bin>bins?)\b|(?:test|scan|measuring)\s+lines?|steps?|step size|"
                              r"(?:(?:nominal|spatial|lateral|spectral|instrumental)\s+)?resolution|increments?|intervals?|grid|"
                              r"lines?\s*/\s*mm|grooves?|gr\s*/\s*mm|(?:x|×)\s+objective|objective|"
                              r"(?:(?:fixed|automatic|programmable|anti-?scatter|receiving|divergence|soller)\s+)?slits?|"
                              r"(?:sample\s+)?(?:offset|tilt|oscillation)|(?:mono(?:chromator)?\s+)?take-?off)\b", re.I)
# a retraction right after a list separator: "Au (111) at 38.8°, scratch that, ..." (not "28.4°, 47.3°, wrong")
RETRACT_IMMEDIATE = re.compile(r"[,;—–]\s*(?:no,?\s+wait|wait|sorry|scratch that|oops|correction|i mean|no\s*[—–-]|typo|"
                               r"(?:but\s+)?that(?:'s| is| was) (?:wrong|incorrect)|no,?\s+actually)\b", re.I)
# a bare integer counting things: "observed at 3 positions", "3 strongest reflections", "12 formula units"
COUNT_AFTER = re.compile(r"-(?:atoms?|sites?|layers?|fold|f\.u\.|formula[- ]units?)\b|[ \t]+(?:(?:strongest|main|major|distinct|separate|weak|strong|sharp|broad|Raman|equivalent|"
                         r"inequivalent|magnetic|water)[ \t]+)?(?:molecules|positions|bands|peaks|modes|lines|reflections|particles|atoms|"
                         r"sites|values|points|rows|grains|crystals|steps|times|formula units|components|phases)\b", re.I)
# a rate or coefficient, not a value: "−0.022 cm⁻¹/K", "5.2 cm⁻¹/GPa", "0.3 eV per GPa"
COEFFICIENT_AFTER = re.compile(r"[ \t]*(?:/|per[ \t]+)(?:K|°C|GPa|MPa|kbar|bar|%|layer|T|kOe|Oe|V|volt|(?:mol|wt|at)[ \t]*%)(?![\w])")
# a signal-to-noise ratio or a difference label right before the number: "S/N ≈ 120", "Δ = 1.2 cm⁻¹" (not "Δν = 465")
RATIO_BEFORE = re.compile(r"(?:\bS/N|\bSNR|signal[- ]to[- ]noise(?:\s+ratio)?)\s*(?:of\s+)?[=≈~:]?\s*(?:about\s+)?$", re.I)
DELTA_BEFORE = re.compile(r"Δ\s*[=≈]\s*$")
# the result of a subtraction written out: "1086.2 − 1085.0 = 1.2 cm⁻¹"
SUBTRACTION_BEFORE = re.compile(r"\d\s*(?:[^\W\d_]{1,3}\S{0,3})?\s[−–-]\s*\d+(?:\.\d+)?\s*(?:[^\W\d_]{1,3}\S{0,3})?\s*=\s*$")
# the number belongs to another phase or a counterfactual: "Aragonite would instead show 701 cm⁻¹"
OTHER_SUBJECT = re.compile(r"\bwould instead\b|(?<!spectrum )(?<!sample )(?<!pattern )(?<!micrograph )(?<!film )"
                           r"\binstead (?:shows?|has|have|gives?)\b|\bunlike\b|\bin contrast\b|"
                           r"\bwhereas\b[^.\n]{0,40}$", re.I)
def closed_aside(norm: str, lo: int, pos: int, end: int) -> bool:
    """``pos`` lies in a parenthetical aside opened after ``lo`` and closed before ``end``: "Claudetite (monoclinic,
    unlike cubic arsenolite) shows its band at 367.5 cm⁻¹" (the contrast stays inside the brackets)."""
    opened = norm.rfind("(", lo, pos)
    return opened >= 0 and ")" not in norm[opened:pos] and ")" in norm[pos:end]


# the main clause after a contrast ("Unlike aragonite, whose ν4 is at 701 cm⁻¹, this calcite shows 712 cm⁻¹"): its
# numbers are the asked sample's again
MAIN_CLAUSE = re.compile(r"[,;]\s*(?:(?:but|and|so)\s+)?(?:this|these|our|here|it|we|the\s+(?:present|measured|asked|given|"
                         r"sample|film|spectrum|pattern|micrograph|material|compound)|in\s+(?:this|our|the\s+(?:present|"
                         r"measured|asked))\b)\b", re.I)
# a bare number inside arithmetic ("M = (1.11) * 10^(-24) * ...") is a fragment, not a stated value
ARITHMETIC_AFTER = re.compile(r"\s*\)?\s*(?:[*×/^+]|(?:arc)?(?:sin|cos|tan)\b|asin\b)")
ANSWER = re.compile(r"(?:\bfinal\s+)?\banswers?\b\s*(?:\([^()\n]{0,20}\))?\s*[:=]|\bthe answer is\b\s*:?|\\boxed\b", re.I)

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_ABBREVIATION = re.compile(r"(?:\b(?:No|no|e\.g|i\.e|vs|ca|Fig|Eq|approx|et al|f\.u|a\.u|cf|resp|Ref|ref|lit|Lit))$")
_CLAUSE_END = re.compile(r"[,;:(]|\s–\s|\bbut\b|\bwhile\b|\bwhereas\b|\bwhich\b", re.I)


@dataclass
class Sentences:
    """Sentence boundaries of a text, found once so each number's sentence is a bisect away."""

    text: str
    ends: list[int]

    @classmethod
    def of(cls, text: str) -> "Sentences":
        ends = []
        for m in _SENTENCE_END.finditer(text):
            pos = m.start()
            if text[pos] == "." and _ABBREVIATION.search(text, max(0, pos - 7), pos):
                continue  # "No. 225", "e.g. 28°"
            ends.append(m.end())
        return cls(text, ends)

    def bounds(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.ends, pos)
        start = self.ends[i - 1] if i > 0 else 0
        end = self.ends[i] if i < len(self.ends) else len(self.text)
        return start, end

    def previous(self, pos: int) -> tuple[int, int] | None:
        start, _ = self.bounds(pos)
        if start == 0:
            return None
        return self.bounds(start - 1)

    def next(self, pos: int) -> tuple[int, int] | None:
        _, end = self.bounds(pos)
        if end >= len(self.text):
            return None
        return self.bounds(end)


_PER_TEXT: dict[tuple[str, int], tuple[str, Any]] = {}


def _per_text(kind: str, text: str, build: Callable[[str], Any]) -> Any:
    """``build(text)``, computed once per text object (the reader asks thousands of times per chain); the few most
    recent texts are kept, and each is held so its id cannot be reused while cached."""
    cached = _PER_TEXT.get((kind, id(text)))
    if cached is not None and cached[0] is text:
        return cached[1]
    value = build(text)
    if len(_PER_TEXT) >= 32:
        _PER_TEXT.clear()
    _PER_TEXT[(kind, id(text))] = (text, value)
    return value


_BLOCK = 2048


def _clause_block(text: str, b: int) -> tuple[list[int], list[int]]:
    """The clause breaks that start in 2 kB block ``b`` of ``text`` (starts and ends), found once and kept: a chain
    asks for thousands of clauses, and a 1 MB one that asks for few pays only for the blocks it asks about."""
    blocks: dict[int, tuple[list[int], list[int]]] = _per_text("clauses", text, lambda t: {})
    found = blocks.get(b)
    if found is None:
        spans = [m.span() for m in _CLAUSE_END.finditer(text, b * _BLOCK, min(len(text), (b + 1) * _BLOCK + 16))
                 if m.start() < (b + 1) * _BLOCK]
        found = blocks[b] = ([a for a, _ in spans], [e for _, e in spans])
    return found


def _newlines(text: str) -> list[int]:
    return _per_text("newlines", text, lambda t: [m.start() for m in re.finditer("\n", t)])


def line_start(text: str, pos: int) -> int:
    """Where the line holding ``pos`` starts (``text.rfind("\\n", 0, pos) + 1``, a bisect away for a 1 MB line)."""
    marks = _newlines(text)
    i = bisect.bisect_left(marks, pos)
    return marks[i - 1] + 1 if i > 0 else 0


def line_end(text: str, pos: int) -> int:
    """Where the line holding ``pos`` ends (``text.find("\\n", pos)``, -1 on the last line)."""
    marks = _newlines(text)
    i = bisect.bisect_left(marks, pos)
    return marks[i] if i < len(marks) else -1


def clause_start(text: str, sent_start: int, pos: int, width: int = 80) -> int:
    """Where the clause holding ``pos`` begins: the last comma/semicolon/colon/"but" before it in its sentence."""
    lo = max(sent_start, pos - width)
    for b in range(max(lo, pos - 1) // _BLOCK, lo // _BLOCK - 1, -1):  # the blocks the window touches, right to left
        starts, ends = _clause_block(text, b)
        k = bisect.bisect_left(starts, pos) - 1
        while k >= 0 and starts[k] >= lo:
            end = ends[k]
            # a closed parenthesis before the number ("no (111) peak near 43.5°") is an aside, not a break
            if end <= pos and not (text[starts[k]] == "(" and text.find(")", end, pos) >= 0):
                return end
            k -= 1
    return lo


def open_paren(text: str, lo: int, pos: int) -> int:
    """The start of the innermost parenthesis still open at ``pos`` (searching back to ``lo``), else ``pos``."""
    p = text.rfind("(", lo, pos)
    while p >= 0:
        if text.count("(", p, pos) > text.count(")", p, pos):
            return p
        p = text.rfind("(", lo, p)
    return pos


def paren_lead(text: str, lo: int, pos: int, width: int = 45) -> tuple[int, int] | None:
    """When the number at ``pos`` opens a parenthesis ("relative to pristine graphene (1580 cm⁻¹)", "the Au lattice
    fringes (0.235 nm)"), the words just before that parenthesis: the number is their value. Else None."""
    p = text.rfind("(", max(lo, pos - 12), pos)
    if p < 0 or not _PAREN_OPENER.fullmatch(text, p + 1, pos):
        return None
    return max(lo, clause_start(text, lo, p, width)), p


# (w40: "around" opens it like "about": "than typical Ag colloids (around 20 nm)")
_PAREN_OPENER = re.compile(r"\s*(?:[~≈≃]|ca\.?|about|around|approx\.?|=|:)?\s*", re.I)


def window(text: str, sent_start: int, pos: int, width: int = 60) -> int:
    return max(sent_start, pos - width)


def answer_span(text: str) -> tuple[int, int] | None:
    """The model's final committed line: after the last "Answer:" (or \\boxed), to the end of that line; when the
    marker ends its line, the next non-empty line."""
    low = text.lower()
    last = None
    pos = len(low)
    while last is None:  # the last marker, found from the end (a long chain costs one backward scan)
        k = max(low.rfind("answer", 0, pos), low.rfind("\\boxed", 0, pos))
        if k < 0:
            return None
        last = ANSWER.match(text, max(0, k - 6) if low.startswith("final", max(0, k - 6)) else k)
        if (last is None or last.end() <= k) and low.startswith("the ", max(0, k - 4)):
            last = ANSWER.match(text, k - 4)  # "The answer is 'unstable'"
        if last is None or last.end() <= k:
            last = ANSWER.match(text, k)
        pos = k
    start = last.end()
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if not text[start:end].strip():
        nxt = start
        while nxt < len(text) and text[nxt] in " \t\r\n":
            nxt += 1
        end = text.find("\n", nxt)
        end = len(text) if end < 0 else end
        start = nxt
    return start, end


@dataclass
class RowBlocks:
    """The chain's blocks of consecutive row lines (table rows, bullets), found once so each number's block is a
    bisect away: a 100 kB table no longer costs a walk over its rows per number."""

    starts: list[int]  # the start of every line
    tops: list[int]    # for each line, the start of the first line of its block of rows; -1 when not a row
    ends: list[int]    # for each line, the end of the last line of its block; -1 when not a row

    @classmethod
    def of(cls, text: str, row: re.Pattern[str]) -> "RowBlocks":
        starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        is_row = [bool(row.match(text, s)) for s in starts]
        tops, ends = [-1] * len(starts), [-1] * len(starts)
        i = 0
        while i < len(starts):
            if not is_row[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(starts) and is_row[j + 1]:
                j += 1
            end = starts[j + 1] - 1 if j + 1 < len(starts) else len(text)
            for k in range(i, j + 1):
                tops[k], ends[k] = starts[i], end
            i = j + 1
        return cls(starts, tops, ends)

    def block(self, pos: int) -> tuple[int, int, int] | None:
        """(block start, block end, line start) of the row holding ``pos``; None outside a block."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return (self.tops[i], self.ends[i], self.starts[i]) if self.tops[i] >= 0 else None


TABLE_ROW = re.compile(r"[ \t]*\|")


def column_header(text: str, pos: int, rows: RowBlocks | None = None) -> str | None:
    """The header cell above ``pos`` when it sits in a markdown table ("| database | E_above_hull |" over
    "| OQMD | 4 meV/atom |"): a cell's quantity is named once, in the header row. None outside a table.
    Pass ``rows`` (``RowBlocks.of(text, TABLE_ROW)``, built once) when asking for many numbers of one text."""
    block = (rows or RowBlocks.of(text, TABLE_ROW)).block(pos)
    if block is None:
        return None
    top, _, line = block
    if top == line:
        return None  # the header row itself
    column = text.count("|", line, pos)
    end = text.find("\n", top)
    cells = text[top:len(text) if end < 0 else end].split("|")
    return cells[column] if column < len(cells) else None


def label_start(text: str, sent_start: int, clause: int, width: int = 60) -> int:
    """Where a labelled line's label begins when the clause starts right after its colon ("- Field of view: 8.5 µm",
    "- minority spin: a 450 meV gap"): the label names the quantity; else the clause start itself."""
    if clause > sent_start and text[clause - 1] == ":" and clause - sent_start <= width:
        return sent_start
    return clause


# a mineral or polymorph name ("anatase", "kyanite", "brookite"): the subject of a value that may not be the asked sample's
MINERAL = re.compile(r"\b(?!(?:white|write|quite|site|suite|despite|composite|favou?rite|definite|infinite|opposite|polite|"
                     r"elite|satellite|excite|ignite|unite|invite|onsite|website|prerequisite|finite|bite|kite|rite)\b)"
                     r"([a-z]{3,}ites?|anatase|rutile|quartz|corundum|celestine|olivine|zircon|gypsum|baryte|spinel|garnet|"
                     r"periclase|diopside|cinnabar|realgar|orpiment|sulfur|sulphur|talc|beryl|topaz|tourmaline|epidote|"
                     r"zoisite|mullite|wollastonite|coesite|stishovite|diamond|graphite|brucite|portlandite|almandine|"
                     r"spessartine|grossular|pyrope|schorl|ha[uü]yne|nosean|analcime|nepheline|feldspar|orthoclase|microcline|"
                     r"sanidine|plagioclase|serpentine|chrysotile|galena|xenotime|chrysoberyl|cristobalite|tridymite)\b", re.I)

# a mineral named as the subject of the number's clause or line ("anglesite (PbSO₄) at 978 cm⁻¹", "- andalusite — main
# band near 360 cm⁻¹", "from gypsum (≈1008 cm⁻¹)"); when the question never names it, the value is that mineral's
MINERAL_SUBJECT = re.compile(r"(?:'s|’s)|\s*\((?=\s*(?:≈|~|about|approx\.?|at)?\s*\d)|"
                             r"\s*\)?\s*(?:\([^()\n]{1,30}\)\s*)?(?:,[^,.;\n]{1,40},\s*)?,?\s*(?:also\s+)?"
                             r"(?:(?:the\s+same|this|that|its)\s+(?:mode|band|line|vibration|stretch)\s+|the\s+(?:pair|doublet|bands?|modes?)\s+)?"
                             r"(?:has|have|had|shows?|exhibits?|displays?|would|sits?|lies|puts?|gives?|near\b|[—–:~≈]|-\s|at\b|"
                             r"around\b|about\b|whose\b|is\s+shifted|shifts?\b|moves?\b|appears?\b|occurs?\b)", re.I)
# any name given its own band ("pararealgar has its strongest band at 232 cm⁻¹"): a mineral, whatever its name
NAMED_BAND = re.compile(r"\b([a-z][a-z-]{3,})\s*(?:\([^()\n]{1,30}\)\s*)?\)?\s*(?:(?:,[^,.;\n]{1,40},\s*)?(?:also\s+)?has\s+its\b|"
                        r"the\s+same\s+(?:mode|band|line|vibration|stretch)\s+(?:sits|lies|appears|occurs|is\s+at)\b|"
                        r",\s*(?:for|by|in)\s+(?:comparison|contrast),\s*(?:also\s+)?(?:has|shows|gives|puts|displays)\s+its\b|"
                        r"(?<=[a-z])(?:'s|’s)\s+[^,.;\n]{0,30},\s*(?:by|in)\s+(?:contrast|comparison),)", re.I)
# the sample said to be that mineral: "This powder is anatase: Eg at 144 cm⁻¹"
IS_MINERAL_BEFORE = re.compile(r"\b(?:is|are|was|as|identif\w*|match\w*|consistent with|typical of|indicates|points to)\s+"
                               r"(?:an?\s+|the\s+)?(?:pure\s+|clearly\s+)?$", re.I)
SAMPLE_WORDS = re.compile(r"\b(?:this(?!\s+(?:mode|band|line|vibration|stretch|peak)\b)|our|here|the\s+(?:sample|measured|present|asked|spectrum))\b", re.I)


# a mineral set against the subject, not the subject: "Claudetite (monoclinic As₂O₃, unlike cubic arsenolite) shows …"
CONTRASTED_BEFORE = re.compile(r"\b(?:unlike|rather\s+than|instead\s+of)\s+(?:the\s+)?(?:[\w-]+\s+)?$", re.I)


def other_mineral(norm: str, lo: int, near: int, pos: int, question: str) -> bool:
    """A mineral the question does not name is the subject right before the number (a listed name within
    ``near``; a name given its own band anywhere in the sentence from ``lo``)."""
    last = None
    for m in MINERAL.finditer(norm, max(lo, near), pos):
        if not CONTRASTED_BEFORE.search(norm, max(0, m.start() - 30), m.start()):
            last = m
    if last is None:  # "montebrasite, the OH end-member, shows an O–H stretch near 3380": a subject just before the clause
        for m in MINERAL.finditer(norm, lo, max(lo, near)):
            if CONTRASTED_BEFORE.search(norm, max(0, m.start() - 30), m.start()):
                continue
            subject = MINERAL_SUBJECT.match(norm, m.end(1))
            if subject is not None and subject.end() >= pos - 50 and ";" not in norm[m.end():pos]:
                last = m
    for m in NAMED_BAND.finditer(norm, lo, pos):  # "X has its strongest band at": X is a mineral, even far back
        if last is None or m.start() > last.start():
            last = m
    if last is None or not question or IS_MINERAL_BEFORE.search(norm, max(0, last.start() - 40), last.start()):
        return False
    if not MINERAL_SUBJECT.match(norm, last.end(1)):
        return False  # "matches calcite, with bands at 1086 cm⁻¹" asserts the sample's bands
    name = last.group(1).lower()
    stem = name[:-1] if name.endswith("s") else name
    # a word of the question, not part of one ("calcite" is not asked in "Barytocalcite")
    return re.search(rf"\b{re.escape(stem)}", question.lower()) is None and not SAMPLE_WORDS.search(norm, last.end(1), pos)
