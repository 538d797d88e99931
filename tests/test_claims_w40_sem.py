"""Reader rules found by the pass over the w40 sem dev batch of the claim corpus: a comparison with a typical member of
the class, its size in brackets (also opened by "around"), a next sentence that double-checks the figure and confirms
it, and a machine-format key naming the pixel size. One test per rule, each with a case written fresh here (not copied
from the corpus)."""

from __future__ import annotations

from claim_reading import reasons, values
from matpcr_plugins.sem.oracle import SEMOracle

SEM = SEMOracle()


def test_a_comparison_with_a_typical_member_of_the_class_in_brackets() -> None:
    chain = ("The grain is 41 px × 20 nm = 820 nm across. That is far coarser than typical sol-gel ZnO grains "
             "(around 60 nm), which points to over-firing.\nAnswer: 820 nm")
    assert values(SEM, chain) == [820.0]
    chain = ("The grain is 41 px × 20 nm = 820 nm across. That is far coarser than usual spray-dried granules "
             "(about 60 nm).\nAnswer: 820 nm")
    assert values(SEM, chain) == [820.0]


def test_the_typical_ones_of_this_frame_stay_a_size() -> None:
    chain = ("The marked grain is 41 px × 20 nm = 820 nm across, a little larger than typical grains in this "
             "frame (around 700 nm).\nAnswer: 820 nm")
    assert values(SEM, chain) == [820.0, 700.0]


def test_a_double_check_that_confirms_the_figure_retracts_nothing() -> None:
    chain = ("Scale: 500 nm ÷ 64 px = 7.8125 nm/px.\nWidth: 27 px × 7.8125 nm/px = 210.94 nm.\n\n"
             "Hold on, let me recheck the division: 500/64 = 7.8125, correct. So the width is about 211 nm.\n"
             "Answer: 211 nm")
    assert values(SEM, chain) == [210.94, 211.0]


def test_a_recheck_that_changes_the_figure_still_retracts() -> None:
    chain = ("Scale: 500 nm ÷ 64 px = 7.8 nm/px.\nWidth: 27 px × 7.8 nm/px = 180 nm.\n\n"
             "Wait, let me recheck the product: 27 × 7.8 = 210.6, not 180. So the width is about 211 nm.\n"
             "Answer: 211 nm")
    assert values(SEM, chain) == [211.0]


def test_a_per_pixel_key_is_the_pixel_size() -> None:
    chain = "```yaml\nscale_um_per_px: 0.04\nrod_px: 55\nrod_length_nm: 2200\n```\nAnswer: 2.2 µm"
    assert values(SEM, chain) == [2200.0]
    assert reasons(SEM, chain)["scale_um_per_px: 0.04"] == "instrument_setting"
