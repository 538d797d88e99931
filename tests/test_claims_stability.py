"""How the stability oracle judges the paper's wording: stable / unstable at ε, "metastable" (near-hull) for
0 < E_hull ≤ ε, and a stated energy above the hull against the computed one (docs/oracles.md, "Stability")."""

from __future__ import annotations

import pytest

from matpcr.records import Claim
from matpcr_plugins.dft.oracles import StabilityOracle


def status(claim: Claim, ehull: float, **params: float) -> str:
    return StabilityOracle(**params).check(claim, {"energy_above_hull": ehull, "formula": "Fe2O3"}).status


@pytest.mark.parametrize("ehull, expected", [(0.0, "violated"), (0.03, "consistent"), (0.05, "consistent"),
                                             (0.08, "violated")])
def test_metastable_means_near_hull_but_not_on_it(ehull: float, expected: str) -> None:
    assert status(Claim("stability", "metastable"), ehull) == expected


def test_metastable_follows_epsilon() -> None:
    assert status(Claim("stability", "metastable"), 0.08, epsilon=0.1) == "consistent"
    assert status(Claim("stability", "metastable"), 0.03, epsilon=0.0) == "violated"


def test_stable_and_unstable_keep_the_operational_threshold() -> None:
    assert status(Claim("stability", "stable"), 0.03) == "consistent"
    assert status(Claim("stability", "unstable"), 0.03) == "violated"
    assert status(Claim("stability", "unstable"), 0.2) == "consistent"


@pytest.mark.parametrize("value, unit, ehull, expected", [
    (0.03, "eV/atom", 0.0, "consistent"),    # within the 0.05 eV/atom tolerance
    (0.03, "eV/atom", 0.03, "consistent"),
    (0.03, "eV/atom", 0.2, "violated"),
    (-0.1, "eV/atom", 0.0, "violated"),      # below the hull is impossible by definition
    (0.3, "eV/fu", 0.06, "consistent"),      # Fe2O3: 5 atoms per formula unit, 0.06 eV/atom
    (0.3, "eV/fu", 0.2, "violated"),
])
def test_a_stated_hull_distance_is_checked_against_the_computed_one(value: float, unit: str, ehull: float,
                                                                     expected: str) -> None:
    assert status(Claim("e_above_hull", value, unit), ehull) == expected


def test_stable_with_a_hull_distance_is_two_checks() -> None:
    """"stable, 0.03 eV/atom above the hull": the class at ε and the magnitude against E_hull, each judged."""
    oracle = StabilityOracle()
    claims = oracle.read("Answer: stable, 0.03 eV/atom above the hull").claims
    assert [(c.kind, c.value) for c in claims] == [("stability", "stable"), ("e_above_hull", 0.03)]
    for ehull, expected in ((0.0, ["consistent", "consistent"]), (0.03, ["consistent", "consistent"]),
                            (0.2, ["violated", "violated"])):
        assert [oracle.check(c, {"energy_above_hull": ehull}).status for c in claims] == expected


def test_magnitude_tolerance_is_a_parameter_and_eV_per_fu_needs_a_formula() -> None:
    assert status(Claim("e_above_hull", 0.03, "eV/atom"), 0.0, ehull_tolerance=0.01) == "violated"
    verdict = StabilityOracle().check(Claim("e_above_hull", 0.3, "eV/fu"), {"energy_above_hull": 0.06})
    assert verdict.status == "abstain" and verdict.details["reason"] == "unit"


def test_accuracy_uses_the_strict_label_for_classes_only() -> None:
    oracle = StabilityOracle()
    assert oracle.accurate(Claim("stability", "metastable"), {"energy_above_hull": 0.03, "is_stable": False}) is True
    assert oracle.accurate(Claim("e_above_hull", 0.03, "eV/atom"), {"energy_above_hull": 0.03, "is_stable": False}) is None
