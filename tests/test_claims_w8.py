"""Reader rules found by the w8 dev batch of the claim corpus (issue #12): other phases named in passing,
coreference, corrections, candidates, and values of other techniques or settings. One test per rule, each with a
case of the kind that exposed it (written fresh here, not copied from the corpus)."""

from __future__ import annotations

from claim_reading import claims, reasons, values
from matpcr_plugins.dft.oracles import MetallicityOracle, StabilityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle

RAMAN, SEM = RamanOracle(), SEMOracle()
STABILITY, METALLICITY = StabilityOracle(), MetallicityOracle()

CALCITE_Q = ("Measured Raman spectrum of Calcite (CaCO3), excited at 532 nm. Columns: Raman shift (cm⁻¹) and intensity:\n"
             "155.9 5300\n282.1 9800\n712.4 3600\n1086.0 52100\nAt which Raman shifts are the main bands?")
STABILITY_Q = ("Material: TiO2, space group I4_1/amd (141), 12 atoms in the computational cell.\n"
               "According to density-functional (PBE/GGA) calculations, is TiO2 thermodynamically stable, i.e. on or "
               "within 0.05 eV/atom of the convex hull? Answer 'stable' or 'unstable'.")


# -- numbers ---------------------------------------------------------------------------------------------
def test_a_list_of_decimal_commas_is_read_whole() -> None:
    assert values(RAMAN, "Lattice modes at 136,5 and 153,6 cm⁻¹.") == [136.5, 153.6]
    assert values(RAMAN, "ν₁ at 1059,7 cm⁻¹.") == [1059.7]


def test_siunitx_per_pixel_and_latex_approx() -> None:
    chain = r"With \SI{5}{\nano\metre\per\pixel}, the sphere spans \SI{73}{px}: \SI{365}{\nano\metre}."
    assert values(SEM, chain) == [365.0]
    assert reasons(SEM, chain)[r"5}{\nano\metre\per\pixel"] == "instrument_setting"
    assert values(SEM, r"$d = 42 \times 0.667 \approx 28\,\mathrm{nm}$") == [28.0]


# -- raman -----------------------------------------------------------------------------------------------
def test_a_pronoun_after_another_mineral_is_that_minerals() -> None:
    chain = ("Aragonite has to be ruled out first. It has its ν₁ at 1085 cm⁻¹ too, and its lattice modes sit at 153 "
             "and 206 cm⁻¹. This spectrum instead shows a single ν₄ at 712.4 cm⁻¹, so it is calcite.")
    assert values(RAMAN, chain, CALCITE_Q) == [712.4]
    # the sample's own pronoun is the sample's
    assert values(RAMAN, "Calcite is the match. It has its ν₁ at 1086.0 cm⁻¹.", CALCITE_Q) == [1086.0]


def test_a_computed_column_is_not_the_measured_spectrum() -> None:
    chain = "| mode | measured (cm⁻¹) | PBE (cm⁻¹) |\n|---|---|---|\n| Eg | 144.1 | 142 |\n| B1g | 398.9 | 393 |"
    assert values(RAMAN, chain) == [144.1, 398.9]


def test_differences_offsets_and_hypothetical_bands_are_not_bands() -> None:
    assert values(RAMAN, "The layer is at 516.9 cm⁻¹; the 3.8 cm⁻¹ downshift means tensile strain.") == [516.9]
    assert values(RAMAN, "E2g at 383.6 cm⁻¹ and A1g at 405.1 cm⁻¹. Their separation, 21.5 cm⁻¹, means a bilayer.") \
        == [383.6, 405.1]
    assert values(RAMAN, "The R line lies about 4200 cm⁻¹ from the 532 nm laser; the band is at 407.3 cm⁻¹.") == [407.3]
    chain = "The 1T′ phase would add the J1, J2 and J3 bands at 156, 226 and 330 cm⁻¹; none are seen. A1g: 405.1 cm⁻¹."
    assert values(RAMAN, chain) == [405.1]


