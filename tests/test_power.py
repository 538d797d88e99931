"""Oracle power (p_chance per verdict), the chance-corrected PCR and the other aggregates beside PCR."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from matpcr import stats
from matpcr.plugins import get_manager
from matpcr.protocols import Metric, Oracle
from matpcr.records import Claim, Record
from matpcr.results import summarize
from matpcr.validate import references_for


def _oracle(name: str, **params):
    return get_manager().registry.get("oracles", name).factory(**params)


def test_xrd_and_raman_chance_matches_monte_carlo_through_check(data_dir: Path) -> None:
    rng = np.random.default_rng(0)
    for name, kind, unit in (("xrd", "two_theta", "deg"), ("raman", "raman_shift", "cm-1")):
        oracle = _oracle(name)
        for item in references_for(name, data_dir, 3, 5)[:4]:
            ref = oracle.prepare(item.reference)
            lo, hi = ref.nominal if name == "xrd" else (ref.lo, ref.hi)
            draws = rng.uniform(lo, hi, 3000)
            passed = np.mean([oracle.check(Claim(kind, float(v), unit), ref).status == "consistent" for v in draws])
            p = oracle.chance(ref)
            assert abs(passed - p) <= 4 * np.sqrt(p * (1 - p) / 3000) + 0.005, (name, item.id, passed, p)
            v = oracle.check(Claim(kind, float(draws[0]), unit), ref)
            assert v.details["p_chance"] == pytest.approx(p, abs=1e-4)


def test_dft_and_sem_chance(data_dir: Path) -> None:
    stab = _oracle("stability")
    assert stab.chance({"energy_above_hull": 0.0}) == pytest.approx(1 / 3)       # only "stable"
    assert stab.chance({"energy_above_hull": 0.02}) == pytest.approx(2 / 3)      # stable or metastable
    assert stab.chance({"energy_above_hull": 0.3}) == pytest.approx(1 / 3)       # only "unstable"
    assert _oracle("metallicity").chance({"band_gap": 0.1}) is None              # abstention band
    sem = _oracle("sem")
    item = references_for("sem", data_dir, 1, 0)[0]
    fov = float(item.reference["fov_nm"])
    assert sem.chance(item.reference) == pytest.approx(np.log(fov) / np.log(1e6))
    assert sem.check(Claim("feature_size", 10.0, "nm"), item.reference).details["p_chance"] == \
        pytest.approx(sem.chance(item.reference), abs=1e-4)


def test_max_chance_makes_dense_references_abstain(data_dir: Path) -> None:
    strict = _oracle("xrd", max_chance=0.3)
    refs = [strict.prepare(i.reference) for i in references_for("xrd", data_dir, 10, 0)]
    dense = [r for r in refs if r.p_chance > 0.3]
    sparse = [r for r in refs if r.p_chance <= 0.3]
    assert dense and sparse
    v = strict.check(Claim("two_theta", 30.0, "deg"), dense[0])
    assert v.status == "abstain" and v.details["reason"] == "low_power"
    assert strict.check(Claim("two_theta", 30.0, "deg"), sparse[0]).status in ("consistent", "violated")


def test_chance_corrected_pcr_worked_example() -> None:
    # docs/statistics.md: four checkable items; passes 1, 1, 1, 0; chance 0.5, 0.2, 0.2, 0.1
    passed, chance = [1, 1, 1, 0], [0.5, 0.2, 0.2, 0.1]
    rate = stats.chance_corrected_pcr(passed, chance, n_boot=500)
    pcr, p_bar = 0.75, 0.25
    assert rate.value == pytest.approx((pcr - p_bar) / (1 - p_bar))  # = 2/3
    assert rate.ci_low <= rate.value <= rate.ci_high


def _record(i: int, statuses: list[str], p: float, extra: dict | None = None) -> Record:
    verdicts = [{"status": s, "message": "", "details": {"p_chance": p, **(extra or {})}} for s in statuses]
    status = "violated" if "violated" in statuses else "consistent"
    return Record(key=f"k{i}", task="t", item_id=f"i{i}", source_id=f"s{i}", constraint="c", modality="text", seed=0,
                  round=0, sample=0, model="m", prompt=[], chain="", verdicts=verdicts,
                  claims=[{"kind": "x", "value": 1}] * len(statuses), status=status)


def test_results_report_claim_first_chance_and_corollary2() -> None:
    records = [_record(0, ["consistent", "violated"], 0.5), _record(1, ["consistent"], 0.2),
               _record(2, ["violated", "consistent", "consistent"], 0.1), _record(3, ["consistent"], 0.4)]
    metrics = [*Oracle.metrics, Metric("pcr_true_range", "corollary2", params={"recall": 0.8, "false_alarm": 0.1})]
    out = summarize(records, metrics, n_boot=200)
    assert out["pcr"]["value"] == 0.5
    assert out["claim_pcr"]["value"] == pytest.approx(5 / 7)
    assert out["first_claim_pcr"]["value"] == pytest.approx(3 / 4)
    pis = [0.25, 0.2, 0.001, 0.4]  # products of the items' p_chance
    assert out["p_chance"]["item_mean"] == pytest.approx(np.mean(pis))
    kappa = out["pcr_chance_corrected"]
    assert kappa["value"] == pytest.approx((0.5 - np.mean(pis)) / (1 - np.mean(pis)))
    bounds = out["pcr_true_range"]
    assert bounds["pcr_true_low"] == pytest.approx(0.3) and bounds["pcr_true_high"] == pytest.approx(0.6)
    assert bounds["gate"]["recall"] == 0.8


def test_balanced_accuracy_with_per_class_counts() -> None:
    rows = [("stable", "stable"), ("stable", "unstable"), ("unstable", "unstable"), ("unstable", "unstable"),
            ("unstable", "stable")]
    records = [_record(i, ["consistent"], 0.3, {"true_class": t, "claimed_class": c}) for i, (t, c) in enumerate(rows)]
    out = summarize(records, [Metric("balanced_accuracy", "balanced_accuracy")], n_boot=50)
    ba = out["balanced_accuracy"]
    assert ba["per_class"] == {"stable": {"n": 2, "correct": 1}, "unstable": {"n": 3, "correct": 2}}
    assert ba["value"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert ba["value"] == pytest.approx(stats.balanced_accuracy([t == "stable" for t, _ in rows],
                                                                [c == "stable" for _, c in rows]))


def test_stability_verdicts_carry_classes_for_balanced_accuracy() -> None:
    oracle = _oracle("stability")
    v = oracle.check(Claim("stability", "stable"), {"energy_above_hull": 0.0, "is_stable": False})
    assert v.details["true_class"] == "unstable" and v.details["claimed_class"] == "stable"


def test_chain_stated_wavelength_is_used_for_two_theta(data_dir: Path) -> None:
    oracle = _oracle("xrd")
    ref = oracle.prepare(oracle.read_reference(str(data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif")))
    # Si (111), d = 3.1356 Å: 28.44° under Cu Kα, 13.01° under Mo Kα
    mo = oracle.read("Measured with Mo Kα radiation, the (111) reflection lies at 2θ = 13.01°.")
    [claim] = mo.claims
    v = oracle.check(claim, ref)
    assert v.status == "consistent" and v.details["wavelength"] == pytest.approx(0.71073)
    assert dataclasses.asdict(claim)["wavelength"] == pytest.approx(0.71073) and claim.unit == "deg"
    cu = oracle.read("The (111) reflection lies at 2θ = 13.01°.").claims[0]
    assert oracle.check(cu, ref).status == "violated"
    d = oracle.read("With Mo Kα, the (111) planes are spaced d = 3.1356 Å.").claims[0]
    assert d.kind == "d_spacing" and oracle.check(d, ref).status == "consistent"  # wavelength-free


def test_corollary2_is_not_pooled_across_oracles() -> None:
    from matpcr.results import aggregate

    a = [_record(i, ["consistent"], 0.2) for i in range(3)]
    b = [dataclasses.replace(_record(i + 3, ["violated"], 0.2), task="u", constraint="d") for i in range(3)]
    declared = {"t": [*Oracle.metrics, Metric("pcr_true_range", "corollary2", params={"recall": 0.9, "false_alarm": 0.0})],
                "u": [*Oracle.metrics, Metric("pcr_true_range", "corollary2", params={"recall": 0.5, "false_alarm": 0.1})]}
    out = aggregate(a + b, declared, n_boot=50)
    assert out["tasks"]["t"]["pcr_true_range"]["pcr_true_low"] == pytest.approx(0.9)
    assert out["tasks"]["u"]["pcr_true_range"]["pcr_true_high"] == pytest.approx(0.1)
    assert "pcr_true_range" not in out["overall"]


def test_low_power_abstentions_are_counted(data_dir: Path) -> None:
    from matpcr.scoring import score_with_oracle

    strict = _oracle("xrd", max_chance=0.3)
    records = []
    for n, item in enumerate(references_for("xrd", data_dir, 10, 0)):
        r = Record(key=f"k{n}", task="xrd_text", item_id=item.id, source_id=item.source_id, constraint="diffraction",
                   modality="text", seed=0, round=0, sample=0, model="m", prompt=[], chain="Answer: 2θ = 30.0°")
        records.append(score_with_oracle(r, strict, item))
    dense = sum(strict.prepared(i).p_chance > 0.3 for i in references_for("xrd", data_dir, 10, 0))
    out = summarize(records, list(strict.metrics), n_boot=50)
    assert dense > 0
    assert out["status_counts"]["abstain"] == dense == out["p_chance"]["abstained_low_power"]
