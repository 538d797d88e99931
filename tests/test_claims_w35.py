"""Reader rules found by the second pass over the w34 and w35 dev batches of the claim corpus: a list cut off just
before the Answer line, a "no" that only re-ranks a band, a contrast kept inside brackets, a sentence set in another
mineral, a polymorph named by its Greek prefix; direct transitions on the next bullet, the size of a functional's
error, another method set aside, a value relabelled as another method's, gaps at a few k points; words of an aside
about the subject, the phases a diagram contains, a correction naming only a class, "above it — the latter by",
hull-table rows the prose does not restate; an electron count given as the reason for a moment, m*/m, long YAML site
keys, the bracketed terms of an ionic sum; the particle a feature was made from. One test per rule, each with a case
written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle
from test_claims_w20 import gap_q, hull_q, magnet_q
from test_claims_w27 import raman_q

RAMAN, SEM, STABILITY, METALLICITY, MAGNETISM = (RamanOracle(), SEMOracle(), StabilityOracle(), MetallicityOracle(),
                                                 MagnetismOracle())


def bands(text: str, name: str = "Wulfenite") -> list[object]:
    return values(RAMAN, text, raman_q(name))


def gaps(text: str, formula: str = "ZnSiP2") -> list[object]:
    return values(METALLICITY, text, gap_q(formula), kind="band_gap")


def hulls(text: str, formula: str = "CaTiSiO5") -> list[object]:
    return values(STABILITY, text, hull_q(formula), kind="e_above_hull")


def moments(text: str, formula: str = "NiCr2O4") -> set[tuple[float, str]]:
    return {(v, u) for k, v, u in claims(MAGNETISM, text, magnet_q(formula)) if k == "magnetic_moment"}


# -- raman ----------------------------------------------------------------------------------------------
def test_an_integer_stub_cut_off_just_before_the_answer_line() -> None:
    chain = "The bands are 870.2 cm⁻¹, 321.5 cm⁻¹, 870.2 cm⁻¹, 321.5 cm⁻¹, 87\nAnswer: 870.2 cm⁻¹, 321.5 cm⁻¹"
    assert bands(chain) == [870.2, 321.5]


def test_a_no_that_only_demotes_a_band_retracts_nothing() -> None:
    chain = "Strongest line: 352 cm⁻¹? No, it is the bending mode and it is weaker; the main band is 870 cm⁻¹.\nAnswer: 870 cm⁻¹"
    assert bands(chain) == [352.0, 870.0]


def test_a_contrast_closed_inside_brackets_leaves_the_subject() -> None:
    chain = "Wulfenite (tetragonal, unlike the monoclinic stolzite) shows its Mo–O stretch at 870.2 cm⁻¹ and a weaker band at 321.5 cm⁻¹."
    assert bands(chain) == [870.2, 321.5]


def test_a_mineral_named_after_rather_than_is_not_the_subject() -> None:
    chain = "Wulfenite (rather than stolzite) shows its Mo–O stretch at 870.2 cm⁻¹."
    assert bands(chain) == [870.2]


def test_a_sentence_set_in_another_mineral_is_that_minerals() -> None:
    chain = "Wulfenite shows the Mo–O stretch at 870.2 cm⁻¹ and the bend at 321.5 cm⁻¹. In powellite the former lies at 879 cm⁻¹."
    assert bands(chain) == [870.2, 321.5]


def test_a_polymorph_named_by_another_greek_prefix_is_another_phase() -> None:
    chain = "The crystal is α-sulfur: the S–S stretch is at 473 cm⁻¹. β-Sulfur has its stretch near 466 cm⁻¹ instead."
    assert values(RAMAN, chain, "Measured Raman spectrum of a sulfur crystal. At which Raman shift is its main band?") == [473.0]


# -- metallicity ----------------------------------------------------------------------------------------
def test_a_direct_transition_on_the_next_bullet_is_not_this_values() -> None:
    chain = "- indirect gap: 1.52 eV\n- with SOC the gap falls to about 1.41 eV\n- direct transition at Γ: 2.2 eV\nAnswer: gapped, 1.52 eV"
    assert sorted(gaps(chain)) == [1.41, 1.52]


def test_the_size_of_a_functionals_underestimate_is_not_a_gap() -> None:
    chain = "PBE gives 1.3 eV against 2.0 eV measured; the PBE underestimate (~0.7 eV) is the usual one.\nAnswer: gapped, 1.3 eV"
    assert sorted(gaps(chain)) == [1.3, 2.0]


def test_another_method_set_aside_for_plain_pbe() -> None:
    chain = "A few SCAN runs open a gap of ~0.05 eV; I stick with plain PBE, which has none.\nAnswer: metallic"
    assert gaps(chain, "CoSi") == []


def test_a_value_relabelled_as_another_methods_is_not_retracted() -> None:
    chain = "PBE gap: I first wrote 2.9 eV, but that is the HSE06 value; PBE gives 2.1 eV.\nAnswer: gapped, 2.1 eV"
    assert sorted(gaps(chain)) == [2.1, 2.9]


def test_a_gap_at_a_few_k_points_of_a_semimetal_is_local() -> None:
    chain = "It is a semimetal: SOC opens a gap of ~8 meV at some k points, but the bands overlap elsewhere.\nAnswer: metallic"
    assert gaps(chain, "MoTe2") == []


# -- stability -------------------------------------------------------------------------------------------
def test_words_of_an_aside_describing_the_subject_do_not_make_another_energy() -> None:
    chain = "Titanite (the disordered high-temperature variety) sits 9 meV/atom above the ordered one in PBE."
    assert hulls(chain) == [0.009]


def test_the_phases_a_diagram_contains_are_the_hulls() -> None:
    chain = "The Ti–Si diagram also contains Ti5Si3 and TiSi, and the disilicide is a vertex of that hull (E_hull = 0 eV/atom)."
    assert hulls(chain, "TiSi2") == [0.0]


def test_a_correction_naming_only_a_class_keeps_the_value() -> None:
    chain = "First guess: unstable. At 0 K PBE gives E_hull = 0.021 eV/atom. Correction: stable.\nAnswer: stable"
    assert hulls(chain) == [0.021]


def test_above_it_the_latter_by_is_the_distance() -> None:
    chain = "Two forms compete: β on the hull and α (asked) just above it — the latter by 7 meV/atom.\nAnswer: stable"
    assert hulls(chain, "Ga2S3") == [0.007]


def test_hull_table_rows_the_prose_does_not_restate_are_other_phases() -> None:
    chain = ("| phase | E above hull (meV/atom) |\n|---|---|\n| perovskite-type CaTiSiO5 | 64 |\n"
             "| garnet-type CaTiSiO5 | 91 |\n\nAt 64 meV/atom the perovskite-type phase is outside the window.\nAnswer: unstable")
    assert hulls(chain) == [0.064]


# -- magnetism -------------------------------------------------------------------------------------------
def test_an_electron_count_given_as_the_reason_is_not_a_partial_moment() -> None:
    chain = "VCl3 has two d electrons, so it has a magnetic moment of 2 µB per V.\nAnswer: magnetic"
    assert moments(chain, "VCl3") == {(2.0, "muB/element:V")}


def test_an_effective_mass_ratio_is_not_a_moment() -> None:
    chain = "SrVO3 is a correlated Pauli-paramagnetic metal with m*/m ≈ 2; GGA converges to 0 µB.\nAnswer: non-magnetic"
    assert moments(chain, "SrVO3") == {(0.0, "muB/cell")}


def test_long_yaml_site_keys_name_their_element() -> None:
    chain = "```yaml\nmoments_muB:\n  Ni_tetrahedral: 1.9\n  Cr_octahedral_b: 2.8\n  O: 0.0\n```\nAnswer: magnetic"
    assert moments(chain) == {(1.9, "muB/element:Ni"), (2.8, "muB/element:Cr"), (0.0, "muB/element:O")}


def test_the_bracketed_terms_of_an_ionic_sum_are_not_moments() -> None:
    chain = "Fe³⁺ (5 µB) antiparallel to Mo⁵⁺ (1 µB) gives the ionic estimate 4 µB/f.u.\nAnswer: magnetic, 4 µB/f.u."
    assert moments(chain, "Sr2FeMoO6") == {(4.0, "muB/fu")}


# -- sem ------------------------------------------------------------------------------------------------
def test_the_particle_a_feature_was_made_from_is_not_the_feature() -> None:
    assert values(SEM, "The splat is ~38 µm wide, plausible for a splat from a ~20 µm feedstock particle.") == [38000.0]
    assert reasons(SEM, "Each disc formed from a 5 µm droplet; the disc is 12 µm across.")["5 µm"] == "other_property"
