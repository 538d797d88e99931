"""Reader rules found by the m2 (real SmolLM2 and Gemma 3 chains), w5 (machine formats, new class wordings) and w6
(recall in the first batch's styles) dev batches of the claim corpus (issue #12): one test per rule, each with
the case that exposed it."""

from __future__ import annotations

import pytest

from matpcr.records import Item
from matpcr_plugins.dft.oracles import MetallicityOracle, StabilityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle

RAMAN, SEM = RamanOracle(), SEMOracle()
STABILITY, METALLICITY = StabilityOracle(), MetallicityOracle()

RAMAN_Q = ("Measured Raman spectrum of Baryte (BaSO4), excited at 532 nm. Columns: Raman shift (cm⁻¹) and intensity:\n"
           "452.1 310\n461.8 1400\n617.3 800\n987.9 10000\n1138.4 600\nWhich are the three strongest bands?")


def claims(oracle: object, text: str, question: str = "") -> list[tuple[str, object, str]]:
    item = Item(id="t", task="t", constraint="", modality="text", text=question) if question else None
    return [(c.kind, c.value, c.unit) for c in oracle.read(text, item).claims]  # type: ignore[attr-defined]


def reasons(oracle: object, text: str, question: str = "") -> dict[str, str]:
    item = Item(id="t", task="t", constraint="", modality="text", text=question) if question else None
    return {c.text.strip(): c.reason for c in oracle.read(text, item).rejected}  # type: ignore[attr-defined]


def values(oracle: object, text: str, question: str = "") -> list[object]:
    return [v for _, v, _ in claims(oracle, text, question)]


# -- truncated generations and copied tables ------------------------------------------------------------
def test_a_list_cut_off_before_its_last_decimals_drops_the_stub() -> None:
    chain = "The main bands of this spectrum are the 134.5, 138.4, 142.7, 218."
    assert values(RAMAN, chain) == [134.5, 138.4, 142.7]
    assert reasons(RAMAN, chain)["218"] == "other"
    # a complete integer list is read whole
    assert values(RAMAN, "The main bands are at 1086, 712 and 282 cm⁻¹.") == [1086.0, 712.0, 282.0]


def test_a_copied_table_cut_off_mid_row_is_an_echo() -> None:
    chain = "Columns: Raman shift (cm⁻¹) and intensity:\n452.1 310\n461.8 1400\n617.3 800\n987.9"
    assert values(RAMAN, chain, RAMAN_Q) == []
    assert reasons(RAMAN, chain, RAMAN_Q)["987.9"] == "question_echo"
    looped = "452.1 310\n461.8 1400\n452.1 310\n461.8 1400\n452.1"
    assert values(RAMAN, looped, RAMAN_Q) == []


def test_answer_bullets_are_not_ranges() -> None:
    assert values(RAMAN, "Answer:\n- 987.9 cm⁻¹\n- 461.8 cm⁻¹\n- 617.3 cm⁻¹") == [987.9, 461.8, 617.3]
    assert values(RAMAN, "The band sits at 500-540 cm⁻¹.") == []


# -- raman: numbers that are not the sample's bands ------------------------------------------------------
def test_other_minerals_and_comparisons_are_other_property() -> None:
    chain = ("The dominant band at 987.9 cm⁻¹ identifies baryte. For comparison, celestine (SrSO₄) has ν₁ at "
             "1000 cm⁻¹ and anglesite (PbSO₄) at 978 cm⁻¹.\nAnswer: 987.9 cm⁻¹, 461.8 cm⁻¹, 617.3 cm⁻¹")
    assert values(RAMAN, chain, RAMAN_Q) == [987.9, 461.8, 617.3]
    listed = "Polymorphs:\n- andalusite — main band near 360 cm⁻¹\n- kyanite — 486.4 cm⁻¹"
    question = "Measured Raman spectrum of Kyanite (Al2SiO5)."
    assert values(RAMAN, listed, question) == [486.4]
    # a mineral the question names stays the sample's
    assert values(RAMAN, "Baryte: 987.9 cm⁻¹ dominates.", RAMAN_Q) == [987.9]


