"""The claim reader on each case issue #12 lists: ranges, bare numbers in the Answer line, uncertainties and
instrument settings, lists, other energies, θ versus 2θ, short words in magnetism, long lists, spans."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matpcr.records import Item
from matpcr_plugins.claims.text import normalize
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle
from matpcr_plugins.xrd.oracle import XRDOracle

XRD, RAMAN, SEM = XRDOracle(), RamanOracle(), SEMOracle()
STABILITY, METALLICITY, MAGNETISM = StabilityOracle(), MetallicityOracle(), MagnetismOracle()
READERS = (XRD, RAMAN, SEM, STABILITY, METALLICITY, MAGNETISM)


def claims(oracle: object, text: str, question: str = "") -> list[tuple[str, object, str]]:
    item = Item(id="t", task="t", constraint="", modality="text", text=question) if question else None
    return [(c.kind, c.value, c.unit) for c in oracle.read(text, item).claims]  # type: ignore[attr-defined]


def reasons(oracle: object, text: str) -> dict[str, str]:
    return {c.text.strip(): c.reason for c in oracle.read(text).rejected}  # type: ignore[attr-defined]


# -- ranges ---------------------------------------------------------------------------------------
def test_ranges_are_rejected_not_midpointed() -> None:
    assert claims(XRD, "The 2θ range 10–80° was scanned; the (111) peak is at 28.4°.") == [("two_theta", 28.4, "deg")]
    assert reasons(XRD, "The 2θ range 10–80° was scanned.") == {"10": "range", "80°": "range"}
    assert claims(RAMAN, "A broad feature at 500–540 cm⁻¹.") == []
    assert set(reasons(RAMAN, "A broad feature at 500–540 cm⁻¹.").values()) == {"range"}
    assert claims(XRD, "The strong reflections lie between 27 and 33° 2θ, others from 40 to 50°.") == []
    assert claims(SEM, "Particles are 150-300 nm across.") == []
    assert claims(STABILITY, "I estimate 0.10–0.15 eV/atom above the hull.") == []


def test_one_sided_bounds_are_ranges() -> None:
    assert claims(XRD, "No reflections above 70°.") == []
    assert reasons(METALLICITY, "PBE underestimates the gap by >1.5 eV.")[">1.5 eV"[1:]] == "range"


# -- bare numbers in the Answer line --------------------------------------------------------------
def test_bare_answer_numbers_take_the_unit_only_for_a_clear_list() -> None:
    assert claims(XRD, "Answer: 28.4, 47.3, 56.1") == [("two_theta", 28.4, "deg"), ("two_theta", 47.3, "deg"),
                                                       ("two_theta", 56.1, "deg")]
    assert claims(XRD, "Silicon, Fd-3m.\nAnswer: 227") == []                  # a space-group number
    assert claims(XRD, "Answer: space group 227") == []
    assert claims(XRD, "Answer: measured at 298 K") == []                    # a temperature
    assert claims(XRD, "Answer: 111, 220, 311") == []                        # Miller indices without brackets
    assert reasons(XRD, "Answer: 111, 220, 311") == {"111": "index", "220": "index", "311": "index"}
    assert claims(XRD, "Answer: (111) 28.4, (220) 47.3") == [("two_theta", 28.4, "deg"), ("two_theta", 47.3, "deg")]
    assert claims(RAMAN, "Answer: 464, 206, 128") == [("raman_shift", 464.0, "cm-1"), ("raman_shift", 206.0, "cm-1"),
                                                      ("raman_shift", 128.0, "cm-1")]
    assert claims(SEM, "Answer: 193") == []


# -- uncertainties, widths, steps, resolution, working distance --------------------------------------
def test_uncertainties_widths_and_steps_are_not_peaks() -> None:
    chain = ("Scanned with a step size of 0.02° and 1 s per step. The (111) reflection is at 28.44 ± 0.05° with a "
             "FWHM of 0.15°; the (220) at 47.303(2)°.")
    assert claims(XRD, chain) == [("two_theta", 28.44, "deg"), ("two_theta", 47.303, "deg")]
    got = reasons(XRD, chain)
    assert got["0.02°"] == "instrument_setting" and got["± 0.05°"] == "uncertainty" and got["0.15°"] == "instrument_setting"


def test_spectral_resolution_is_not_a_band() -> None:
    chain = "Measured with 532 nm excitation at a spectral resolution of 2 cm⁻¹. The ν1 band is at 1086 cm⁻¹."
    assert claims(RAMAN, chain) == [("raman_shift", 1086.0, "cm-1")]
    assert reasons(RAMAN, chain) == {"532 nm": "instrument_setting", "2 cm⁻¹": "instrument_setting"}


def test_working_distance_and_voltage_are_not_feature_sizes() -> None:
    chain = "EHT = 5 kV, WD = 2.8 mm, Mag = 50 kX. The particles are about 120 nm across."
    assert claims(SEM, chain) == [("feature_size", 120.0, "nm")]
    assert reasons(SEM, chain)["2.8 mm"] == "instrument_setting"


def test_scale_bar_copied_from_the_question_is_an_echo_but_the_answer_is_not() -> None:
    question = 'A micrograph has a scale bar labelled "500 nm" that spans 100 px. A particle measures 20 px across.'
    chain = "500 nm / 100 px = 5 nm/px, so the 20 px particle is 100 nm.\nAnswer: 100 nm"
    assert claims(SEM, chain, question) == [("feature_size", 100.0, "nm")]
    assert claims(SEM, "The scale bar is 500 nm.\nAnswer: 500 nm", question) == [("feature_size", 500.0, "nm")]


# -- lists -------------------------------------------------------------------------------------------
def test_every_value_of_a_list_is_read() -> None:
    assert claims(XRD, "d = 3.14, 1.92, 1.64 Å") == [("d_spacing", 3.14, "angstrom"), ("d_spacing", 1.92, "angstrom"),
                                                     ("d_spacing", 1.64, "angstrom")]
    assert claims(XRD, "The (111) planes are spaced 0.3136 nm apart, the (220) planes 0.1920 nm.") == [
        ("d_spacing", 3.136, "angstrom"), ("d_spacing", 1.92, "angstrom")]


def test_lattice_parameters_are_not_d_spacings() -> None:
    chain = "Cubic, a = 5.43 Å; the wavelength λ = 1.5406 Å; d(111) = 3.135 Å."
    assert claims(XRD, chain) == [("d_spacing", 3.135, "angstrom")]
    got = reasons(XRD, chain)
    assert got["5.43 Å"] == "lattice_parameter" and got["1.5406 Å"] == "instrument_setting"


def test_long_numeric_lists_are_read_whole() -> None:
    values = [round(10 + 0.01 * i, 2) for i in range(20_000)]
    chain = "Answer: 2θ = " + ", ".join(f"{v:.2f}" for v in values)
    got = XRD.read(chain).claims
    assert len(got) == len(values) and got[-1].value == values[-1]


# -- numbers as written ------------------------------------------------------------------------------
def test_scientific_notation_signs_and_units() -> None:
    assert claims(SEM, "sizes of 5.2e2 nm and 1.2×10³ nm") == [("feature_size", 520.0, "nm"), ("feature_size", 1200.0, "nm")]
    assert claims(RAMAN, "an anti-Stokes line at −520 cm⁻¹") == [("raman_shift", -520.0, "cm-1")]
    assert claims(SEM, "Answer: -50 nm") == [("feature_size", -50.0, "nm")]
    assert claims(RAMAN, "a band at 464 cm⁻¹ and one at 1085 cm^{-1}") == [("raman_shift", 464.0, "cm-1"),
                                                                           ("raman_shift", 1085.0, "cm-1")]
    for reader in READERS:  # the 1 of cm⁻¹ / cm^-1 is never a number
        assert all(c.value != 1 for c in reader.read("464 cm⁻¹, 1085 cm^-1, 1086 cm-1").claims + reader.read(
            "464 cm⁻¹, 1085 cm^-1").rejected)


def test_nan_and_inf_never_claim() -> None:
    for reader in READERS:
        for text in ("Answer: nan°", "Answer: inf cm-1", "2θ = 1e999°", "band gap of inf eV", "NaN nm", "∞ µB"):
            assert all(isinstance(c.value, str) or math.isfinite(c.value) for c in reader.read(text).claims)


def test_spans_index_the_original_chain() -> None:
    chain = r"Using $2\theta = 28.44^\circ$ and \SI{3.247}{\angstrom} — then −520 cm^{-1}."
    for reader in (XRD, RAMAN):
        for c in reader.read(chain).claims + reader.read(chain).rejected:
            assert chain[c.span[0]:c.span[1]] == c.text
    [two_theta] = [c for c in XRD.read(chain).claims if c.kind == "two_theta"]
    assert two_theta.text == r"28.44^\circ"


def test_chains_over_the_cap_are_cut_with_a_note() -> None:
    from matpcr_plugins.claims.diffraction import DiffractionReader

    extraction = DiffractionReader(max_chars=100).read("The peak is at 28.4°. " * 20)
    assert extraction.claims[0].value == 28.4
    assert extraction.notes and "truncated at 100 characters" in extraction.notes[0]
    assert normalize("x" * 50, max_chars=10).notes == ["chain truncated at 10 characters (of 50)"]


# -- θ and 2θ; stated radiation -------------------------------------------------------------------------
def test_theta_only_answers_are_doubled() -> None:
    assert claims(XRD, "Answer: θ = 14.22°, 23.65°") == [("two_theta", 28.44, "deg"), ("two_theta", 47.3, "deg")]
    assert claims(XRD, "The Bragg angle is 14.22°, i.e. 2θ = 28.44°.") == [("two_theta", 28.44, "deg")]


def test_a_stated_wavelength_is_exposed() -> None:
    extraction = XRD.read("With Mo Kα radiation (λ = 0.7093 Å) the (111) reflection is at 2θ = 13.0°.")
    assert [(c.kind, c.value) for c in extraction.claims] == [("two_theta", 13.0)]
    [wavelength] = [c for c in extraction.rejected if c.kind == "wavelength"]
    assert wavelength.value == 0.7093 and wavelength.reason == "instrument_setting"
    assert "stated wavelength 0.7093 Å (not Cu Kα)" in extraction.notes
    named = XRD.read("Using Co Kα, the main peak is at 52.4°.")
    assert any("Co Kα" in note for note in named.notes)


# -- DFT readers ---------------------------------------------------------------------------------------
def test_formation_energy_is_not_the_band_gap() -> None:
    chain = "Its formation energy is −0.35 eV/atom and E_hull = 0 eV/atom.\nAnswer: metallic"
    assert claims(METALLICITY, chain) == [("metallicity", "metallic", "")]
    assert set(reasons(METALLICITY, chain).values()) == {"other_property"}
    assert claims(METALLICITY, "The band gap is 1.1 eV; the formation energy is −1.2 eV.\nAnswer: semiconductor") == [
        ("metallicity", "gapped", ""), ("band_gap", 1.1, "eV")]


@pytest.mark.parametrize("text, expected", [
    ("It is not metallic.", "gapped"),
    ("It is not a metal.", "gapped"),
    ("It has no band gap.", "metallic"),
    ("Answer: no band gap", "metallic"),
])
def test_metallicity_negations(text: str, expected: str) -> None:
    assert claims(METALLICITY, text)[0] == ("metallicity", expected, "")


@pytest.mark.parametrize("text, expected", [
    ("There is no net moment.", "nonmagnetic"),
    ("It is not magnetic.", "nonmagnetic"),
    ("It is antiferromagnetic with zero net moment.", "nonmagnetic"),
    ("Answer: ferromagnetic", "magnetic"),
])
def test_magnetism_negations(text: str, expected: str) -> None:
    assert claims(MAGNETISM, text)[0] == ("magnetism", expected, "")


@pytest.mark.parametrize("text, expected", [
    ("It does not lie on the hull.", "unstable"),
    ("It is not stable with respect to its competing phases.", "unstable"),
    ("It is metastable.", "metastable"),
    ("Answer: stable, 0.03 eV/atom above the hull", "stable"),
    ("Answer: Yes", "stable"),
])
def test_stability_wording(text: str, expected: str) -> None:
    assert claims(STABILITY, text)[0] == ("stability", expected, "")


def test_stable_with_a_hull_distance_gives_both_claims() -> None:
    assert claims(STABILITY, "Answer: stable, 0.03 eV/atom above the hull") == [
        ("stability", "stable", ""), ("e_above_hull", 0.03, "eV/atom")]
    assert claims(STABILITY, "It lies 30 meV/atom above the hull, 0.15 eV per formula unit.") == [
        ("e_above_hull", 0.03, "eV/atom"), ("e_above_hull", 0.15, "eV/fu")]
    question = "Is X stable, i.e. on or within 0.05 eV/atom of the convex hull?"
    assert claims(STABILITY, "It is stable: within 0.05 eV/atom of the hull.", question) == [("stability", "stable", "")]


@pytest.mark.parametrize("text", [
    "It is so magnetic, as in Fe, it is 2 µB so we say so.",
    "The moment is 2 µB in the cell, as is usual; so is it.",
    "2 µB is",
    "µB so in is as",
])
def test_magnetism_short_words_are_never_elements(text: str) -> None:
    for c in MAGNETISM.read(text).claims:
        if c.kind == "magnetic_moment":
            assert not c.unit.startswith("muB/element:")


def test_magnetism_bases() -> None:
    assert claims(MAGNETISM, "Ferromagnetic with 5 µB per Fe.")[1] == ("magnetic_moment", 5.0, "muB/element:Fe")
    assert claims(MAGNETISM, "Answer: 4.0 uB/f.u.")[1] == ("magnetic_moment", 4.0, "muB/fu")
    assert claims(MAGNETISM, "The calculation relaxes to 0.00 µB.\nAnswer: non-magnetic") == [
        ("magnetism", "nonmagnetic", ""), ("magnetic_moment", 0.0, "muB/cell")]


def test_hedges_give_no_class() -> None:
    assert claims(STABILITY, "It may or may not be stable; hard to say.") == []
    assert claims(METALLICITY, "It might be a metal or possibly a semiconductor.") == []
    assert claims(MAGNETISM, "It could be 1 µB or 0 µB — I can't tell.\nAnswer: not sure") == []


# -- never raise, and spans always valid ----------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_arbitrary_unicode_never_raises_and_spans_stay_valid(text: str) -> None:
    for reader in READERS:
        extraction = reader.read(text)
        for c in extraction.claims + extraction.rejected:
            assert 0 <= c.span[0] <= c.span[1] <= len(text)


# -- rules added with the w2 batch ---------------------------------------------------------------------
def test_moment_basis_per_number_site_labels_and_pronouns() -> None:
    got = claims(MagnetismOracle(), "In GGA+U the local moments are Fe(A) −4.0 µB, Fe(B) +4.1 µB and Ni +1.6 µB. "
                                    "Ni²⁺ is d⁸, so it carries 2 µB. Ru⁴⁺ has S = 1. Fe carries 3.7 µB and Mo −0.3 µB.")
    assert ("magnetic_moment", -4.0, "muB/element:Fe") in got
    assert ("magnetic_moment", 1.6, "muB/element:Ni") in got
    assert ("magnetic_moment", 2.0, "muB/element:Ni") in got
    assert ("magnetic_moment", -0.3, "muB/element:Mo") in got
    assert not any(u.endswith(":U") or u.endswith(":S") for _, _, u in got)


def test_moment_table_rows_after_words_and_partial_moments() -> None:
    got = claims(MagnetismOracle(), "| site | moment (µB) |\n|---|---|\n| Mn1 | +3.72 |\n| Mn2 | −3.72 |\n")
    got += claims(MagnetismOracle(), "DFT gives ±2.9 µB on the Cr sites. The 4f shell contributes 7 µB. "
                                     "The cell has 8.0 µB for the 20-atom cell.")
    assert ("magnetic_moment", 3.72, "muB/element:Mn") in got and ("magnetic_moment", -3.72, "muB/element:Mn") in got
    assert ("magnetic_moment", 2.9, "muB/element:Cr") in got
    assert ("magnetic_moment", 8.0, "muB/cell") in got
    assert not any(v == 7.0 for _, v, _ in got)


def test_negative_and_superconducting_gaps_are_not_band_gaps() -> None:
    got = claims(MetallicityOracle(), "An inverted gap of −0.3 eV; Δ ≈ 7.1 meV below T_c. The d band is 3.5 eV wide. "
                                      "Experiment: a 2.4-eV gap. Answer: metallic")
    gaps = [v for k, v, _ in got if k == "band_gap"]
    assert gaps == [2.4]


def test_theta_list_doubled_and_merged_with_stated_two_theta() -> None:
    got = claims(XRDOracle(), "The Bragg angles θ of the reflections are 19.11° for (111), 22.21° for (200). "
                              "θ = 9.14°, so 2θ = 18.27°.")
    values = sorted(v for k, v, _ in got if k == "two_theta")
    assert values == [18.27, 38.22, 44.42]


def test_hypothetical_and_truncated_values_are_not_claims() -> None:
    assert claims(XRDOracle(), "Under Cu Kα the (110) line would sit at 40.30°.") == []
    assert claims(XRDOracle(), "The strongest reflection is 2θ = 40.5°, 2θ = 58") == [("two_theta", 40.5, "deg")]


def test_other_polymorph_rows_in_stability() -> None:
    got = claims(StabilityOracle(), "| polymorph | E above hull (eV/atom) |\n|---|---|\n| wurtzite | 0.000 |\n"
                                    "| zinc blende | 0.042 |\nThe asked structure is zinc blende: 0.042 eV/atom.\nAnswer: stable")
    assert ("e_above_hull", 0.042, "eV/atom") in got and ("e_above_hull", 0.0, "eV/atom") not in got


def test_slit_and_geometry_settings_are_not_peaks() -> None:
    """Found by the validity gate's distractor templates: a slit width written before "slit" is a setting."""
    from matpcr.plugins import get_manager

    oracle = get_manager().registry.get("oracles", "xrd").factory()
    read = oracle.read("We used a 0.5° divergence slit and 2.5° Soller slits; reflections at 2θ = 28.4° and 47.3°.")
    assert [c.value for c in read.claims] == [28.4, 47.3]
    assert {(r.value, r.reason) for r in read.rejected} >= {(0.5, "instrument_setting"), (2.5, "instrument_setting")}


