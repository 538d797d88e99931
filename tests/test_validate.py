"""The validity gate on real references: every planted violation caught, no consistent plant flagged."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli


def test_validate_all_geometric_oracles(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "gate.json"
    proc = run_cli("validate", "--oracles", "xrd,raman,sem", "--max-refs", "12", "--per-reference", "5",
                   "--data-dir", str(data_dir), "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    for name in ("xrd", "raman", "sem"):
        entry = report["oracles"][name]
        assert entry["n_references"] == 12
        for rate, r in entry["by_rate"].items():
            assert r["n_violations"] == round(float(rate) * r["n"])
            assert r["fn_rate"] == 0.0 and r["fp_rate"] == 0.0 and r["unparsed"] == 0, (name, rate, r)
        # a much tighter tolerance flags planted consistent claims: the grid shows the trade-off
        tight = min(entry["sensitivity"], key=lambda k: float(k.split("=")[1]))
        assert entry["sensitivity"][tight]["fp_rate"] > 0.1
    assert "FN rate" in proc.stdout
