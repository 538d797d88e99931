"""Reader rules found by the w34 and w35 dev batches of the claim corpus: thousands written with a space, interlayer
spacings, ratings, sizes known from another technique after the value, features larger than the field of view, a
process wavelength, generic statements about samples "like this", spans over several periods; free-ion moments,
upper references, numbered site labels, a ± moment after an element symbol, early reports explained away, moments per
cluster, a solution the next sentence calls an artefact, "per site" with one magnetic element; competing structures
and polytypes in a stability chain. One test per rule, each with a case written fresh here (not copied from the
corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MagnetismOracle, StabilityOracle
from matpcr_plugins.sem.oracle import SEMOracle
from test_claims_w20 import hull_q, magnet_q

SEM, STABILITY, MAGNETISM = SEMOracle(), StabilityOracle(), MagnetismOracle()


def sizes(text: str) -> list[object]:
    return values(SEM, text)


def moments(text: str, formula: str = "MnCoGe") -> set[tuple[float, str]]:
    return {(v, u) for k, v, u in claims(MAGNETISM, text, magnet_q(formula)) if k == "magnetic_moment"}


# -- sem ------------------------------------------------------------------------------------------------
def test_a_space_separates_thousands() -> None:
    assert sizes("The rod spans 210 px × 60 nm = 12 600 nm.") == [12600.0]
    assert sizes("Stuttered output: 300 300 nm.") != [300300.0]


def test_an_interlayer_spacing_is_not_a_feature() -> None:
    assert sizes("The flakes are 2.4 µm wide. Its stacking repeat is d₀₀₂ = 0.335 nm.") == [2400.0]
    assert sizes("The platelets are 300 nm wide; the interlayer spacing is 1.4 nm.") == [300.0]


def test_a_rated_size_is_not_a_feature() -> None:
    assert sizes("The membrane fibres are 3.1 µm thick. The filter is rated to hold back 5 µm particles.") == [3100.0]


def test_a_size_known_from_another_technique_after_the_value() -> None:
    assert sizes("The ridges are 1.2 µm apart; the grains inside them (~30 nm, from TEM) are not resolved.") == [1200.0]
    assert sizes("The whiskers are 0.9 µm long; their tips (~50 nm wide, known from AFM) are too small here.") == [900.0]


def test_a_structure_larger_than_the_field_of_view_is_not_a_feature() -> None:
    assert sizes("The pores are ~40 nm. The fibres beneath (~20 µm) are much larger than the field of view.") == [40.0]


def test_a_wavelength_named_after_the_value_is_not_a_feature() -> None:
    assert sizes("The ripple period is 520 nm, just under the 1030 nm laser wavelength.") == [520.0]


def test_a_generic_statement_about_samples_like_this_is_not_a_feature() -> None:
    assert sizes("The film is 850 nm thick. Coatings like this are grown from a seed about 40 µm wide.") == [850.0]


def test_a_span_over_several_periods_is_a_step_not_a_feature() -> None:
    assert sizes("Five periods cover 120 × 20 = 2400 nm, and the period Λ = 480 nm.") == [480.0]


# -- magnetism -------------------------------------------------------------------------------------------
def test_a_free_ion_moment_named_before_gjj_is_another_property() -> None:
    chain = "GGA gives Fe 2.1 µB per Fe. The Tb³⁺ free-ion moment gJ·J = 9 µB is not in the calculation's Tb site."
    assert (9.0, "muB/element:Tb") not in moments(chain, "TbFe2")


def test_an_ionic_value_used_only_as_a_reference_is_other() -> None:
    chain = "Co is formally Co⁴⁺, so the ionic value of 5 µB serves only as an upper reference. GGA gives 2.6 µB per Co."
    assert moments(chain, "SrCoO3") == {(2.6, "muB/element:Co")}


def test_a_numbered_site_label_names_the_element() -> None:
    chain = "Only the Fe2 sites order, carrying about 2.2 µB, while the Fe1 sites stay disordered.\nAnswer: magnetic"
    assert moments(chain, "Fe2P") == {(2.2, "muB/element:Fe")}


def test_a_plus_minus_moment_after_an_element_symbol_is_a_magnitude() -> None:
    chain = "In the checkerboard AFM cell GGA+U gives Mn ±4.3 µB and no net moment.\nAnswer: non-magnetic"
    assert (4.3, "muB/element:Mn") in moments(chain, "MnO")


def test_an_early_report_explained_away_is_negated() -> None:
    chain = "Early reports of magnetic CoSi₂ films (~0.2 µB per Co) were later put down to Co clusters; the bulk is not magnetic."
    assert moments(chain, "CoSi2") == set()
    assert reasons(MAGNETISM, chain, magnet_q("CoSi2"))["0.2 µB per Co"] == "negated"


def test_a_moment_per_cluster_is_not_the_cells() -> None:
    chain = "The plain cell is non-magnetic; a moment of ~1 µB per 7-atom trimer cluster appears only in a larger cell."
    assert moments(chain, "Nb3Cl8") == set()


def test_a_solution_the_next_sentence_calls_an_artefact() -> None:
    chain = "With coarse smearing GGA lands in a weak ferromagnetic state of 0.3 µB per Ni. That state is an artefact of the k-mesh."
    assert moments(chain, "NiS2") == set()


def test_per_site_with_one_magnetic_element_is_that_elements_moment() -> None:
    chain = "MnF₂: rutile antiferromagnet of Mn²⁺ (4.6 µB per site), zero net.\nAnswer: non-magnetic"
    assert moments(chain, "MnF2") == {(4.6, "muB/element:Mn")}


# -- stability -------------------------------------------------------------------------------------------
def test_a_competing_structure_or_polytype_higher_in_energy_is_another_phase() -> None:
    chain = "The asked cell is on the hull (0 eV/atom). The competing K₂NiF₄ structure sits 30 meV/atom higher."
    assert values(STABILITY, chain, hull_q("Sr2TiO4"), kind="e_above_hull") == [0.0]
    chain = "The 4H form of SiC is on the hull (0 eV/atom); the 6H polytype is only 2 meV/atom higher."
    assert values(STABILITY, chain, hull_q("SiC"), kind="e_above_hull") == [0.0]


def test_a_space_separates_thousands_of_a_shift_but_not_a_list() -> None:
    from matpcr_plugins.raman.oracle import RamanOracle

    raman = RamanOracle()
    assert values(raman, "The strongest band sits at 1 085 cm-1.") == [1085.0]
    assert values(raman, "Bands at 156 282 465 cm-1.") == [156.0, 282.0, 465.0]  # a list without commas
    assert sizes("The pore is 144 800 nm (0.1448 mm) across.") == [144800.0]