def test_literature_differences_ratios_and_coefficients_are_not_bands() -> None:
    chain = ("The ν₁ band is at 1086.2 cm⁻¹; Gunasekaran et al. (2006), who report 1085 cm⁻¹, agree. Pure calcite has "
             "ν₁ at 1085.0 cm⁻¹, so Δ = 1086.2 − 1085.0 = 1.2 cm⁻¹, at ~0.6 cm⁻¹ per mol% Mg. S/N ≈ 120.")
    assert values(RAMAN, chain) == [1086.2]
    got = reasons(RAMAN, chain)
    assert got["1.2 cm⁻¹"] == "other"
    assert got["120"] == "other_property"


def test_a_ticked_off_band_is_negated() -> None:
    chain = "✅ 1008 cm⁻¹ — ν₁\n❌ ~1620 cm⁻¹ H₂O bend — not in this table"
    assert values(RAMAN, chain) == [1008.0]


# -- sem -------------------------------------------------------------------------------------------------
def test_other_techniques_batches_and_seeds_are_not_feature_sizes() -> None:
    chain = ("SEM: 40 px × 5 nm/px = 200 nm. Laser diffraction on the same powder gives d50 = 1.8 µm. "
             "The previous batch came out at 380 nm; growth from 12 nm seeds; DLS: Z-average 455 nm; "
             "a ~40 nm hydration layer explains it.")
    assert values(SEM, chain) == [200.0]


def test_a_labelled_field_of_view_line_is_an_instrument_setting() -> None:
    chain = "- Field of view: 1024 × 8.33 nm ≈ 8.5 µm wide\n- Diameter: 30 × 8.33 = 250 nm"
    assert values(SEM, chain) == [250.0]


def test_a_gap_computed_between_features_is_still_a_size() -> None:
    assert values(SEM, "- Gap between neighbours: 448 − 416 = ~32 nm") == [32.0]


# -- DFT classes -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("chain, expected", [
    ("Cubic BaZrO3 is thermodynamically favoured relative to BaO + ZrO2.", "stable"),
    ("Zinc blende is the ground state of ZnS in PBE.\nAnswer: ground state", "stable"),
    ("Ag2NiO2 is prone to decomposition.", "unstable"),
    ("ScMoN2 in this stacking is not expected to be synthesizable.", "unstable"),
    ("Yes.", "stable"),
    ("The material is thermodynamically stable, but it is not stable at room temperature due to a defect.", "stable"),
    ("1. La2TlRh is a thermodynamically stable compound.\n2. The answer is \"stable\" or \"unstable\".", "stable"),
    ('{"stable": true, "e_above_hull": 0.004}', "stable"),
    ("[ ] stable\n[x] unstable", "unstable"),
])
def test_stability_class_wordings(chain: str, expected: str) -> None:
    assert claims(STABILITY, chain)[0] == ("stability", expected, "")


def test_a_plan_and_bare_alternatives_commit_to_nothing() -> None:
    assert claims(STABILITY, "To determine the thermodynamically stable of VCu3S4, we need to calculate the density.") == []
    assert claims(STABILITY, 'The answer is "stable" or "unstable".') == []


@pytest.mark.parametrize("chain, expected", [
    ("In PBE, the Fermi level of LaB6 crosses the La 5d–B 2p bands.\nAnswer: Fermi level crosses bands", "metallic"),
    ("ReO3 has a metal-like DOS.", "metallic"),
    ("Rutile SnO2: clean separation.\nAnswer: E_g > 0", "gapped"),
    ("Is NbN metallic? Yes. The Nb 4d band is partly filled.", "metallic"),
    ("Pd: the 4d band crosses E_F.\nAnswer: Yes", "metallic"),
    ("SrTiO3 is a d⁰ perovskite insulator.\nAnswer: Yes, 1.8 eV", "gapped"),
    ('{"material": "Si", "metallic": false, "band_gap_eV": 0.61}', "gapped"),
    ("formula: GaP\nis_metal: false\nband_gap: 1.59", "gapped"),
])
def test_metallicity_class_wordings(chain: str, expected: str) -> None:
    assert claims(METALLICITY, chain)[0] == ("metallicity", expected, "")


