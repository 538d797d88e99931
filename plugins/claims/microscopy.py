"""Reading feature-size claims (the microscopy oracle's asked quantity).

Any length (Å, nm, µm, mm, pm) is a feature size in nm, sign kept ("−50 nm" claims −50, which the oracle
rejects as non-positive), unless it is an instrument setting (working distance, spot or pixel size, field
of view, scale bar, resolution), a range, an uncertainty, or the scale-bar length copied from the question.
Pixel counts and magnifications are never sizes; bare numbers take no unit (the task asks for one).
"""

from __future__ import annotations

import re

from matpcr_plugins.claims import context as cx
from matpcr_plugins.claims.numbers import Number
from matpcr_plugins.claims.reader import QuantityReader, Run, Scan, Template

TO_NM = {"nm": 1.0, "um": 1e3, "mm": 1e6, "angstrom": 0.1, "pm": 1e-3, "cm": 1e7, "m": 1e9}

# (a value the image file stores is the instrument's: "a bit above the stored 4.96 nm", "the metadata value of 12.4 µm")
_INSTRUMENT = cx.attached(r"\bstored\b|\bmetadata(?:'s)?\b|\bheader(?:'s)?\b|"
                          r"\bWD\b|\bworking distance\b|\bspot(?: size)?\b|\bpixel(?: size)?\b|\bfield of view\b|\bFOV\b|"
                          r"\bHFW\b|\bfield width\b|\bimage (?:width|height|size)\b|\bscale ?bar(?:\s+(?:of|labell?ed|length|reads|shows))?\b|"
                          r"\bresolution\b|\bresolv(?:es|ing|able)\b|\baperture\b|\bprobe(?: size| current)?\b|\bbeam\b|\bEHT\b|\bvoltage\b|"
                          r"\bMag\s*=|\btilt\b|\bcoat(?:ed|ing)?\b|\bsputter\w*|\bcalibration\b|\bper pixel\b|\bmarker\b|\bbar\b|\blabell?ed\b")
# (a crystal lattice is another property, but not a hexagonal or square lattice of the imaged features: "the pits sit
# on a square lattice about 30 px apart (≈ 150 nm)"; a reference material's certificate is, as its certified value
# is: "the certificate states 102 ± 3 nm"; so is a batch named by what sets it apart: "the 80 °C batch gave ~60 nm
# cubes")
_OTHER = re.compile(r"\bcrystallite\b|\bScherrer\b|\bXRD\b|\bcoherent\b|\bwavelength\b|"
                    r"(?<!hexagonal )(?<!square )(?<!triangular )\blattice\b(?!\s+(?:pitch|period))|"
                    r"\bd-?spacing\b|\binterlayer\s+spacing\b|\bd_?\(?\d{3}\)?(?=\s*[=:≈~])|\brated\b|\bcommercial(?:ly)?\b|\bnominal(?:ly)?\b|\bmanufacturer\b|\bliterature\b|\breported(?:ly)?\b|"
                    r"\bdatasheet\b|\baspect ratio\b|\bratio\b|\bperimeter\b|\bcircumference\b|\boutline length\b|"
                    r"\bAFM\b|\bTEM\b|\bDLS\b|\bBET\b|\bfringes?\b|\bhydrodynamic\b|\bsuppliers?\b|\bvendors?\b|\bquot(?:es|ed)\b|"
                    r"\bspecifications?\b|\btarget(?:s|ed)\b|\bLSPR\b|\bplasmon\w*|\bUV-?vis\w*|\babsorption\b|\bemission\b|"
                    r"\bphotoluminescence\b|\blaser[- ]diffraction\b|\bZ-?average\b|\bcertifi(?:ed|cate)\b|\bprevious\s+(?:batch|sample|run)\b|"
                    r"\b(?:the|an?|our)\s+(?!(?:same|this|current|present)\b)(?:[^\s,;:()]+\s+){1,2}?batch(?:es)?\b|"
                    r"\breference\b(?!\s+(?:bar|scale|length|marker))|\bRM\s*\d|\bSAXS\b|\bBJH\b|\bsorption\b|\bporosimetry\b|"
                    r"\bcross-?section(?:al)?\s+(?:image|micrograph|view|SEM|FIB|TEM)\b|\bseparate\s+(?:image|micrograph)\b|\bFIB\b|"
                    r"\bprofilomet\w*|\bellipsomet\w*|\bnot the one asked\b|\b(?:second|another|other|different)\b[,\s]+(?:[\w-]+\s+){0,2}?(?:micrograph|image)\b|"
                    r"\b(?:oleate|ligand|surfactant|hydration|solvation|organic|polymer)\s+(?:shell|layer|coating|corona)\b|"
                    r"\b(?:starting|precursor|as-received|parent)\s+powders?\b|\b(?:original|precursor|parent)\s+(?:[\w-]+\s+){0,2}(?:pores?|particles?|crystals?|grains?)\b|\bequivalent\s+(?:to\s+an?\s+)?(?:sphere|spherical)\b|\bspecified\b|"
                    r"\bchemisorption\b|\bexposure\b|\blithograph\w*|\bdrift\w*|\b(?:synthesis|growth|design|nominal)\s+target\b|"
                    r"\bdesign(?:ed)?\s+(?:\w+\s+)?(?:thickness|size|diameter|width|value)\b|\bCAD\b|\boptical\s+(?:micrograph|microscop\w*)|\bsold\b|\broughness\b|\bR[aq]\b|"
                    r"\beddy[- ]current\b|\bgauges?\b|\bcalipers?\b|\b(?:electro)?polish\w*|\buniformity\b|\btemplates?\b|\b(?:native|thermal)\s+oxide\b|"
                    r"\binvisible\b|\blaser\s+power\b|\bhatch(?:\s+spacing)?\b|\bscan\s+speed\b|\bEBSD\b|\bPL\b|"
                    r"\bcross-?sections?\s+of\b|\bfrom\s+(?:an?\s+)?(?:cleaved\s+)?cross-?section|-ring\b|\bpore\s+openings?\b|"
                    r"\bchannels?\s+of\b|\b(?:nano)?indent\w*|\bsuperparamagnetic\s+(?:size|limit|blocking|threshold)\b|"
                    r"\bstructural\s+colou?r|\bcolou?r\s+(?:near|at|of\s+the\s+(?:sol|dispersion|suspension))\b|\b(?:times|than)\s+(?:the|that\s+of|those\s+of)\b",
                    re.I)
