"""Reader rules found by the pass over the w36 and w37 dev batches of the claim corpus: a coating layer named
after its own number inside a list of imaging settings, a pixel size worked out as length / pixel count with no
feature named, a uniformity (3σ) figure, material removed by electropolishing, a film "below what this image can
resolve", a size "known from" another technique after a noun phrase. One test per rule, each with a case written
fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import values
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from matpcr_plugins.sem.oracle import SEMOracle
from test_claims_w35 import gaps, hulls, moments

SEM, STABILITY, METALLICITY, MAGNETISM = SEMOracle(), StabilityOracle(), MetallicityOracle(), MagnetismOracle()


# -- sem ------------------------------------------------------------------------------------------------
def test_a_coating_layer_inside_a_list_of_imaging_settings() -> None:
    chain = "The pollen grain is 31 µm across.\nImaged with SE, 5 kV, 8 nm Pt sputter coat, 6 mm working distance."
    assert values(SEM, chain) == [31000.0]


def test_a_pixel_size_worked_out_without_per_px() -> None:
    chain = "The bar is 2 µm. 2 µm / 400 px = 0.005 µm. 150 × 0.005 = 0.75 µm. The platelet is 0.75 µm.\nAnswer: 0.75 µm"
    assert values(SEM, chain) == [750.0]


def test_a_uniformity_figure_is_not_a_size() -> None:
    chain = "Line width: 32 nm.\nLine-width uniformity (3σ) ≈ 1.4 nm over the die.\nAnswer: 32 nm"
    assert values(SEM, chain) == [32.0]


def test_material_removed_by_electropolishing_is_not_a_feature() -> None:
    chain = "The weld bead is 410 µm wide; electropolishing takes off about 5 µm per side beforehand.\nAnswer: 410 µm"
    assert values(SEM, chain) == [410000.0]


def test_a_film_below_what_the_image_can_resolve() -> None:
    chain = "The grit particle is 65 µm long, and a carbon film of ~4 nm sits on it, well below what this frame can resolve.\nAnswer: 65 µm"
    assert values(SEM, chain) == [65000.0]


def test_a_size_known_from_another_technique_after_a_noun_phrase() -> None:
    chain = "The rod is 41 nm thick, close to the ~45 nm hollow rods known from TEM.\nAnswer: 41 nm"
    assert values(SEM, chain) == [41.0]


# -- stability -------------------------------------------------------------------------------------------
def test_a_combination_of_phases_below_it_names_the_competitors() -> None:
    chain = "No combination of CaO and TiO2 lies below it, so the energy above hull is 0.\nAnswer: stable"
    assert hulls(chain, "CaTiO3") == [0.0]


def test_the_starting_materials_in_an_aside_are_not_the_subject() -> None:
    chain = "CaTiO3, prepared from CaCO3 and TiO2, is a vertex of the hull, E_hull = 0.000 eV/atom.\nAnswer: stable"
    assert hulls(chain, "CaTiO3") == [0.0]


def test_a_database_value_without_unit() -> None:
    chain = "PBE puts it on the hull: the AFLOW value is 0 up to rounding.\nAnswer: stable"
    assert hulls(chain) == [0.0]


def test_a_competing_assemblage_higher_by_is_a_decomposition_energy() -> None:
    chain = "PBE puts it on the hull; the competing CaO + TiO2 + SiO2 assemblage is higher by 21 meV/atom.\nAnswer: stable"
    assert hulls(chain) == []


def test_a_named_phase_higher_after_a_clause_turn_is_another_phase() -> None:
    chain = "Titanite sits 0.000 eV/atom above the hull; malayaite comes out 9 meV/atom higher.\nAnswer: stable"
    assert hulls(chain) == [0.0]


def test_a_per_atom_energy_standing_alone_after_the_subject() -> None:
    chain = "CaTiSiO5, a common accessory mineral; 0.000 eV/atom.\nAnswer: stable"
    assert hulls(chain) == [0.0]


# -- magnetism -------------------------------------------------------------------------------------------
def test_a_table_row_labelled_total_slash_fu() -> None:
    chain = "| site | m (µB) |\n|---|---|\n| Ni | 1.8 |\n| total / f.u. | 4.2 |\n\nAnswer: magnetic, 4.2 µB/f.u."
    assert moments(chain) == {(1.8, "muB/element:Ni"), (4.2, "muB/fu")}


def test_an_average_moment_of_the_atoms_counted_per_cell() -> None:
    chain = "16 Cr per cell at an average 2.7 µB give 43.2 µB per cell.\nAnswer: magnetic"
    assert (2.7, "muB/element:Cr") in moments(chain)


def test_a_slater_pauling_value_the_total_only_comes_close_to() -> None:
    chain = ("Z = 27, so Slater–Pauling gives M = Z − 24 = 3 µB/f.u.\nGGA total 2.94 µB/f.u., close to the Slater–Pauling value.\n"
             "Answer: magnetic, 2.94 µB/f.u.")
    assert moments(chain, "Co2MnSi") == {(2.94, "muB/fu")}


def test_sublattice_moments_in_brackets_are_site_moments() -> None:
    chain = "Ferrimagnetic Mn3Ga: the two Mn sublattices (≈ 3.1 and −2.6 µB) leave about 0.5 µB/f.u.\nAnswer: magnetic"
    assert moments(chain, "Mn3Ga") == {(3.1, "muB/element:Mn"), (-2.6, "muB/element:Mn"), (0.5, "muB/fu")}


def test_a_dash_before_no_moment_forms_retracts_nothing() -> None:
    chain = "CoSi is a semimetal and the spin-polarised run converges to 0.00 µB — no moment forms on Co.\nAnswer: non-magnetic"
    assert moments(chain, "CoSi") == {(0.0, "muB/cell")}


def test_a_hedge_over_the_class_only_keeps_the_site_moment() -> None:
    chain = ("GGA finds ~0.4 µB per Co, but the energy gain is tiny, so I cannot say whether it should be counted as "
             "magnetic or non-magnetic.\nAnswer: undecided")
    assert moments(chain, "CoS2") == {(0.4, "muB/element:Co")}


def test_an_older_study_of_another_kind_quoted_is_set_aside() -> None:
    chain = "The cell total is 8.0 µB. An older neutron study quoted 1.5 µB per Ni; that is not what GGA gives.\nAnswer: magnetic"
    assert moments(chain) == {(8.0, "muB/cell")}


# -- metallicity ----------------------------------------------------------------------------------------
def test_a_compound_named_by_acronym_for_comparison() -> None:
    chain = "PBE gives an indirect gap of 0.9 eV. For comparison, CIGS itself gets about 0.3 eV at this level.\nAnswer: gapped, 0.9 eV"
    assert gaps(chain) == [0.9]


def test_another_compound_in_a_closed_aside_with_its_own_value() -> None:
    chain = "PBE gives ~0.4 eV (the phosphide ZnGeP2 keeps ≈ 1.2 eV at the same level), while the measured gap is 2.0 eV.\nAnswer: gapped"
    assert gaps(chain) == [0.4, 2.0]