def test_machine_readable_keys_carry_their_unit() -> None:
    assert ("band_gap", 0.61, "eV") in claims(METALLICITY, '{"metallic": false, "band_gap_eV": 0.61}')
    assert ("band_gap", 1.59, "eV") in claims(METALLICITY, "is_metal: false\nband_gap: 1.59  # eV")
    got = claims(STABILITY, '{"formula": "CsSnBr3", "e_hull_meV_per_atom": 46, "is_stable": true}')
    assert got == [("stability", "stable", ""), ("e_above_hull", 0.046, "eV/atom")]
    yaml = "ehull_eV_per_atom: 0.021\nthreshold_eV_per_atom: 0.05\nstable: yes"
    assert claims(STABILITY, yaml) == [("stability", "stable", ""), ("e_above_hull", 0.021, "eV/atom")]


def test_latex_rm_units_hubbard_u_and_a_per_formula_unit_basis() -> None:
    assert ("e_above_hull", 0.0, "eV/atom") in claims(STABILITY, r"$E_{\rm hull}=0.0\,{\rm eV/atom}$. Answer: stable")
    chain = "E_hull = 61 meV atom⁻¹ (PBE+U, U(Fe) = 5.3 eV).\nAnswer: unstable"
    assert claims(STABILITY, chain) == [("stability", "unstable", ""), ("e_above_hull", 0.061, "eV/atom")]
    chain = "Per formula unit (21 atoms) the spinel is 0.42 eV above the hull, i.e. 20 meV per atom.\nAnswer: stable"
    assert ("e_above_hull", 0.42, "eV/fu") in claims(STABILITY, chain)


def test_a_revised_answer_line_is_retracted() -> None:
    chain = ("Answer: gapped, 0.6 eV\n\nOn reflection, plain PBE does not split the dimer bands; the band gap closes.\n\n"
             "Answer: metallic")
    assert claims(METALLICITY, chain) == [("metallicity", "metallic", "")]
    assert reasons(METALLICITY, chain)["0.6 eV"] == "retracted"


def test_a_contrast_clause_gives_back_to_the_asked_material() -> None:
    question = "Material: ZrS2, space group P-3m1 (164). Is ZrS2 metallic (zero band gap) or does it have a band gap?"
    chain = ("Unlike TiS2, which PBE makes a semimetal with a 0.2 eV overlap, ZrS2 keeps an indirect gap of 1.1 eV in PBE."
             "\nAnswer: gapped")
    got = claims(METALLICITY, chain, question)
    assert ("band_gap", 1.1, "eV") in got and ("band_gap", 0.2, "eV") not in got


# -- w6 ------------------------------------------------------------------------------------------------
def test_a_bullet_dash_keeps_its_line() -> None:
    from matpcr_plugins.claims.text import normalize

    assert normalize("x −0.08 eV\n- y and 10 - 20").norm == "x -0.08 eV\n- y and 10 – 20"


def test_formulas_with_brackets_and_competing_phases_are_not_another_material() -> None:
    question = "Material: NaZr2(PO4)3, space group R-3c (167). Is NaZr2(PO4)3 thermodynamically stable?"
    chain = "NaZr2(PO4)3 is the hull vertex at its composition: E_above_hull = 0.000 eV/atom.\nAnswer: stable"
    assert ("e_above_hull", 0.0, "eV/atom") in claims(STABILITY, chain, question)
    question = "Material: BaHfS3, space group Pnma (62). Is BaHfS3 thermodynamically stable?"
    chain = "Against BaS, HfS2 and Ba3Hf2S7, the perovskite comes out 22 meV/atom above the hull.\nAnswer: stable"
    assert ("e_above_hull", 0.022, "eV/atom") in claims(STABILITY, chain, question)
    # a site label in brackets is not a formula: Fe(B) carries the moment of the asked Fe3Al
    from matpcr_plugins.dft.claims import composition

    assert composition("Na3V2(PO4)2F3") == (("F", 3.0), ("Na", 3.0), ("O", 8.0), ("P", 2.0), ("V", 2.0))


