"""matpcr.stats against the seed paper's own numbers and against first principles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from matpcr import stats


def test_mcnemar_reproduces_the_paper() -> None:
    # MatPCR, Baselines: self-refine b=34, c=29, p=0.615; re-prompting b=24, c=15, p=0.20
    assert stats.mcnemar_exact(34, 29) == pytest.approx(0.615, abs=5e-4)
    assert stats.mcnemar_exact(24, 15) == pytest.approx(0.20, abs=5e-3)
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(0, 20) == pytest.approx(2 * 0.5 ** 20)


def test_balanced_accuracy_reproduces_the_paper() -> None:
    # Qwen2.5-VL-7B stability: 81/82 on the unstable class, 0/8 on the stable class -> 0.494
    y_true = [False] * 82 + [True] * 8
    y_pred = [False] * 81 + [True] + [False] * 8
    assert stats.balanced_accuracy(y_true, y_pred) == pytest.approx(0.494, abs=5e-4)


def test_hoeffding_and_bias_bound() -> None:
    t = stats.hoeffding_halfwidth(1000, alpha=0.05)
    assert 2 * math.exp(-2 * 1000 * t * t) == pytest.approx(0.05)
    assert stats.oracle_bias_bound(recall=1.0, false_alarm=0.0) == 0.0
    assert stats.oracle_bias_bound(recall=0.9, false_alarm=0.05) == pytest.approx(0.15)


def test_holm_and_bh_match_definitions() -> None:
    p = [0.01, 0.04, 0.03, 0.2]
    assert stats.holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert stats.benjamini_hochberg(p) == pytest.approx([0.04, 0.0533333, 0.0533333, 0.2], rel=1e-4)


def test_paired_outcomes_and_four_cells() -> None:
    before = [True, True, False, False, False]
    after = [True, False, True, True, False]
    out = stats.paired_outcomes(before, after)
    assert (out["b"], out["c"], out["n"]) == (1, 2, 5) and out["delta_pcr"] == pytest.approx(0.2)
    cells = stats.four_cells([True, True, False, False], [True, False, True, False])
    assert cells == {"AC": 1, "AI": 1, "WC": 1, "WI": 1, "n": 4, "disagree": 0.5}


def test_bootstrap_covers_and_resamples_sources() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(400) < 0.7
    rate = stats.bootstrap_rate(x.astype(float), n_boot=2000, seed=1)
    assert rate.ci_low < rate.value < rate.ci_high and rate.n == 400 and rate.n_sources == 400
    normal = 2 * 1.96 * math.sqrt(rate.value * (1 - rate.value) / 400)  # the percentile interval ~ the normal one
    assert rate.ci_high - rate.ci_low == pytest.approx(normal, rel=0.15)
    # 40 sources with 10 identical items each: the interval must widen to reflect 40, not 400, units
    per_source = rng.random(40) < 0.7
    clustered = np.repeat(per_source, 10).astype(float)
    sources = np.repeat(np.arange(40), 10)
    wide = stats.bootstrap_rate(clustered, sources, n_boot=2000, seed=1)
    naive = stats.bootstrap_rate(clustered, n_boot=2000, seed=1)
    assert wide.n_sources == 40 and (wide.ci_high - wide.ci_low) > 2 * (naive.ci_high - naive.ci_low)
    again = stats.bootstrap_rate(clustered, sources, n_boot=2000, seed=1)
    assert (again.ci_low, again.ci_high) == (wide.ci_low, wide.ci_high)  # seeded


def test_pcr_ignores_uncheckable_items() -> None:
    rate = stats.pcr(["consistent", "violated", "abstain", "unparsable", "consistent"], n_boot=500)
    assert rate.value == pytest.approx(2 / 3) and rate.n == 3
    assert stats.pcr([], n_boot=10).value is None