# -- the w3 batch (issue #12): rules generalised from the third written dev batch ----------------------
def test_latex_tabular_cells_take_their_column_headers() -> None:
    chain = ("\\begin{tabular}{lcc}\nhkl & $d$ (\\AA) & $2\\theta$ (deg) \\\\\n\\hline\n111 & 3.135 & 28.44 \\\\\n"
             "220 & 1.920 & 47.30 \\\\\n\\end{tabular}")
    assert sorted(claims(XRD, chain)) == [("d_spacing", 1.92, "angstrom"), ("d_spacing", 3.135, "angstrom"),
                                          ("two_theta", 28.44, "deg"), ("two_theta", 47.3, "deg")]
    rows = "| quantity | value |\n|---|---|\n| E_hull (eV/atom) | 0.021 |\nAnswer: stable"
    assert ("e_above_hull", 0.021, "eV/atom") in claims(STABILITY, rows)


def test_theta_inside_a_sine_and_parallel_theta_lists_are_half_angles() -> None:
    assert claims(XRD, "d = 3.135 Å = 1.5418/(2 sin 14.22°), so 2θ = 28.44°.") == [("d_spacing", 3.135, "angstrom"),
                                                                                  ("two_theta", 28.44, "deg")]
    got = claims(XRD, "The diffraction angle θ for (111) is 14.2°, and for (220) it is 23.7°.")
    assert sorted(v for _, v, _ in got) == [28.4, 47.4]