def test_a_table_header_names_its_column_and_marked_rows_name_the_asked_phase() -> None:
    table = "| database | E_above_hull |\n|---|---|\n| OQMD | 4 meV/atom |\n| Alexandria | 0.011 eV/atom |\nAnswer: stable"
    assert claims(STABILITY, table)[1:] == [("e_above_hull", 0.004, "eV/atom"), ("e_above_hull", 0.011, "eV/atom")]
    rows = ("- δ-MoC (rock salt, asked): 0.19 eV/atom above the hull\n- γ-MoC (WC type): 0.02 eV/atom above the hull\n"
            "Answer: unstable")
    assert claims(STABILITY, rows) == [("stability", "unstable", ""), ("e_above_hull", 0.19, "eV/atom")]


def test_sem_spreads_other_methods_and_area_densities_are_not_sizes() -> None:
    chain = ("Before calcination the precursor particles were about 60 nm; the particle marked here is 96 nm.\n"
             "- mean 22.6 nm, SD 3.1 nm\n- XRD Scherrer size: 18 nm\n- pore density: 5×10¹⁰ cm⁻²\n"
             "SAXS gives d100 = 9.8 nm, and the BJH pore size from N2 sorption is 7.1 nm.")
    assert values(SEM, chain) == [96.0, 22.6]


def test_band_overlaps_direct_gaps_and_minority_channels_are_not_the_gap() -> None:
    chain = "AgCl is a good insulator (PBE indirect gap 0.95 eV; experiment 3.25 eV, direct 5.13 eV)."
    assert [v for k, v, _ in claims(METALLICITY, chain) if k == "band_gap"] == [0.95, 3.25]
    chain = "- Mn2VAl is a half-metal in PBE\n- minority spin: a 450 meV gap around E_F\nAnswer: half-metal"
    assert claims(METALLICITY, chain) == [("metallicity", "metallic", "")]
    chain = ("PBE puts the conduction-band bottom 0.3 eV below the valence-band top at X: an overlap.\n"
             "Answer: metallic")
    assert claims(METALLICITY, chain) == [("metallicity", "metallic", "")]


# -- w7 ------------------------------------------------------------------------------------------------
def test_literature_values_named_after_the_numbers_and_minerals_with_their_own_bands() -> None:
    chain = "The remaining rows are lattice modes, close to the 368, 330 and 224 cm⁻¹ reported by Wang et al. [12]."
    assert values(RAMAN, chain) == []
    question = "Measured Raman spectrum of Realgar (As4S4), excited at 532 nm."
    chain = "Realgar turns into pararealgar under light, and pararealgar has its strongest band at 232 cm⁻¹. The main band is at 355.5 cm⁻¹."
    assert values(RAMAN, chain, question) == [355.5]
    assert values(RAMAN, "- the carbonate ν1 of hydromagnesite, expected near 1120 cm⁻¹, is not seen") == []


def test_imaging_settings_named_after_their_value_and_superseded_values() -> None:
    assert values(SEM, "Imaged at 5 kV, 4.8 mm working distance and 80 000× magnification; the particle is 148 nm.") == [148.0]
    assert values(SEM, "At this magnification the beam spot, about 1 nm, covers a few pixels. The pore is 8 nm wide.") == [8.0]
    assert values(SEM, "- tube length, from a separate cross-sectional image: 2.1 µm\n- tube diameter: 94 nm") == [94.0]
    chain = "I quoted 2.05 eV at first, but that was the HSE value; the PBE gap is 1.8 eV.\nAnswer: gapped"
    assert [v for k, v, _ in claims(METALLICITY, chain) if k == "band_gap"] == [1.8]