# -- sem -------------------------------------------------------------------------------------------------
def test_other_micrographs_powders_and_techniques_are_other_property() -> None:
    chain = ("10 nm/px gives 380 nm. A second micrograph of the same pellet (not the one asked about) shows grains "
             "of about 1.1 µm. The starting powder was 40 nm.")
    assert values(SEM, chain) == [380.0]
    chain = ("1.25 nm/px gives 60 nm grains. The film thickness, 820 nm, comes from a separate FIB cross-section. "
             "Profilometry agrees with 810 nm.")
    assert values(SEM, chain) == [60.0]
    assert values(SEM, "The N₂ surface area corresponds to ~70 nm equivalent spheres; the particle is 50 nm.") == [50.0]


def test_candidate_readings_turned_down_are_not_claims() -> None:
    chain = ("(a) 11 nm, if the pixel count is taken as nm — wrong;\n(b) 88 nm, using 8 nm/px;\n"
             "(c) 44 nm, if the 11 px were a radius — it is not.\nAnswer: 88 nm")
    assert values(SEM, chain) == [88.0]
    assert reasons(SEM, chain)["11 nm"] == "negated"


# -- stability -------------------------------------------------------------------------------------------
def test_another_polymorph_named_as_subject_is_not_the_asked_one() -> None:
    chain = ("Rutile lies 9 meV/atom above it in these calculations, and brookite 4 meV/atom above it. So the asked "
             "anatase cell is itself the hull phase: E_hull = 0.000 eV/atom.\nAnswer: stable")
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.0]
    chain = "The asked kyanite cell lies 0.011 eV/atom above andalusite, and sillimanite 0.006 eV/atom above it."
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.011]
    # a polymorph named in an earlier clause does not make the asked material's distance another phase's
    chain = "Aragonite is the high-pressure polymorph; in PBE it lies only 5 meV/atom above calcite."
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.005]


def test_database_values_per_atom_are_distances_and_settings_are_not() -> None:
    chain = ("Candidate values: Materials Project 0.031 eV/atom (stable by the 0.05 threshold); OQMD 0.068 eV/atom "
             "(unstable). I go with MP.\nAnswer: stable")
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.031, 0.068]
    chain = "E_hull = 0.000 eV/atom (PBE, 520 eV cutoff, 12×12×2 k-mesh).\nAnswer: stable"
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.0]
    chain = "The AFM ground state is on the hull (E_hull = 0 eV/atom). The ferromagnetic configuration is 0.11 eV/atom higher."
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.0]


def test_a_correction_sentence_keeps_its_own_value() -> None:
    chain = ("E_hull = 0.12 meV/atom, essentially on the hull, so stable.\n\nCorrection: the database value is "
             "0.12 eV/atom (120 meV/atom), not meV; I misread the unit.\n\nAnswer: unstable")
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.12]
    assert values(STABILITY, chain, STABILITY_Q, "stability") == ["unstable"]


# -- metallicity -----------------------------------------------------------------------------------------
def test_labelled_lines_and_edges_that_are_not_gaps() -> None:
    chain = ("LaB6 is a metal.\n- work function of the (100) surface: 2.7 eV\n- plasma edge in reflectivity: about "
             "2.0 eV\nCopper's d-band top gives the 2.1 eV interband absorption edge.\nAnswer: metallic")
    assert values(METALLICITY, chain, kind="band_gap") == []


def test_gaps_at_another_temperature_or_without_soc_are_claims() -> None:
    chain = "PBE gives 1.17 eV; experiment 2.70 eV at room temperature (2.82 eV at 4 K).\nAnswer: gapped, 1.17 eV"
    assert values(METALLICITY, chain, kind="band_gap") == [1.17, 2.7, 2.82]
    chain = "With SOC the inverted gap is about 320 meV; without SOC the gap is only about 0.1 eV."
    assert values(METALLICITY, chain, kind="band_gap") == [0.32, 0.1]
    # a plain negation still negates
    assert values(METALLICITY, "There is no gap of 0.5 eV here; it is a metal.", kind="band_gap") == []


