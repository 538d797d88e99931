"""Metallicity reader rules found by the pass over the w40 dev batch of the claim corpus: a gap the sentence then gives
to a calculation other than the asked one (or says it does not use), and a first impression the sentence turns away
from. One test per rule, each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MetallicityOracle
from test_claims_w20 import gap_q

METALLICITY = MetallicityOracle()


def gaps(text: str, formula: str = "ZnSiP2") -> list[object]:
    return values(METALLICITY, text, gap_q(formula), kind="band_gap")


def test_a_gap_of_a_calculation_other_than_the_asked_one() -> None:
    chain = ("Plain PBE leaves the Co d bands crossing E_F. Adding SOC and U = 3 eV opens a gap of about 0.25 eV, which is "
             "not the calculation asked about.\nAnswer: metallic")
    assert claims(METALLICITY, chain, gap_q("ZnSiP2")) == [("metallicity", "metallic", "")]
    assert reasons(METALLICITY, chain, gap_q("ZnSiP2"))["0.25 eV"] == "other"
    chain = ("With a Hubbard U on V and orbital ordering a gap near 0.7 eV appears, but that is not the plain PBE setting "
             "asked for, so I don't use it.\nAnswer: metallic")
    assert gaps(chain) == []
    # near miss: a gap the chain does not set aside stays a claim, whatever follows it
    chain = "HSE06 opens a gap of about 1.9 eV, which is the value asked about in many studies.\nAnswer: gapped, 1.9 eV"
    assert gaps(chain) == [1.9]


def test_a_first_impression_the_sentence_turns_away_from() -> None:
    chain = ("My initial impression was a gap of roughly 1.6 eV, but that is what PBE gives for the sulfide; for the selenide "
             "PBE gives 1.1 eV.\nAnswer: gapped, 1.1 eV")
    assert gaps(chain) == [1.1]
    assert reasons(METALLICITY, chain, gap_q("ZnSiP2"))["1.6 eV"] == "retracted"
    # near miss: a first impression the sentence confirms stays a claim
    chain = "My initial impression was a gap of roughly 1.6 eV, and the PBE run confirms it.\nAnswer: gapped, 1.6 eV"
    assert gaps(chain) == [1.6]
