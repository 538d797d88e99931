"""The rebuilt validity gate (`matpcr validate`): controls built from real staged references, written
through chain templates and judged through reader + oracle; the report's shape and its statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from matpcr import stats
from matpcr.validate import Outcome, mixtures, pooled, summarize


def test_validate_json_shape_and_honest_rates(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "gate.json"
    proc = run_cli("validate", "--oracles", "sem,stability,metallicity,magnetism", "--max-refs", "10",
                   "--per-reference", "3", "--data-dir", str(data_dir), "--json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert json.loads(out.read_text()) == report
    expected = {"sem": {"over_fov": "negative", "unit_slip": "negative", "feature": "positive"},
                "stability": {"class_flip": "negative", "ehull_across": "negative", "class_true": "positive"},
                "metallicity": {"class_flip": "negative", "gap_across": "negative", "class_true": "positive"},
                "magnetism": {"class_flip": "negative", "moment_across": "negative", "class_true": "positive"}}
    rates = []
    for family, controls in expected.items():
        fam = report["families"][family]
        assert fam["n_references"] > 0 and len(fam["templates"]) >= 10
        for control, kind in controls.items():
            c = fam["controls"][control]
            assert c["kind"] == kind and c["n"] > 0
            assert c["rate"] == pytest.approx(c["violated"] / c["n"])
            lo, hi = stats.clopper_pearson(c["violated"], c["n"])
            assert c["ci"] == pytest.approx([lo, hi])
            assert lo <= c["rate"] <= hi
            rates.append(c["rate"])
        for rate, m in fam["mixtures"].items():
            assert m["n_violations"] == round(float(rate) * m["n"])
            assert m["pcr_true_lo"] <= m["pcr_true_hi"]
        assert fam["sensitivity"], family
    # an honest gate: not every control sits at exactly 0 or 1
    assert any(0.0 < r < 1.0 for r in rates), rates
    # unit slips written 1000x too small stay inside the field of view: the FOV bound cannot see them
    assert report["families"]["sem"]["controls"]["unit_slip"]["rate"] < 1.0


def _outcome(kind: str, status: str, control: str = "c") -> Outcome:
    return Outcome("f", control, kind, "t", status, "r", "s", None, [], "")


def test_summary_pooled_and_mixtures_arithmetic() -> None:
    outs = [_outcome("negative", "violated")] * 8 + [_outcome("negative", "consistent")] * 2 + \
        [_outcome("positive", "consistent", "p")] * 9 + [_outcome("positive", "violated", "p")]
    table = summarize(outs, {"c": "negative", "p": "positive"})
    assert table["c"]["rate"] == 0.8 and table["p"]["rate"] == 0.1
    gate = pooled(outs)
    assert gate["recall"] == 0.8 and gate["false_alarm"] == 0.1
    mix = mixtures(outs, (0.5,), 0, gate)["0.5"]
    assert mix["n"] == 20 and mix["n_violations"] == 10
    # measured PCR = (2 missed + 9 clean) / 20; Corollary 2: PCR* in [PCR - 0.2, PCR + 0.1]
    assert mix["measured_pcr"] == pytest.approx(11 / 20)
    assert mix["pcr_true_lo"] == pytest.approx(11 / 20 - 0.2) and mix["pcr_true_hi"] == pytest.approx(11 / 20 + 0.1)
    # the point estimate recovers the true PCR exactly when the mixture's rates equal d and f
    assert mix["pcr_true_point"] == pytest.approx(0.5)
