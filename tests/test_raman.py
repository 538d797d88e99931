"""The Raman oracle over every staged RRUFF spectrum."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from matpcr.errors import DataError
from matpcr.records import Claim
from matpcr.tasks import TaskConfig
from matpcr_plugins.raman.oracle import RamanOracle
from matpcr_plugins.raman.spectra import SIDECAR_FIELDS, SpectrumLoader, read_spectrum


@pytest.fixture(scope="module")
def spectra(data_dir: Path) -> list[Path]:
    files = sorted((data_dir / "raman_rruff" / "spectra").glob("*.txt"))
    assert len(files) == 400
    return files


def flattest_point(shift: np.ndarray, intensity: np.ndarray, width_cm1: float = 20.0) -> float | None:
    """Centre of the window (away from the ends) where the signal varies least, if that window is flat
    (spread under 1% of the dynamic range); None for spectra dense with bands everywhere."""
    step = float(np.median(np.diff(shift)))
    w = max(5, int(width_cm1 / step))
    best, where = np.inf, None
    for start in range(w, shift.size - 2 * w, max(1, w // 4)):
        seg = intensity[start:start + w]
        spread = float(seg.max() - seg.min())
        if spread < best:
            best, where = spread, start + w // 2
    if where is None or best > 0.01 * float(intensity.max() - intensity.min()):
        return None
    return float(shift[where])


def test_every_spectrum_accepts_its_most_prominent_peak_and_rejects_a_flat_region(spectra: list[Path]) -> None:
    oracle = RamanOracle()
    flat_checked = 0
    for path in spectra:
        ref = oracle.prepare(read_spectrum(path))
        top = float(ref.peaks[int(np.argmax(ref.prominences))])
        assert oracle.check(Claim("raman_shift", top), ref).status == "consistent", path.name
        assert oracle.accurate(Claim("raman_shift", top + 1.5), ref) is True
        flat = flattest_point(ref.shift, ref.intensity)
        if flat is None:
            continue
        verdict = oracle.check(Claim("raman_shift", flat), ref)
        assert verdict.status == "violated", (path.name, flat)
        flat_checked += 1
    assert flat_checked >= 330  # 337 of the 400 have a 20 cm⁻¹ stretch flat to 1%; the rest are noisy throughout


def test_monotonic_rise_and_shoulder_are_not_peaks() -> None:
    oracle = RamanOracle()
    x = np.linspace(100, 1200, 2201)
    main = 1000 * np.exp(-0.5 * ((x - 600) / 6) ** 2)
    shoulder = 300 * np.exp(-0.5 * ((x - 618) / 10) ** 2)  # merges into the main band's flank
    rise = 0.5 * (x - 100)  # a monotonic background
    y = main + shoulder + rise
    ref = oracle.prepare({"shift": x.tolist(), "intensity": y.tolist(), "name": "synthetic"})
    assert oracle.check(Claim("raman_shift", 600.0), ref).status == "consistent"
    assert oracle.check(Claim("raman_shift", 620.0), ref).status == "violated"  # the shoulder
    assert oracle.check(Claim("raman_shift", 1195.0), ref).status == "violated"  # top of the rise at the edge


def test_plants_on_real_spectra(spectra: list[Path]) -> None:
    oracle = RamanOracle()
    rng = np.random.default_rng(1)
    for path in spectra[::5]:
        ref = oracle.prepare(read_spectrum(path))
        assert oracle.check(oracle.plant_violation(ref, rng), ref).status == "violated"
        assert oracle.check(oracle.plant_consistent(ref, rng), ref).status == "consistent"


def test_prominence_is_a_parameter(spectra: list[Path]) -> None:
    loose, strict = RamanOracle(prominence_fraction=0.005), RamanOracle(prominence_fraction=0.2)
    ref = read_spectrum(spectra[0])
    assert loose.prepare(ref).peaks.size > strict.prepare(ref).peaks.size


@pytest.mark.parametrize("content, match", [
    ("", "no usable data"),
    ("##NAMES=x\n1, 2\n", "no usable data"),
    ("100, 1\n90, 2\n95, 3\n120, 4\n130, 5\n140, 6\n", "not monotonic"),
])
def test_bad_spectra_give_named_errors(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "bad_spectrum.txt"
    path.write_text(content)
    with pytest.raises(DataError, match=match):
        RamanOracle().read_reference(str(path))


def test_items_hide_sample_metadata(data_dir: Path) -> None:
    loader = SpectrumLoader()
    for modality in ("text", "image"):
        items = loader.load(TaskConfig("r", "raman.spectra", "spectra", modality=modality), data_dir)
        item = loader.complete(items[3])
        sidecar = item.reference["sidecar"]
        assert sidecar["RRUFFID"] and sidecar["RRUFFID"] not in item.text
        assert sidecar.get("LOCALITY", "zzz") not in item.text
        assert set(sidecar) <= set(SIDECAR_FIELDS)
        if modality == "image":
            assert Path(item.images[0]).stat().st_size > 1000
        else:
            assert "max-pooled into 4 cm⁻¹ bins" in item.text
