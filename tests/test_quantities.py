"""The claim parser on what models actually write, and a property test that it never raises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matpcr_plugins.quantities import find_quantities
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle
from matpcr_plugins.xrd.oracle import XRDOracle


def values(text: str, units: set[str] | None = None, default: str | None = None) -> list[tuple[float, str]]:
    return [(q.value, q.unit) for q in find_quantities(text, units, default)[1]]


@pytest.mark.parametrize("text, expected", [
    ("The peaks lie at 28.4, 47.3 and 56.1° 2θ.", [(28.4, "°"), (47.3, "°"), (56.1, "°")]),
    (r"$2\theta = 28.44^\circ$", [(28.44, "°")]),
    (r"2\theta \approx 47.3^{\circ}", [(47.3, "°")]),
    ("two-theta of 56.1 degrees", [(56.1, "°")]),
    ("approximately 464 cm⁻¹ and ~206 cm^-1, plus 128 cm^{-1}", [(464.0, "cm-1"), (206.0, "cm-1"), (128.0, "cm-1")]),
    ("a band at 1085 cm-1", [(1085.0, "cm-1")]),
    (r"1085 \mathrm{cm}^{-1}", [(1085.0, "cm-1")]),
    ("particles of 50-80 nm", [(65.0, "nm")]),
    ("about 0.2 μm, i.e. 0.2 µm or 0.2 um", [(0.2, "µm")]),
    ("a 3 micron agglomerate", [(3.0, "µm")]),
    (r"d = 3.135 \AA", [(3.135, "Å")]),
    ("d = 3.135 Angstrom", [(3.135, "Å")]),
    ("28 to 29 degrees", [(28.5, "°")]),
])
def test_spellings(text: str, expected: list[tuple[float, str]]) -> None:
    assert values(text) == expected


def test_answer_line_wins_over_reasoning() -> None:
    text = "First I guessed 30.1° but recomputed.\nAnswer: 2θ = 28.4°, 47.3°"
    assert values(text) == [(28.4, "°"), (47.3, "°")]


def test_bare_numbers_in_answer_take_the_default_unit_but_not_miller_indices() -> None:
    assert values("Answer: (111) 28.4, (220) 47.3", default="°") == [(28.4, "°"), (47.3, "°")]
    assert values("Answer: 464, 206", default="cm-1") == [(464.0, "cm-1"), (206.0, "cm-1")]


def test_two_theta_symbol_is_not_a_number() -> None:
    assert values("Answer: 2θ ≈ 28.4°", default="°") == [(28.4, "°")]


def test_xrd_skips_lattice_angles_and_bare_theta() -> None:
    oracle = XRDOracle()
    chain = "Lattice a = 5.43 Å, α = 90°. sinθ gives θ = 14.2°, so 2θ = 28.4°. d = 3.14 Å."
    claims = oracle.extract(chain)
    assert [(c.kind, c.value) for c in claims] == [("two_theta", 28.4), ("d_spacing", 3.14)]


def test_garbled_answers_give_no_claims() -> None:
    for oracle in (XRDOracle(), RamanOracle(), SEMOracle()):
        assert oracle.extract("I am not sure. Maybe the answer is blue?") == []
        assert oracle.extract("") == []


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(), max_size=300))
def test_parsers_never_raise(text: str) -> None:
    for oracle in (XRDOracle(), RamanOracle(), SEMOracle()):
        claims = oracle.extract(text)
        assert isinstance(claims, list)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["2θ", "=", "°", "cm⁻¹", "nm", "µm", "Å", "Answer:", "\\circ", "-", "to", ",", " ",
                                 "\n", "(111)", "$", "{", "}", "^", "approximately"]) | st.floats(0, 1e4).map(str),
                max_size=40).map("".join))
def test_parsers_never_raise_on_unit_soup(text: str) -> None:
    for oracle in (XRDOracle(), RamanOracle(), SEMOracle()):
        oracle.extract(text)
