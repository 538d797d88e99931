"""Reader rules found by the w24–w26 dev batches of the claim corpus (issue #12): tables of magnetic configurations
ranked by energy, site labels (roman numerals, Wyckoff sites, "(Mn)", "m(Fe)" columns, bare "m" keys), the moments of
other compositions and forms, states a chain sets aside, gaps and hull distances named by keys and labels, other
phases' relative energies, and SEM and Raman numbers that belong to the instrument or to another sample. One test per
rule, each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MagnetismOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle
from test_claims_w20 import gaps, hulls, magnet_q

RAMAN, SEM = RamanOracle(), SEMOracle()
MAGNETISM = MagnetismOracle()


def moments(text: str, formula: str = "Co4N") -> set[tuple[float, str]]:
    return {(v, u) for k, v, u in claims(MAGNETISM, text, magnet_q(formula)) if k == "magnetic_moment"}


# -- magnetism -------------------------------------------------------------------------------------------
def test_a_configuration_the_tables_energies_reject_holds_no_claim() -> None:
    chain = ("| configuration | ΔE (meV/f.u.) | M (µB/f.u.) |\n|---|---|---|\n| FM | +80 | 4.20 |\n"
             "| AFM | 0 | 0.00 |\n\nAnswer: non-magnetic")
    assert moments(chain) == {(0.0, "muB/fu")}


def test_site_rows_and_columns_name_their_element() -> None:
    chain = "| site | n | moment (µB) |\n|---|---|---|\n| CoI | 1 | 1.71 |\n| CoII | 3 | 1.12 |\n| N | 1 | −0.05 |"
    assert moments(chain) == {(1.71, "muB/element:Co"), (1.12, "muB/element:Co"), (-0.05, "muB/element:N")}
    chain = "| state | m(Co) |\n|---|---|\n| FM | 1.6 µB |"
    assert moments(chain) == {(1.6, "muB/element:Co")}
    assert moments("GGA+U gives −1.2 µB (Co) and 0.3 µB (N).") == {(-1.2, "muB/element:Co"), (0.3, "muB/element:N")}
    assert moments("- Co: 1.5 µB\n- B: −0.1 µB", "Co3B") == {(1.5, "muB/element:Co"), (-0.1, "muB/element:B")}


def test_bare_moment_keys_are_site_moments() -> None:
    yaml = "```yaml\nion: Co2+ (d7)\nsite_moment_muB: 2.6\n```"
    assert moments(yaml, "CoTa2O6") == {(2.6, "muB/element:Co")}
    csv = "site,element,m_muB\n1a,Co,1.7\n3c,Co,1.2\n1b,N,-0.05\n"
    assert moments(csv) == {(1.7, "muB/element:Co"), (1.2, "muB/element:Co"), (-0.05, "muB/element:N")}


def test_a_moment_per_named_formula_unit_is_per_formula_unit() -> None:
    assert moments("Net: roughly 2.9 µB per ScFe2 formula unit.", "ScFe2") == {(2.9, "muB/fu")}


def test_parts_sums_and_hypothetical_totals_are_not_moments() -> None:
    chain = ("The Co sublattice gives about 6.8 µB; the 4f contribution (gJ·J = 3.3 µB per Nd) would bring the total "
             "to about 10 µB, but that part is not computed here. The spin moment is 6.5 µB/f.u.")
    assert moments(chain, "NdCo5") == {(6.5, "muB/fu")}


def test_a_bare_net_value_reads_per_formula_unit_anywhere() -> None:
    assert moments("V³⁺ d², 1.6 µB locally; antiferromagnetic. Net: 0.", "NaVO2") == {
        (1.6, "muB/element:V"), (0.0, "muB/fu")}


def test_moments_of_other_forms_and_compositions_are_not_claimed() -> None:
    chain = "Compared with the 0.9 µB per Cr often quoted for monolayer CrTe2, bulk CrTe2 keeps 2.4 µB on Cr."
    assert moments(chain, "CrTe2") == {(2.4, "muB/element:Cr")}
    chain = "In Co-rich samples Co antisite atoms on the Al sublattice carry ≈ 1.4 µB each. The ordered cell ends at 0 µB."
    assert (1.4, "muB/element:Co") not in moments(chain, "CoAl")


def test_a_starting_moment_is_a_setting() -> None:
    chain = "Initialising 1 µB on each Zn, the run converges to 0.000 µB total."
    assert moments(chain, "ZnAl2O4") == {(0.0, "muB/cell")}


def test_a_site_of_the_one_magnetic_element_is_that_elements() -> None:
    chain = "Collinear GGA gives site I (≈2.6 µB) and site II (≈ −1.8 µB); the residual is tiny."
    assert moments(chain, "Mn") == {(2.6, "muB/element:Mn"), (-1.8, "muB/element:Mn")}
    assert moments("PBE+U gives 4.3 µB (M1) and 4.4 µB (M2).", "Fe2SiO4") == {
        (4.3, "muB/element:Fe"), (4.4, "muB/element:Fe")}


def test_a_temperature_does_not_reach_a_moment_listed_after_it() -> None:
    assert moments("Experiment: T_C ≈ 410 K, 2.6 µB/f.u. at 5 K.", "MnCoSi") == {(2.6, "muB/fu")}


def test_a_total_the_chain_forgot_to_complete_is_withdrawn() -> None:
    chain = "My first estimate was 2.1 µB per Mn, i.e. 6.3 µB per formula unit — but I forgot the Sn moments."
    assert (6.3, "muB/fu") not in moments(chain, "Mn3Sn")


def test_a_magnetisation_in_ma_per_m_is_not_a_moment() -> None:
    assert moments("Films show a saturation magnetisation near 1.1 MA/m.") == set()


# -- metallicity -----------------------------------------------------------------------------------------

def test_a_gap_key_with_two_qualifiers_is_a_gap() -> None:
    assert gaps("```yaml\nband_gap_eV: 1.4\nexp_optical_gap_eV: 2.6\n```") == [1.4, 2.6]


def test_an_energy_below_midgap_is_not_a_gap() -> None:
    assert gaps("The bulk gap is 0.3 eV; the surface Dirac point sits roughly 0.1 eV below midgap.") == [0.3]


def test_a_value_the_chain_sets_aside_is_not_a_gap() -> None:
    chain = "PBE: 0.25 eV. 0.41 eV is quoted in some papers, but that run used U = 2 eV; I set it aside."
    assert gaps(chain) == [0.25]


# -- stability -------------------------------------------------------------------------------------------

def test_hull_labels_read_a_bare_value() -> None:
    assert hulls("I first mixed up the numbers; the hull distance itself is 0.") == [0.0]
    assert hulls("| property | PBE value |\n|---|---|\n| E above hull | 0 |\n| formation energy | −1.2 eV/atom |") == [0.0]


def test_a_labelled_row_is_not_another_phases_row() -> None:
    chain = "- LiCoO2 in this cell is a hypothetical polymorph\n- PBE E_hull: 0.09 eV/atom\n- known phases: LiCoO2 (R-3m), Co3O4"
    assert hulls(chain) == [0.09]


def test_outdated_database_values_and_gaps_are_not_hull_distances() -> None:
    chain = "Older database versions listed it at 0.07 eV/atom above the hull; the current value is 0.000 eV/atom."
    assert hulls(chain) == [0.0]
    assert hulls(r"It is on the hull ($E_\text{hull} = \SI{0}{\milli\electronvolt\per\atom}$), with a \SI{2.7}{eV} optical gap.") == [0.0]


def test_a_dash_ends_a_negation() -> None:
    assert hulls("Layered LiCoO2 is not on the hull — roughly 35 meV/atom above it.") == [0.035]


def test_a_mixture_of_other_phases_is_not_the_asked_material() -> None:
    chain = "A Li2O + Co3O4 mixture is about 0.04 eV/atom higher in energy than LiCoO2, so LiCoO2 is stable."
    assert hulls(chain) == []


# -- sem, raman ------------------------------------------------------------------------------------------
def test_colours_unresolved_layers_and_tempting_misreadings_are_not_sizes() -> None:
    assert values(SEM, "The scales are 640 nm apart; their blue colour near 470 nm is structural.") == [640.0]
    assert values(SEM, "The rod is 88 nm thick; the oxide skin (~4 nm) is not resolved.") == [88.0]
    chain = "It is tempting to read the grain as 31 nm, but 31 is the pixel count. At 5 nm per pixel the grain is 155 nm across."
    assert values(SEM, chain) == [155.0]
    chain = "The edge is 62 × 25 nm = 1550 nm. I initially typed 15.5 µm here, which cannot be right."
    assert values(SEM, chain) == [1550.0]


def test_other_techniques_pixel_lines_and_powders_are_not_sizes() -> None:
    assert values(SEM, "The struts are 40 µm wide; their walls (~6 nm by Raman) are invisible here.") == [40000.0]
    assert values(SEM, "- pixel: 500 nm / 100 px = 5 nm\n- width: 30 × 5 = 150 nm") == [150.0]
    assert values(SEM, "Grains reach 0.8 µm, grown from the 70 nm powder.") == [800.0]


def test_other_forms_filters_calibrations_and_laser_wavenumbers_are_not_bands() -> None:
    chain = "O–H stretches at 3361 and 3450 cm⁻¹ (its polymorph paratacamite has them at 3440 and 3355 cm⁻¹)."
    assert values(RAMAN, chain) == [3361.0, 3450.0]
    assert values(RAMAN, "The main band is at 471.2 cm⁻¹; for the related Na form it moves to ~476 cm⁻¹.") == [471.2]
    assert "40 cm⁻¹" in reasons(RAMAN, "The edge filter cuts on at 40 cm⁻¹, so the 61.0 cm⁻¹ band may be clipped.")
    assert values(RAMAN, "Bands: 146 cm⁻¹ and 217 cm⁻¹. The Si line at 520.7 cm⁻¹ is used only to calibrate.") == [146.0, 217.0]
    assert values(RAMAN, "The laser line (785 nm = 12739 cm⁻¹) adds background; the band is at 1001.5 cm⁻¹.") == [1001.5]