def test_differences_coefficients_counts_and_stutters_are_not_values() -> None:
    assert claims(XRD, "The 111 line at 38.12° has a Kα2 shoulder about 0.1° higher.") == [("two_theta", 38.12, "deg")]
    assert claims(RAMAN, "Si at 520.6 cm⁻¹ softens with dω/dT = −0.022 cm⁻¹/K.") == [("raman_shift", 520.6, "cm-1")]
    assert claims(RAMAN, "Raman bands were observed at 3 positions: 464, 206 and 128 cm−1.") == [
        ("raman_shift", 464.0, "cm-1"), ("raman_shift", 206.0, "cm-1"), ("raman_shift", 128.0, "cm-1")]
    assert claims(XRD, "The 2θ = 26 26 26 the reflections of Quartz.") == []
    assert claims(RAMAN, "Bands expected for baddeleyite at 178 and 190 cm⁻¹ are not observed; ν3 at 1008 cm⁻¹.") == [
        ("raman_shift", 1008.0, "cm-1")]


def test_references_in_a_measured_pattern_are_not_readings() -> None:
    question = "Measured powder X-ray diffraction pattern of an anatase TiO2 thin film. At which 2θ angles ...?"
    chain = "The film shows (101) at 25.3°. Bulk anatase has its (101) at 25.28° (JCPDS 21-1272)."
    assert claims(XRD, chain, question) == [("two_theta", 25.3, "deg")]


