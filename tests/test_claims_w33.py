"""Reader rules found by the w33 dev batch of the claim corpus (issue #12): energies per area, a hull distance above a
named assemblage, another structure in a "with the X … higher" phrase, an indirect gap marked in a row label, a phase
named by the asked crystal system, reported values the calculation does not reproduce, Answer lines that offer options
and decline, absorption onsets, a database value chosen over another, "brings it up to", "no SOC" labels, site keys
and site labels, moments after a starting value, moments placed by a verb, totals "in total", values a result does not
reach, older work, naive expectations, shares spread over ligands, starting runs, and float noise cut off at the end.
One test per rule, each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from test_claims_w20 import gap_q, hull_q, magnet_q

STABILITY, METALLICITY, MAGNETISM = StabilityOracle(), MetallicityOracle(), MagnetismOracle()


def hulls(text: str, formula: str = "LiFePO4") -> list[object]:
    return values(STABILITY, text, hull_q(formula), kind="e_above_hull")


def gaps(text: str, question: str | None = None) -> list[object]:
    return values(METALLICITY, text, question or gap_q("ZnSnN2"), kind="band_gap")


def moments(text: str, formula: str = "MnCoGe") -> set[tuple[float, str]]:
    return {(v, u) for k, v, u in claims(MAGNETISM, text, magnet_q(formula)) if k == "magnetic_moment"}


def cubic_gap_q(formula: str) -> str:
    return (f"Material: {formula}, space group Fm-3m (225), 8 atoms in the computational cell.\nAccording to "
            f"density-functional (PBE/GGA) calculations, is {formula} metallic (zero band gap) or does it have a band gap? "
            "If it has one, give its size in eV.")


# -- stability -------------------------------------------------------------------------------------------
def test_an_energy_per_area_is_not_a_hull_distance() -> None:
    chain = "The compound lies 0.000 eV/atom above the hull; the surface energy above it is about 15 meV/Å²."
    assert hulls(chain) == [0.0]


def test_a_distance_above_a_named_assemblage_is_the_hull_distance() -> None:
    chain = "The phase decomposes on heating to 400 °C; GGA puts it 0.07 eV/atom above Li3PO4 + Fe2P2O7."
    assert hulls(chain) == [0.07]


def test_another_structure_in_a_with_phrase_is_not_the_asked_one() -> None:
    chain = "In GGA the olivine cell sits on the hull, with the maricite 14 meV/atom higher."
    assert hulls(chain) == []
    assert hulls("PBE puts it on the hull, with the energy 14 meV/atom higher than the hull itself.") == [0.014]


# -- metallicity -----------------------------------------------------------------------------------------
def test_an_indirect_gap_marked_inside_a_row_label() -> None:
    chain = "| quantity | value |\n|---|---|\n| GGA gap (X→Γ, indirect) | 1.4 eV |\n| direct gap at Γ | 2.3 eV |"
    assert gaps(chain) == [1.4]


def test_a_phase_named_by_the_asked_crystal_system_is_the_asked_phase() -> None:
    chain = "- PBE: 2.1 eV\n- measured (high-temperature cubic phase): 4.0 eV\n- measured (monoclinic phase): 3.6 eV"
    assert gaps(chain, cubic_gap_q("ZrO2")) == [2.1, 4.0]


def test_a_reported_gap_the_calculation_does_not_reproduce_is_negated() -> None:
    chain = "Tunnelling spectra once suggested a 0.2 eV gap, which GGA does not reproduce; the bands overlap at Γ."
    assert gaps(chain) == []
    assert reasons(METALLICITY, chain, gap_q("ZnSnN2"))["0.2 eV"] == "negated"


def test_an_answer_offering_options_then_declining_commits_to_nothing() -> None:
    chain = "It depends on the magnetic setup of the cell.\nAnswer: metallic or a small gap; can't tell"
    assert [v for k, v, _ in claims(METALLICITY, chain, gap_q("ZnSnN2")) if k == "metallicity"] == []


def test_a_value_marked_direct_in_an_indirect_gap_material_is_not_the_gap() -> None:
    chain = "PBE gives an indirect gap of 1.1 eV; the optical onset is 2.6 eV (direct).\nAnswer: gapped, 1.1 eV"
    assert gaps(chain) == [1.1]


def test_an_absorption_onset_is_not_a_starting_value() -> None:
    chain = "GGA gives 1.0 eV; measured absorption starts at 1.7 eV.\nAnswer: gapped, 1.0 eV"
    assert gaps(chain) == [1.0, 1.7]


def test_of_two_database_values_the_one_not_chosen_is_not_a_claim() -> None:
    chain = ("One database lists 1.2 eV, another 0.8 eV for a smaller cell; I'll go with the first value, 1.2 eV. "
             "Optical data give 2.0 eV.\nAnswer: gapped, 1.2 eV")
    assert gaps(chain) == [1.2, 2.0]


def test_a_method_that_brings_the_gap_up_to_a_value_states_it() -> None:
    assert gaps("GGA gives 0.5 eV, and a hybrid functional brings it up to 1.6 eV.") == [0.5, 1.6]


def test_a_no_soc_label_is_not_a_negation() -> None:
    chain = "| method | gap |\n|---|---|\n| PBE, no SOC | 0.71 eV |\n| PBE + SOC | 0.42 eV |"
    assert gaps(chain) == [0.71, 0.42]


# -- magnetism -------------------------------------------------------------------------------------------
def test_json_keys_with_a_site_suffix_and_a_net_key_are_read() -> None:
    chain = '{"m_Co_oct_muB": 2.6, "m_Co_tet_muB": -2.4, "m_net_muB_per_fu": 0.2}'
    assert moments(chain, "Co3O4") == {(2.6, "muB/element:Co"), (-2.4, "muB/element:Co"), (0.2, "muB/fu")}


def test_a_roman_site_label_before_site_names_the_element() -> None:
    chain = "In GGA the FeI site carries about 1.9 µB and the FeII site about 2.4 µB."
    assert moments(chain, "Fe2P") == {(1.9, "muB/element:Fe"), (2.4, "muB/element:Fe")}


def test_a_moment_that_relaxes_from_its_start_keeps_its_site() -> None:
    chain = "- the Co moment, initialised at 3 µB, settles at 0.02 µB\n- total: 0.0 µB per formula unit"
    assert moments(chain, "LiCoO2") == {(0.02, "muB/element:Co"), (0.0, "muB/fu")}


def test_a_verb_between_a_moment_and_its_site_names_the_site() -> None:
    assert moments("GGA gives 1.7 µB on Co and 0.3 µB induced on Pt.", "CoPt") == {
        (1.7, "muB/element:Co"), (0.3, "muB/element:Pt")}
    assert moments("About 3 µB sits on every Mn in this cell.", "MnPS3") == {(3.0, "muB/element:Mn")}
    assert moments("Ni carries 1.6 µB, with 0.05 µB spilling onto the oxygens.", "NiO") == {
        (1.6, "muB/element:Ni"), (0.05, "muB/element:O")}
    assert moments("PBE gives 4.4 µB inside the Mn sphere.", "MnTe") == {(4.4, "muB/element:Mn")}


def test_a_moment_in_total_after_site_moments_is_the_cells() -> None:
    chain = "Fe³⁺ gives 5 µB per Fe; the two Fe in the cell order ferromagnetically within each sheet, 10 µB in total."
    assert moments(chain, "FeCl3") == {(5.0, "muB/element:Fe"), (10.0, "muB/cell")}


def test_values_the_result_does_not_reach_or_include_are_not_moments() -> None:
    chain = "It is not half-metallic, so the Slater–Pauling 4 µB is not reached; GGA gives 3.6 µB per formula unit."
    assert moments(chain, "Co2MnSi") == {(3.6, "muB/fu")}
    chain = "With 4f in core, Tb carries 0.6 µB; the 4f moment (9 µB from gJ·J) is not part of this calculation."
    assert moments(chain, "TbCo2") == {(0.6, "muB/element:Tb")}


def test_older_work_with_a_method_name_is_negated() -> None:
    chain = "Older GGA work reported about 0.3 µB per Co, but the relaxed cell loses it. Answer: non-magnetic"
    assert moments(chain, "CoSi") == set()


def test_a_reference_the_moment_stays_below_or_a_naive_expectation_is_not_a_moment() -> None:
    assert moments("Covalency keeps the Ru moment well below its ionic 2 µB; GGA gives 1.3 µB per Ru.", "SrRuO3") == {
        (1.3, "muB/element:Ru")}
    assert moments("GGA gives 0.6 µB per Cu. One might naively expect the spin-only 1 µB per Cu.", "CuO") == {
        (0.6, "muB/element:Cu")}


def test_a_share_spread_over_several_ligands_is_not_a_site_moment() -> None:
    chain = "There are 0.8 µB on each Cu, and the remaining ~0.2 µB spread over the four O neighbours."
    assert moments(chain, "CuO") == {(0.8, "muB/element:Cu")}


def test_the_moment_a_run_starts_with_is_a_setting() -> None:
    chain = "Starting a spin-polarised GGA run with 2 µB on each Nb, the final magnetisation is 0.00 µB per cell."
    assert moments(chain, "NbSe2") == {(0.0, "muB/cell")}


def test_a_moment_of_a_symbol_in_the_asked_formula_is_that_element() -> None:
    chain = "The magnetic moment of Fe is 2.1 µB. The magnetic moment of B is 0.2 µB."
    assert moments(chain, "FeB") == {(2.1, "muB/element:Fe"), (0.2, "muB/element:B")}


def test_float_noise_cut_off_at_the_end_is_not_a_value() -> None:
    chain = "The magnetic moment of Mn is 3.0000000000000004 µB. The magnetic moment of Si is 0.0199999999"
    assert moments(chain, "MnSi") == {(3.0, "muB/element:Mn")}