# a size of the sample before a treatment, named at the head of the sentence: "Before calcination the precursor
# particles were about 60 nm; ..."
# a sentence about another micrograph: "A second, higher-magnification image of the same sphere gives 1.87 µm"
_OTHER_IMAGE_LEAD = re.compile(r"\s*\W*\s*(?:an?\s+|the\s+)?(?:second|another|other|different)\b[,\s]+(?:[\w-]+\s+){0,2}?"
                               r"(?:micrographs?|images?|frames?)\b", re.I)
# a generic expectation anywhere earlier in the sentence: "the pore diameter is usually ≈ 0.9 nm/V, i.e. 36 nm"
_GENERIC = re.compile(r"\busually\b|\bpredict\w*|\brule of thumb\b|\bempirical rule\b|\b[\w-]+\s+like\s+th(?:is|ese)\s+(?:are|is)\b", re.I)
# (w40) a comparison with a typical member of the class, its size in brackets: "much larger than typical
# citrate-reduced Ag colloids (around 20 nm)" (not the typical one of this frame: "than the typical ones here (90 nm)")
_THAN_TYPICAL_LEAD = re.compile(r"\bthan\s+(?:the\s+|most\s+)?(?:typical|usual|conventional|common|standard)\s+"
                                r"(?!(?:ones?|neighbou?rs?)\b)(?![^()\n]{0,40}?\b(?:here|(?:in|on|of)\s+(?:this|the\s+same)\b))", re.I)
# a span over several repeats, the step before the one-period value: "ten periods cover 152 × 50 = 7600 nm"
_MULTI_SPAN = re.compile(r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twenty)\s+(?:periods|spacings|pitches|repeats|fringes|ridges|lamellae)\s+"
                         r"(?:cover|span|measure|take\s+up)\b[\d.,\s×x*·=≈~]{0,40}$", re.I)
_BEFORE_TREATMENT = re.compile(r"\s*(?:before|prior to)\s+(?:the\s+)?(?:annealing|calcination|sintering|heating|milling|"
                               r"treatment|growth|coarsening|reduction|etching)\b", re.I)