def test_another_polytype_and_the_direct_gap_of_an_indirect_material() -> None:
    chain = ("The 2H polytype of MoTe2 is a semiconductor (PBE gap about 0.8 eV), but the asked 1T′ phase is a "
             "semimetal.\nAnswer: metallic")
    assert values(METALLICITY, chain, kind="band_gap") == []
    chain = ("The PBE gap of cubic SrTiO3 is indirect (R→Γ): E_g = 1.78 eV. The direct gap at Γ is 2.20 eV in PBE.\n"
             "Answer: gapped, 1.78 eV")
    assert values(METALLICITY, chain, kind="band_gap") == [1.78]


def test_a_setting_in_a_table_row_does_not_reject_the_rows_gap() -> None:
    chain = "| method | E_g (eV) |\n|---|---|\n| PBE | 0.73 |\n| PBE+U (U_d = 7 eV) | 1.52 |\n| HSE06 | 2.46 |"
    assert values(METALLICITY, chain, kind="band_gap") == [0.73, 1.52, 2.46]


# -- rules found by the w9 batch (natural mix, all six families) ----------------------------------------
from matpcr_plugins.dft.oracles import MagnetismOracle  # noqa: E402
from matpcr_plugins.xrd.oracle import XRDOracle  # noqa: E402

XRD, MAGNETISM = XRDOracle(), MagnetismOracle()


def test_table_cells_with_units_take_their_header_and_rank_columns_are_indices() -> None:
    chain = "| hkl | d | 2θ |\n|---|---|---|\n| 111 | 221.7 pm | 40.70° |\n| 200 | 0.1920 nm | 47.35° |"
    assert claims(XRD, chain) == [("d_spacing", 2.217, "angstrom"), ("two_theta", 40.7, "deg"),
                                  ("d_spacing", 1.92, "angstrom"), ("two_theta", 47.35, "deg")]
    chain = "| band | shift (cm⁻¹) |\n|---|---|\n| 1 | 447.2 |\n| 2 | 611.9 |"
    assert values(RAMAN, chain) == [447.2, 611.9]


def test_bounds_written_after_the_number_and_lists_said_to_be_absent() -> None:
    chain = "Metamict grains shift it down to 1000 cm⁻¹ or less; this grain shows 1008.2 cm⁻¹."
    assert values(RAMAN, chain) == [1008.2]
    chain = "Fe²⁺ would add satellite O–H bands at about 3660 and 3645 cm⁻¹; none appear here. O–H: 3674.3 cm⁻¹."
    assert values(RAMAN, chain) == [3674.3]
    assert values(XRD, "Only a handful of lines fall below 2θ = 160°; the first is at 58.68°.") == [58.68]


def test_published_and_textbook_values_are_references() -> None:
    chain = "The Si line is at 520.4 cm⁻¹ (textbook value 520.7 cm⁻¹). Published spectra give 675 cm⁻¹."
    assert values(RAMAN, chain) == [520.4]


def test_rejected_candidates_arithmetic_and_other_estimates_in_sem() -> None:
    chain = ("(a) 20 nm × 72 nm, which just reads px as nm (rejected);\n(b) 16 nm × 57.6 nm using 0.8 nm/px;\n"
             "Answer: 16 nm wide, 57.6 nm long")
    assert values(SEM, chain) == [16.0, 57.6]
    chain = "Five test lines of 800 px (20 µm each) crossed 118 boundaries: 100 µm / 118 = 0.85 µm mean intercept."
    assert values(SEM, chain) == [850.0]
    chain = ("The marked pore is 65 nm. The anodising conditions predict an interpore distance of 100 nm. "
             "ZIF-8 made the same way is usually about 200 nm. The sample carries about 2 nm of sputtered Pt/Pd.")
    assert values(SEM, chain) == [65.0]
    # a nominal value given inside the brackets does not make the measured one nominal
    assert values(SEM, "Au contact: 20 px → 80 nm (nominal evaporated thickness 100 nm)") == [80.0]
    # "no correction and measures": the negation ends before the measurement
    assert values(SEM, "A second rod along the tilt axis needs no correction and measures 1.6 µm.") == [1600.0]