def test_offered_alternatives_commit_to_no_class() -> None:
    assert claims(STABILITY, "The answer is 'stable' or 'unstable'.") == []
    assert claims(METALLICITY, "Answer: metallic (zero band gap) or does it have a band gap") == []
    assert claims(STABILITY, "1. The answer is \"stable\"\n2. The answer is \"unstable\"") == [("stability", "unstable", "")]


def test_dft_wording_variants() -> None:
    got = claims(STABILITY, "Cubic Mn3O4 sits above the hull by 38 meV per atom.\nAnswer: stable")
    assert ("e_above_hull", 0.038, "eV/atom") in got
    assert claims(STABILITY, "Li4Ti is unlikely to be stable.") == [("stability", "unstable", "")]
    assert claims(MAGNETISM, "Each Ni carries 1.65 µB, but the net moment is zero.")[0] == ("magnetism", "nonmagnetic", "")
    got = claims(MAGNETISM, "M_tot = 3.00 μB per f.u.; m(Fe) = 1.5 μB and m_{Co} = 0.2 μB.")
    assert ("magnetic_moment", 1.5, "muB/element:Fe") in got and ("magnetic_moment", 0.2, "muB/element:Co") in got
    table = "| atom | m (μB) |\n|---|---|\n| Co | 1.02 |\n| Mn | 2.97 |"
    assert {u for k, _, u in claims(MAGNETISM, table) if k == "magnetic_moment"} == {"muB/element:Co", "muB/element:Mn"}
    got = claims(METALLICITY, "The conduction-band minimum lies 1.1 eV above the valence-band maximum; a 0.8 eV gap in the "
                              "minority channel belongs to another system.")
    assert [v for k, v, _ in got if k == "band_gap"] == [1.1]