# the spread of the sizes, not a size: "mean 22.6 nm, SD 3.1 nm", "σ = 4 nm"
_SPREAD_BEFORE = re.compile(r"(?:\bSD|\bs\.d\.|\bstd\.?|\bstandard deviation|σ)(?:\s+(?:width|size|diameter))?\s*(?:of\s+)?[=:≈~]?\s*$", re.I)
_TECHNIQUE = r"(?:nominal|spec(?:ification)?|datasheet|suppliers?|manufacturer|FIB|AFM|TEM|Raman|XPS|DLS|BET|XRD|EBSD|ellipsomet\w*|profilomet\w*|laser[- ]diffraction|cross-?section)"
# the size is another measurement's or a reference: "800 nm thick (FIB cross-section)", "200 nm (nominal)", "the 200 nm
# batch average measured by DLS"
_REFERENCE_AFTER = re.compile(rf"\s*(?:[\w-]+\s+)?(?:that|which)\s+(?:the\s+)?{_TECHNIQUE}\s+(?:gives|gave|shows|showed|yields|yielded|"
                              rf"measures|measured|reports|reported)\b|\s*,\s*(?:nominal|specified|datasheet)\b|"
                              rf"\s*,?\s*(?:comes?|came|is\s+taken|was\s+taken|derives?|is\s+derived)\s+from\s+(?:an?\s+|the\s+)?"
                              rf"(?:separate\s+)?(?:[\w-]+\s+){{0,2}}?{_TECHNIQUE}\b|"
                              rf"\s*(?:thick\s*)?\(\s*(?:(?:from|by|via|per|according to)\s+(?:an?\s+|the\s+)?)?(?:[\w-]+\s+){{0,3}}?{_TECHNIQUE}\b(?![^()\n]*\d)|"
                              rf"\)?[^.;,()\n\d]{{0,40}}?\b(?:measured|determined|obtained|estimated|found)\b[^.;,()\n\d]{{0,20}}?"
                              rf"\b(?:by|from|via|using|with)\s+(?:an?\s+|the\s+)?{_TECHNIQUE}\b|"
                              rf"\s*(?:[\w-]+\s+){{1,3}}?(?:known|measured|determined|obtained)\s+(?:by|from|via)\s+(?:an?\s+|the\s+)?{_TECHNIQUE}\b|"
                              rf"\s*(?:[\w-]+\s*)?(?:,\s*)?(?:(?:known|measured|determined|taken|obtained)\s+)?(?:by|from|via)\s+(?:an?\s+|the\s+)?{_TECHNIQUE}\b|\s*nominal\b|"
                              rf"\s*(?:on|in|from)\s+(?:an?\s+|the\s+)?(?:earlier|previous|older|second|another|other|different|separate)\s+"
                              rf"(?:[\w-]+\s+)?(?:micrograph|image|frame)s?\b|"
                              rf"[^.;\n]{{0,40}}?\b(?:on|in|from)\s+(?:an?\s+|the\s+)?(?:earlier|previous|older|separate)\s+"
                              rf"(?:[\w-]+\s+)?(?:micrograph|image|frame|grid)s?\b|"
                              rf"\s*[—–-]+\s*from\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){{0,2}}?{_TECHNIQUE}\b|"
                              rf"[^.\n]{{0,40}}?\bnot\s+(?:from|in|on)\s+this\s+(?:image|micrograph|frame)\b|"
                              rf"\s*(?:[\w-]+\s+){{0,3}}\(\s*(?:supplier|manufacturer|nominal|datasheet|vendor)(?:'s)?"
                              rf"(?:\s+(?:value|size|spec\w*))?\s*\)|"
                              rf"\s*[\w-]*\s*,\s*nominal\b|\s*(?:called\s+for|specified|required)\b|"
                              rf"(?:\s*[×x]\s*[\d.]+\s*(?:nm|µm|um|Å))?\s*(?:[\w-]+\s+){{0,3}}\(\s*{_TECHNIQUE}\s*\)", re.I)
# an imaging condition named before the number, with no feature between: "the resolution of the in-lens detector at
# 1 kV is about 1.6 nm", "the probe diameter ~3 nm", "the electron penetration depth in TiO2 is ~1.2 µm"
_IMAGING = re.compile(r"\bresolution\b|\bprobe(?:\s+(?:diameter|size))?\b|\b(?:spot|beam)\s+(?:diameter|size)\b|\bbeam spot\b|"
                      r"\bpenetration depth\b|\binteraction volume\b|\b(?:escape|information|sampling) depth\b", re.I)