def test_xrd_comparisons_references_and_widths() -> None:
    chain = "(104) is at 33.63°. For comparison, α-Al₂O₃ puts (104) at 35.15° and hematite at 33.15°."
    assert values(XRD, chain) == [33.63]
    assert values(XRD, "Pt(111) is at 39.76°. The FWHM of Pt(111) is 0.31°.") == [39.76]
    chain = "The out-of-plane spacing is d = 1.981 Å, about 0.6% larger than bulk BFO (3.94 Å)."
    assert values(XRD, chain) == [1.981]
    assert values(XRD, "Answer: 2θ = 40.26°, 40.26°, 58") == [40.26]  # cut off inside the third value


def test_stability_lower_by_below_the_hull_and_other_configurations() -> None:
    question = ("Material: CsPbI3, space group Pm-3m (221), 5 atoms in the computational cell.\nAccording to "
                "density-functional (PBE/GGA) calculations, is CsPbI3 thermodynamically stable?")
    chain = "The non-perovskite δ phase (Pnma) is lower by 0.082 eV/atom and lies on the hull.\nAnswer: unstable"
    assert values(STABILITY, chain, question, "e_above_hull") == [0.082]
    chain = "E_hull = 0 meV/atom; it lies 45 meV/atom below the hull of the competing phases.\nAnswer: stable"
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.0]
    chain = ("The ferromagnetic Fe–Mo alignment is 0.19 eV per formula unit higher, and an antisite-disordered cell is "
             "another 35 meV/atom higher. The ordered cell lies 21 meV/atom above the hull.")
    assert values(STABILITY, chain, STABILITY_Q, "e_above_hull") == [0.021]


def test_metallicity_hedges_bullets_and_direct_rows() -> None:
    chain = ("With AFM order it may open a tiny gap of ~0.1 eV. I can't determine which order was used.\n"
             "Answer: undetermined")
    assert claims(METALLICITY, chain) == []
    chain = ("- PBE: 0.50 eV\n- the 3d–4s splitting at Γ away from the gap edge, about 2.6 eV, is an interband "
             "transition\nAnswer: gapped, 0.50 eV")
    assert values(METALLICITY, chain, kind="band_gap") == [0.5]
    chain = ("The gap is indirect.\n| transition | PBE (eV) |\n|---|---|\n| R → Γ (indirect) | 1.8 |\n"
             "| Γ → Γ (direct) | 2.2 |\nAnswer: gapped, 1.8 eV")
    assert values(METALLICITY, chain, kind="band_gap") == [1.8]


def test_magnetism_subscript_sites_totals_json_and_partial_moments() -> None:
    chain = r"$m_{\mathrm{Cr}} = 3.1\,\mu_B$ and $m_{\mathrm{I}} = -0.1\,\mu_B$; the cell (2 Cr) carries $M = 6.0\,\mu_B$."
    assert claims(MAGNETISM, chain)[-3:] == [("magnetic_moment", 3.1, "muB/element:Cr"),
                                             ("magnetic_moment", -0.1, "muB/element:I"),
                                             ("magnetic_moment", 6.0, "muB/cell")]
    chain = '{"magnetic_order": "AFM-II", "site_moment_Co_muB": 2.7, "net_moment_muB_per_fu": 0.0}'
    assert claims(MAGNETISM, chain)[-2:] == [("magnetic_moment", 2.7, "muB/element:Co"),
                                             ("magnetic_moment", 0.0, "muB/fu")]
    chain = "Each Gd carries 7.6 µB: 7.0 µB from the localised 4f shell. Exactly zero net moment for the 10-atom cell."
    assert values(MAGNETISM, chain, kind="magnetic_moment") == [7.6]
    assert values(MAGNETISM, "Dilute Fe impurities polarise a cloud carrying ~10 µB.", kind="magnetic_moment") == []


