"""Reader rules found by the w14, w15 and w16 dev batches of the claim corpus (issue #12): pixel sizes written beside
pixel counts, process and reference sizes, two-column CSV blocks, local gaps of semimetals, values handed to another
phase, site moments paired "respectively" or named in words, other minerals introduced mid-sentence, laser-side and
infrared numbers beside bands, candidate fingerprints, denied values, and the speed of long lists. One test per rule,
each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

import time

from claim_reading import claims, reasons, values
from matpcr_plugins.claims.reader import MAX_REJECTED
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle

RAMAN, SEM = RamanOracle(), SEMOracle()
STABILITY, METALLICITY, MAGNETISM = StabilityOracle(), MetallicityOracle(), MagnetismOracle()

GARNET_Q = ("Measured Raman spectrum of Andradite (Ca3Fe2(SiO4)3), excited at 532 nm. Columns: Raman shift (cm⁻¹) and "
            "intensity:\n352.0 9100\n370.8 4000\n516.2 3100\n875.9 12000\nAt which Raman shifts are the main bands?")
MAGNET_Q = ("Material: CoPt, space group P4/mmm (123), 2 atoms in the computational cell.\nAccording to spin-polarised "
            "density-functional (PBE/GGA) calculations, is CoPt magnetic? If it is, give its total magnetic moment in µB "
            "per formula unit.")
GAP_Q = ("Material: {f}, space group Fm-3m (225), 2 atoms in the computational cell.\nAccording to density-functional "
         "(PBE/GGA) calculations, is {f} metallic (zero band gap) or does it have a band gap? If it has one, give its "
         "size in eV.")


# -- sem -------------------------------------------------------------------------------------------------
def test_the_size_beside_a_pixel_count_is_the_pixel_size() -> None:
    assert values(SEM, "The rod is 64 px × 12.5 nm = 800 nm long.") == [800.0]
    assert values(SEM, "Some 1.2 µm across (48 px at 25 nm each), the grain is the largest here.") == [1200.0]
    assert values(SEM, r"\SI{40}{px} \times \SI{7.5}{\nano\metre\per px} = \SI{300}{\nano\metre}") == [300.0]
    # a size that follows "px ×" without a pixel count is still a size ("the 3 × 40 nm grid")
    assert values(SEM, "Two pores, 40 nm and 55 nm across.") == [40.0, 55.0]


def test_process_conditions_and_reference_sizes_are_not_features() -> None:
    chain = ("The YSZ layer is 180 µm thick. It was sprayed at a 120 mm spray distance onto a 2 mm nominal substrate; "
             "the design thickness was 200 µm and the roughness Ra ≈ 5 µm by profilometry.")
    assert values(SEM, chain) == [180000.0]
    chain = "- synthesis target: 90 nm\n- measured: 97 nm"
    assert values(SEM, chain) == [97.0]
    chain = "The parent crystals measured 410 nm on an earlier micrograph; after pyrolysis the cube is 330 nm."
    assert values(SEM, chain) == [330.0]


def test_a_section_marked_as_context_holds_no_sizes() -> None:
    chain = "## Measurement\nThe tube bundle is 42 µm tall.\n\n## Growth (for context)\nFe (2 nm) on Al2O3 (15 nm), 3 µm/min.\n"
    assert values(SEM, chain) == [42000.0]


def test_a_unit_exponent_does_not_cross_a_line() -> None:
    chain = "1. the large dimple is 9.5 µm\n2. the small ones are 2 µm"
    assert values(SEM, chain) == [9500.0, 2000.0]
    assert "4.5 µm2" in reasons(SEM, "The area is 4.5 µm2, the width 2.1 µm.")


def test_features_between_features_are_sizes() -> None:
    assert values(SEM, "Fine dimples of about 0.8 µm between them.") == [800.0]


# -- metallicity -----------------------------------------------------------------------------------------
def test_a_two_column_csv_block_gives_its_cells_the_header() -> None:
    chain = "method,gap_eV\nPBE,0.00\nHSE06,0.31\nexp,0.29\n\nAnswer: metallic"
    assert sorted(values(METALLICITY, chain, GAP_Q.format(f="HgTe"), kind="band_gap")) == [0.0, 0.29, 0.31]
    # a prose line with one comma is not a CSV header
    assert values(METALLICITY, "Gap, roughly\n0.8 eV, direct.\nAnswer: gapped", GAP_Q.format(f="GaSb"),
                  kind="band_gap") == [0.8]


def test_gaps_at_the_crossings_of_a_semimetal_are_local() -> None:
    chain = ("PtSn4 is a Dirac nodal-arc semimetal. Spin-orbit coupling opens small gaps, about 15 meV, at the Dirac "
             "points, but there is no global gap.\nAnswer: metallic")
    assert values(METALLICITY, chain, GAP_Q.format(f="PtSn4"), kind="band_gap") == []


def test_a_value_handed_to_another_phase_after_an_apology_is_withdrawn() -> None:
    chain = ("The cubic phase has a PBE gap of 1.3 eV. Sorry — 1.3 eV is what the tetragonal phase gives; the cubic "
             "cell comes out at 0.9 eV.\nAnswer: gapped, 0.9 eV")
    assert values(METALLICITY, chain, GAP_Q.format(f="CsPbI3"), kind="band_gap") == [0.9]


# -- magnetism -------------------------------------------------------------------------------------------
def test_moments_paired_respectively_go_to_their_elements() -> None:
    chain = "Co and Pt carry 1.8 and 0.38 µB respectively, 2.2 µB per formula unit.\nAnswer: magnetic, 2.2 µB/f.u."
    assert set(claims(MAGNETISM, chain, MAGNET_Q)) >= {("magnetic_moment", 1.8, "muB/element:Co"),
                                                      ("magnetic_moment", 0.38, "muB/element:Pt")}


def test_site_moments_in_notation_words_tables_and_asides() -> None:
    assert ("magnetic_moment", 1.8, "muB/element:Co") in claims(MAGNETISM, "m(Co) ≈ 1.8 µB, m(Pt) ≈ 0.38 µB.", MAGNET_Q)
    assert ("magnetic_moment", 0.38, "muB/element:Pt") in claims(MAGNETISM, "m(Co) ≈ 1.8 µB, m(Pt) ≈ 0.38 µB.", MAGNET_Q)
    assert ("magnetic_moment", 0.38, "muB/element:Pt") in claims(MAGNETISM, "platinum is weakly polarised (0.38 µB).",
                                                                 MAGNET_Q)
    assert ("magnetic_moment", 1.7, "muB/element:Co") in claims(
        MAGNETISM, "Each Co carries about 1.8 µB (neutron data; GGA gives 1.7 µB).", MAGNET_Q)
    table = "| atom | m (µB), PBE |\n|---|---|\n| Co | 1.81 |\n| Pt | 0.37 |\n"
    assert {("magnetic_moment", 1.81, "muB/element:Co"), ("magnetic_moment", 0.37, "muB/element:Pt")} \
        <= set(claims(MAGNETISM, table, MAGNET_Q))
    # "muffin-tin" is not tin, and "Mn(II)" is a site, not a formula with iodine
    assert ("magnetic_moment", 1.6, "muB/element:Co") in claims(MAGNETISM, "Each Co muffin-tin sphere holds 1.6 µB.",
                                                                MAGNET_Q)


def test_spin_and_orbital_parts_and_higher_states_are_not_the_moment() -> None:
    chain = ("GGA+SOC gives 2.0 µB on each Co (1.8 µB spin, 0.2 µB orbital). A ferromagnetic start relaxes to about "
             "3.1 µB/f.u., which lies well above the ground state.\nAnswer: magnetic")
    got = set(claims(MAGNETISM, chain, MAGNET_Q))
    assert ("magnetic_moment", 2.0, "muB/element:Co") in got
    assert not {v for k, v, _ in got if k == "magnetic_moment"} & {1.8, 0.2, 3.1}


def test_a_landé_product_is_not_an_exchange_setting() -> None:
    chain = "Each Co carries close to gJ·J = 3 µB in this picture."
    assert ("magnetic_moment", 3.0, "muB/element:Co") in claims(MAGNETISM, chain, MAGNET_Q)


# -- raman -----------------------------------------------------------------------------------------------
def test_other_minerals_named_mid_sentence_are_not_the_sample() -> None:
    chain = ("The strongest band, 875.9 cm⁻¹, is the Si–O stretch; in grossular this mode is shifted down to about "
             "879 cm⁻¹... almandine (Fe²⁺) has it at ~916 cm⁻¹, spessartine around 905 cm⁻¹.")
    assert values(RAMAN, chain, GARNET_Q) == [875.9]
    chain = "Uvarovite, for comparison, shows its main band near 880 cm⁻¹. Here it is 875.9 cm⁻¹."
    assert values(RAMAN, chain, GARNET_Q) == [875.9]
    chain = "In hydrous CuSO4 (chalcanthite) the same mode sits higher, around 984 cm⁻¹; here it is at 875.9 cm⁻¹."
    assert values(RAMAN, chain, GARNET_Q) == [875.9]


def test_an_author_year_citation_marks_a_literature_value() -> None:
    chain = "Published spectra (Hofmeister & Chopelas, 1991) put the strongest band at 874 cm⁻¹; ours is 875.9 cm⁻¹."
    assert values(RAMAN, chain, GARNET_Q) == [875.9]


def test_a_number_in_a_compound_word_takes_no_unit() -> None:
    chain = "The band tracks the ring size: 4-rings give 470–520 cm⁻¹, 6-rings 300–400 cm⁻¹. Answer: 516.2 cm⁻¹"
    assert values(RAMAN, chain, GARNET_Q) == [516.2]


# -- long lists ------------------------------------------------------------------------------------------
def _growth(oracle: object, chain, small: int, large: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    def best(text: str) -> float:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            oracle.read(text)  # type: ignore[attr-defined]
            times.append(time.perf_counter() - t0)
        return min(times)

    return best(chain(small)), best(chain(large))


def test_a_long_hull_list_is_read_in_linear_time() -> None:
    """Behaviour, not a timing target: the reader must not rescan a list from its head for every member. Reading
    8× the list may take at most ~30× as long (quadratic growth would be ~64×)."""
    def chain(n: int) -> str:
        return "E_hull = " + ", ".join(f"{i % 97 + 0.5} meV/atom" for i in range(n))

    small, large = _growth(STABILITY, chain, 500, 4000)
    assert large < 30 * small + 0.05


def test_one_line_chains_of_many_runs_are_read_in_linear_time() -> None:
    """Behaviour, not a timing target: a one-line chain (one "sentence") of many separate numbers must not make any
    per-number or per-list lookup scan the whole sentence. 8× the text may take at most ~30× as long."""
    def keyed(n: int) -> str:
        return "".join(f'{{"stable": {"true" if i % 2 else "false"}, "e_above_hull": 0.0{i % 9}}}, ' for i in range(n))

    def runs(n: int) -> str:
        return "".join(f"some energy {i % 97} meV/atom and a direct transition {i % 13}.{i % 7} eV, " for i in range(n))

    def moments(n: int) -> str:
        return "".join(f"Fe and Co carry {i % 5}.{i % 9}, {i % 3}.5 µB; " for i in range(n))

    for oracle, chain in ((STABILITY, keyed), (STABILITY, runs), (METALLICITY, runs), (MAGNETISM, moments)):
        small, large = _growth(oracle, chain, 150, 1200)
        assert large < 30 * small + 0.05, (chain.__name__, small, large)


def test_unlisted_rejections_are_counted_not_judged() -> None:
    chain = " ".join(f"{i}.5" for i in range(3 * MAX_REJECTED))  # bare numbers, none a claim
    extraction = RAMAN.read(chain)
    assert not extraction.claims
    assert len(extraction.rejected) == MAX_REJECTED
    assert f"{2 * MAX_REJECTED} further rejected numbers not listed" in extraction.notes


# -- w15 -------------------------------------------------------------------------------------------------
def test_laser_side_numbers_are_not_bands() -> None:
    chain = ("- edge filter cut-on: ~70 cm⁻¹\n- Rayleigh line (0 cm⁻¹) blocked\n- at room temperature kT ≈ 207 cm⁻¹\n"
             "- the 875.9 cm⁻¹ band is scattered at 11858 cm⁻¹\nAnswer: 875.9 cm⁻¹")
    assert values(RAMAN, chain, GARNET_Q) == [875.9]


def test_infrared_bulk_and_certified_values_are_not_the_spectrum() -> None:
    chain = ("An FTIR spectrum of the same grain shows its strongest absorption at 963 cm⁻¹. In bulk andradite it "
             "stiffens to about 880 cm⁻¹; the ASTM value of 801.3 cm⁻¹ was used for calibration. The Raman band is at "
             "875.9 cm⁻¹.")
    assert values(RAMAN, chain, GARNET_Q) == [875.9]
    chain = "TO at 796 cm⁻¹ and LO at 972 cm⁻¹ in unstrained bulk; here the strongest row is 875.9 cm⁻¹."
    assert 972.0 not in values(RAMAN, chain, GARNET_Q)


def test_bands_introduced_by_a_verb_with_by_are_bands() -> None:
    chain = "The Si–O stretch at 875.9 cm⁻¹ is accompanied by 516.2 cm⁻¹, and the bend is represented by 352.0 cm⁻¹."
    assert values(RAMAN, chain, GARNET_Q) == [875.9, 516.2, 352.0]


def test_a_candidates_expected_bands_are_not_the_samples() -> None:
    chain = ("**Candidate 1 — grossular.** Expected strongest band ≈ 879 cm⁻¹, plus 548 and 371 cm⁻¹. No row near 879.\n"
             "Answer: 875.9 cm⁻¹, 352.0 cm⁻¹")
    assert values(RAMAN, chain, GARNET_Q) == [875.9, 352.0]


def test_counterfactual_and_expected_sizes_are_not_sizes() -> None:
    chain = "The cube is 3.55 µm across. Had the bar been misread as 2 µm, it would give only 1.42 µm."
    assert values(SEM, chain) == [3550.0]
    chain = "The whisker is 3.2 µm long. At a higher current one would expect thinner whiskers, of order 200 nm."
    assert values(SEM, chain) == [3200.0]


def test_sizes_of_other_techniques_set_off_by_a_comma_are_not_sizes() -> None:
    chain = ("By SEM the mesocrystal is 568 nm across. That is far above the Scherrer size from the (101) reflection, "
             "21 nm, and the BET-equivalent diameter, 46 nm; an eddy-current gauge read 15.1 µm for the coat, which was "
             "polished down to 0.05 µm colloidal silica.")
    assert values(SEM, chain) == [568.0]
    chain = "- coat: 25 µm — from the cross-section, not from this image\n- grain: 640 nm"
    assert values(SEM, chain) == [640.0]
    chain = "The Ag templates were 60 nm on an edge, measured on an earlier micrograph; the cages are 71 nm."
    assert values(SEM, chain) == [71.0]


def test_a_value_the_chain_denies_is_dropped() -> None:
    chain = "I considered multiplying by √2 (→ 20.9 µm), but the length is not 20.9 µm: it is 14.8 µm."
    assert values(SEM, chain) == [14800.0]


def test_gap_lookalikes_named_after_the_number() -> None:
    q = GAP_Q.format(f="GeSe")
    chain = ("- 1.10 eV — PBE, indirect\n- 1.21 eV — PBE, lowest direct transition\n- 0.9 eV — SnS in the same "
             "structure\n- Nd:YAG lases at 1064 nm (1.17 eV photons)\n- the PBE gap is some 0.5 eV short of the "
             "1.6 eV measured\nAnswer: gapped, 1.10 eV")
    assert sorted(values(METALLICITY, chain, q, kind="band_gap")) == [1.1, 1.6]


def test_more_gap_lookalikes() -> None:
    q = GAP_Q.format(f="Bi2Se3")
    chain = ("Slab calculations give a Dirac-point gap of ~60 meV. If the strained cell is used instead, PBE opens "
             "~20 meV. The lattice constant of Bi2Se3 is 4.14 eV. A second gap of ~0.6 eV separates this split-off "
             "band from the main conduction band.\nAnswer: gapped, 0.3 eV")
    assert values(METALLICITY, chain, q, kind="band_gap") == [0.3]
    assert values(METALLICITY, '{"Eg_expt_eV": 7.9, "metallic": false}', GAP_Q.format(f="LiCl"),
                  kind="band_gap") == [7.9]


def test_site_moments_after_words_and_sentences() -> None:
    chain = "It orders below T_N ≈ 480 K: the two Mn, 3.9 µB each, point opposite ways."
    assert ("magnetic_moment", 3.9, "muB/element:Mn") in claims(MAGNETISM, chain, MAGNET_Q)
    chain = "Y is polarised antiparallel (−0.3 µB), while Al is slightly antiparallel at −0.05 µB."
    got = set(claims(MAGNETISM, chain, MAGNET_Q))
    assert {("magnetic_moment", -0.3, "muB/element:Y"), ("magnetic_moment", -0.05, "muB/element:Al")} <= got
    assert ("magnetic_moment", 4.6, "muB/element:Mn") in claims(MAGNETISM, "Answer: magnetic, 5 µB/f.u. (4.6 µB of it on Mn²⁺)",
                                                                MAGNET_Q)
    chain = "Co²⁺ sits on the A site and Cr³⁺ on the B sites. Both carry 3 µB."
    assert {("magnetic_moment", 3.0, "muB/element:Co"), ("magnetic_moment", 3.0, "muB/element:Cr")} \
        <= set(claims(MAGNETISM, chain, MAGNET_Q))
    assert 0.15 not in values(MAGNETISM, "- GGA+U: 4.55 µB on Mn, 0.15 µB interstitial", MAGNET_Q)


def test_hull_keys_and_inversion_energies() -> None:
    assert claims(STABILITY, '{"formula": "Co3O4", "e_above_hull_meV_atom": 0}') == [("e_above_hull", 0.0, "eV/atom")]
    chain = "Na3Bi is on the hull; it owes its fame to a band inversion of about 0.3 eV at Γ.\nAnswer: stable"
    assert values(STABILITY, chain, kind="e_above_hull") == []


# -- w16 -------------------------------------------------------------------------------------------------
def test_pixel_arithmetic_and_preparation_layers_are_not_features() -> None:
    assert values(SEM, "Pixel = 400/160 = 2.5 nm; crystal = 96 × 2.5 = 240 nm.") == [240.0]
    chain = ("- Si3N4 starting powder, d50 = 0.8 µm\n- the flake rests on 90 nm of thermal oxide; the native oxide (~2 nm) "
             "is invisible\n- glass (2.2 mm soda-lime, nominal)\n- lateral size: 2.4 µm (with a 20 nm pixel size)\n"
             "- the opal was made from 350 nm polystyrene spheres (supplier value)")
    assert values(SEM, chain) == [2400.0]


def test_gaps_reached_by_a_change_and_method_keys() -> None:
    q = GAP_Q.format(f="PbBr2")
    chain = ("PBE puts its gap at 3.1 eV; spin–orbit coupling lowers it by roughly 0.7 eV to 2.4 eV. With SOC the gap "
             "falls to 2.4 eV. Those gaps need U ≈ 6 eV in other cells.\nAnswer: gapped, 3.1 eV")
    assert sorted(values(METALLICITY, chain, q, kind="band_gap")) == [2.4, 3.1]
    chain = '{"band_gap_PBE+U_eV": 2.9, "band_gap_exp_eV": 3.2, "metallic": false}'
    assert sorted(values(METALLICITY, chain, q, kind="band_gap")) == [2.9, 3.2]


def test_more_site_moment_forms() -> None:
    chain = "Mn⁴⁺ (d³) sites alternate between +2.6 and −2.6 µB in PBE+U, and the cell cancels exactly."
    assert {("magnetic_moment", 2.6, "muB/element:Mn"), ("magnetic_moment", -2.6, "muB/element:Mn")} \
        <= set(claims(MAGNETISM, chain, MAGNET_Q))
    assert ("magnetic_moment", 1.8, "muB/element:Co") in claims(
        MAGNETISM, "A moment of about 1.8 µB is carried by each Co.", MAGNET_Q)


def test_moments_that_are_not_the_materials() -> None:
    chain = ("- Co: 1.85 µB (of which 0.1 µB from 3d orbital motion)\n"
             "A spin-polarised run started with 3 µB per Co relaxes to 1.8 µB per Co, much smaller than in other "
             "cobaltates (≈ 2.7 µB per Co in LaCoO3). The ferromagnetic state is 40 meV/Co higher with 2.2 µB per Co.")
    got = values(MAGNETISM, chain, MAGNET_Q, kind="magnetic_moment")
    assert 1.85 in got and 1.8 in got
    assert not {0.1, 3.0, 2.7, 2.2} & set(got)


def test_a_sum_the_chain_says_it_mis_added_is_retracted() -> None:
    chain = ("Adding these gives 2.40 µB per formula unit. That does not match the table — I mis-added: the sum is "
             "2.20 µB per formula unit.\nAnswer: magnetic, 2.20 µB/f.u.")
    assert values(MAGNETISM, chain, MAGNET_Q, kind="magnetic_moment") == [2.2]


def test_site_moments_in_tables_and_yaml_blocks() -> None:
    table = ("| site | ionic (µB) | GGA+U (µB) |\n|---|---|---|\n| Co (A) | +3 | +1.62 |\n| Pt (B) | 0 | ±0.31 |\n")
    got = set(claims(MAGNETISM, table, MAGNET_Q))
    assert {("magnetic_moment", 1.62, "muB/element:Co"), ("magnetic_moment", 0.31, "muB/element:Pt")} <= got
    yaml = "```yaml\nmoments_muB:\n  Co: [1.81, 1.79]\n  Pt: 0.37\ntotal_muB_per_cell: 4.3\n```"
    got = set(claims(MAGNETISM, yaml, MAGNET_Q))
    assert {("magnetic_moment", 1.81, "muB/element:Co"), ("magnetic_moment", 0.37, "muB/element:Pt"),
            ("magnetic_moment", 4.3, "muB/cell")} <= got
    chain = "- Co: ±1.80 µB; Pt: ±0.35 µB; net 0.00 µB per cell"
    assert ("magnetic_moment", 0.35, "muB/element:Pt") in claims(MAGNETISM, chain, MAGNET_Q)


def test_site_moments_named_by_pronoun_label_or_compensation() -> None:
    chain = ("Each Co carries about 1.8 µB, partly compensated by −0.1 µB on Pt. Low-spin Co³⁺ is nearly non-magnetic, "
             "and GGA gives only 0.02 µB on it.")
    got = set(claims(MAGNETISM, chain, MAGNET_Q))
    assert {("magnetic_moment", -0.1, "muB/element:Pt"), ("magnetic_moment", 0.02, "muB/element:Co")} <= got
    chain = "The magnetic moments of CoPt are:\n1. Co: 1.8 µB\n2. Pt: 0.4 µB\n3. CoPt: 2.2 µB"
    assert ("magnetic_moment", 2.2, "muB/fu") in claims(MAGNETISM, chain, MAGNET_Q)


# -- w17 -------------------------------------------------------------------------------------------------
def test_a_threshold_criterion_is_not_a_verdict() -> None:
    chain = ("To decide, compare the hull distance with the threshold. If the energy is less than 0.05 eV/atom it is "
             "stable, and if it is more than 0.05 eV/atom it is unstable. The energy of Mo2C is")
    assert values(STABILITY, chain, kind="stability") == []


def test_a_named_column_and_latex_subscripts() -> None:
    table = "| quantity | LaPO4 (monazite) |\n|---|---|\n| E_hull (eV/atom) | 0.000 |\n| PBE gap (eV) | 5.6 |\n"
    assert values(STABILITY, table, kind="e_above_hull") == [0.0]
    q = ("Material: BaTiS3, space group P6_3/mmc (194), 10 atoms in the computational cell.\nAccording to "
         "density-functional (PBE/GGA) calculations, is BaTiS3 thermodynamically stable?")
    chain = r"Hexagonal BaTiS\textsubscript{3} is \SI{0.018}{\electronvolt\per\atom} above the hull in PBE."
    assert values(STABILITY, chain, q, kind="e_above_hull") == [0.018]


def test_more_raman_reference_forms() -> None:
    chain = ("- G band: 1598 cm⁻¹, above the 1582 cm⁻¹ of pristine graphite\n- ring bending 875.9 cm⁻¹ (grossular "
             "analogue of 879 cm⁻¹)\n- Hexagonal h-WO3 has its main band near 690 cm⁻¹; not seen.\n"
             "The O–H stretch at 3560, the lattice mode at 193.")
    got = values(RAMAN, chain, GARNET_Q)
    assert {1598.0, 875.9, 3560.0} <= set(got)
    assert not {1582.0, 879.0, 690.0} & set(got)
    assert values(RAMAN, "```python\nprint(bands[:3])\n```\nAnswer: 875.9 cm⁻¹", GARNET_Q) == [875.9]


def test_w17_site_moment_forms() -> None:
    got = set(claims(MAGNETISM, "GGA+U gives −7.3 µB on Gd against 1.55 µB on each of the five Co.", MAGNET_Q))
    assert ("magnetic_moment", 1.55, "muB/element:Co") in got
    got = set(claims(MAGNETISM, "The two Co in the cell hold 1.8 µB apiece with opposite signs, sulfur ±0.03 µB.", MAGNET_Q))
    assert {("magnetic_moment", 1.8, "muB/element:Co"), ("magnetic_moment", 0.03, "muB/element:S")} <= got
    got = set(claims(MAGNETISM, "The moment sits on Co (1.80 µB) with Pt adding 0.40 µB.\n- O: small, ±0.05 µB", MAGNET_Q))
    assert {("magnetic_moment", 0.4, "muB/element:Pt"), ("magnetic_moment", 0.05, "muB/element:O")} <= got
    assert ("magnetic_moment", 3.0, "muB/element:Cr") in claims(MAGNETISM, "Cr³⁺ is d³ (3 µB).", MAGNET_Q)
    assert ("magnetic_moment", 3.0, "muB/fu") in claims(MAGNETISM, "Answer: magnetic, 3", MAGNET_Q)


def test_w17_moments_that_are_not_the_answer() -> None:
    chain = ("- Co: 1.62 µB spin + 0.20 µB orbital, total ≈ 1.8 µB per Co\nA run started at 3 µB per Co converges. "
             "Without SOC the calculation gives 1.4 µB per Co, which is not the physical answer. A state with 0.1 µB "
             "per Pt appears only if the lattice is expanded. Some studies find 2.1 µB per Co, others 1.7 µB per Co.\n"
             "$M = 2(1.94) - 0.42$")
    got = values(MAGNETISM, chain, MAGNET_Q, kind="magnetic_moment")
    assert got == [1.8]


# -- w18 -------------------------------------------------------------------------------------------------
def test_w18_sem_process_rates_and_references() -> None:
    chain = ("- laser power 200 W, scan speed 800 mm/s, hatch spacing 100 µm, layer thickness 30 µm\n"
             "- grain size from EBSD ≈ 25 µm\n- growth rate about 3.1 µm/h\n- PL peak at 810 nm\n"
             "- layer thickness from a cleaved cross-section: 8.2 µm\n- cells: 0.6 µm")
    assert values(SEM, chain) == [600.0]
    chain = ("At 0.2 µm per pixel, 118 px corresponds to a chromium thickness of 23.6 µm, well under the 75 µm called for on "
             "the drawing; its crystallites "
             "are 25 nm × 60 nm in cross-section (TEM), and a laser-diffraction d50 (1.6 µm) overestimates them.")
    assert values(SEM, chain) == [23600.0]
    chain = "With 0.05 µm (50 nm) per pixel, the rod is 96 px × 0.05 µm = 4.8 µm."
    assert values(SEM, chain) == [4800.0]
    chain = "Taking the bar as 5 µm is wrong: the label reads 500 nm, not 5 µm, so the spindle is 388 nm."
    assert 5000.0 not in values(SEM, chain)


def test_w18_gap_lookalikes() -> None:
    q = GAP_Q.format(f="BaHfO3")
    chain = ("BaZrO3 and BaHfO3 are both cubic perovskites. PBE gives 3.1 eV for the former and 3.9 eV for the latter. "
             "The Ce³⁺ emission at 380 nm (3.26 eV) lies inside the gap; the Rashba parameter is α_R ≈ 3.8 eV·Å.\n"
             "Answer: gapped, 3.9 eV")
    assert values(METALLICITY, chain, q, kind="band_gap") == [3.9]
    chain = "An early paper reported a gap of about 0.2 eV, but PBE does not reproduce it.\nAnswer: metallic"
    assert values(METALLICITY, chain, GAP_Q.format(f="NiTe2"), kind="band_gap") == []
    table = "| method | gap (eV) |\n|---|---|\n| PBE | 0.00 (inverted) |\n| HSE06 | 0.31 |\n"
    assert sorted(values(METALLICITY, table, GAP_Q.format(f="HgSe"), kind="band_gap")) == [0.0, 0.31]


def test_w18_the_phases_of_the_hull_are_not_another_material() -> None:
    q = ("Material: CO, space group P2_13 (198), 8 atoms in the computational cell.\nAccording to density-functional "
         "(PBE/GGA) calculations, is CO thermodynamically stable?")
    chain = "Even in PBE the cell lies above the C–CO2 tie line, by about 0.45 eV/atom.\nAnswer: unstable"
    assert values(STABILITY, chain, q, kind="e_above_hull") == [0.45]


# -- w19 -------------------------------------------------------------------------------------------------
def test_w19_raman_subjects_before_the_clause() -> None:
    chain = ("Montebrasite, the OH end-member, shows an O–H stretch near 3380 cm⁻¹. Annabergite's ν₁ sits a little "
             "higher, near 880 cm⁻¹. 3C-SiC has a single TO at 796 cm⁻¹; in the IR the Si–O band is at 940 cm⁻¹. "
             "Here the strongest band is 875.9 cm⁻¹.")
    assert values(RAMAN, chain, GARNET_Q) == [875.9]


def test_w19_site_moment_tables_and_blocks() -> None:
    yaml = "```yaml\nsites_muB:\n  Co: 1.71\n  Pt: 0.36\n```"
    assert {("magnetic_moment", 1.71, "muB/element:Co"), ("magnetic_moment", 0.36, "muB/element:Pt")} \
        <= set(claims(MAGNETISM, yaml, MAGNET_Q))
    table = "| site | m (µB) |\n|---|---|\n| Co | +1.80 |\n| Pt | ±0.03 |\n| m(In) | −0.04 µB |\n"
    got = set(claims(MAGNETISM, table, MAGNET_Q))
    assert {("magnetic_moment", 0.03, "muB/element:Pt"), ("magnetic_moment", -0.04, "muB/element:In")} <= got
    chain = ("Co²⁺ (d⁷), which is 3 µB in the ionic limit. - Co: 1.8 µB each (neutron: 1.65 µB). Both Pt end at 0.00 µB. "
             "The magnetisation converges from a 1 µB/atom starting guess.")
    got = set(claims(MAGNETISM, chain, MAGNET_Q))
    assert {("magnetic_moment", 3.0, "muB/element:Co"), ("magnetic_moment", 1.65, "muB/element:Co"),
            ("magnetic_moment", 0.0, "muB/element:Pt")} <= got
    assert ("magnetic_moment", 1.0, "muB/atom") not in got


def test_w19_moments_that_are_options_or_not_reproduced() -> None:
    chain = ("- low spin (t2g6): 0 µB per Co\n- high spin: 4 µB per Co\nOnly with GGA+U does an antiparallel solution "
             "appear, with about ±1.2 µB per Co. The 4.4 µB/f.u. quoted in an early LSDA paper is not reproduced; "
             "GGA gives 1.8 µB per Co.")
    assert values(MAGNETISM, chain, MAGNET_Q, kind="magnetic_moment") == [1.8]
