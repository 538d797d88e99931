"""Scale-bar calibration and the microscopy oracle on all staged micrographs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from matpcr.errors import DataError
from matpcr.records import Claim
from matpcr.tasks import TaskConfig
from matpcr_plugins.sem.calibration import calibrate
from matpcr_plugins.sem.micrographs import MicrographLoader, calibration_report
from matpcr_plugins.sem.oracle import SEMOracle, to_nm


def test_calibration_agrees_with_metadata_on_every_image(data_dir: Path) -> None:
    report = calibration_report(data_dir)
    assert report["n_images"] == 20
    assert report["label_agree"] == 20          # includes the one "300 nm" bar
    assert report["calibration_agree"] == 20    # within 5% of the TIFF's pixel size
    assert report["max_relative_error"] < 0.02


def test_field_of_view_bounds_feature_sizes(data_dir: Path) -> None:
    oracle = SEMOracle()
    ref = oracle.read_reference(str(data_dir / "sem_bam_tio2/images/1908248.tif"))
    assert ref["fov_nm"] == pytest.approx(7520, rel=0.02)  # metadata: field width 7.52 µm
    for text in ("Answer: 60 nm", "about 0.06 µm", "0.06 um"):
        claims = oracle.extract(text)
        assert [c.value for c in claims] == [pytest.approx(60.0)]
        assert oracle.check(claims[0], ref).status == "consistent"
    big = oracle.extract("The particles are 12 µm wide.")[0]
    verdict = oracle.check(big, ref)
    assert verdict.status == "violated"
    # the feedback must not hand over the calibration or the field of view
    for leak in (f"{ref['nm_per_px']:.2f}", f"{ref['nm_per_px']:.1f}", "7520", "7.52", f"{ref['fov_nm']:.0f}"):
        assert leak not in verdict.message
    assert oracle.accurate(big, ref) is None  # no non-circular accuracy for microscopy


def test_units_normalise_with_pint() -> None:
    assert to_nm(1, "µm") == pytest.approx(1000)
    assert to_nm(2, "mm") == pytest.approx(2e6)
    assert to_nm(10, "Å") == pytest.approx(1.0)


def test_plants(data_dir: Path) -> None:
    oracle = SEMOracle()
    rng = np.random.default_rng(2)
    for path in sorted((data_dir / "sem_bam_tio2/images").glob("*.tif"))[:5]:
        ref = oracle.prepare(oracle.read_reference(str(path)))
        assert oracle.check(oracle.plant_violation(ref, rng), ref).status == "violated"
        assert oracle.check(oracle.plant_consistent(ref, rng), ref).status == "consistent"


def test_unreadable_image_and_missing_scale_bar(tmp_path: Path, data_dir: Path) -> None:
    junk = tmp_path / "junk.tif"
    junk.write_bytes(b"not an image")
    with pytest.raises(DataError, match="junk.tif: not a readable image"):
        calibrate(junk)
    from PIL import Image

    src = data_dir / "sem_bam_tio2/images/1908248.tif"
    with Image.open(src) as image:
        image.convert("L").crop((0, 0, 1024, 700)).save(tmp_path / "no_bar.png")  # info bar cut off
    with pytest.raises(DataError, match="no info bar"):
        calibrate(tmp_path / "no_bar.png")


def test_text_items_describe_calibration_inputs_not_answers(data_dir: Path) -> None:
    loader = MicrographLoader()
    items = loader.load(TaskConfig("s", "sem.micrographs", "microscopy", modality="text"), data_dir)
    item = loader.complete(items[0])
    assert "200 nm" in item.text and "px" in item.text
    assert f"{item.reference['fov_nm']:.0f}" not in item.text
    image_item = loader.complete(loader.load(TaskConfig("s", "sem.micrographs", "microscopy", modality="image"),
                                             data_dir)[0])
    assert image_item.images[0].endswith(".png") and Path(image_item.images[0]).exists()


def test_text_item_accuracy_uses_the_question_pixel_counts() -> None:
    """A model that copies "26 px" as "26 nm" fits the field of view (consistent) but is not accurate; the
    right size is the question's pixel count times the scale-bar calibration. Image items have no such
    non-circular criterion."""
    from matpcr.records import Claim
    from matpcr_plugins.sem.oracle import SEMOracle

    oracle = SEMOracle()
    reference = {"fov_nm": 7585.0, "nm_per_px": 200 / 27, "particle_px": 26.0}
    slip = Claim("feature_size", 26.0, "nm")
    assert oracle.check(slip, reference).status == "consistent" and oracle.accurate(slip, reference) is False
    assert oracle.accurate(Claim("feature_size", 193.0, "nm"), reference) is True
    assert oracle.accurate(Claim("feature_size", 230.0, "nm"), reference) is False  # 19 % off
    assert oracle.accurate(slip, {"fov_nm": 7585.0, "nm_per_px": 200 / 27}) is None
