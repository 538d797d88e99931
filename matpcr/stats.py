"""Statistics for PCR and friends: pure, vectorised functions.

Definitions follow the MatPCR paper (Methods; Proposition 1 / Corollary 2; Supplementary Notes
1.4-1.7). Intervals are percentile bootstraps that resample *sources* when items share one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DEFAULT_B = 10_000


@dataclass
class Rate:
    """A rate with its percentile-bootstrap interval, counts and number of sources."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    numerator: int
    n: int
    n_sources: int
    confidence: float = 0.95
    n_boot: int = DEFAULT_B

    def to_dict(self) -> dict[str, Any]:
        """The rate with the Hoeffding half-width beside the bootstrap interval (the paper reports both)."""
        out = asdict(self)
        out["hoeffding_halfwidth"] = hoeffding_halfwidth(self.n, 1 - self.confidence) if self.n else None
        return out


def bootstrap_rate(
    successes: Sequence[float] | np.ndarray,
    sources: Sequence[Any] | None = None,
    *,
    weights: Sequence[float] | np.ndarray | None = None,
    n_boot: int = DEFAULT_B,
    confidence: float = 0.95,
    seed: int = 0,
) -> Rate:
    """Ratio-of-sums rate Σs/Σw with a percentile bootstrap over sources.

    ``successes[i]`` counts successes of unit i out of ``weights[i]`` trials (1 by default); units
    sharing a source are resampled together, as the paper does for items sharing a parent source.
    """
    s = np.asarray(successes, dtype=float)
    w = np.ones_like(s) if weights is None else np.asarray(weights, dtype=float)
    n = int(round(w.sum()))
    if s.size == 0 or w.sum() == 0:
        return Rate(None, None, None, 0, 0, 0, confidence, n_boot)
    if sources is None:
        codes = np.arange(s.size)
    else:
        _, codes = np.unique(np.asarray([str(x) for x in sources]), return_inverse=True)
    n_src = int(codes.max()) + 1
    num = np.bincount(codes, weights=s, minlength=n_src)
    den = np.bincount(codes, weights=w, minlength=n_src)
    value = float(num.sum() / den.sum())
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    # chunk so memory stays bounded for large source counts
    chunk = max(1, min(n_boot, 20_000_000 // max(n_src, 1)))
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, n_src, size=(stop - start, n_src), dtype=np.int32)
        bnum = num[idx].sum(axis=1)
        bden = den[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            boots[start:stop] = bnum / bden
    boots = boots[np.isfinite(boots)]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boots, [alpha, 1 - alpha]) if boots.size else (math.nan, math.nan)
    return Rate(value, float(low), float(high), int(round(s.sum())), n, n_src, confidence, n_boot)


def pcr(statuses: Sequence[str], sources: Sequence[Any] | None = None, **kw: Any) -> Rate:
    """Physical-Consistency Rate over checkable items (consistent or violated)."""
    statuses = list(statuses)
    keep = [i for i, st in enumerate(statuses) if st in ("consistent", "violated")]
    ok = [1.0 if statuses[i] == "consistent" else 0.0 for i in keep]
    src = [sources[i] for i in keep] if sources is not None else None
    return bootstrap_rate(ok, src, **kw)


def violation_rate(violations: Sequence[float], checkable: Sequence[float],
                   sources: Sequence[Any] | None = None, **kw: Any) -> Rate:
    """Per-constraint violation rate ρ_t = Σv / Σk over claims, bootstrapped over sources."""
    v = np.asarray(violations, dtype=float)
    k = np.asarray(checkable, dtype=float)
    mask = k > 0
    src = None if sources is None else [s for s, m in zip(sources, mask) if m]
    return bootstrap_rate(v[mask], src, weights=k[mask], **kw)


def hoeffding_halfwidth(n: int, alpha: float = 0.05) -> float:
    """t such that P(|X̄ − μ| > t) ≤ alpha by Hoeffding: t = sqrt(ln(2/alpha) / (2n))."""
    if n <= 0:
        return math.inf
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def oracle_bias_bound(recall: float, false_alarm: float) -> float:
    """|PCR − PCR*| ≤ (1 − d̂) + f̂ (Corollary): the most an imperfect oracle can move PCR."""
    return (1.0 - recall) + false_alarm


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs b and c."""
    from scipy import stats as sps

    if b + c == 0:
        return 1.0
    return float(sps.binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue)


def delta_pcr(b: int, c: int, n: int) -> float:
    """Change in PCR from paired before/after outcomes: (c − b) / n."""
    return (c - b) / n if n else math.nan


def holm(pvalues: Sequence[float]) -> list[float]:
    from statsmodels.stats.multitest import multipletests

    if not len(pvalues):
        return []
    return [float(p) for p in multipletests(list(pvalues), method="holm")[1]]


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    from statsmodels.stats.multitest import multipletests

    if not len(pvalues):
        return []
    return [float(p) for p in multipletests(list(pvalues), method="fdr_bh")[1]]


def paired_outcomes(before: Sequence[bool], after: Sequence[bool]) -> dict[str, Any]:
    """b (consistent → inconsistent), c (inconsistent → consistent), exact p and ΔPCR."""
    bef = np.asarray(before, dtype=bool)
    aft = np.asarray(after, dtype=bool)
    b = int((bef & ~aft).sum())
    c = int((~bef & aft).sum())
    n = int(bef.size)
    return {"n": n, "b": b, "c": c, "p": mcnemar_exact(b, c), "delta_pcr": delta_pcr(b, c, n),
            "pcr_before": float(bef.mean()) if n else None, "pcr_after": float(aft.mean()) if n else None}


def four_cells(accurate: Sequence[bool], consistent: Sequence[bool]) -> dict[str, Any]:
    """Accuracy versus consistency: AC, AI, WC, WI counts and the share where they disagree."""
    a = np.asarray(accurate, dtype=bool)
    k = np.asarray(consistent, dtype=bool)
    cells = {"AC": int((a & k).sum()), "AI": int((a & ~k).sum()), "WC": int((~a & k).sum()), "WI": int((~a & ~k).sum())}
    n = int(a.size)
    cells["n"] = n
    cells["disagree"] = (cells["AI"] + cells["WC"]) / n if n else None
    return cells


def balanced_accuracy(y_true: Sequence[bool], y_pred: Sequence[bool]) -> float | None:
    """Mean of per-class recall: corrects raw accuracy for class imbalance."""
    t = np.asarray(y_true, dtype=bool)
    p = np.asarray(y_pred, dtype=bool)
    recalls = [float((p[t == cls] == cls).mean()) for cls in (True, False) if (t == cls).any()]
    return float(np.mean(recalls)) if recalls else None


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact (beta) interval for k successes in n trials (statsmodels' ``method="beta"``); (0, 1) when n = 0."""
    if n <= 0:
        return (0.0, 1.0)
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=alpha, method="beta")
    return (0.0 if np.isnan(lo) else float(lo), 1.0 if np.isnan(hi) else float(hi))


