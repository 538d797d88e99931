"""Audit labels, reviewers' agreement and the tolerance analysis (matpcr.audit), on synthetic sheets."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli
from matpcr import audit
from matpcr.errors import MatpcrError

FIELDS = audit.COLUMNS


def _sheet(path: Path, rows: list[dict[str, object]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in FIELDS})
    return path


def _cases() -> list[dict[str, object]]:
    """Six diffraction cases (distances in degrees, tolerance 0.5°) and four spectra cases (cm⁻¹, 5)."""
    rows = []
    for i, d in enumerate([0.6, 0.9, 1.4, 3.0, 0.7, 12.0]):
        rows.append({"case_id": f"diffraction-{i + 1:04d}", "record_key": f"xrd/{i}", "constraint": "diffraction",
                     "source_id": f"s{i}", "distance_to_nearest_feature": d, "tolerance": 0.5, "claim_index": 0})
    for i, d in enumerate([6.0, 9.5, 30.0, ""]):
        rows.append({"case_id": f"spectra-{i + 1:04d}", "record_key": f"raman/{i}", "constraint": "spectra",
                     "source_id": f"t{i}", "distance_to_nearest_feature": d, "tolerance": 5.0, "claim_index": 0})
    return rows


def test_cohen_kappa_matches_its_definition_and_sklearn() -> None:
    from sklearn.metrics import cohen_kappa_score

    a = ["real", "real", "false positive", "unsure", "real", "false positive", "real", "real"]
    b = ["real", "false positive", "false positive", "unsure", "real", "real", "real", "unsure"]
    cats = sorted(set(a) | set(b))
    table = np.array([[sum(x == i and y == j for x, y in zip(a, b)) for j in cats] for i in cats]) / len(a)
    po, pe = np.trace(table), float(table.sum(1) @ table.sum(0))
    assert audit.cohen_kappa(a, b) == pytest.approx((po - pe) / (1 - pe)) == pytest.approx(cohen_kappa_score(a, b))
    low, high = audit.kappa_interval(a, b, n_boot=4000)
    assert low is not None and high is not None and low <= audit.cohen_kappa(a, b) <= high
    assert audit.cohen_kappa(a, a) == pytest.approx(1.0)
    assert audit.cohen_kappa(["real"] * 4, ["real"] * 4) is None  # chance agreement is 1: κ undefined
    assert audit.cohen_kappa([], []) is None


def test_labels_are_saved_atomically_and_replaced_per_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "labels-ann.csv"
    case = {"case_id": "diffraction-0001", "record_key": "k1", "constraint": "diffraction"}
    audit.save_label(path, case, "real", "clear", "ann")
    audit.save_label(path, {**case, "case_id": "diffraction-0002"}, "False_Positive", "near\na peak", "ann")
    audit.save_label(path, case, "unsure", "", "ann")  # a second thought replaces the first label
    labels = audit.read_labels(path)
    assert {k: (v["judgement"], v["notes"]) for k, v in labels.items()} == {
        "diffraction-0001": ("unsure", ""), "diffraction-0002": ("false positive", "near a peak")}
    before = path.read_bytes()

    def crash(src: str, dst: str) -> None:  # the disk fails at the moment of the swap
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(MatpcrError, match="No space left"):
        audit.save_label(path, {**case, "case_id": "diffraction-0003"}, "real", "", "ann")
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [path.name]
    monkeypatch.undo()
    with pytest.raises(MatpcrError, match="must be one of"):
        audit.save_label(path, case, "maybe")
    with pytest.raises(MatpcrError, match="reviewer name"):
        audit.labels_path(tmp_path / "audit.csv", "../evil")


def test_score_two_reviewers_kappa_and_the_tolerance_analysis(tmp_path: Path) -> None:
    rows = _cases()
    sheet = _sheet(tmp_path / "audit.csv", rows)
    ann = ["false positive", "false positive", "real", "real", "real", "false positive",  # diffraction
           "false positive", "false positive", "real", "unsure"]                           # spectra
    ben = ["false positive", "real", "real", "real", "false positive", "false positive",
           "false positive", "false positive", "real", ""]
    for name, labels in (("ann", ann), ("ben", ben)):
        for row, lab in zip(rows, labels):
            if lab:
                audit.save_label(tmp_path / f"labels-{name}.csv", row, lab, "", name)
    result = audit.score(sheet, n_boot=2000)
    dif, spe = result["diffraction"], result["spectra"]
    assert dif["reviewer"] == "ann" and set(dif["reviewers"]) == {"ann", "ben"}
    assert (dif["real"], dif["false_positive"]) == (3, 3)
    assert dif["precision"]["value"] == pytest.approx(0.5) and dif["precision"]["ci_low"] <= 0.5
    assert dif["reviewers"]["ben"]["real"] == 3 and dif["reviewers"]["ben"]["unjudged"] == 0
    # the paper's analysis: ann's diffraction false positives lie 0.6, 0.9 and 12° off; two within 1°
    t = dif["tolerance_analysis"]
    assert (t["window"], t["false_positives"], t["within_window"]) == (1.0, 3, 2) and t["share"] == pytest.approx(2 / 3)
    assert dif["false_positives_within_2x_tolerance"] == 2  # 0.6° and 0.9° ≤ 2 × 0.5°
    assert (spe["tolerance_analysis"]["window"], spe["tolerance_analysis"]["within_window"]) == (10.0, 2)
    from sklearn.metrics import cohen_kappa_score

    (pair,) = dif["agreement"]
    assert pair["reviewers"] == ["ann", "ben"] and pair["n"] == 6
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(ann[:6], ben[:6]))
    (pair,) = spe["agreement"]
    assert pair["n"] == 3 and pair["kappa"] == pytest.approx(1.0) and pair["observed_agreement"] == 1.0
    (overall,) = audit.overall_agreement(sheet, n_boot=500)
    both = [(a, b) for a, b in zip(ann, ben) if a and b]
    assert overall["kappa"] == pytest.approx(cohen_kappa_score([a for a, _ in both], [b for _, b in both]))
    # the CLI: headline reviewer, a window override, a table with κ
    proc = run_cli("audit", "score", str(sheet), "--reviewer", "ben", "--within", "diffraction=0.65", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["diffraction"]["reviewer"] == "ben" and data["diffraction"]["false_positive"] == 3
    assert data["diffraction"]["tolerance_analysis"]["within_window"] == 1  # ben: 0.6° only (0.7° > 0.65)
    table = run_cli("audit", "score", str(sheet)).stdout
    assert "ann vs ben" in table and "κ" in table and "2/3 within 1°" in table and "all" in table


def test_the_sheets_own_column_still_scores_and_bad_labels_are_named(tmp_path: Path) -> None:
    rows = _cases()
    for row, lab in zip(rows, ["real", "false positive", "", "unsure"] + [""] * 6):
        row["judgement"] = lab
    sheet = _sheet(tmp_path / "audit.csv", rows)
    result = audit.score(sheet, n_boot=500)
    assert result["diffraction"]["reviewer"] == "sheet" and result["diffraction"]["real"] == 1
    assert result["diffraction"]["unjudged"] == 3 and result["spectra"]["unjudged"] == 4
    assert result["diffraction"]["agreement"] == []
    (tmp_path / "labels-x.csv").write_text("case_id,judgement\ndiffraction-0001,perhaps\n")
    with pytest.raises(MatpcrError, match="judgements must be one of"):
        audit.score(sheet)
    with pytest.raises(MatpcrError, match="audit sheet not found"):
        audit.score(tmp_path / "nothing.csv")
