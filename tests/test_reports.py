"""Reports, precision audits and the contamination check over a run of stored chains (replay backend)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli


@pytest.fixture(scope="module")
def replayed_run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """A real run over real items whose chains come from a JSONL file: correct answers, violations, a
    garbled answer, and one chain that states the hidden RRUFF sample id."""
    from matpcr.engine import record_key, sample_items
    from matpcr.plugins import get_manager
    from matpcr.tasks import resolve

    tmp = tmp_path_factory.mktemp("replay")
    rows = []
    for task in resolve(["raman_text", "xrd_text"]):
        loader = get_manager().registry.get("tasks", task.loader).factory()
        for n, item in enumerate(sample_items(loader.load(task, data_dir), task.task, 0, 6)):
            item = loader.complete(item)
            if task.task == "raman_text":
                from matpcr_plugins.raman.oracle import RamanOracle

                peaks = RamanOracle().prepare(item.reference).peaks
                chain = [f"Answer: {peaks[0]:.1f} cm-1", "Answer: 3999 cm-1", "no idea",
                         f"This is sample {item.reference['sidecar']['RRUFFID']}. Answer: {peaks[-1]:.1f} cm-1",
                         f"Answer: {peaks[0] + 7.5:.1f} cm-1", f"Answer: {peaks[0]:.1f} cm-1"][n]
            else:
                tt = item.reference["two_theta"][0] if "two_theta" in item.reference else 30.0
                chain = [f"Answer: 2θ = {tt:.2f}°", "Answer: 2θ = 200°", f"Answer: 2θ = {tt + 0.3:.2f}°",
                         "Answer: 2θ = 3.2°", f"Answer: 2θ = {tt:.2f}°", "Answer: d = 0.2 Å"][n]
            rows.append({"key": record_key(task.task, item.id, 0, 0, 0), "chain": chain})
    chains = tmp / "chains.jsonl"
    chains.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_cli("run", "--tasks", "raman_text,xrd_text", "--limit", "6", "--model", f"replay:{chains}",
                   "--data-dir", str(data_dir), "--output-dir", str(tmp / "runs"), "--cache", "none", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


def test_report_files_and_tables(replayed_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(replayed_run, other)
    proc = run_cli("report", str(replayed_run), str(other), "--output-dir", str(tmp_path / "rep"))
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## PCR per model and constraint" in md and md.count("replay:") >= 2
    html_text = (tmp_path / "rep" / "report.html").read_text()
    assert html_text.count("data:image/png;base64,") >= 3 and "<table>" in html_text
    for name in ("pcr_by_constraint.png", "pcr_by_modality.png", "accuracy_vs_consistency.png"):
        assert (tmp_path / "rep" / name).stat().st_size > 5000


def test_report_renders_in_headless_chromium(replayed_run: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian chromium is not installed (apt-get install chromium); see docs/statistics.md")
    run_cli("report", str(replayed_run), "--output-dir", str(tmp_path))
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'ud'}",
                    "--window-size=1200,2400", f"--screenshot={shot}", (tmp_path / "report.html").as_uri()],
                   capture_output=True, timeout=120)
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--no-first-run", f"--user-data-dir={tmp_path / 'ud2'}", "--dump-dom",
                          (tmp_path / "report.html").as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert shot.stat().st_size > 20_000
    assert dom.count("<img") >= 3 and dom.count("<table>") >= 3


def test_audit_sample_and_score(replayed_run: Path, tmp_path: Path) -> None:
    proc = run_cli("audit", "sample", str(replayed_run), "--per-family", "100", "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "audit.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["constraint"] for r in rows} == {"spectra", "diffraction"}
    page = (tmp_path / "audit.html").read_text()
    assert page.count("<section") == len(rows) and page.count("data:image/png;base64,") == len(rows)
    for i, row in enumerate(rows):  # a reviewer's verdicts
        row["judgement"] = ["real", "false positive", "unsure"][i % 3]
    with open(tmp_path / "audit.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = json.loads(run_cli("audit", "score", str(tmp_path / "audit.csv"), "--json").stdout)
    for family, r in result.items():
        fam = [x for x in rows if x["constraint"] == family]
        assert r["real"] == sum(x["judgement"] == "real" for x in fam)
        assert r["false_positive"] == sum(x["judgement"] == "false positive" for x in fam)
        judged = r["real"] + r["false_positive"]
        assert r["precision"]["value"] == pytest.approx(r["real"] / judged)
    # the raman claim 7.5 cm⁻¹ off a genuine peak is a false positive within twice the 5 cm⁻¹ tolerance
    spectra_fp = [x for x in rows if x["constraint"] == "spectra" and x["judgement"] == "false positive"]
    near = sum(float(x["distance_to_nearest_feature"]) <= 10 for x in spectra_fp if x["distance_to_nearest_feature"])
    assert result["spectra"]["false_positives_within_2x_tolerance"] == near
    again = run_cli("audit", "sample", str(replayed_run), "--output-dir", str(tmp_path))
    assert again.returncode == 2 and "already holds judgements" in again.stderr and "--force" in again.stderr
    with open(tmp_path / "audit.csv", newline="") as handle:
        assert [r["judgement"] for r in csv.DictReader(handle)] == [r["judgement"] for r in rows]  # untouched
    bad = tmp_path / "bad.csv"
    bad.write_text((tmp_path / "audit.csv").read_text().replace("unsure", "maybe", 1))
    proc = run_cli("audit", "score", str(bad))
    assert proc.returncode == 2 and "judgements must be one of" in proc.stderr


def test_contamination_finds_the_hidden_sample_id(replayed_run: Path) -> None:
    proc = run_cli("contamination", str(replayed_run), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["contaminated"] == 1 and result["hits"][0]["field"] == "RRUFFID"
    assert result["records_checked"] >= 6
