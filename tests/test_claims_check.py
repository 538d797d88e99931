"""`matpcr.check` and `matpcr check ORACLE --batch FILE.jsonl`: the same JSON as `matpcr check --json`,
with rejected numbers and notes; a bad line gives an error object for that line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import matpcr
from conftest import run_cli


def test_python_entry_point_reports_claims_rejections_and_notes(data_dir: Path) -> None:
    cif = data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif"
    chain = "The 2θ range 10–80° was scanned with Mo Kα. Si (111) at 2θ = 28.44°; a line at 200° too."
    report = matpcr.check("xrd", str(cif), chain)
    assert report["status"] == "violated"
    # the chain states Mo Kα, so 2θ = 28.44° (Si (111) under Cu Kα) is judged at Mo Kα: no Si line there (issue 13)
    assert [c["verdict"]["status"] for c in report["claims"]] == ["violated", "violated"]
    assert report["claims"][0]["verdict"]["details"]["wavelength"] == pytest.approx(0.71073)
    assert {r["reason"] for r in report["rejected"]} >= {"range", "index", "instrument_setting"}
    assert any("Mo Kα" in note for note in report["notes"])
    loose = matpcr.check("xrd", str(cif), "Answer: 2θ = 28.9°", tolerance_deg=1.0)
    assert loose["params"]["tolerance_deg"] == 1.0 and loose["status"] == "consistent"
    inline = matpcr.check("stability", {"material_id": "x", "energy_above_hull": 0.03}, "Answer: metastable")
    assert inline["status"] == "consistent" and inline["reference"] == "x"


def test_cli_json_matches_the_python_entry_point(data_dir: Path) -> None:
    cif = data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif"
    proc = run_cli("check", "xrd", "--reference", str(cif), "--chain", "d = 3.14, 1.92 Å", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(json.dumps(matpcr.check("xrd", str(cif), "d = 3.14, 1.92 Å")))


def test_batch_gives_one_result_per_line_and_survives_bad_lines(data_dir: Path, tmp_path: Path) -> None:
    cif = str(data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif")
    lines = [json.dumps({"reference": cif, "chain": "Answer: 2θ = 28.44°"}),
             "this is not json",
             json.dumps({"reference": str(tmp_path / "missing.cif"), "chain": "2θ = 28.44°"}),
             json.dumps({"chain": "no reference"}),
             json.dumps({"reference": cif, "chain": "Answer: 47.3, 56.1", "id": "b"})]
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(lines) + "\n")
    proc = run_cli("check", "xrd", "--batch", str(batch))
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["line"] for r in results] == [1, 2, 3, 4, 5]
    assert [r["status"] for r in results] == ["consistent", "error", "error", "error", "consistent"]
    assert "JSONDecodeError" in results[1]["error"] and "missing.cif" in results[2]["error"]
    assert results[4]["id"] == "b" and len(results[4]["claims"]) == 2


def test_batch_prepares_each_reference_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from matpcr import checking
    from matpcr_plugins.dft.oracles import StabilityOracle

    calls = []
    original = StabilityOracle.prepare

    def counting(self, reference):  # type: ignore[no-untyped-def]
        calls.append(reference.get("material_id"))
        return original(self, reference)

    monkeypatch.setattr(StabilityOracle, "prepare", counting)
    ref = {"material_id": "mp-1", "energy_above_hull": 0.0}
    lines = [json.dumps({"reference": ref, "chain": f"Answer: {word}"}) for word in ("stable", "unstable") * 500]
    results = list(checking.check_batch("stability", lines))
    assert len(results) == 1000 and calls == ["mp-1"]
    assert {r["status"] for r in results} == {"consistent", "violated"}