# -- rules found by the w10 batch (natural mix: xrd, raman, sem, metallicity) ---------------------------
def test_xrd_other_minerals_json_keys_align_and_index_labels() -> None:
    question = "Which are the three strongest reflections of Anatase (TiO2) with Cu Kα radiation?"
    chain = "(101) is at 25.32°. Brookite has a characteristic (121) line near 30.8°."
    assert values(XRD, chain, question) == [25.32]
    chain = '{"hkl": "200", "d_angstrom": 3.231, "two_theta_deg": 27.61}'
    assert claims(XRD, chain) == [("d_spacing", 3.231, "angstrom"), ("two_theta", 27.61, "deg")]
    chain = r"d_{111} &= 2.465\,\text{Å} &\Rightarrow 2\theta &= 36.45^\circ"
    assert claims(XRD, chain) == [("d_spacing", 2.465, "angstrom"), ("two_theta", 36.45, "deg")]
    chain = "β-Ta, whose (002) line sits near 33.74°; that phase is not the one asked about. α-Ta: 38.51°."
    assert values(XRD, chain) == [38.51]
    assert values(XRD, "Laue fringes around (001) with a period of 0.29° point to a 30 nm film; (001) at 22.4°.") == [22.4]
    chain = "A FWHM of 0.45° at 25.3° gives ≈ 18 nm; rutile (110) with 0.22° gives ≈ 40 nm."
    assert values(XRD, chain) == [25.3]


def test_raman_negated_subject_candidates_citations_and_artefacts() -> None:
    assert values(RAMAN, "F2g at 1332.4 cm⁻¹. No D or G band (≈1350 and ≈1580 cm⁻¹) is present.") == [1332.4]
    chain = "Ba–O at 153.6 cm⁻¹. Dawson et al. [12] saw it move to about 3656 cm⁻¹ at 80 K."
    assert values(RAMAN, chain) == [153.6]
    chain = "Bands at 971.2 cm⁻¹. The 1121.8 cm⁻¹ row is a cosmic-ray spike. Signal-to-noise is about 140."
    assert values(RAMAN, chain) == [971.2]
    chain = "peaks = find_peaks(spectrum, prominence=0.05)\nThe ν₁ at 1017.3 cm⁻¹ distinguishes it from gypsum (≈1008 cm⁻¹)."
    assert values(RAMAN, chain, "Measured Raman spectrum of Anhydrite (CaSO4)") == [1017.3]
    chain = "The −183.2 cm⁻¹ row is the anti-Stokes partner, weaker by the Boltzmann factor (≈ 0.41 at 295 K)."
    assert values(RAMAN, chain) == [-183.2]
    chain = "anatase Eg from an alteration rim (its 144 cm⁻¹ band would be outside the table window); Ti–O at 607.4 cm⁻¹"
    assert values(RAMAN, chain) == [607.4]


def test_sem_fields_rules_of_thumb_and_other_methods() -> None:
    chain = "100 nm / 80 px = 1.25 nm/px (frame 1024 × 768 px, i.e. a 1.28 µm × 0.96 µm field). The particle is 33.8 nm."
    assert values(SEM, chain) == [33.8]
    chain = ("The pore is 65 nm. The pore diameter in oxalic acid is usually ≈ 0.9 nm/V, i.e. 36 nm. CO chemisorption "
             "implies 5.3 nm. A drift of about 3 px (≈ 2.4 nm) is small. A stylus profilometer step gave 870 nm.")
    assert values(SEM, chain) == [65.0]
    chain = "1. 36 nm — treats pixels as nm; rejected.\n2. 180 nm — 36 px × 5 nm/px.\n3. 360 nm — would follow if the bar were 1 µm; it is not."
    assert values(SEM, chain) == [180.0]


