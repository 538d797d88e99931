"""Magnetism reader rules found by the pass over the w38 and w39 dev batches of the claim corpus: a per-formula-unit
basis written as an inverse power ("µB f.u.⁻¹") or cut off at the end of a chain; site letters subscripted to an element
("Co_B"), Wyckoff letters inside "m(Fe, 6g)", numbered sites in brackets ("(Fe1)"), hyphenated site letters ("the
A-site Mn"), an element that "sits" at a value, CSV rows labelled by a symbol that is also a word ("B,8h,…"); JSON/YAML
keys naming their basis ("total_cell_muB"), site records naming their element ("{element: Mn, m: 3.87}"), unitless
table columns headed "m(Co)", unitless site values in brackets after a moment, the OSZICAR "mag=" field; a LaTeX row
or a sentence/bullet opened by its basis ("Total / f.u. &", "Per formula unit: …"), a Slater–Pauling "M = … = x µB"
read per formula unit, "per magnetic ion" and "on the octahedral ions" with one magnetic element, "the former/the
latter" of a named pair, "X … per atom" said of an element; and values that are not the asked moment: another phase or
composition ("but that is a different phase"), an added 4f moment, a molar mass "M = … g/mol", a moment per volume
(µB/Å³), the Bohr magneton written in SI, a sum over atomic spheres, an interstitial share, what an alternative "would
leave", a share "is spread over" ligands, an elliptical second sublattice sum, a total per a cell of another size than
the posed one. One test per rule, each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

from test_claims_w33 import moments


def test_a_formula_unit_basis_written_as_an_inverse_power() -> None:
    assert moments("PBE: 2.96 μ_B f.u.⁻¹ in total.", "CoFeCrGa") == {(2.96, "muB/fu")}
    assert moments("M = 5.1 µB·f.u.⁻¹ from the spin-polarised run.", "Co2MnGe") == {(5.1, "muB/fu")}


def test_a_site_letter_subscripted_to_an_element_is_not_an_element() -> None:
    chain = "GGA+U: m(Fe_A) = −4.05 µB and m(Fe_B) = +4.12 µB, so the net is 0.07 µB per cell."
    assert moments(chain, "Fe3O4") == {(-4.05, "muB/element:Fe"), (4.12, "muB/element:Fe"), (0.07, "muB/cell")}


def test_a_wyckoff_label_beside_the_element_of_a_site_moment() -> None:
    chain = "GGA: m(Co, 2a) ≈ 1.41 µB, m(Co, 4f) ≈ 1.18 µB; the cell total is 7.6 µB."
    assert moments(chain, "Co3Sn2S2") == {(1.41, "muB/element:Co"), (1.18, "muB/element:Co"), (7.6, "muB/cell")}


def test_a_key_naming_its_basis_around_the_unit() -> None:
    chain = ('{"ordering": "FM", "total_moment_cell_muB": 8.0, "per_fu_muB": 4.0}\n'
             "summary:\n  net_spin_muB_per_cell: 7.9\n")
    assert moments(chain, "MnSi") == {(8.0, "muB/cell"), (4.0, "muB/fu"), (7.9, "muB/cell")}


def test_a_site_record_naming_its_element() -> None:
    chain = "moments:\n  - {element: Ni, m: 0.62}\n  - {element: O, m: 0.05}\ntotal: 1.34 µB per cell"
    assert moments(chain, "LiNiO2") == {(0.62, "muB/element:Ni"), (0.05, "muB/element:O"), (1.34, "muB/cell")}
    chain = "sites:\n  Co: {spin: 1.62, orbital: 0.14}\n  Pt: {spin: 0.35, orbital: 0.05}"
    assert moments(chain, "CoPt") == {(1.62, "muB/element:Co"), (0.35, "muB/element:Pt")}
    chain = '{"magmom_site_muB": {"Cr": 2.91, "Te": -0.11}, "ordering": "FM"}'
    assert moments(chain, "CrTe") == {(2.91, "muB/element:Cr"), (-0.11, "muB/element:Te")}


def test_a_value_the_sentence_assigns_to_a_different_phase_or_composition() -> None:
    chain = ("GGA gives 2.2 µB per formula unit. The hexagonal variant would hold about 3 µB/f.u., but that is a "
             "different polymorph.")
    assert moments(chain, "MnBi") == {(2.2, "muB/fu")}
    chain = "The 16-atom cell with one Li vacancy ends at 1.0 µB, but this is a different, off-stoichiometric composition."
    assert moments(chain, "LiCoO2") == set()


def test_an_added_shell_moment_is_a_part_not_the_site_moment() -> None:
    chain = ("Open-core GGA gives 0.31 µB on Gd and 0.52 µB per formula unit. Adding the localised 4f "
             "moment (gJ·J = 7 µB per Gd) in parallel, the physical total comes to about 7.5 µB per formula unit.")
    assert moments(chain, "GdN") == {(0.31, "muB/element:Gd"), (0.52, "muB/fu"), (7.5, "muB/fu")}


def test_a_molar_mass_labelled_m_is_not_a_moment() -> None:
    chain = "With M = 231.5 g/mol, the 52 emu/g measured at 2 K is 2.16 µB per formula unit."
    assert moments(chain, "MnFe2O4") == {(2.16, "muB/fu")}


def test_a_moment_per_volume_is_not_a_moment() -> None:
    chain = "- total magnetisation: 12.0 µB/cell\n- magnetisation density: 0.081 µB/Å³"
    assert moments(chain, "Fe3Sn") == {(12.0, "muB/cell")}


def test_the_bohr_magneton_written_out_in_si_is_not_a_moment() -> None:
    chain = "Using 1 µB = 9.274e-24 J/T, the measured 0.21 A·m²/kg corresponds to 1.9 µB per formula unit."
    assert moments(chain, "NiFe2O4") == {(1.9, "muB/fu")}


def test_a_basis_cut_off_at_the_end_of_the_chain() -> None:
    chain = "CoFe is magnetic. Its net magnetic moment is 4.4 µB per formula unit. Its net magnetic moment is 4.4 µB per formu"
    assert moments(chain, "CoFe") == {(4.4, "muB/fu")}


def test_a_numbered_site_in_brackets_after_the_value() -> None:
    chain = "GGA gives 2.31 µB (Mn1) and 2.87 µB (Mn2); Si carries −0.05 µB."
    assert moments(chain, "Mn5Si3") == {(2.31, "muB/element:Mn"), (2.87, "muB/element:Mn"), (-0.05, "muB/element:Si")}


def test_a_hyphenated_site_letter_before_the_element() -> None:
    chain = "GGA+U puts −2.64 µB on the A-site Co and +2.70 µB on the B-site Co, so the cell nets 0.06 µB in total."
    assert moments(chain, "Co2SnO4") == {(-2.64, "muB/element:Co"), (2.7, "muB/element:Co"), (0.06, "muB/cell")}


def test_a_latex_row_labelled_with_its_basis() -> None:
    chain = ("\\begin{tabular}{lc}\n\\hline\nSite & $m$ ($\\mu_B$) \\\\\n\\hline\nCo & $1.62$ \\\\\n"
             "Net / f.u. & $3.21$ \\\\\n\\hline\n\\end{tabular}")
    assert moments(chain, "Co2TiSn") == {(1.62, "muB/element:Co"), (3.21, "muB/fu")}


def test_an_element_that_sits_at_a_moment() -> None:
    chain = "Fe carries 2.4 µB, while Al sits antiparallel at −0.06 µB."
    assert moments(chain, "Fe3Al") == {(2.4, "muB/element:Fe"), (-0.06, "muB/element:Al")}


def test_a_sum_over_atomic_spheres_is_a_part() -> None:
    chain = "Summing the muffin-tin spheres gives 3.62 µB per formula unit. The total magnetisation is 3.98 µB per formula unit."
    assert moments(chain, "Co2FeAl") == {(3.98, "muB/fu")}


def test_a_share_residing_in_the_interstitial_is_a_part() -> None:
    chain = "The total magnetisation is 3.98 µB per formula unit, since 0.36 µB resides in the interstitial region."
    assert moments(chain, "Co2FeAl") == {(3.98, "muB/fu")}


def test_what_an_alternative_would_leave_is_hypothetical() -> None:
    chain = "Mn²⁺ and Co²⁺ align in parallel (antiparallel order would leave just 2 µB per formula unit); GGA gives 8.1 µB per formula unit."
    assert moments(chain, "MnCo2O4") == {(8.1, "muB/fu")}


def test_per_magnetic_ion_after_the_value_beats_a_cell_named_before() -> None:
    chain = "In the 12-atom cell PBE+U finds about 2.7 µB per magnetic ion and 6.0 µB for the whole cell."
    assert moments(chain, "Li2NiF4") == {(2.7, "muB/element:Ni"), (6.0, "muB/cell")}


def test_a_share_that_is_spread_over_ligands_is_a_sum() -> None:
    chain = "Cu carries 0.55 µB; the remaining 0.45 µB is distributed over the four Cl ligands."
    assert moments(chain, "K2CuCl4") == {(0.55, "muB/element:Cu")}


def test_a_unitless_table_column_headed_by_the_moment_of_an_element() -> None:
    chain = ("| state | ΔE (meV/f.u.) | m(Co) | m(O) |\n|---|---|---|---|\n| AFM | 0 | 2.71 | 0.04 |\n"
             "| FM | +35 | 2.74 | 0.06 |\n\nThe AFM state is lowest.")
    assert moments(chain, "CoO") == {(2.71, "muB/element:Co"), (0.04, "muB/element:O")}


def test_an_elliptical_second_sublattice_sum() -> None:
    chain = "The Co1 sublattice sums to 9.6 µB and the Co2 sublattice to −4.9 µB; the cell total is 4.7 µB."
    assert moments(chain, "Co3V2O8") == {(4.7, "muB/cell")}


def test_a_slater_pauling_total_without_basis_is_per_formula_unit() -> None:
    chain = "With Z = 27, the Slater–Pauling rule M = Z − 24 = 3 µB holds: GGA gives Co 1.1 µB and a half-metallic gap."
    assert moments(chain, "Co2VGa") == {(3.0, "muB/fu"), (1.1, "muB/element:Co")}


def test_the_oszicar_mag_field_is_the_cell_total() -> None:
    chain = "The last OSZICAR line reads F= -.4521E+02 E0= -.4520E+02 mag= 3.9981, so the run is ferromagnetic."
    assert moments(chain, "CrO2") == {(3.9981, "muB/cell")}


def test_a_sentence_or_bullet_opened_by_its_basis_label() -> None:
    chain = "The whole cell carries 15.6 µB. Per formula unit: 15.6 / 2 = 7.8 µB."
    assert moments(chain, "Fe2Ta") == {(15.6, "muB/cell"), (7.8, "muB/fu")}
    chain = "- Co: 1.71 µB\n- cell: 2 f.u.\n- per f.u.: 3.4 µB"
    assert moments(chain, "Co2B") == {(1.71, "muB/element:Co"), (3.4, "muB/fu")}


def test_unitless_site_values_in_brackets_after_a_moment() -> None:
    chain = "GGA: M = 3.02 µB per formula unit (Fe ≈ 2.6, Ni ≈ 0.4 each)."
    assert moments(chain, "FeNi3") == {(3.02, "muB/fu"), (2.6, "muB/element:Fe"), (0.4, "muB/element:Ni")}


def test_the_former_and_the_latter_name_the_elements_of_a_pair() -> None:
    chain = "Both Fe and Co order; the former ends at 2.7 µB and the latter settles at 1.6 µB."
    assert moments(chain, "FeCo") == {(2.7, "muB/element:Fe"), (1.6, "muB/element:Co")}


def test_per_atom_after_a_named_element_is_that_elements_moment() -> None:
    chain = ("Fe carries 2.3 µB, and Al is polarised antiparallel at −0.05 µB per atom. Averaged over all 16 atoms the "
             "moment is 1.7 µB per atom.")
    assert moments(chain, "Fe3Al") == {(2.3, "muB/element:Fe"), (-0.05, "muB/element:Al"), (1.7, "muB/atom")}
    assert moments("The magnetic moment of Ni is 0.6 µB per atom.", "Ni") == {(0.6, "muB/atom")}  # an element asked alone


def test_a_total_per_a_cell_of_another_size_than_the_posed_one() -> None:
    chain = "GGA gives 3.0 µB per formula unit, that is 12.0 µB per conventional 16-atom cubic cell."
    assert moments(chain, "Co2MnAl") == {(3.0, "muB/fu")}  # magnet_q poses a 4-atom cell
    assert moments("GGA gives 12.0 µB for the 4-atom cell.", "Co2MnAl") == {(12.0, "muB/cell")}


def test_a_csv_row_labelled_by_a_symbol_that_is_also_a_word() -> None:
    chain = "site,wyckoff,m_muB\nNi1,4a,0.31\nIn,4c,-0.02\nB,8d,-0.04\n"
    assert moments(chain, "Ni3InB") == {(0.31, "muB/element:Ni"), (-0.02, "muB/element:In"), (-0.04, "muB/element:B")}


def test_ions_named_by_their_site_with_one_magnetic_element() -> None:
    chain = "In the AFM cell PBE+U puts 4.3 µB on the octahedral ions and 4.1 µB on the tetrahedral ones."
    assert moments(chain, "Mn3O4") == {(4.3, "muB/element:Mn"), (4.1, "muB/element:Mn")}
    assert (0.05, "muB/element:Mn") not in moments("PBE+U puts 0.05 µB on the oxygen sites.", "Mn3O4")
