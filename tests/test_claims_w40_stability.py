"""Stability reader rules found by the pass over the w40 dev batch of the claim corpus: a correction named in the
clause before a conjoined one, a basis written after the unit with the formula in it ("eV per Mn₂O₃ formula unit"),
table rows whose first cell is the hull distance itself (one distance in two bases, not two phases), a Greek-letter
polymorph named for "this cell" or "the question's structure", and a distance restated per atom after "i.e." that
happens to equal the threshold. One test per rule, each with a case written fresh here (not copied from the corpus)."""

from __future__ import annotations

from claim_reading import reasons
from matpcr_plugins.dft.oracles import StabilityOracle
from test_claims_w20 import hull_q
from test_claims_w38_stability import hull_claims, hulls

STABILITY = StabilityOracle()


def test_a_correction_in_the_clause_before_a_conjoined_one_leaves_the_distance() -> None:
    chain = ("Kaolinite, Al2Si2O5(OH)4: on the hull with the vdW-DF correction, and ~14 meV/atom above it in plain PBE.\n"
             "Answer: stable")
    assert hulls(chain, "Al2Si2O5(OH)4") == [0.014]


def test_a_correction_in_the_numbers_own_clause_is_still_a_term() -> None:
    chain = ("Kaolinite is on the hull; the zero-point correction, about 6 meV/atom, does not change that.\nAnswer: stable")
    assert hulls(chain, "Al2Si2O5(OH)4") == []


def test_a_basis_after_the_unit_with_the_formula_in_it_is_per_formula_unit() -> None:
    chain = ("With U(Ni) = 6 eV the ordered cell lies 7 meV/atom above the NiO + Fe2O3 tie line, which is 0.049 eV per "
             "NiFe₂O₄ formula unit.\nAnswer: stable")
    assert sorted(hull_claims(chain, "NiFe2O4")) == [(0.007, "eV/atom"), (0.049, "eV/fu")]


def test_rows_labelled_as_the_hull_distance_are_one_distance_in_two_bases() -> None:
    chain = ("| quantity | value |\n|---|---|\n| formula units in cell | 4 |\n| E above hull | 0.36 eV/f.u. |\n"
             "| E above hull | 0.012 eV/atom |\n\nWith 30 atoms per formula unit, 0.36/30 = 0.012 eV/atom, inside the "
             "window.\nAnswer: stable")
    assert sorted(hull_claims(chain, "Ca3Al2Si3O12")) == [(0.012, "eV/atom"), (0.36, "eV/fu")]


def test_rows_of_phases_beside_a_restated_one_stay_the_competitors() -> None:
    chain = ("| phase | E above hull |\n|---|---|\n| garnet | 0.012 eV/atom |\n| perovskite | 0.047 eV/atom |\n\n"
             "At 12 meV/atom the garnet is inside the window.\nAnswer: stable")
    assert hulls(chain, "Ca3Al2Si3O12") == [0.012]


def test_a_greek_letter_polymorph_named_for_this_cell() -> None:
    chain = ("- α phase: on the hull, 0 meV/atom\n- β phase: about 22 meV/atom above α\n\nThe database entry for this "
             "cell is the α phase, the ground state.\nAnswer: stable")
    assert hulls(chain, "Bi2O3") == [0.0]
    other = chain.replace("this cell is the α phase, the ground state", "this cell is the β phase")
    assert hulls(other, "Bi2O3") == [0.022]


def test_a_greek_letter_polymorph_named_for_the_questions_structure() -> None:
    chain = ("- α phase: on the hull, 0 meV/atom\n- β phase: about 22 meV/atom above α\n\nThe question's structure is "
             "the orange β polymorph.\nAnswer: stable")
    assert hulls(chain, "Bi2O3") == [0.022]


def test_a_distance_restated_per_atom_after_ie_is_a_claim_even_at_the_threshold() -> None:
    chain = ("DFT puts it about 0.35 eV per formula unit above the hull, i.e. 0.05 eV/atom, exactly on the threshold.\n"
             "Answer: stable")
    assert sorted(hull_claims(chain, "MgAl2O4")) == [(0.05, "eV/atom"), (0.35, "eV/fu")]


def test_the_threshold_restated_beside_a_distance_stays_an_echo() -> None:
    chain = "It lies 0.02 eV/atom above the hull, well inside the 0.05 eV/atom window.\nAnswer: stable"
    assert hulls(chain, "MgAl2O4") == [0.02]
    assert reasons(STABILITY, chain, hull_q("MgAl2O4")).get("0.05 eV/atom") == "question_echo"