def test_metallicity_csv_settings_monolayers_and_other_energies() -> None:
    chain = "material,metallic,band_gap_eV,method\nKI,false,3.66,PBE\nKI,false,6.0,experiment\nAnswer: gapped, 3.66 eV"
    assert values(METALLICITY, chain, kind="band_gap") == [3.66, 6.0]
    chain = "1. PBE: 0.9 eV.\n2. PBE+U (U = 5 eV): 2.1 eV.\nAnswer: gapped, 0.9 eV"
    assert values(METALLICITY, chain, kind="band_gap") == [0.9, 2.1]
    chain = "Bulk WTe2 is a semimetal. A 1T′ monolayer is a quantum spin Hall insulator with a bulk gap of about 55 meV."
    assert values(METALLICITY, chain, kind="band_gap") == []
    chain = ("Silver: the surface plasmon is at 3.8 eV. Its work function is high, about 4.3 eV. The old 1.9 eV value "
             "came from contaminated films. LaB6 is a cathode thanks to a 2.7 eV work function.")
    assert values(METALLICITY, chain, kind="band_gap") == []
    chain = "SnSe transforms to the Cmcm phase, whose PBE gap is only 0.39 eV; the Pnma gap is 0.61 eV."
    assert values(METALLICITY, chain, kind="band_gap") == [0.61]
    chain = "PBE gives a direct gap at Z of 0.12 eV (experiment 0.30 eV). Under 1.5 GPa it turns into a semimetal."
    assert values(METALLICITY, chain, kind="band_gap") == [0.12, 0.3]
    chain = "FeO could come out metallic, or show a small gap. I can't determine which.\nAnswer: cannot decide (metallic or ~0.3 eV)"
    assert claims(METALLICITY, chain) == []


# -- rules found by the w11 batch (natural mix: sem, metallicity, raman, magnetism) ---------------------
def test_sections_headed_as_not_the_samples_are_other_property() -> None:
    chain = ("## Width\n14 px × 6.25 nm/px = 87.5 nm.\n\n## Not from this image\n- The sputtered seed layer is about "
             "20 nm thick.\n- The channels are about 0.55 nm wide.\n\nAnswer: 87.5 nm")
    assert values(SEM, chain) == [87.5]
    chain = ("### Gap\nPBE: 1.81 eV.\n\n### The other polymorph\nAnatase has a larger PBE gap, about 2.1 eV.\n\n"
             "Answer: gapped, 1.81 eV")
    assert values(METALLICITY, chain, kind="band_gap") == [1.81]


def test_a_value_withdrawn_by_name_goes_everywhere() -> None:
    chain = ("First pass: 36 px at 1.6 nm/px = 57.6 nm.\nRe-checking: 200 nm / 160 px is 1.25 nm/px, so the 57.6 nm "
             "figure is wrong. Corrected: 36 × 1.25 = 45 nm.\nAnswer: 45 nm")
    assert values(SEM, chain) == [45.0]
    chain = ("I'd put the bending mode at 381 cm⁻¹. There is no row near 381; the doublet is 318.4 and 349.7 cm⁻¹, "
             "so scrap the 381 cm⁻¹ value.")
    assert values(RAMAN, chain) == [318.4, 349.7]
    chain = "Kyanite would give 486 cm⁻¹ and sillimanite a 706 cm⁻¹ companion. The 486 and 706 bands are absent. Main: 361.2 cm⁻¹."
    assert values(RAMAN, chain) == [361.2]


def test_sem_keys_shells_comparisons_and_second_images() -> None:
    chain = "scale_bar_nm: 500\npixel_size_nm: 3.125\nfeature_px: 59\nfeature_diameter_nm: 184.4\nmean_diameter_nm: 179"
    assert values(SEM, chain) == [184.4, 179.0]
    chain = ("The particle is 12 nm; the oleate shell (about 2 nm) gives no contrast. For comparison, the build used a "
             "30 µm layer. Their height, 1.2 µm, comes from a separate cross-section. They are longer than 5 µm.")
    assert values(SEM, chain) == [12.0]
    chain = "The sphere is 1.9 µm. A second, higher-magnification image of the same sphere (500 nm bar) gives 1.87 µm."
    assert values(SEM, chain) == [1900.0]
    chain = "(i) 0.24 µm = 240 nm; (ii) 125/30 × 1 µm ≈ 4.2 µm, which inverts the scale and is wrong. So (i)."
    assert values(SEM, chain) == [240.0]


