"""`matpcr data ls|check` over the staged data directory."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import run_cli


def test_data_ls_maps_folders_to_tasks(data_dir: Path) -> None:
    proc = run_cli("data", "ls", "--data-dir", str(data_dir))
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()[2:]}
    assert "raman_text" in lines["raman_rruff"] and "sem_text" in lines["sem_bam_tio2"]
    assert "stability_text" in lines["mp40_chemeleon"] and "msqa_binary" in lines["msqa"]


def test_data_check_finds_a_changed_file(data_dir: Path, tmp_path: Path) -> None:
    assert run_cli("data", "check", "--data-dir", str(data_dir)).returncode == 0
    copy = tmp_path / "data"
    shutil.copytree(data_dir / "msqa", copy / "msqa")
    manifest = [l for l in (data_dir / "MANIFEST.sha256").read_text().splitlines() if "/msqa/" in l]
    (copy / "MANIFEST.sha256").write_text("\n".join(manifest) + "\n")
    name = manifest[0].split("  ", 1)[1].strip().lstrip("./")
    target = copy / name
    target.chmod(0o644)
    target.write_bytes(target.read_bytes() + b" ")
    proc = run_cli("data", "check", "--data-dir", str(copy))
    assert proc.returncode == 1 and "1 changed" in proc.stdout and target.name in proc.stdout