_EXPLICIT = cx.attached(r"\bdiameters?\b|\b(?:particle|grain|feature|crystal)\s+(?:size|diameter|width)\b|"
                        r"\b(?:particles?|grains?|crystals?|wires?|rods?|spheres?)\s+(?:is|are|measures?|of)\b")


# the field of view or scale bar named earlier in the clause, with no feature named in between
_FIELD = re.compile(r"\bfield of view\b|\bFOV\b|\bimage (?:width|height|size|spans|covers|is)\b|"
                    r"\b(?:image|micrograph|frame)\b[^.\n]{0,40}?\b(?:covers|spans)\b|\b(?:whole|entire) image\b|\b(?:frame|image|field)\s+(?:is|was)\b|"
                    r"\bfield width\b|\bHFW\b|\bscale ?bar\b|\btest\s+(?:lines?|grids?|circles?)\b|\b(?:full|whole|entire)\s+(?:\d+\s*px\s+)?(?:frame|image|field)\b|\b(?:each|one|per|a single) pixel\b|\bpixel size\b|\b1 px\b", re.I)
_FEATURE = re.compile(r"\bparticles?\b|\bgrains?\b|\bfeatures?\b|\bdiameter\b|\bagglomerat\w*|\bcrystals?\b|\bwires?\b|"
                      r"\brods?\b|\bspheres?\b|\bpores?\b|\bsize\b|\bintercepts?\b", re.I)


# a size of the sample in another state: "(from about 40 nm before annealing)"
# a sample-preparation layer: "on a 20 nm ZnO seed layer", "a 5 nm Pt coating"
_PREP_AFTER = re.compile(r"\s*(?:of\s+)?(?:sputter(?:ed|-coated)|evaporated)\b|\s*(?:thick\s+)?(?:[A-Z][A-Za-z0-9]*\s+)?(?:seed|buffer|adhesion|conductive|sputtered|carbon|gold|Au|Pt|Cr|"
                         r"Ir)\s*(?:sputter\s+)?(?:layer|coating|coat|film)\b")
# distances between features of the micrograph are features too: "spacing between wire centres: ≈ 250 nm"; the
# pixel count apart and its length in brackets: "the dimples sit about 18 px apart (≈ 90 nm)"
_SEM_DISTANCE = cx.attached(r"\bspacing between\b[^.\n]{0,30}|\bseparat(?:ed|ion)\b|\bdistance\b|\bpitch\b|\bperiod\b|\bapart\b")
# not a feature of this micrograph: growth seeds, a hydration or ligand shell inferred from another technique, a
# specimen's gauge ("Specimen: 4 mm gauge length")
_NOT_FEATURE_AFTER = re.compile(r"[^.;\n]{0,20}?\b(?:are|is|lies?|falls?)\s+below\s+(?:the\s+)?resolution\b|"
                                r"[^.;\n]{0,40}?\bbelow\s+what\s+(?:the\s+|this\s+)?(?:[\w-]+\s+)?(?:can|could)\s+resolve\b|"
                                # a material's size limit named after its number: "cobalt's ~70 nm single-domain limit"
                                r"\s*(?:superparamagnetic|single[- ]domain)\s+(?:size|limit|blocking|threshold)\b|"
                                # the support under the imaged object: "the tint comes from the 90 nm Si3N4 beneath the sheet"
                                r"\s*(?:[^\s.,;()]+\s+)?(?:under(?:neath)?|beneath)\s+(?:the|this|each|every)\s+(?:[\w-]+\s+)?"
                                r"(?:flakes?|sheets?|particles?|crystals?|(?:nano)?wires?|grains?|cells?|platelets?)\b|"
                                # outside the frame: "a void 0.2 mm deep, far outside this 60 µm wide frame", "(1.1 mm, off-frame)"
                                r"[^.;\n]{0,40}?(?:\b(?:extends?|lies?|is|are|well|far)\s+(?:beyond|outside)\s+(?:the\s+|this\s+)?(?:[\w-]+\s+){0,3}?"
                                r"(?:field\s+of\s+view|frame|image|micrograph)\b|\boff[- ](?:frame|image|screen)\b)|"
                                r"[^.;\n]{0,40}?\b(?:is|are)\s+(?:far\s+|much\s+)?(?:larger|bigger|wider|longer)\s+than\s+(?:the\s+|this\s+)?(?:whole\s+)?(?:field\s+of\s+view|image|frame|micrograph)\b|"
                                r"\s*(?:[\w-]+\s+)?wavelength\b|"
                                r"\s*(?:in\s+\w+\s+)?\(\s*not\s+(?:imaged|visible|shown|measured)\b|"
                                r"\s*(?:ones?|particles?|flowers?|crystals?|grains?)\s+(?:grown|made|synthesi[sz]ed|prepared)\s+(?:at|in|with|by|from)\b|\s*(?:[\w-]+\s+)?seeds?\b|\s*(?:hydration|solvation|ligand)\s+(?:layer|shell)\b|"
                                r"\s*(?:[\w-]+\s+){0,2}(?:crystallite|Scherrer)\b|\s*equivalent\s+spher|\s*(?:[\w-]+\s+)?(?:nozzle|needle|die|mask|mould|mold|gauge)\b|"
                                r"\s*(?:spray|stand-?off|nozzle|throw|target)[- ]distance\b|\s*(?:starting\s+|precursor\s+|raw\s+)?powders?\b|\s*(?:of\s+)?(?:thermal|native)\s+oxide\b|\s*(?:colloidal\s+silica|diamond\s+(?:paste|suspension)|alumina\s+(?:powder|suspension))\b|\s*(?:[^\s.,;]+\s+){0,2}?(?:leaf|foil|wafer)\b", re.I)