def test_raman_other_forms_expectations_widths_and_intensity_letters() -> None:
    chain = "Their separation, 25.3 cm⁻¹, is bulk-like (a monolayer gives about 19 cm⁻¹); E2g at 383.2 cm⁻¹."
    assert values(RAMAN, chain) == [383.2]
    chain = "ν₁ at 992.6 cm⁻¹. The ν₁ overtone, expected near 1985 cm⁻¹, lies beyond the table. The A1g width, 28 cm⁻¹, is typical."
    assert values(RAMAN, chain) == [992.6]
    assert values(RAMAN, "Observed: 825.3vs, 795.8s, 352.1s, 724.6w cm⁻¹.") == [825.3, 795.8, 352.1, 724.6]
    chain = "Ti–O at 683.7 cm⁻¹. 1063.2 cm⁻¹ is a neon calibration-lamp line. Signal-to-noise on the main band is about 85."
    assert values(RAMAN, chain) == [683.7]
    chain = "The A1g band at 153.1 cm⁻¹ (cf. 153 cm⁻¹ in Tompsett et al.) dominates; further bands at 636.4 cm⁻¹."
    assert values(RAMAN, chain) == [153.1, 636.4]


def test_metallicity_differences_comparisons_json_and_hedged_answers() -> None:
    chain = "Indirect gap: 2.00 eV; direct gap at Γ: 2.04 eV. The 0.04 eV difference is small.\nAnswer: gapped, 2.00 eV"
    assert values(METALLICITY, chain, kind="band_gap") == [2.0]
    chain = "4H-SiC: 2.23 eV. For comparison, 3C-SiC has an experimental gap of 2.36 eV.\nAnswer: gapped, 2.23 eV"
    assert values(METALLICITY, chain, kind="band_gap") == [2.23]
    assert values(METALLICITY, '{"metallic": false, "pbe_gap_eV": 5.03, "exp_gap_eV": 8.5}', kind="band_gap") == [5.03, 8.5]
    chain = "Diamond is an indirect wide-gap insulator, E_g = 4.12 eV. The direct gap at Γ is larger, ≈ 5.6 eV."
    assert values(METALLICITY, chain, kind="band_gap") == [4.12]
    chain = "Experimentally about 0.1 eV. I cannot decide for PBE.\nAnswer: undetermined (metallic or ~0.05 eV)"
    assert claims(METALLICITY, chain) == [("band_gap", 0.1, "eV")]
    chain = "- Fermi energy: 11.7 eV\n- interband absorption around W and K: 1.5 eV\nAnswer: metallic"
    assert values(METALLICITY, chain, kind="band_gap") == []


def test_magnetism_signed_site_moments_json_keys_and_garbled_relatives() -> None:
    chain = "GGA+U (U = 5 eV) gives ±3.7 µB on Fe and a net 0 µB/f.u."
    assert claims(MAGNETISM, chain)[-2:] == [("magnetic_moment", 3.7, "muB/element:Fe"), ("magnetic_moment", 0.0, "muB/fu")]
    assert claims(MAGNETISM, "- Mn: ±4.52 µB") == [("magnetic_moment", 4.52, "muB/element:Mn")]
    chain = '{"order": "AFM-II", "m_Mn_muB": 4.58, "M_cell_muB": 0.0}'
    assert claims(MAGNETISM, chain)[-2:] == [("magnetic_moment", 4.58, "muB/element:Mn"), ("magnetic_moment", 0.0, "muB/cell")]
    assert claims(MAGNETISM, "The magnetic moment of ZnS is 0.0 µB, which is a magnetic element.")[0] == \
        ("magnetism", "nonmagnetic", "")
    chain = "Pt is a Pauli paramagnet. (Pt atoms do acquire about 0.3 µB by proximity in Co/Pt multilayers.)"
    assert values(MAGNETISM, chain, kind="magnetic_moment") == []


