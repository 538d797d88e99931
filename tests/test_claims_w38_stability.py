"""Stability reader rules found by the pass over the w38 and w39 dev batches of the claim corpus: a gap on the next
row of a key–value block, a question "about the 0 K hull" that names no phase, the asked cell named as "the β form",
a bullet label with a long aside, ΔH_hull as a hull label, a label naming the asked cell, a unit written into the
hull label (and an inline list of phases under it), a bare number after the class in the Answer line, a table row
marked as the asked cell, a value broken off with "— wait", a draft answer's value the revision replaces, the hull
of another chemical system, the cost of splitting the compound into others, a bullet label naming another crystal
system, a YAML mapping under a hull key, a (negative) value stated outright as the hull distance, the indicative
conclusion after a hypothetical, and a rough value refined by the next sentence. One test per rule, each with a case
written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import claims, values
from matpcr_plugins.dft.oracles import StabilityOracle
from test_claims_w20 import hull_q

STABILITY = StabilityOracle()


def question(formula: str, group: str = "R-3m", number: int = 166) -> str:
    return (f"Material: {formula}, space group {group} ({number}), 8 atoms in the computational cell.\n\nAccording to "
            f"density-functional (PBE/GGA) calculations, is {formula} thermodynamically stable, i.e. on or within 0.05 "
            "eV/atom of the convex hull? Answer 'stable' or 'unstable'.")


def hulls(text: str, formula: str = "CaTiSiO5", q: str | None = None) -> list[object]:
    return values(STABILITY, text, q or hull_q(formula), kind="e_above_hull")


def hull_claims(text: str, formula: str = "CaTiSiO5", q: str | None = None) -> list[tuple[object, str]]:
    return [(v, u) for k, v, u in claims(STABILITY, text, q or hull_q(formula)) if k == "e_above_hull"]


def test_a_gap_on_the_next_row_of_a_key_value_block_leaves_the_distance() -> None:
    chain = "K2PtCl6 (Fm-3m)\nE_above_hull ...... 0.004 eV/atom\nBand gap ...... 2.6 eV\nAnswer: stable"
    assert hulls(chain, "K2PtCl6") == [0.004]


def test_a_question_about_the_zero_kelvin_hull_names_no_phase() -> None:
    chain = ("The question is about the 0 K PBE hull. The ground state at this composition is calcite (R-3c); the "
             "aragonite-type cell comes out 0.012 eV/atom above it, i.e. above the hull.\nAnswer: stable")
    assert hulls(chain, "CaCO3") == [0.012]


def test_the_asked_cell_named_as_a_greek_form() -> None:
    chain = ("- α-Zn2SiO4: on the hull\n- β-Zn2SiO4: 21 meV/atom above α\n- γ-Zn2SiO4: 44 meV/atom above α\n"
             "The asked Pna2_1 cell is the β form, so its E_hull is 21 meV/atom.\nAnswer: stable")
    assert hulls(chain, "Zn2SiO4") == [0.021]


def test_a_bullet_label_with_a_long_aside_still_names_its_phase() -> None:
    chain = ("The asked structure is β-Li3PS4.\n- β-Li3PS4: 9 meV/atom above the hull\n"
             "- γ-Li3PS4 (seen only in ball-milled glassy samples): 33 meV/atom above the hull\nAnswer: stable")
    assert hulls(chain, "Li3PS4") == [0.009]


def test_delta_h_hull_is_a_hull_label() -> None:
    chain = ("At ambient pressure the cell is 0.09 eV/atom above the hull. At 30 GPa it becomes a vertex "
             "(ΔH_hull = 0 at 30 GPa).\nAnswer: unstable")
    assert hulls(chain, "MgSiO3") == [0.09, 0.0]


def test_a_hull_label_naming_the_asked_cell() -> None:
    chain = "Cs3Sb is the photocathode compound. The energy above the hull of this Cs3Sb cell is 0.013\nAnswer: stable"
    assert hulls(chain, "Cs3Sb") == [0.013]


def test_the_unit_written_into_the_hull_label() -> None:
    chain = "Olivine-type LiFePO4 (4 f.u. per cell).\nE_hull [meV/f.u.]: 70\nE_hull per atom: 0.01\nAnswer: stable"
    assert hull_claims(chain, "LiFePO4") == [(0.07, "eV/fu"), (0.01, "eV/atom")]


def test_an_inline_list_of_phases_under_a_labelled_unit() -> None:
    chain = "Hull distances (PBE, meV/atom): Cs2S 0, CsS 17, Cs2S3 0. So the asked sulfide is off the hull.\nAnswer: stable"
    assert hulls(chain, "CsS") == [0.017]


def test_a_bare_number_after_the_class_in_the_answer_line() -> None:
    chain = "It lies well above the tie line between its neighbours.\nAnswer: unstable, 0.21"
    assert hull_claims(chain, "Na2Ti3O7") == [(0.21, "eV/atom")]


def test_a_table_row_marked_as_the_asked_cell_names_a_prototype() -> None:
    chain = ("| phase | prototype | E_hull (eV/atom) |\n|---|---|---|\n| Cs2Se (this cell) | CaF2, Fm-3m | 0.061 |\n"
             "| Cs2Se | PbCl2, Pnma | 0.000 |\nAnswer: unstable")
    assert hulls(chain, q=question("Cs2Se", "Fm-3m", 225)) == [0.061]


def test_a_value_broken_off_with_wait() -> None:
    chain = "The table gives E_hull = 0.27 eV/atom, so unstable — wait, that row is the LDA one; PBE gives 0.027 eV/atom.\nAnswer: stable"
    assert hulls(chain, "Ca2SiO4") == [0.027]


def test_a_draft_answers_value_that_the_revision_replaces() -> None:
    chain = ("Against NaF + AlF3 I get 71 meV/atom above the hull.\nAnswer: unstable\n\nWait — the fluoride reference "
             "was the wrong polymorph. Redone, the compound is 12 meV/atom above the hull.\nAnswer: stable")
    assert hulls(chain, "NaAlF4") == [0.012]


def test_the_hull_of_another_chemical_system() -> None:
    chain = ("The rubidium analogue has also been computed: it sits 42 meV/atom above the Rb–Sn–O hull. The potassium "
             "compound is a vertex of the K–Sn–O hull (0 meV/atom).\nAnswer: stable")
    assert hulls(chain, "K2SnO3") == [0.0]


def test_the_cost_of_splitting_it_into_other_compounds() -> None:
    chain = "E_hull = 0 for this cell; breaking it up into NaCl + CuCl2 would cost 31 meV/atom.\nAnswer: stable"
    assert hulls(chain, "NaCuCl3") == [0.0]


def test_a_bullet_label_naming_another_crystal_system() -> None:
    chain = ("- rhombohedral R-3m cell: 0.018 eV/atom above the hull\n- monoclinic C2/m (the room-temperature form): "
             "0.003 eV/atom\nAnswer: stable")
    assert hulls(chain, "LiNiO2") == [0.018]


def test_a_yaml_mapping_under_a_hull_key() -> None:
    chain = "compound: Mo2C\ne_hull:   # meV/atom, PBE\n  mp: 0\n  alexandria: 6\nverdict: stable\nAnswer: stable"
    assert hulls(chain, "Mo2C") == [0.0, 0.006]


def test_a_negative_value_stated_as_the_hull_distance() -> None:
    chain = "SrTiO3 is stable because its energy is negative. The energy above the hull is the formation energy, -0.3 eV/atom.\nAnswer: stable"
    assert hulls(chain, "SrTiO3") == [-0.3]


def test_the_conclusion_drawn_from_a_hypothetical() -> None:
    chain = "It sits 8 meV/atom below the hull built without it; including it would make it a vertex, so its hull distance is 0.\nAnswer: stable"
    assert hulls(chain, "Ba2SiO4") == [0.0]


def test_a_rough_value_refined_by_the_next_sentence() -> None:
    chain = "Hull distance for the ordered cell: ~0.07 eV/atom. Actually the entry reads 0.068. That is above 0.05.\nAnswer: unstable"
    assert hulls(chain, "ScTiO3") == [0.07, 0.068]
