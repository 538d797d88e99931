"""Reader rules found by the w27–w29 dev batches of the claim corpus (issue #12): moments named by spin, shell and
site-table labels, a temperature that is not potassium, sums over a sublattice, literature values the chain does not
reproduce, hull distances in LaTeX units and under a structure-type label, other configurations' costs, sizes below
the resolution or from another batch, Raman bands shared by a mineral group or of another mineral named in a
possessive, and θ lists introduced by a colon. One test per rule, each with a case written fresh here (not copied from
the corpus)."""

from __future__ import annotations

from claim_reading import claims, values
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle
from matpcr_plugins.xrd.oracle import XRDOracle
from test_claims_w20 import hulls, magnet_q

RAMAN, SEM, XRD = RamanOracle(), SEMOracle(), XRDOracle()
MAGNETISM = MagnetismOracle()


def moments(text: str, formula: str = "CuMnSb") -> set[tuple[float, str]]:
    return {(v, u) for k, v, u in claims(MAGNETISM, text, magnet_q(formula)) if k == "magnetic_moment"}


def raman_q(name: str) -> str:
    return (f"Measured Raman spectrum of {name}, excited at 532 nm. Columns: Raman shift (cm⁻¹) and intensity:\n"
            "512.3 900\n484.0 700\nAt which Raman shifts are the main bands?")


# -- magnetism -------------------------------------------------------------------------------------------
def test_moments_named_by_spin_shell_or_aside_keep_their_site() -> None:
    assert moments("GGA puts about 2.1 µB of spin on Mn.") == {(2.1, "muB/element:Mn")}
    assert moments("Mn²⁺ (3d⁵, ≈ 4.6 µB) orders at 55 K.") == {(4.6, "muB/element:Mn")}
    assert moments("- Mn³⁺ d⁴ → 4 µB per Mn (PBE+U: 3.7 µB)") == {(4.0, "muB/element:Mn"), (3.7, "muB/element:Mn")}
    assert moments("Mn carries 3.9 µB; Cu is essentially unpolarised (0.03 µB).") == {
        (3.9, "muB/element:Mn"), (0.03, "muB/element:Cu")}


def test_plus_minus_site_moments_are_magnitudes_of_their_ion() -> None:
    assert moments("PBE gives m(Mn) = ±3.6 µB; the net is 0 µB/f.u.") == {(3.6, "muB/element:Mn"), (0.0, "muB/fu")}
    assert moments("Mn³⁺ ions sit on two sublattices. The site moments are ±3.7 µB.", "LaMnO3") == {(3.7, "muB/element:Mn")}


def test_a_decimal_comma_before_mu_b_is_a_decimal() -> None:
    assert moments("Mn has 3,9 µB and Cu has 0,1 µB.") == {(3.9, "muB/element:Mn"), (0.1, "muB/element:Cu")}


def test_a_temperature_after_a_moment_is_not_potassium() -> None:
    chain = "Each Mn carries 3.9 µB in PBE; neutron diffraction gives 3.82 µB at 4 K."
    assert (3.82, "muB/element:K") not in moments(chain) and 3.82 in {v for v, _ in moments(chain)}


def test_a_moment_a_method_puts_on_an_ion_is_the_ions() -> None:
    chain = "The ordered moment is far below the ~0.7 µB that GGA+U puts on Cu in a ferromagnetic chain."
    assert moments(chain) == {(0.7, "muB/element:Cu")}


def test_a_table_row_labelled_with_a_wyckoff_site_is_that_element() -> None:
    chain = "| site | multiplicity per f.u. | m (µB) |\n|---|---|---|\n| Mn 4a | 1 | 3.9 |\n| Sb 4c | 1 | −0.1 |"
    assert moments(chain) == {(3.9, "muB/element:Mn"), (-0.1, "muB/element:Sb")}


def test_a_sum_over_a_sublattice_is_not_a_moment() -> None:
    assert moments("Co ≈ 1.5 µB each (7.5 µB from the five Co); net 4.0 µB/f.u.", "SmCo5") == {
        (1.5, "muB/element:Co"), (4.0, "muB/fu")}


def test_a_literature_value_the_chain_does_not_reproduce_is_negated() -> None:
    chain = "GGA gives 3.9 µB per formula unit. An older LSDA study quoted 4.4 µB/f.u.; I do not reproduce that."
    assert moments(chain) == {(3.9, "muB/fu")}


def test_a_starting_moment_written_as_a_start_of_is_a_setting() -> None:
    chain = "PBE with a ferromagnetic start of 4 µB on Mn ends at 3.95 µB on Mn."
    assert moments(chain) == {(3.95, "muB/element:Mn")}


