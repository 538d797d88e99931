"""`matpcr check ORACLE --reference FILE --chain TEXT` on each kind of reference file."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli


def _check(oracle: str, reference: Path | str, chain: str) -> dict:
    proc = run_cli("check", oracle, "--reference", str(reference), "--chain", chain, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_check_reads_each_kind_of_reference(data_dir: Path) -> None:
    cif = data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif"
    report = _check("xrd", cif, "Si (111) at 2θ = 28.44°; a line at 200° too")
    assert [c["verdict"]["status"] for c in report["claims"]] == ["consistent", "violated"]
    assert report["claims"][0]["accurate"] is True
    pattern = data_dir / "xrd_autoanalyzer_limntiof/spectra/MnO.xy"
    assert _check("xrd", pattern, "Answer: 2θ = 25.0°")["status"] == "violated"
    from matpcr_plugins.raman.oracle import RamanOracle

    spectrum = sorted((data_dir / "raman_rruff/spectra").glob("*.txt"))[0]
    ref = RamanOracle().prepare(RamanOracle().read_reference(str(spectrum)))
    top = float(ref.peaks[ref.prominences.argmax()])
    assert _check("raman", spectrum, f"The strongest band is at {top:.0f} cm⁻¹")["status"] == "consistent"
    assert _check("raman", spectrum, "Answer: 5000 cm-1")["claims"][0]["verdict"]["details"]["reason"] == "outside_range"
    micrograph = data_dir / "sem_bam_tio2/images/1908248.tif"
    assert _check("sem", micrograph, "Answer: 0.2 mm")["status"] == "violated"
    assert _check("sem", micrograph, "no numbers here")["status"] == "unparsable"


def test_check_text_output_and_bad_files(data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("check", "xrd", "--reference", str(data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif"),
                   "--chain", "2θ = 47.30°")
    assert proc.returncode == 0 and "two_theta = 47.3 deg  ->  consistent (accurate)" in proc.stdout
    bad = tmp_path / "broken.cif"
    bad.write_text("data_x\n_cell_length_a 4\n")
    proc = run_cli("check", "xrd", "--reference", str(bad), "--chain", "2θ = 30°")
    assert proc.returncode == 2 and "broken.cif" in proc.stderr and "Traceback" not in proc.stderr
    empty = tmp_path / "empty_spectrum.txt"
    empty.write_text("")
    proc = run_cli("check", "raman", "--reference", str(empty), "--chain", "500 cm-1")
    assert proc.returncode == 2 and "empty_spectrum.txt: no usable data" in proc.stderr
    chain_file = tmp_path / "chain.txt"
    chain_file.write_text("Answer: 2θ = 28.44°")
    proc = run_cli("check", "xrd", "--reference", str(data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif"),
                   "--chain", f"@{chain_file}", "--json")
    assert json.loads(proc.stdout)["status"] == "consistent"
