"""The diffraction oracle on real structures and measured patterns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from matpcr.errors import DataError
from matpcr.records import Claim
from matpcr.tasks import TaskConfig
from matpcr_plugins.xrd.loaders import PatternLoader, StructureLoader
from matpcr_plugins.xrd.oracle import XRDOracle, d_from_two_theta, two_theta_from_d
from matpcr_plugins.xrd.patterns import computed_pattern, load_structure


@pytest.fixture(scope="module")
def silicon(data_dir: Path):
    oracle = XRDOracle()
    ref = oracle.read_reference(str(data_dir / "cif_reference_phases/dans_diffraction/Silicon.cif"))
    return oracle, oracle.prepare(ref)


def test_bragg_round_trip() -> None:
    for tt in (10.0, 28.44, 90.0, 150.0):
        assert two_theta_from_d(d_from_two_theta(tt, 1.54184), 1.54184) == pytest.approx(tt)
    assert two_theta_from_d(0.7, 1.54184) is None  # d < λ/2


def test_silicon_reflections_accepted_and_unrealizable_rejected(silicon) -> None:
    oracle, ref = silicon
    for tt in (28.44, 47.30, 56.12):  # (111), (220), (311) under Cu Kα
        assert oracle.check(Claim("two_theta", tt), ref).status == "consistent"
        assert oracle.accurate(Claim("two_theta", tt), ref) is True
    v = oracle.check(Claim("two_theta", 200.0), ref)
    assert v.status == "violated" and v.details["reason"] == "unrealizable"
    assert oracle.check(Claim("d_spacing", 0.5), ref).details["reason"] == "unrealizable"
    assert oracle.check(Claim("d_spacing", 3.1356), ref).status == "consistent"  # d(111) of Si
    assert oracle.check(Claim("two_theta", 35.0), ref).status == "violated"    # no Si line near 35°
    # no cut at 90°: Si (511)/(333) at 94.95° is a real reflection over the realizable window (issue 13)
    assert oracle.check(Claim("two_theta", 95.0), ref).status == "consistent"
    assert oracle.check(Claim("two_theta", 3.0), ref).details["reason"] == "outside_window"


def test_tolerance_and_accuracy_are_separate(silicon) -> None:
    oracle, ref = silicon
    claim = Claim("two_theta", 28.44 + 0.35)  # within 0.5° (consistent) but not 0.1° (inaccurate)
    assert oracle.check(claim, ref).status == "consistent"
    assert oracle.accurate(claim, ref) is False
    strict = XRDOracle(tolerance_deg=0.2)
    assert strict.check(claim, ref).status == "violated"


def test_messages_never_reveal_the_reference_peak(silicon) -> None:
    oracle, ref = silicon
    for tt in (30.0, 35.0, 50.5, 60.0, 75.0):
        message = oracle.check(Claim("two_theta", tt), ref).message
        for peak in ref.peaks:
            assert f"{peak:.1f}" not in message and f"{peak:.2f}" not in message


def test_plants_on_every_structure_and_pattern(data_dir: Path) -> None:
    """Planted violations are always caught and planted consistent claims always pass, on real data."""
    oracle = XRDOracle()
    rng = np.random.default_rng(0)
    structures = StructureLoader().load(TaskConfig("t", "xrd.structures", "diffraction",
                                                   loader_args={"sources": ["pymatgen", "dans", "amcsd"]}), data_dir)
    patterns = PatternLoader().load(TaskConfig("p", "xrd.patterns", "diffraction"), data_dir)
    assert len(structures) > 90 and len(patterns) > 100
    checked, unreadable = 0, []
    for loader, items in ((StructureLoader(), structures[::4]), (PatternLoader(), patterns[::4])):
        for item in items:
            try:
                ref = oracle.prepare(loader.complete(item).reference)
            except DataError as exc:  # a few staged CIFs are malformed; the error must name the file
                assert Path(item.reference["file"]).name in str(exc)
                unreadable.append(item.id)
                continue
            for _ in range(3):
                assert oracle.check(oracle.plant_violation(ref, rng), ref).status == "violated", item.id
                assert oracle.check(oracle.plant_consistent(ref, rng), ref).status == "consistent", item.id
            checked += 1
    assert checked > 50 and len(unreadable) <= 3, unreadable


def test_malformed_cif_gives_named_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.cif"
    bad.write_text("data_x\n_cell_length_a 5.4\nloop_\n_atom_site_label\nSi1 0 0\n")
    with pytest.raises(DataError, match="broken.cif"):
        load_structure(bad)


def test_computed_pattern_of_pymatgen_structure() -> None:
    items = StructureLoader().load(TaskConfig("t", "xrd.structures", "diffraction",
                                              loader_args={"sources": ["pymatgen"]}), None)
    assert items, "pymatgen's bundled structures need no data directory"
    item = StructureLoader().complete(items[0])
    assert "Lattice:" in item.text and "2θ" in item.text
    assert len(item.reference["two_theta"]) > 0 and "intensity" in item.reference
    # the question never contains the answer
    strongest = item.reference["two_theta"][int(np.argmax(item.reference["intensity"]))]
    assert f"{strongest:.2f}" not in item.text


def test_measured_peaks_match_structure_of_same_phase(data_dir: Path) -> None:
    """A measured single-phase pattern (MnO) and its reference CIF agree on the strongest reflection."""
    oracle = XRDOracle()
    measured = oracle.prepare(oracle.read_reference(str(data_dir / "xrd_autoanalyzer_limntiof/spectra/MnO.xy")))
    structure = load_structure(data_dir / "xrd_autoanalyzer_limntiof/reference_cifs/MnO_225.cif")
    ref = computed_pattern(structure, "CuKa", (10.0, 100.0))
    strongest = ref["two_theta"][int(np.argmax(ref["intensity"]))]
    assert oracle.check(Claim("two_theta", strongest), measured).status == "consistent"


def test_wavelengths_are_pymatgens() -> None:
    """One spelling of Cu Kα (plugins/xrd/radiation.py), equal to the lines pymatgen computes patterns with."""
    from pymatgen.analysis.diffraction.xrd import WAVELENGTHS

    from matpcr_plugins.xrd.radiation import CU_KA, CU_KA1, CU_KA1_NAME, CU_KA_NAME

    assert WAVELENGTHS[CU_KA_NAME] == pytest.approx(CU_KA) and WAVELENGTHS[CU_KA1_NAME] == pytest.approx(CU_KA1)