# the source a feature was made from: "a splat this size from a ~25 µm particle is reasonable"
_SOURCE_BEFORE = re.compile(r"\b(?:from|out\s+of)\s+(?:an?|one|each|the)\s+(?:~\s*|≈\s*|about\s+|roughly\s+)?$", re.I)
_SOURCE_AFTER = re.compile(r"\s*(?:[\w-]+\s+)?(?:particles?|droplets?|powders?|feedstock)\b", re.I)
# a line that is the calibration itself: "- pixel: 1000 nm / 125 px = 8 nm"
_PIXEL_LINE = re.compile(r"[ \t]*(?:[-*•]|\d{1,2}[.)])?[ \t]*(?:\*\*)?(?:pixel(?:\s+size)?|px(?:\s+size)?|calibration|nm\s*/\s*px)(?:\*\*)?\s*[:=]",
                         re.I)
_VERB_AFTER_ASIDE = re.compile(r"\s*(?:is|was|are|were)\s+(?:about|approximately|roughly|around|~|≈)?\s*", re.I)
# (a markdown table row is one label too, its first cell naming the method: "| AFM, tapping mode | 14 nm |")
_BULLET = re.compile(r"[ \t]*(?:[-*•]|\d{1,2}[.)]|\|)[ \t]+")
# a YAML block headed by another technique: the keys indented under "tem:" ("tem:\n  rod_width_nm: 38") are its values
_BLOCK_HEAD = re.compile(r"[ \t]*(?:[-*][ \t]*)?(?P<key>[^\n:#]{1,40}):[ \t]*(?:#[^\n]*)?")
_TECHNIQUE_WORD = re.compile(rf"\b{_TECHNIQUE}\b", re.I)
# a value set off by a comma after the noun it belongs to: "the Scherrer size from the (101) reflection, 21 nm"
_APPOSITION = re.compile(r"\s*(?:about|approximately|roughly|around|~|≈|only|just)?\s*")
# a pixel's size, not a feature's: "79 px × 25 nm", "52 px at 5 nm each", "6.25 nm\per px", "8 nm px^-1"
_PIXEL_COUNT_BEFORE = re.compile(r"\d\s*(?:px|pixels?)\s*(?:×|x|\*|·|at|of)\s*$", re.I)
_PER_PIXEL_AFTER = re.compile(r"\s*(?:\([^()\n]{1,12}\)\s*|\)\s*)?(?:each\b|\\per\s*px\b|px\s*\^\s*-1|per\s+(?:px|pixel)\b|/\s*(?:px|pixel)\b)", re.I)
# the smallest and largest of a population written as a pair, a range: "min 31 nm, max 74 nm" (each end alone is not a
# size of a typical feature)
_MIN_BEFORE = re.compile(r"\bmin(?:imum)?\.?\s*[=:]?\s*[~≈]?\s*$", re.I)
_MAX_AFTER = re.compile(r"\s*[,;/]?\s*(?:and\s+)?max(?:imum)?\.?\s*[=:]?\s*[~≈]?\s*\d", re.I)
_MAX_BEFORE = re.compile(r"\bmin(?:imum)?\.?\s*[=:]?\s*[~≈]?\s*\d+(?:\.\d+)?\s*(?:nm|µm|mm|Å)?\s*[,;/]?\s*(?:and\s+)?"
                         r"max(?:imum)?\.?\s*[=:]?\s*[~≈]?\s*$", re.I)