# -- stability -------------------------------------------------------------------------------------------

def test_a_latex_unit_with_an_exponent_is_read() -> None:
    assert hulls(r"The PBE hull distance is $\Delta E_{\mathrm{hull}} = 33\,\mathrm{meV\,atom^{-1}}$.") == [0.033]


def test_a_structure_type_label_is_not_a_space_group() -> None:
    assert hulls("- E_hull(A15) = 0.064 eV/atom, measured from the Nb + Nb5Si3 hull", "Nb3Si") == [0.064]


def test_other_configurations_costs_and_precipitates_are_not_the_hull_distance() -> None:
    chain = "LiCoO2 is on the hull (0 eV/atom above it), while the inverse cation arrangement costs 38 meV/atom."
    assert hulls(chain) == [0.0]
    chain = "LiCoO2 is on the hull; the coherent precipitate structure is 12 meV/atom higher."
    assert hulls(chain) == []


# -- sem, raman, xrd -------------------------------------------------------------------------------------
def test_sizes_below_the_resolution_from_xps_or_from_another_batch_are_not_features() -> None:
    assert values(SEM, "Answer: 64 nm (the primary grains, ~4 nm, are below the resolution here)") == [64.0]
    assert values(SEM, "The particle is 48 nm; a thin oxide (~3 nm from XPS depth profiling) is not visible.") == [48.0]
    assert values(SEM, "At 2.9 µm this flower is larger than the 1.4 µm ones grown at pH 5.") == [2900.0]


def test_design_values_and_optical_micrographs_are_not_features() -> None:
    chain = "The strut is 188 µm, a little below the CAD value of 200 µm. The design pore size is 500 µm."
    assert values(SEM, chain) == [188000.0]
    chain = "The lath is 210 nm wide. The prior grain size, measured on an optical micrograph, is about 30 µm."
    assert values(SEM, chain) == [210.0]


def test_bands_a_mineral_group_shares_and_another_minerals_bands_are_not_claims() -> None:
    chain = "Both serpentines share the bands near 690 and 380 cm⁻¹; here the main band is at 512.3 cm⁻¹."
    assert values(RAMAN, chain, raman_q("Lizardite")) == [512.3]
    chain = "In albite (An0) the pair sits at 479 and 507 cm⁻¹; here it is at 484.0 and 512.3 cm⁻¹."
    assert values(RAMAN, chain, raman_q("Labradorite")) == [484.0, 512.3]
    chain = "The ν₁ is at 512.3 cm⁻¹, 2 cm⁻¹ above calcite's 510.2 cm⁻¹."
    assert values(RAMAN, chain, raman_q("Barytocalcite (BaCa(CO3)2)")) == [512.3]


def test_additive_bands_outside_the_rows_and_a_damage_products_band_are_not_claims() -> None:
    chain = ("Above 1 mW Mn₃O₄ forms, whose A1g band near 655 cm⁻¹ would then dominate. The carbon additive's D and G "
             "bands (≈1350 and 1590 cm⁻¹) fall outside the rows given. Main band: 512.3 cm⁻¹.")
    assert values(RAMAN, chain, raman_q("Spinel LiMn2O4")) == [512.3]


def test_theta_values_after_a_colon_are_doubled() -> None:
    assert values(XRD, "Bragg angles θ for the 111 and 200 planes: 14.22°, 16.48°.") == [28.44, 32.96]


def test_the_new_rules_leave_ordinary_claims_alone() -> None:
    """Cases a review of the sixth pass found over-broad: each keeps its claim."""
    assert values(XRD, "A θ-2θ scan gives peaks: 28.44°, 47.30° and 56.12°.") == [28.44, 47.3, 56.12]
    assert moments("Fe carries 3.1 µB, an artefact-free number since the spheres do not overlap.", "FeRh") == {
        (3.1, "muB/element:Fe")}
    assert moments("Compared with bcc Fe, FeRh has 3.1 µB on each Fe.", "FeRh") == {(3.1, "muB/element:Fe")}
    assert hulls("Older database versions agree: LiCoO2 is 0.012 eV/atom above the hull.") == [0.012]
    gap = ("Material: CaSnO3, space group Pnma (62), 20 atoms in the computational cell.\nAccording to density-functional "
           "(PBE/GGA) calculations, is CaSnO3 metallic (zero band gap) or does it have a band gap?")
    assert values(MetallicityOracle(), "The PBE gap is 0.73 eV (I left out SOC, which barely matters here).", gap,
                  kind="band_gap") == [0.73]
    assert values(SEM, "Measuring the particles in the colour SEM image gives a mean diameter of 40 nm.") == [40.0]