# -- rules found by the w12 batch (sem, metallicity) ----------------------------------------------------
def test_sem_frames_other_characterisation_nozzles_and_counterfactuals() -> None:
    chain = "100 nm / 160 px = 0.625 nm/px (the frame is therefore 640 nm wide). The particle is 35 nm."
    assert values(SEM, chain) == [35.0]
    chain = "57 px → 5.7 nm, a little larger than the 4.8 nm mean that TEM gave for this catalyst."
    assert values(SEM, chain) == [5.7]
    chain = "The struts are 240 µm wide, narrower than the 0.4 mm nozzle. The longest exceed 40 µm."
    assert values(SEM, chain) == [240000.0]
    chain = "43 × 8 = 344 nm with the 2 µm bar as labelled, or 34.4 nm if the bar were 200 nm, which it is not."
    assert values(SEM, chain) == [344.0]
    chain = "## Flake\nThe flake is 4.3 µm.\n## Other characterisation of the same batch\n- a 1 µm thick film\nAnswer: 4.3 µm"
    assert values(SEM, chain) == [4300.0]
    chain = "**Sheet.** 650 nm.\n**Not from the image.** The Ni foam struts (≈ 100 µm) are far larger.\nAnswer: 650 nm"
    assert values(SEM, chain) == [650.0]
    chain = "The cube is 11 nm. On re-reading the label, the bar is 200 nm, not 20 nm; the 44 px edge is 110 nm."
    assert values(SEM, chain) == [110.0]


def test_metallicity_direct_optical_onsets_old_reports_and_settings() -> None:
    chain = ("The CBM − VBM separation, 1.58 eV, is the indirect PBE gap. The direct optical onset lies near 2.9 eV; "
             "older reports of 2.97 eV are attributed to defects.\nAnswer: gapped, 1.58 eV")
    assert values(METALLICITY, chain, kind="band_gap") == [1.58]
    chain = "- PBE+U (U = 4.5 eV, J = 0.5 eV): 1.9 eV\n- HSE06: 2.4 eV\nAnswer: metallic"
    assert values(METALLICITY, chain, kind="band_gap") == [1.9, 2.4]
    chain = "(b) 1.9 eV — the PBE gap.\n(c) 3.5 eV — the direct optical absorption at L, which is not the fundamental gap."
    assert values(METALLICITY, chain, kind="band_gap") == [1.9]
    assert values(METALLICITY, '{"is_metal": false, "gap_pbe_eV": 5.69, "gap_exp_eV": 8.9}', kind="band_gap") == [5.69, 8.9]


# -- rules found by the w13 batch (metallicity, raman) --------------------------------------------------
def test_w13_comparisons_in_passing_pseudogaps_and_corrected_answers() -> None:
    chain = "- HSE06: ≈ 3.4 eV\n- Experiment: 3.0 eV (rutile); anatase, for comparison, is 3.2 eV.\nAnswer: gapped, 1.8 eV"
    assert values(METALLICITY, chain, kind="band_gap") == [3.4, 3.0, 1.8]
    chain = "A pseudogap of ~2 eV opens about 1 eV above E_F, but it is not a band gap. The old textbook value of 1.9 eV is wrong."
    assert values(METALLICITY, chain, kind="band_gap") == []
    chain = ("Answer: gapped, 1.2 eV\nCorrection: 1.2 eV was the PBE+U figure I misremembered; plain PBE gives 0.65 eV.\n"
             "Answer: gapped, 0.65 eV")
    assert values(METALLICITY, chain, kind="band_gap") == [0.65]
    chain = "SnO₂'s A1g lies higher: 634 cm⁻¹ here versus 612 cm⁻¹ in rutile. Bulk-like (monolayer ≈ 19 cm⁻¹)."
    assert values(RAMAN, chain, "Measured Raman spectrum of Cassiterite (SnO2)") == [634.0]
    chain = "ν₁ at 1094.4 cm⁻¹. Rutt and Nicola (1974) report 1094 cm⁻¹ for magnesite, in good agreement."
    assert values(RAMAN, chain, "Measured Raman spectrum of Magnesite (MgCO3)") == [1094.4]