# a next question the model invents after its answer: "Answer: 96 nm\n\nQuestion: A micrograph of ZnO rods …"
_NEXT_QUESTION = re.compile(r"^[ \t>#*]*question[ \t*]*:", re.I | re.M)
_ANSWER_LINE_START = re.compile(r"^[ \t>#*-]*(?:final\s+)?answer\b", re.I | re.M)
# a rate, not a length: "800 mm/s", "3.1 µm/h"
_RATE_AFTER = re.compile(r"\s*(?:/\s*(?:s|sec|min|h|hr)\b|per\s+(?:second|minute|hour)\b)", re.I)
# an imaging setting named after its value: "4.8 mm working distance", "a 1 nm beam spot"
_SETTING_AFTER = re.compile(r"\s*(?:(?:scale\s+)?bar\b|working distance|WD\b|(?:beam\s+)?spot(?:\s+size)?\b|probe\b|aperture\b|"
                            r"pixels?(?:\s+size)?\b)", re.I)
# the pixel size worked out before the number: "Pixel = 500/200 = 2.5 nm"
_PIXEL_CALC_BEFORE = re.compile(r"\b(?:pixel|px)(?:\s+size)?\s*[=:]\s*[\d.\s/÷×x*()]+=\s*$", re.I)
# a length divided by a pixel count, with no feature named before it: "10 µm / 200 px = 0.05 µm" is the pixel size
_PER_PIXEL_CALC_BEFORE = re.compile(r"/\s*\d+(?:[.,]\d+)?\s*(?:px|pixels?)\s*=\s*$", re.I)
_EXPLICIT_BEFORE = re.compile(r"\b(?:width|length|thickness|spacing|pitch)\b", re.I)
# the frame's own size, also with its dimension word: "a 1.28 µm × 0.96 µm field", "this 25 µm wide frame"
_FIELD_AFTER = re.compile(r"\s*(?:×\s*\d+(?:\.\d+)?\s*(?:nm|µm|um|mm)\s*)?(?:(?:wide|across|tall|high)\s+)?(?:field(?:\s+of\s+view)?|frame|FOV)\b",
                          re.I)
# a candidate reading the chain turns down: "44 nm, if the 11 px were a radius — it is not"
_IF_REJECTED_AFTER = re.compile(r"\s*,?\s*if\b[^\n;.]{0,80}?(?:—|–|,)\s*(?:wrong|incorrect|it\s+is\s+not|it\s+isn't|not\s+so)\b", re.I)
_OTHER_STATE_AFTER = re.compile(r"\s*(?:before|prior to)\s+(?:the\s+)?(?:annealing|calcination|sintering|heating|coating|"
                                r"milling|treatment|growth|coarsening)\b", re.I)