def test_a_csv_keyed_by_numbers_keeps_its_header() -> None:
    from matpcr_plugins.claims.text import normalize

    assert normalize("T_K,value\n300,1.2\n5,3.1\n").norm == "T_K,value\nT_K: 300,value: 1.2\nT_K: 5,value: 3.1\n"


# -- w30–w32 ---------------------------------------------------------------------------------------------
def test_json_site_keys_with_numbers_and_cell_totals_are_read() -> None:
    assert moments('{"m_Mn1_muB": 3.9, "m_Mn2_muB": 3.7, "cell_total_muB": 0.0}') == {
        (3.9, "muB/element:Mn"), (3.7, "muB/element:Mn"), (0.0, "muB/cell")}


def test_an_ion_column_names_the_site_of_a_lettered_row() -> None:
    chain = "| site | ion | moment (µB) |\n|---|---|---|\n| A (8a) | Cu²⁺ | −0.6 |\n| B (16d) | Mn³⁺ | +3.7 |"
    assert moments(chain) == {(-0.6, "muB/element:Cu"), (3.7, "muB/element:Mn")}


def test_terms_of_a_written_sum_and_free_ion_values_are_not_moments() -> None:
    assert moments("A collinear Néel ferrimagnet: 2 × 4 µB (B) − 3 µB (A) = 5 µB per formula unit.") == {(5.0, "muB/fu")}
    assert moments("GGA puts 5.0 µB on each Mn; the free-ion gJ·J = 10 µB needs orbital moments.", "MnO") == {
        (5.0, "muB/element:Mn")}


def test_a_configuration_bullet_ranked_higher_and_single_layers_hold_no_claim() -> None:
    chain = "- FM: 2.9 µB per Mn, total 5.8 µB per cell\n- AFM: 2.8 µB per Mn, 0 µB net, 20 meV/f.u. higher"
    assert moments(chain) == {(2.9, "muB/element:Mn"), (5.8, "muB/cell")}
    chain = "Bulk: 3.4 µB per Mn. Exfoliated single layers keep the order with a lower T_N and a local moment of 3.6 µB."
    assert moments(chain) == {(3.4, "muB/element:Mn")}


def test_an_either_or_answer_that_stays_undetermined_is_hedged() -> None:
    chain = ("The reported GGA results scatter: some find a ferrimagnetic solution of about 1 µB/f.u., others a collapse "
             "to zero.\nAnswer: either magnetic (≈1 µB/f.u.) or non-magnetic — undetermined")
    assert moments(chain) == set()


def test_a_sum_said_wrong_right_after_it_is_retracted() -> None:
    chain = "I first summed the moments as 3 × 2.6 = 7.8 µB, but that is wrong: GGA gives 0.0 µB/f.u."
    assert moments(chain) == {(0.0, "muB/fu")}


def test_gaps_of_compared_compounds_and_shifts_are_not_the_gap() -> None:
    gap = ("Material: TaON, space group P21/c (14), 12 atoms in the computational cell.\nAccording to density-functional "
           "(PBE/GGA) calculations, is TaON metallic (zero band gap) or does it have a band gap?")
    read = lambda text: values(MetallicityOracle(), text, gap, kind="band_gap")  # noqa: E731
    assert read("N narrows the gap relative to the oxide (Ta2O5: about 4.0 eV measured). PBE gives 1.8 eV.") == [1.8]
    assert read("- PBE: 1.8 eV\n- PBE (other anion order, for comparison): 1.6 eV\n- ZrO2 for reference: 5.8 eV") == [1.8]
    assert read("PBE gives 1.8 eV; spin–orbit coupling lowers the value by another ~0.03 eV.") == [1.8]


def test_outdated_entries_and_competing_assemblages_are_not_hull_distances() -> None:
    assert hulls("An older database entry listed 0.09 eV/atom, but the current PBE hull distance is 0.012 eV/atom.") == [0.012]
    assert hulls("LiCoO2 is on the hull (0.000 eV/atom); the competing assemblage Li2O + CoO is 0.03 eV/atom higher.") == [0.0]


def test_sizes_beyond_the_field_not_imaged_or_of_an_original_template_are_not_features() -> None:
    assert values(SEM, "The oxide is 3.1 µm thick; the top coat above it (~120 µm) extends beyond the field of view.") == [3100.0]
    assert values(SEM, "```yaml\ndiameter_um: 4.2\nnote: swells to ~6 um in water (not imaged)\n```") == [4200.0]
    assert values(SEM, "The pore is 70 nm across. The original diatom pores were ~300 nm.") == [70.0]
