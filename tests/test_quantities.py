"""Spellings of quantities models write, read through the oracles' claim readers (plugins/claims/), and a
property test that no reader raises on arbitrary text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.sem.oracle import SEMOracle
from matpcr_plugins.xrd.oracle import XRDOracle

ORACLES = (XRDOracle(), RamanOracle(), SEMOracle(), StabilityOracle(), MetallicityOracle(), MagnetismOracle())


def values(oracle: object, text: str) -> list[tuple[float, str]]:
    return [(c.value, c.unit) for c in oracle.read(text).claims]  # type: ignore[attr-defined]


@pytest.mark.parametrize("text, expected", [
    ("The peaks lie at 28.4, 47.3 and 56.1° 2θ.", [(28.4, "deg"), (47.3, "deg"), (56.1, "deg")]),
    (r"$2\theta = 28.44^\circ$", [(28.44, "deg")]),
    (r"2\theta \approx 47.3^{\circ}", [(47.3, "deg")]),
    ("two-theta of 56.1 degrees", [(56.1, "deg")]),
    (r"d = 3.135 \AA", [(3.135, "angstrom")]),
    ("d = 3.135 Angstrom", [(3.135, "angstrom")]),
    ("d = 0.3135 nm", [(3.135, "angstrom")]),
    ("28 to 29 degrees", []),  # a range is no claim (it used to become its midpoint)
])
def test_diffraction_spellings(text: str, expected: list[tuple[float, str]]) -> None:
    assert values(XRDOracle(), text) == expected


@pytest.mark.parametrize("text, expected", [
    ("approximately 464 cm⁻¹ and ~206 cm^-1, plus 128 cm^{-1}", [(464.0, "cm-1"), (206.0, "cm-1"), (128.0, "cm-1")]),
    ("a band at 1085 cm-1", [(1085.0, "cm-1")]),
    (r"1085 \mathrm{cm}^{-1}", [(1085.0, "cm-1")]),
    ("988/cm and 1,086 wavenumbers", [(988.0, "cm-1"), (1086.0, "cm-1")]),
])
def test_raman_spellings(text: str, expected: list[tuple[float, str]]) -> None:
    assert values(RamanOracle(), text) == expected


@pytest.mark.parametrize("text, expected", [
    ("particles of 50-80 nm", []),  # a range (it used to become 65 nm)
    ("about 0.2 μm, i.e. 0.2 µm or 0.2 um", [(200.0, "nm")]),
    ("a 3 micron agglomerate", [(3000.0, "nm")]),
])
def test_microscopy_spellings(text: str, expected: list[tuple[float, str]]) -> None:
    assert values(SEMOracle(), text) == expected


def test_every_asserted_value_counts_not_only_the_answer_line() -> None:
    # the paper parses the whole chain for stated quantities; a retracted first guess is not one of them
    text = "First I guessed 30.1° but recomputed.\nAnswer: 2θ = 28.4°, 47.3°"
    assert values(XRDOracle(), text) == [(28.4, "deg"), (47.3, "deg")]
    text = "The (111) peak sits at 28.4°.\nAnswer: 2θ = 47.3°"
    assert values(XRDOracle(), text) == [(28.4, "deg"), (47.3, "deg")]


def test_bare_numbers_in_answer_take_the_task_unit_but_not_miller_indices() -> None:
    assert values(XRDOracle(), "Answer: (111) 28.4, (220) 47.3") == [(28.4, "deg"), (47.3, "deg")]
    assert values(RamanOracle(), "Answer: 464, 206") == [(464.0, "cm-1"), (206.0, "cm-1")]
    assert values(SEMOracle(), "Answer: 193") == []  # the size needs its unit


def test_two_theta_symbol_is_not_a_number() -> None:
    assert values(XRDOracle(), "Answer: 2θ ≈ 28.4°") == [(28.4, "deg")]


def test_xrd_skips_lattice_angles_and_doubles_bare_theta() -> None:
    chain = "Lattice a = 5.43 Å, α = 90°. sinθ gives θ = 14.2°, so 2θ = 28.4°. d = 3.14 Å."
    claims = XRDOracle().read(chain).claims
    assert [(c.kind, c.value) for c in claims] == [("two_theta", 28.4), ("d_spacing", 3.14)]


def test_garbled_answers_give_no_claims() -> None:
    for oracle in ORACLES:
        assert oracle.read("I am not sure. Maybe the answer is blue?").claims == []
        assert oracle.read("").claims == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(), max_size=300))
def test_readers_never_raise(text: str) -> None:
    for oracle in ORACLES:
        extraction = oracle.read(text)
        assert isinstance(extraction.claims, list)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["2θ", "=", "°", "cm⁻¹", "nm", "µm", "Å", "Answer:", "\\circ", "-", "to", ",", " ",
                                 "\n", "(111)", "$", "{", "}", "^", "approximately", "eV", "µB", "per Fe", "×10³", "e5",
                                 "±", "not", "stable", "metallic", "|", "---"]) | st.floats(0, 1e4).map(str),
                max_size=40).map("".join))
def test_readers_never_raise_on_unit_soup(text: str) -> None:
    for oracle in ORACLES:
        oracle.read(text)
