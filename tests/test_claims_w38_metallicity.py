"""Metallicity reader rules found by the pass over the w38 dev batch of the claim corpus: the band-to-band edge as a
gap label, optical lines said to be "not band gaps", a local gap opened only along one k path, a smearing width named
by its scheme, a setting row of a table, the thermal energy kT, a guess the sentence ends by calling wrong, an early
report the chain denies, and a value said of a structure other than the asked cell's (named by its space-group symbol,
in a table row, or by its prototype). One test per rule, each with a case written fresh here (not copied from the
corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MetallicityOracle
from test_claims_w20 import gap_q

METALLICITY = MetallicityOracle()


def gaps(text: str, formula: str = "ZnSiP2") -> list[object]:
    return values(METALLICITY, text, gap_q(formula), kind="band_gap")  # the asked cell is Pnma (62)


def question(formula: str, group: str, number: int) -> str:
    return (f"Material: {formula}, space group {group} ({number}), 2 atoms in the computational cell.\nAccording to "
            f"density-functional (PBE/GGA) calculations, is {formula} metallic (zero band gap) or does it have a band gap? "
            "If it has one, give its size in eV.")


def test_the_band_to_band_edge_is_the_gap() -> None:
    chain = ("Adding the exciton binding energy of about 0.4 eV to the 5.6 eV exciton line puts the band-to-band edge near "
             "6.0 eV. PBE gives 4.4 eV.\nAnswer: gapped, 4.4 eV")
    assert gaps(chain) == [6.0, 4.4]


def test_optical_lines_said_to_be_not_band_gaps() -> None:
    chain = "The Eu²⁺ lines (about 2.9 eV) are 4f–5d transitions, not band gaps. PBE gives 4.1 eV.\nAnswer: gapped, 4.1 eV"
    assert gaps(chain) == [4.1]


def test_a_local_gap_along_one_path_is_not_the_band_gap() -> None:
    chain = ("The pockets at Γ and M overlap, so it is a semimetal. SOC splits the crossing along Γ–M, a local gap of "
             "~40 meV, while the pockets survive.\nAnswer: metallic")
    assert claims(METALLICITY, chain, gap_q("ZnSiP2")) == [("metallicity", "metallic", "")]


def test_a_smearing_width_named_by_its_scheme() -> None:
    chain = "The PBE run used 0.2 eV Gaussian smearing and finds a Kohn–Sham gap of 1.1 eV.\nAnswer: gapped, 1.1 eV"
    assert gaps(chain) == [1.1]
    assert reasons(METALLICITY, chain, gap_q("ZnSiP2"))["0.2 eV"] == "instrument_setting"


def test_a_table_row_labelled_by_a_setting() -> None:
    chain = "| item | value |\n|---|---|\n| PBE gap | 2.4 eV |\n| ENCUT, plane waves | 450 eV |\n\nAnswer: gapped, 2.4 eV"
    assert gaps(chain) == [2.4]


def test_the_thermal_energy_is_not_a_gap() -> None:
    chain = "The PBE gap is 60 meV, only about twice k_BT (≈ 25 meV at 300 K), but it is open.\nAnswer: gapped, 0.06 eV"
    assert gaps(chain) == [0.06]


def test_a_guess_the_sentence_ends_by_calling_wrong() -> None:
    chain = ("I first pictured a small-gap semiconductor, perhaps 0.2 eV, as in the sister arsenides and phosphides — but "
             "that is wrong: the d band is half filled.\nAnswer: metallic")
    assert gaps(chain) == []


def test_an_early_report_the_chain_denies() -> None:
    chain = ("Older optical work listed the compound as a semiconductor with a 0.2 eV gap; it is not one, since the "
             "bands cross E_F in every calculation.\nAnswer: metallic")
    assert gaps(chain) == []
    assert reasons(METALLICITY, chain, gap_q("ZnSiP2"))["0.2 eV"] == "negated"


def test_a_value_of_a_structure_other_than_the_asked_cell() -> None:
    # by its space-group symbol, in prose and in a table row; the asked cell's own symbol keeps its value
    chain = ("The monoclinic P2₁/c polymorph, relaxed alike, comes out at 2.9 eV. The Pnma cell gives 2.2 eV.\n"
             "| phase | space group | PBE gap |\n|---|---|---|\n| low-T | Cmcm | 2.6 eV |\n| asked | Pnma | 2.2 eV |\n"
             "Answer: gapped, 2.2 eV")
    assert gaps(chain) == [2.2]
    # by its prototype, when the asked space group is another one
    chain = "For orientation: wurtzite GaP is a wide-gap semiconductor — PBE ≈ 1.6 eV. The asked rock-salt cell is a metal.\nAnswer: metallic"
    assert values(METALLICITY, chain, question("GaP", "Fm-3m", 225), kind="band_gap") == []
    assert values(METALLICITY, chain, question("GaP", "P6_3mc", 186), kind="band_gap") == [1.6]
    # "Band gap" is a word, not a space-group symbol; "Pbnm" is a setting of the asked Pnma, "Fm3m" the asked Fm-3m
    assert gaps("Band gap: 1.3 eV\nAnswer: gapped, 1.3 eV") == [1.3]
    assert gaps("The Pbnm cell, fully relaxed, comes out at 1.3 eV.\nAnswer: gapped, 1.3 eV") == [1.3]
    assert values(METALLICITY, "The Fm3m cell, fully relaxed, comes out at 1.3 eV.\nAnswer: gapped, 1.3 eV",
                  question("GaP", "Fm-3m", 225), kind="band_gap") == [1.3]