class MicroscopyReader(QuantityReader):
    family = "sem"
    answer_unit = None
    instrument = _INSTRUMENT
    difference_after = True
    apart_is_distance = True
    between_difference = re.compile(r"\b(?:difference|offset|shift)\s+between\b[^.\n]{0,40}$", re.I)  # "wires 250 nm apart": a spacing of features, not a difference of two values
    echo_first = True

    def template(self, scan: Scan, run: Run, unit: str) -> Template:
        factor = TO_NM.get(unit)
        if factor is None or _OTHER_STATE_AFTER.match(scan.norm, run.head.end) or _NOT_FEATURE_AFTER.match(scan.norm, run.head.end):
            return "other_property"
        if _SOURCE_AFTER.match(scan.norm, run.head.end) \
                and _SOURCE_BEFORE.search(scan.norm, max(run.s_start, run.head.start - 24), run.head.start):
            return "other_property"  # "a splat this size from a ~25 µm particle": the feedstock the feature was made from
        line = cx.line_start(scan.norm, run.head.start)
        if _PREP_AFTER.match(scan.norm, run.head.end) or (line >= run.s_start and _PIXEL_LINE.match(scan.norm, line)
                                                            and ";" not in scan.norm[line:run.head.start]):
            return "instrument_setting"
        clause = cx.clause_start(scan.norm, run.s_start, run.head.start, 80)
        if clause > run.s_start and scan.norm[clause - 1] == "," and _APPOSITION.fullmatch(scan.norm, clause, run.head.start):
            clause = cx.clause_start(scan.norm, run.s_start, clause - 1, 80)  # "the BET-equivalent diameter, 46 nm"
        elif clause > run.s_start and scan.norm[clause - 1] == "," and _VERB_AFTER_ASIDE.fullmatch(scan.norm, clause, run.head.start):
            # "The prior grain size, measured on an optical micrograph, is about 30 µm": the aside names the source
            clause = cx.clause_start(scan.norm, run.s_start, cx.clause_start(scan.norm, run.s_start, clause - 1, 80) - 1, 80)
        if _SPREAD_BEFORE.search(scan.norm, max(run.s_start, run.head.start - 25), run.head.start):
            return "uncertainty"
        # a labelled line ("- XRD Scherrer size: 18 nm") names its quantity before the colon; a short bullet ("- α-Si₃N₄
        # starting powder, d50 = 0.6 µm") is one label as a whole
        label_start = cx.label_start(scan.norm, run.s_start, clause)
        if run.head.start - line <= 80 and _BULLET.match(scan.norm, line):
            label_start = min(label_start, line)
        if _OTHER.search(scan.norm, label_start, run.head.start) or _REFERENCE_AFTER.match(scan.norm, run.head.end) \
                or cx.COMPARISON_LEAD.match(scan.norm, run.s_start) or _OTHER_IMAGE_LEAD.match(scan.norm, run.s_start) \
                or _GENERIC.search(scan.norm, max(run.s_start, run.head.start - 120), run.head.start) \
                or _MULTI_SPAN.search(scan.norm, max(run.s_start, run.head.start - 80), run.head.start):
            return "other_property"  # a crystallite size, a literature value
        if self._under_other_block(scan, line):
            return "other_property"  # "tem:\n  rod_width_nm: 38": a key under another technique's YAML block
        if self._before_treatment(scan, run):
            return "other_property"
        lead = cx.paren_lead(scan.norm, run.s_start, run.head.start)
        if lead is not None and (_OTHER.search(scan.norm, *lead) or _THAN_TYPICAL_LEAD.search(scan.norm, *lead)):
            return "other_property"  # "the Au lattice fringes (0.235 nm)", "than typical Ag colloids (around 20 nm)"
        imaging = None
        for m in _IMAGING.finditer(scan.norm, min(clause, max(run.s_start, run.head.start - 30)), run.head.start):
            imaging = m
        if imaging is None and lead is not None:  # "close to the resolution limit of this detector (~1.5 nm at 5 kV)"
            for m in _IMAGING.finditer(scan.norm, *lead):
                imaging = m
        if imaging is not None and not _FEATURE.search(scan.norm, imaging.end(), run.head.start):
            return "instrument_setting"
        field = None
        for m in _FIELD.finditer(scan.norm, label_start, run.head.start):  # "- Field of view: 1024 × 8.33 nm ≈ 8.5 µm"
            field = m
        if field is None and lead is not None:  # "Five test lines of 800 px (20 µm each)"
            for m in _FIELD.finditer(scan.norm, *lead):
                field = m
        if field is not None and not _FEATURE.search(scan.norm, field.end(), run.head.start):
            return "instrument_setting"  # "the field of view is 1024 px × 7.41 nm/px ≈ 7.6 µm"
        return ("feature_size", factor, "nm")

    def own_reason(self, scan: Scan, n: Number, run: Run) -> str | None:
        if n.start >= self._invented_from(scan):
            return "other"  # "Answer: 96 nm\n\nQuestion: … measures 60 px across …\nAnswer: 150 nm": a question the model made up
        if n.unit and _RATE_AFTER.match(scan.norm, n.end):
            return "other_property"  # a scan speed or a growth rate
        if n.unit and ((_MIN_BEFORE.search(scan.norm, max(0, n.start - 12), n.start) and _MAX_AFTER.match(scan.norm, n.end))
                       or _MAX_BEFORE.search(scan.norm, max(0, n.start - 50), n.start)):
            return "range"  # "min 31 nm, max 74 nm": the spread of the population
        if n.unit and (_PER_PIXEL_AFTER.match(scan.norm, n.end)
                       or _PIXEL_COUNT_BEFORE.search(scan.norm, max(0, n.start - 16), n.start)
                       or _PIXEL_CALC_BEFORE.search(scan.norm, max(0, n.start - 40), n.start)):
            return "instrument_setting"  # the pixel size in "79 px × 25 nm = 1975 nm"
        if n.unit and _PREP_AFTER.match(scan.norm, n.end):
            return "instrument_setting"  # a coating layer named after its own number, also inside a list ("15 kV, 20 nm carbon coat")
        if n.unit:
            calc = _PER_PIXEL_CALC_BEFORE.search(scan.norm, max(0, n.start - 24), n.start)
            if calc is not None:
                s_start = max(scan.sentences.bounds(n.start)[0], calc.start() - 200)
                if not _FEATURE.search(scan.norm, s_start, calc.start()) and not _EXPLICIT_BEFORE.search(scan.norm, s_start, calc.start()):
                    return "instrument_setting"
        if n.unit and _FIELD_AFTER.match(scan.norm, n.end):
            return "instrument_setting"  # "a 1.28 µm × 0.96 µm field"
        if n.unit and _SETTING_AFTER.match(scan.norm, n.end):
            return "instrument_setting"  # "4.8 mm working distance" in "Imaged at 5 kV, 4.8 mm working distance"
        if n.unit and _IF_REJECTED_AFTER.match(scan.norm, n.end):
            return "negated"  # "(a) 11 nm, if the pixel count is taken as nm — wrong"
        return None

    @staticmethod
    def _invented_from(scan: Scan) -> int:
        """Where the model goes on to invent a next question after answering (a "Question:" line below an Answer
        line): nothing from there on is about the asked micrograph. The chain's length when it does not (found once)."""
        if "invented" not in scan.memo:
            at = len(scan.norm)
            m = _NEXT_QUESTION.search(scan.norm)
            if m is not None and _ANSWER_LINE_START.search(scan.norm, 0, m.start()):
                at = m.start()
            scan.memo["invented"] = at
        return scan.memo["invented"]

    @staticmethod
    def _under_other_block(scan: Scan, line: int) -> bool:
        """Whether the indented line starting at ``line`` sits under a YAML block key ("xrd:", "dls:") naming another
        technique: the nearest less-indented line above, blank lines skipped, at most 24 lines back (once per line)."""
        key = ("block", line)
        if key not in scan.memo:
            norm = scan.norm
            i = line
            while i < len(norm) and norm[i] in " \t":
                i += 1
            found = False
            if i > line:
                end = line - 1
                for _ in range(24):
                    if end < 0:
                        break
                    start = cx.line_start(norm, end)
                    j = start
                    while j < end and norm[j] in " \t":
                        j += 1
                    if j < end and j - start < i - line:
                        head = _BLOCK_HEAD.fullmatch(norm, start, end)
                        found = head is not None and bool(_OTHER.search(head.group("key")) or _TECHNIQUE_WORD.search(head.group("key")))
                        break
                    end = start - 1
            scan.memo[key] = found
        return scan.memo[key]

    @staticmethod
    def _before_treatment(scan: Scan, run: Run) -> bool:
        """Whether the number sits in a sentence led by "Before calcination …", before any semicolon (found once
        per sentence, so a long sentence costs one scan)."""
        key = ("before_treatment", run.s_start)
        if key not in scan.memo:
            m = _BEFORE_TREATMENT.match(scan.norm, run.s_start, run.s_end)
            semi = scan.norm.find(";", m.end(), run.s_end) if m else -1
            scan.memo[key] = -1 if m is None else (run.s_end if semi < 0 else semi)
        return run.head.start < scan.memo[key]

    def run_reason(self, scan: Scan, run: Run) -> str | None:
        reason = super().run_reason(scan, run)
        if reason == "other" and _SEM_DISTANCE.search(scan.norm, max(run.lo, run.head.start - 60), run.head.start):
            return None  # the spacing or separation of features in the micrograph is a feature size too
        return reason

    def explicit(self, scan: Scan, run: Run) -> bool:
        return bool(_EXPLICIT.search(scan.norm, max(run.s_start, run.head.start - 50), run.head.start))