# -- w4 batch rules ---------------------------------------------------------------------------------
RAMAN_Q = "Measured Raman spectrum of litharge (PbO), excited at 532 nm. At which Raman shift (in cm⁻¹) is its main band?"


def test_raman_absolute_wavenumbers_and_literature_values_are_not_bands() -> None:
    chain = ("With 532 nm excitation (18797 cm⁻¹ absolute), the E_g mode shows up at 144 cm⁻¹, i.e. the scattered light "
             "is at 18653 cm⁻¹ absolute.")
    assert claims(RAMAN, chain) == [("raman_shift", 144.0, "cm-1")]
    assert claims(RAMAN, "The strongest band sits at 1085.4 cm⁻¹ (lit. 1086 cm⁻¹, Ref. 12).") == [("raman_shift", 1085.4, "cm-1")]
    assert claims(RAMAN, "Measured: 464.5 cm⁻¹ (cf. 465 cm⁻¹ in single-crystal α-quartz [3]).") == [("raman_shift", 464.5, "cm-1")]


def test_raman_reference_before_a_parenthesis_and_reference_lines() -> None:
    chain = "The G band is at 1587 cm⁻¹, upshifted relative to pristine graphene (1580 cm⁻¹)."
    assert claims(RAMAN, chain) == [("raman_shift", 1587.0, "cm-1")]
    chain = "After calibrating on the Si line (520.7 cm⁻¹), the bands are at 226 and 292 cm⁻¹."
    assert [v for _, v, _ in claims(RAMAN, chain)] == [226.0, 292.0]
    chain = "- Massicot (reference): 87, 143, 289 cm⁻¹.\n- Measured: 82, 146 and 337 cm⁻¹."
    assert [v for _, v, _ in claims(RAMAN, chain)] == [82.0, 146.0, 337.0]
    chain = "Low power avoids oxidation to Pb3O4 (whose main band is at 548 cm⁻¹); the band is at 146 cm⁻¹."
    assert claims(RAMAN, chain, RAMAN_Q) == [("raman_shift", 146.0, "cm-1")]
    chain = "Crystalline zircon has ν3 at 1008 cm⁻¹; this metamict grain shows it at 998 cm⁻¹."
    assert claims(RAMAN, chain) == [("raman_shift", 998.0, "cm-1")]


