"""Padding a stalled model writes (issue #12: a degenerate output must not stall a run): runs of thousands of spaces
after a value, and an Answer line that offers the classes thousands of times. The reader squeezes long whitespace
runs before reading (cue patterns backtrack over them, cubic in their length) and reads each sentence's echo of the
question once; these tests check that the padding changes nothing a reader reports and that spans still point into
the original chain (also runs that normalisation makes by blanking markup out). The times are in
``bench/claims_speed.py`` (shapes ``spaces``, ``marks`` and ``offers``)."""

from __future__ import annotations

from claim_reading import claims
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle
from test_claims_w20 import gap_q, magnet_q

METALLICITY, MAGNETISM = MetallicityOracle(), MagnetismOracle()


def test_a_run_of_spaces_after_a_value_reads_like_one_space() -> None:
    question = magnet_q("MnCoGe")
    for tail in ("per formula unit.", "which we do not reproduce.", "\n\n   Answer: magnetic"):
        plain = "The Mn moment is 2.9 µB " + tail
        padded = "The Mn moment is 2.9 µB" + " " * 3000 + tail
        assert claims(MAGNETISM, padded, question) == claims(MAGNETISM, plain, question), tail
    padded = "Mn: 2.9 µB" + " \n" * 1500 + "Co: 0.4 µB" + "\t" * 2000 + "(per atom)"
    extraction = MAGNETISM.read(padded, None)
    texts = sorted(padded[c.span[0]:c.span[1]] for c in extraction.claims)
    assert texts and all(t.startswith(("2.9", "0.4")) for t in texts), texts


def test_runs_of_markup_after_a_value_read_like_one_space() -> None:
    """Normalisation blanks markup out ("**", "{", "~"), which makes new runs of spaces: they are squeezed too."""
    question = magnet_q("MnCoGe")
    plain = "The Mn moment is 2.9 µB which we do not reproduce."
    for mark in ("*", "{", "~"):
        padded = "The Mn moment is 2.9 µB " + mark * 3000 + " which we do not reproduce."
        assert claims(MAGNETISM, padded, question) == claims(MAGNETISM, plain, question), mark


def test_whitespace_in_layout_is_kept() -> None:
    """Runs of up to eight characters (indents, aligned columns) and paragraph breaks are left as written."""
    chain = "site      moment\nMn        2.9 µB\n\n\n\n\n\n\n\n\n\nAnswer: magnetic, 2.9 µB/f.u."
    assert ("magnetic_moment", 2.9, "muB/fu") in claims(MAGNETISM, chain, magnet_q("MnCoGe"))


def test_an_answer_offering_the_classes_thousands_of_times_commits_to_nothing() -> None:
    question = gap_q("ZnSnN2")
    for n in (1, 3000):  # only the options, offered once or 3,000 times: no class, an earlier value stands
        offers = "Answer: " + " or ".join(["metallic", "gapped"] * n)
        assert claims(METALLICITY, offers, question) == []
        assert claims(METALLICITY, "PBE finds a 1.2 eV gap.\n" + offers, question) == [("band_gap", 1.2, "eV")]
    repeated = "Answer: " + ", ".join(["metallic"] * 6000) + "."
    assert [v for k, v, _ in claims(METALLICITY, repeated, question) if k == "metallicity"] == ["metallic"]
