"""Reader rules found by the w20–w23 dev batches of the claim corpus (issue #12): addends of a sum, site moments in
LaTeX, YAML and CSV tables, a turn from a counterfactual to what a method finds, "each" after a list of ions, references
a moment does not reach, the pure element and the substrate as other materials, gaps an onset or an emission line
stands for, another polymorph's relative energy, a generic "property,value" CSV, a period written Λ and another mineral
in apposition. One test per rule, each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle

RAMAN, SEM = RamanOracle(), SEMOracle()
STABILITY, METALLICITY, MAGNETISM = StabilityOracle(), MetallicityOracle(), MagnetismOracle()


def magnet_q(formula: str) -> str:
    return (f"Material: {formula}, space group Fm-3m (225), 4 atoms in the computational cell.\nAccording to spin-polarised "
            f"density-functional (PBE/GGA) calculations, is {formula} magnetic? If it is, give its total magnetic moment "
            "in µB per formula unit.")


def gap_q(formula: str) -> str:
    return (f"Material: {formula}, space group Pnma (62), 20 atoms in the computational cell.\nAccording to "
            f"density-functional (PBE/GGA) calculations, is {formula} metallic (zero band gap) or does it have a band gap? "
            "If it has one, give its size in eV.")


def hull_q(formula: str) -> str:
    return (f"Material: {formula}, space group R-3m (166), 12 atoms in the computational cell.\nAccording to "
            f"density-functional (PBE/GGA) calculations, is {formula} thermodynamically stable (energy above the convex "
            "hull ≤ 0.05 eV/atom)?")


def moments(text: str, formula: str = "Mn2VAl") -> set[tuple[float, str]]:
    return {(v, u) for k, v, u in claims(MAGNETISM, text, magnet_q(formula)) if k == "magnetic_moment"}


# -- magnetism -------------------------------------------------------------------------------------------
def test_the_addends_of_a_sum_are_not_moments() -> None:
    assert moments("Two Mn sites: the moment is 2 + 2 = 4 µB per formula unit.") == {(4.0, "muB/fu")}
    assert moments(r"$M = 1.5 + 0.5 = 2\,\mu_B$ per formula unit") == {(2.0, "muB/fu")}


def test_site_moments_in_latex_yaml_and_table_rows_keep_their_site() -> None:
    tex = ("\\begin{tabular}{lc}\nsite & $m$ ($\\mu_B$) \\\\\n\\hline\nMn (4a, octahedral) & $-2.4$ \\\\\n"
           "V & $0.6$ \\\\\n\\end{tabular}")
    assert moments(tex) == {(-2.4, "muB/element:Mn"), (0.6, "muB/element:V")}
    yaml = "```yaml\nsite_moments_muB:\n  Mn_4a: 2.1\n  Mn2: 1.7\n  Al_4b: -0.1\n```"
    assert moments(yaml) == {(2.1, "muB/element:Mn"), (1.7, "muB/element:Mn"), (-0.1, "muB/element:Al")}
    table = "| quantity | value |\n|---|---|\n| m(V), PBE | 0.9 µB |\n| m(Al apical) | 0.04 µB |"
    assert moments(table) == {(0.9, "muB/element:V"), (0.04, "muB/element:Al")}


def test_a_csv_row_labelled_per_formula_unit_is_per_formula_unit() -> None:
    chain = "site,moment_muB\nMn,1.40\nV,-0.60\ntotal_per_fu,2.20\n\nAnswer: magnetic, 2.2 µB/f.u."
    assert (2.2, "muB/fu") in moments(chain) and (2.2, "muB/cell") not in moments(chain)


def test_what_a_method_finds_after_a_counterfactual_is_asserted() -> None:
    chain = "A purely ionic count would give 3 µB per Mn, but PBE finds 2.6 µB on Mn and −0.2 µB on each Al."
    assert moments(chain) == {(2.6, "muB/element:Mn"), (-0.2, "muB/element:Al")}
    # without the turn the counterfactual holds
    assert moments("In the FM state it would carry about 4 µB per Mn.") == set()


def test_an_ordered_state_is_not_a_shell() -> None:
    chain = "the Mn sublattice (−0.5 µB per Mn) opposes the large V moment (3 µB in the ordered state)"
    assert (3.0, "muB/element:V") in moments(chain)


def test_each_after_a_count_of_ions_is_the_ions_moment() -> None:
    assert moments("Mn2VAl: 2 Mn²⁺ up, 1 V down, 1.5 µB each.") == {(1.5, "muB/element:V")}
    assert moments("A moment of 1.1 µB is found on each Mn in PBE.") == {(1.1, "muB/element:Mn")}


def test_a_reference_the_moment_falls_short_of_is_not_claimed() -> None:
    assert moments("Each Mn carries 1.2 µB in PBE, less than the spin-only 3 µB.") == {(1.2, "muB/element:Mn")}


def test_a_value_set_against_a_site_moment_shares_the_site() -> None:
    chain = "PBE gives 2.2 µB per Mn versus 1.6 µB from neutron diffraction."
    assert moments(chain) == {(2.2, "muB/element:Mn"), (1.6, "muB/element:Mn")}


def test_a_small_moment_after_an_element_is_that_elements() -> None:
    chain = "Mn carries about 2.0 µB each and Al a small −0.04 µB."
    assert moments(chain) == {(2.0, "muB/element:Mn"), (-0.04, "muB/element:Al")}


def test_plus_minus_after_a_numbered_site_is_a_pair_of_moments() -> None:
    assert moments("GGA gives Mn1: ±2.95 µB, Mn2: ±0.40 µB; the total is 0.00 µB.") == {
        (2.95, "muB/element:Mn"), (0.40, "muB/element:Mn"), (0.0, "muB/cell")}


def test_moments_of_states_the_chain_sets_aside_are_not_claimed() -> None:
    chain = "Only when the lattice is expanded by 4 % does a moment of ~0.3 µB per V appear. At equilibrium it is zero."
    assert (0.3, "muB/element:V") not in moments(chain)
    chain = "A collinear run falls into a ferrimagnet with a net 1.9 µB per cell — an artefact I disregard."
    assert moments(chain) == set()
    chain = "- V: 0.8 µB (at the relaxed lattice; it grows to about 1.4 µB at expanded volume)"
    assert moments(chain) == {(0.8, "muB/element:V")}


def test_the_pure_element_is_another_material() -> None:
    chain = "Compared with elemental bcc Fe (2.2 µB per atom), the Mn in Mn2VAl carries 1.5 µB."
    assert (2.2, "muB/atom") not in moments(chain)


def test_a_substrate_is_not_the_material_measured() -> None:
    chain = "Films of Mn2VAl grown on MgO report ≈ 1.9 µB/f.u. at 5 K."
    assert moments(chain) == {(1.9, "muB/fu")}


def test_a_bare_net_value_in_the_answer_is_per_formula_unit() -> None:
    assert moments("Answer: non-magnetic (compensated, net ≈ 0)") == {(0.0, "muB/fu")}


def test_a_site_moment_that_comes_out_at_a_value_belongs_to_the_ion_named() -> None:
    chain = "V³⁺ is d², so 2 µB ionic; in PBE the site moment comes out at 1.7 µB."
    assert (1.7, "muB/element:V") in moments(chain)


# -- metallicity -----------------------------------------------------------------------------------------
def gaps(text: str, formula: str = "CaSnO3") -> list[object]:
    return values(METALLICITY, text, gap_q(formula), kind="band_gap")


def test_gaps_a_chain_puts_down_to_something_else_are_not_the_gap() -> None:
    assert gaps("PBE gives 1.9 eV; the 4.1 eV seen on some films comes from oxidation.") == [1.9]
    assert gaps("PBE: 1.9 eV. Nanocrystal papers quote 2.8 eV, but that is a plasmon edge rather than an intrinsic gap.") \
        == [1.9]
    assert gaps("PBE: 1.9 eV. A PBE+U run would open ~2.5 eV, but that is not the asked functional.") == [1.9]


def test_a_forbidden_onset_and_an_emission_line_are_not_gaps() -> None:
    chain = "E_g(PBE) = 1.9 eV. The absorption onset sits at ≈ 2.9 eV because the edge transition is dipole-forbidden."
    assert gaps(chain) == [1.9]
    assert gaps("PBE: 1.9 eV, direct; the photoluminescence peaks near 2.4 eV.") == [1.9]
    # a gap the chain names stays one, forbidden lowest transitions or not
    assert gaps("Its optical gap, about 3.9 eV, is larger because the lowest transitions are dipole-forbidden.") == [3.9]


def test_a_direct_transition_of_an_indirect_gap_material_is_not_the_gap() -> None:
    assert gaps("PBE gives 1.1 eV, indirect (R → Γ). Films show an onset near 2.7 eV (the direct transition).") == [1.1]
    assert gaps("PBE gives only 1.1 eV, indirect. The direct gap at Γ is slightly larger, 1.4 eV.") == [1.1]


def test_from_one_value_down_to_another_is_a_range() -> None:
    assert gaps("PBE: 1.9 eV; measured values scatter from 4.0 eV down to 3.1 eV.") == [1.9]


def test_a_gap_without_spin_orbit_coupling_is_still_a_gap() -> None:
    assert sorted(gaps("With SOC the PBE gap is 90 meV; without SOC it is 0.14 eV.")) == [0.09, 0.14]


def test_band_overlaps_and_burstein_moss_edges_are_not_gaps() -> None:
    assert gaps("PBE finds a small band overlap at Γ (~0.2 eV): a semimetal.") == []
    chain = "PBE: 1.9 eV; in degenerate films the Burstein–Moss-shifted absorption edge reaches 3.4 eV."
    assert gaps(chain) == [1.9]


# -- stability -------------------------------------------------------------------------------------------
def hulls(text: str, formula: str = "LiCoO2") -> list[object]:
    return values(STABILITY, text, hull_q(formula), kind="e_above_hull")


def test_a_structure_type_and_reactants_are_not_other_materials() -> None:
    assert hulls("LiCoO2 (α-NaFeO2 type): 4 meV/atom above hull → stable.") == [0.004]
    chain = "Formation energy from Li2O + Co2O3 is −0.4 eV/atom, yet PBE puts it 70 meV/atom above the hull."
    assert hulls(chain) == [0.07]


def test_another_polymorphs_relative_energy_is_not_the_hull_distance() -> None:
    chain = "Layered LiCoO2 is on the hull. The spinel-type form comes out 6 meV/atom above it."
    assert hulls(chain) == []
    chain = "The non-magnetic cell lies 15 meV/atom higher, so magnetism does not change the verdict."
    assert hulls(chain) == []
    # but the asked polymorph named as one ("is the low-temperature form") above another is its distance
    assert hulls("LiCoO2 here is the low-temperature form; it sits 14 meV/atom above the layered polymorph.") == [0.014]


def test_a_generic_property_value_csv_takes_the_rows_key() -> None:
    chain = "property,value\ne_above_hull_eV_atom,0.018\nformation_energy_eV_atom,-1.75\n\nAnswer: stable"
    assert hulls(chain) == [0.018]


# -- sem, raman -----------------------------------------------------------------------------------------
def test_a_period_written_capital_lambda_is_a_size() -> None:
    assert values(SEM, "12 bilayers over the coating → Λ ≈ 210 nm.") == [210.0]
    assert "532 nm" in reasons(SEM, "The λ = 532 nm laser was off; the rod is 410 nm.")


def test_an_indentation_depth_is_not_a_feature() -> None:
    assert values(SEM, "The film is 2.4 µm thick; hardness 21 GPa (nanoindentation at 200 nm depth).") == [2400.0]


def test_another_mineral_in_apposition_holds_its_own_band() -> None:
    chain = "Heating turns it into Fe2O3 (hematite, strong band at 1320 cm⁻¹); the sample shows 668.1 cm⁻¹."
    assert values(RAMAN, chain) == [668.1]


def test_calibration_lines_and_molecule_counts_are_not_bands() -> None:
    chain = "The spectrometer was checked on the 520.7 cm⁻¹ silicon line. Bands: 1003.2 cm⁻¹ and 1585.0 cm⁻¹."
    assert values(RAMAN, chain) == [1003.2, 1585.0]
    chain = "The O–H stretch of the 12 water molecules sits at 3420.5 cm⁻¹."
    assert values(RAMAN, chain, "Columns: Raman shift (cm⁻¹) and intensity:\n12 5\n3420.5 900\nWhich bands?") == [3420.5]


def test_a_band_said_to_be_unresolved_is_negated() -> None:
    chain = "The 1380 cm⁻¹ C–H band of the binder is not resolved above the background. Main band: 965.4 cm⁻¹."
    assert values(RAMAN, chain) == [965.4]