def test_raman_table_cells_are_their_own_clauses_and_would_spans_decimals() -> None:
    table = "| mode | DFT (cm⁻¹) | measured (cm⁻¹) |\n|---|---|---|\n| A1g | 507 | 515 |"
    assert claims(RAMAN, table) == [("raman_shift", 515.0, "cm-1")]
    chain = "The line is at 1332.5 cm⁻¹; an overtone would be expected near 2 × 1332.5 = 2665 cm⁻¹."
    assert claims(RAMAN, chain) == [("raman_shift", 1332.5, "cm-1")]
    chain = "Cristobalite would have its strongest band at 416 cm⁻¹ and coesite at 521 cm⁻¹. Quartz: 464 cm⁻¹."
    assert claims(RAMAN, chain) == [("raman_shift", 464.0, "cm-1")]


def test_sem_references_imaging_conditions_and_other_techniques() -> None:
    assert claims(SEM, "The supplier quotes 200 nm (nominal), but the micrograph shows 225 nm.") == [("feature_size", 225.0, "nm")]
    chain = "The film is 800 nm thick (FIB cross-section); the grain is 1.41 µm."
    assert claims(SEM, chain) == [("feature_size", 1410.0, "nm")]
    chain = "It is 225 nm, larger than the 200 nm batch average measured last week by DLS (hydrodynamic diameter 260 nm)."
    assert claims(SEM, chain) == [("feature_size", 225.0, "nm")]
    chain = "Resolution of the in-lens detector at 1 kV is about 1.6 nm and the probe diameter ~3 nm; the particle is 225 nm."
    assert claims(SEM, chain) == [("feature_size", 225.0, "nm")]
    chain = "At 15 kV the penetration depth is ~1.2 µm. The Au lattice fringes (0.235 nm) are not resolved; the LSPR is at 520 nm.\n"
    chain += "The particle is 16 nm."
    assert claims(SEM, chain) == [("feature_size", 16.0, "nm")]
    chain = "Holes: 250 nm; lattice pitch 450 nm; a 2 px drift (≈8 nm); 54 × 4.17 nm ≈ 0.225 microns."
    assert sorted(v for _, v, _ in claims(SEM, chain)) == [225.0, 250.0, 450.0]


