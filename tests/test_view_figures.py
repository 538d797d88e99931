"""The oracles' figures of one verdict (``render_case``), which the viewer and the audit show: every
family draws on real references, including the awkward claims (unrealizable, off-range, no value)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from matpcr.records import Claim


def _reference(task: str, data_dir: Path) -> dict[str, Any]:
    from matpcr.engine import sample_items
    from matpcr.plugins import get_manager
    from matpcr.tasks import resolve

    (config,) = resolve([task])
    loader = get_manager().registry.get("tasks", config.loader).factory()
    return loader.complete(sample_items(loader.load(config, data_dir), config.task, 0, 1)[0]).reference


def _png(path: Path | None, min_width: int = 500) -> None:
    from PIL import Image

    assert path is not None and path.is_file()
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width >= min_width and image.height >= 150


def test_diffraction_figures(data_dir: Path, tmp_path: Path) -> None:
    from matpcr_plugins.xrd.oracle import XRDOracle

    ref = _reference("xrd_text", data_dir)
    oracle = XRDOracle()
    peak = float(oracle.prepare(ref).peaks[0])
    for n, claim in enumerate([Claim("two_theta", peak + 0.8, "deg"), Claim("two_theta", 200.0, "deg"),
                               Claim("two_theta", 95.0, "deg"), Claim("d_spacing", 0.2, "angstrom"),
                               Claim("d_spacing", 3.0, "angstrom")]):
        _png(oracle.render_case(ref, claim, tmp_path / f"xrd{n}.png"))


def test_spectra_figures(data_dir: Path, tmp_path: Path) -> None:
    from matpcr_plugins.raman.oracle import RamanOracle

    ref = _reference("raman_text", data_dir)
    oracle = RamanOracle()
    peak = float(oracle.prepare(ref).peaks[0])
    for n, value in enumerate([peak + 7.5, 3999.0, peak]):
        _png(oracle.render_case(ref, Claim("raman_shift", value, "cm-1"), tmp_path / f"raman{n}.png"))


def test_micrograph_figures(data_dir: Path, tmp_path: Path) -> None:
    from matpcr_plugins.sem.oracle import SEMOracle

    ref = _reference("sem_text", data_dir)
    for n, size in enumerate([float(ref["fov_nm"]) * 5, 50.0, -3.0]):
        _png(SEMOracle().render_case(ref, Claim("feature_size", size, "nm"), tmp_path / f"sem{n}.png"))


@pytest.mark.parametrize("name,claims", [
    ("stability", [Claim("stability", "stable"), Claim("stability", "unstable"), Claim("stability", "metastable"),
                   Claim("e_above_hull", 0.4, "eV/atom"), Claim("e_above_hull", -0.1, "eV/atom")]),
    ("metallicity", [Claim("metallicity", "metallic"), Claim("metallicity", "gapped"), Claim("band_gap", 0.1, "eV"),
                     Claim("band_gap", 3.2, "eV")]),
    ("magnetism", [Claim("magnetism", "magnetic"), Claim("magnetism", "nonmagnetic"),
                   Claim("magnetic_moment", 40.0, "muB/atom"), Claim("magnetic_moment", 2.0, "muB/fu")]),
])
def test_dft_number_lines(name: str, claims: list[Claim], tmp_path: Path) -> None:
    from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle

    oracle = {"stability": StabilityOracle, "metallicity": MetallicityOracle, "magnetism": MagnetismOracle}[name]()
    refs = [{"material_id": "mp-1", "formula": "Fe2O3", "nsites": 10, "energy_above_hull": 0.08, "band_gap": 1.9,
             "total_magnetization": 8.0},
            {"material_id": "mp-2", "formula": "Cu", "nsites": 1, "energy_above_hull": 0.0, "band_gap": 0.0,
             "total_magnetization": 0.0},
            {"material_id": "mp-3", "formula": "NaCl", "nsites": 2}]  # no DFT value: the claim abstains
    for i, ref in enumerate(refs):
        for n, claim in enumerate(claims):
            _png(oracle.render_case(ref, claim, tmp_path / f"{name}-{i}-{n}.png"))
