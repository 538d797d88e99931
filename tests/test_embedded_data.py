"""The embedded default set: small, documented, shipped in the wheel, and enough for every text task
when no data directory is configured (then the user data directory, then the embedded set)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, run_cli

TEXT_TASKS = ["xrd_text", "xrd_pattern_text", "raman_text", "sem_text", "stability_text", "metallicity_text",
              "magnetism_text"]


@pytest.fixture
def no_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No data directory configured, an empty user data directory, a private reference store."""
    monkeypatch.delenv("MATPCR_DATA_DIR", raising=False)
    monkeypatch.delenv("MATPCR_DATA_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("MATPCR_REFSTORE", str(tmp_path / "refs.sqlite"))
    monkeypatch.setenv("MATPCR_RENDER_DIR", str(tmp_path / "renders"))
    return tmp_path


def _embedded() -> Path:
    from matpcr_plugins.datasources.catalog import EMBEDDED

    return EMBEDDED


def test_embedded_set_is_small_and_documented() -> None:
    from matpcr.datadir import catalog

    root = _embedded()
    files = [p for p in root.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 3_000_000
    notice = (root / "NOTICE.md").read_text()
    embedded = {ds.embedded.name for ds in catalog().values() if ds.embedded is not None}
    folders = {p.name for p in root.iterdir() if p.is_dir()}
    assert folders == embedded
    for folder in folders:
        assert f"`{folder}/" in notice, folder
    for name, ds in catalog().items():  # never shipped: sets whose terms forbid it (RRUFF is attributed; see NOTICE)
        if ds.embedded is not None and not ds.redistributable:
            assert name in ("raman_rruff", "sem_bam_tio2"), name
    assert not (root / "sem_bam_tio2").exists() and not (root / "msqa").exists()
    assert "RRUFF terms, not Apache-2.0" in notice and "Lafuente" in notice


def test_every_text_task_finds_items_in_the_embedded_set(no_data_dir: Path) -> None:
    from matpcr.datadir import find
    from matpcr.plugins import get_manager
    from matpcr.protocols import as_loader
    from matpcr.tasks import resolve

    assert find("raman_rruff")[1] == "embedded"
    registry = get_manager().registry
    for task in resolve(TEXT_TASKS):
        loader = as_loader(registry.get("tasks", task.loader).factory())
        items = loader.load(task, None)
        assert items, task.task
        item = loader.complete(items[0])
        assert item.text and item.reference, task.task
        path = item.meta.get("file") or item.reference.get("file")
        if path:
            assert str(_embedded()) in str(path) or "pymatgen" in str(path), (task.task, path)


def test_user_data_dir_wins_over_the_embedded_set(no_data_dir: Path, data_dir: Path) -> None:
    import shutil

    from matpcr.datadir import user_data_dir
    from matpcr.plugins import get_manager
    from matpcr.protocols import as_loader
    from matpcr.tasks import resolve

    shutil.copytree(data_dir / "raman_rruff", user_data_dir() / "raman_rruff")
    task = resolve(["raman_text"])[0]
    items = as_loader(get_manager().registry.get("tasks", task.loader).factory()).load(task, None)
    assert len(items) == 400 and str(user_data_dir()) in items[0].reference["file"]


def test_synthetic_micrographs_calibrate_like_real_ones(tmp_path: Path) -> None:
    """The embedded micrographs are read by the same scale-bar detection and OCR as a real one, and
    matpcr renders them again identically in what matters (label, bar, particles)."""
    from matpcr_plugins.datasources.embed import SEM_SEEDS
    from matpcr_plugins.datasources.synthetic_sem import render
    from matpcr_plugins.sem.calibration import calibrate, particle_sizes_px

    folder = _embedded() / "sem_synthetic"
    with open(folder / "metadata.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["file"] for r in rows] == [f"synthetic_{s:02d}.png" for s in SEM_SEEDS]
    for row, seed in zip(rows, SEM_SEEDS):
        cal = calibrate(folder / "images" / row["file"])
        assert f"{cal.label_value:g} {cal.label_unit}" == row["scale_bar_label_transcribed"] == "500 nm"
        assert cal.bar_px == pytest.approx(float(row["label_div_pixel_size_px"]), abs=1)
        assert cal.nm_per_px == pytest.approx(float(row["pixel_size"]), rel=0.01)
        sizes = particle_sizes_px(folder / "images" / row["file"], top=cal.bar_box[0] - 30)
        assert float(sorted(sizes)[len(sizes) // 2]) == pytest.approx(float(row["median_particle_diameter_px"]), rel=0.05)
        again = render(tmp_path / row["file"], seed=seed)
        assert again.label == row["scale_bar_label_transcribed"] and again.bar_px == cal.bar_px
        assert calibrate(tmp_path / row["file"]).nm_per_px == pytest.approx(cal.nm_per_px)


@pytest.mark.slow
def test_wheel_carries_the_embedded_set_and_manifest(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                           str(tmp_path), str(REPO)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("matpcr-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"matpcr_plugins/embedded_data/{p.relative_to(_embedded()).as_posix()}"
               for p in _embedded().rglob("*") if p.is_file()}
    assert shipped <= names, sorted(shipped - names)[:5]
    assert "matpcr_plugins/datasources/manifest.json" in names


@pytest.mark.slow
def test_run_on_the_embedded_set_end_to_end(tmp_path: Path) -> None:
    """`matpcr run` with no data directory and an empty user data directory: every geometric and DFT text
    task runs on the embedded set with the embedded model and reports a PCR."""
    env = {k: v for k, v in os.environ.items() if k not in ("MATPCR_DATA_DIR", "MATPCR_DATA_HOME", "MATPCR_REFSTORE")}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), MATPCR_RENDER_DIR=str(tmp_path / "renders"))
    proc = subprocess.run([sys.executable, "-m", "matpcr.cli", "run", "--tasks", "geometric_text,dft", "--limit", "1",
                           "--generation", "max_new_tokens=32", "--output-dir", str(tmp_path / "runs"), "--cache", "none",
                           "--no-progress", "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    tasks = results["metrics"]["tasks"]
    assert sorted(tasks) == sorted(TEXT_TASKS)
    for name in TEXT_TASKS:
        assert tasks[name]["pcr"]["n"] + tasks[name].get("status_counts", {}).get("unparsable", 0) >= 0, name
        assert "pcr" in tasks[name], name
    samples = [json.loads(line) for line in (Path(results["run_dir"]) / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == len(TEXT_TASKS)
    assert not (tmp_path / "xdg" / "matpcr" / "data").exists()  # nothing was pulled: the embedded set was read