def test_unit_only_table_headers_and_float_noise() -> None:
    table = "| # | px | nm |\n|---|---|---|\n| 1 | 52 | 217 |\n| 2 | 54 | 225 |"
    assert sorted(v for _, v, _ in claims(SEM, table)) == [217.0, 225.0]
    assert claims(SEM, "The diameter is 225.00000000000003 nm. The diameter is 2.25e+02 nm.") == [("feature_size", 225.0, "nm")]


def test_w4_dft_rules() -> None:
    question = ("Material: CsPbI3, space group Pm-3m (221), 5 atoms in the computational cell.\n\nAccording to "
                "density-functional (PBE/GGA) calculations, is CsPbI3 thermodynamically stable?")
    chain = "Cubic CsPbI3 is not thermodynamically stable: it lies ~85 meV/atom above the orthorhombic δ phase."
    assert ("e_above_hull", 0.085, "eV/atom") in claims(STABILITY, chain, question)
    question = question.replace("CsPbI3, space group Pm-3m (221)", "Li3PS4, space group Pnma (62)")
    chain = "The γ-phase (Pmn2_1) is 0.021 eV/atom above the hull; the β-phase (asked, Pnma) is at 0.032 eV/atom above the hull."
    assert [v for k, v, _ in claims(STABILITY, chain, question) if k == "e_above_hull"] == [0.032]
    table = ("| phase | E_hull (meV/atom) |\n|---|---|\n| rutile TiO2 | 0 |\n| anatase TiO2 | 5 |\n\n"
             "The question asks about anatase, which is 5 meV/atom above rutile.\nAnswer: stable")
    assert [v for k, v, _ in claims(STABILITY, table) if k == "e_above_hull"] == [0.005]
    assert claims(METALLICITY, "PBE underestimates it.\nAnswer: gapped, 0.87") == [("metallicity", "gapped", ""), ("band_gap", 0.87, "eV")]
    chain = "The Fermi level is placed mid-gap at 6.2 eV on the absolute scale.\nAnswer: gapped, 0.4 eV"
    assert [v for k, v, _ in claims(METALLICITY, chain) if k == "band_gap"] == [0.4]