def corollary2_bounds(pcr_value: float, recall: float, false_alarm: float) -> dict[str, float | None]:
    """Proposition 1: PCR − PCR* = τ(1 − d̂) − (1 − τ)f̂ with τ = 1 − PCR*, hence (Corollary 2)
    PCR* ∈ [PCR − (1 − d̂), PCR + f̂] (clipped to [0, 1]); solving 1 − PCR = τd̂ + (1 − τ)f̂ gives the point
    PCR* = (PCR + d̂ − 1)/(d̂ − f̂) where d̂ > f̂ (clipped)."""
    lo, hi = max(0.0, pcr_value - (1.0 - recall)), min(1.0, pcr_value + false_alarm)
    point = None
    if recall > false_alarm:
        point = float(min(1.0, max(0.0, (pcr_value + recall - 1.0) / (recall - false_alarm))))
    return {"pcr_true_low": lo, "pcr_true_high": hi, "pcr_true_point": point,
            "bias_bound": oracle_bias_bound(recall, false_alarm)}


def chance_corrected_pcr(passed: Sequence[float], chance: Sequence[float], sources: Sequence[Any] | None = None,
                         **kw: Any) -> Rate:
    """κ = (PCR − p̄)/(1 − p̄) over checkable items, with p̄ the mean of the items' chance-pass probabilities
    π_i (docs/statistics.md): the ratio of sums Σ(s_i − π_i) / Σ(1 − π_i), bootstrapped over sources so PCR
    and p̄ are resampled together. ``numerator``/``n`` of the returned Rate are rounded sums."""
    s = np.asarray(passed, dtype=float)
    p = np.asarray(chance, dtype=float)
    return bootstrap_rate(s - p, sources, weights=1.0 - p, **kw)


def balanced_accuracy_counts(y_true: Sequence[bool], y_pred: Sequence[bool]) -> dict[str, Any]:
    """Balanced accuracy with the per-class counts it rests on."""
    t = np.asarray(y_true, bool)
    pr = np.asarray(y_pred, bool)
    return {"value": balanced_accuracy(list(t), list(pr)), "n": int(t.size),
            "positive": {"n": int(t.sum()), "correct": int((t & pr).sum())},
            "negative": {"n": int((~t).sum()), "correct": int((~t & ~pr).sum())}}