def test_an_echoed_instruction_is_not_a_class_claim() -> None:
    """Found in a real gemma3 run: the base model copies the prompt, whose instruction "otherwise say it is
    non-magnetic" was read as a nonmagnetic claim in 90 of 90 magnetism answers."""
    question = ("Material: TiN, space group 87, 16 atoms in the computational cell.\n\nAccording to spin-polarised "
                "density-functional calculations, is TiN magnetic? If it is, estimate its net magnetic moment in µB "
                "per formula unit; otherwise say it is non-magnetic.\nFinish with one line of the form \"Answer: ...\".")
    assert claims(MAGNETISM, question + " mendatang\n" + question[:80], question) == []
    assert claims(MAGNETISM, question + "\nTiN is non-magnetic.\nAnswer: non-magnetic", question) == [
        ("magnetism", "nonmagnetic", "")]
    stability_q = "Is TiN thermodynamically stable? If it is not, say it is unstable and give its energy above the hull."
    assert claims(STABILITY, stability_q + "\n" + stability_q, stability_q) == []


def test_a_copied_data_table_is_an_echo_but_restated_rows_are_claims() -> None:
    """Found in a real gemma3 run: the base model copies the prompt's max-pooled spectrum table, and every
    copied row was read as a band (30 of 30 raman answers checkable). Three or more consecutive rows copied in
    order, and the row cut off after them, are an echo; a row restated on its own is still a claim."""
    table = "\n".join(f"{x:.1f} {y}" for x, y in [(150.5, 2425), (153.4, 3250), (154.9, 2896), (159.2, 1339),
                                                   (166.4, 1334), (170.8, 2035), (464.9, 9000)])
    question = f"Raman spectrum of quartz, 532 nm. Columns: Raman shift (cm⁻¹) and intensity:\n{table}\n\nWhich bands?"
    copied = question.split("\n\n")[0] + "\n" + "\n".join(table.splitlines()[:5]) + "\n170.8 20"
    assert claims(RAMAN, copied, question) == []
    assert claims(RAMAN, "The main band is at 464.9 cm⁻¹.\nAnswer: 464.9 cm⁻¹", question) == [("raman_shift", 464.9, "cm-1")]
    own_order = "Strongest rows:\n464.9 9000\n153.4 3250\n154.9 2896\nAnswer: 464.9, 153.4, 154.9 cm⁻¹"
    assert [c[1] for c in claims(RAMAN, own_order, question)] == [464.9, 153.4, 154.9]  # from the Answer line
    looped = "Columns: Raman shift (cm⁻¹) and intensity:\n153.4 3250\n154.9 2896\n153.4 3250\n154.9 2896\n153.4 3250"
    assert claims(RAMAN, looped, question) == []  # a row copied with its intensity, in any order, is data
    assert claims(RAMAN, "The bands lie at 153.4 and 464.9 cm⁻¹.", question) == [("raman_shift", 153.4, "cm-1"),
                                                                               ("raman_shift", 464.9, "cm-1")]
