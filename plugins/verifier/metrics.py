"""Verifier metrics against held-out oracle judgements: precision, recall, F1, ROC AUC (with a
source-level bootstrap interval), expected calibration error and the reliability curve."""

from __future__ import annotations

from typing import Any

import numpy as np


def expected_calibration_error(y: np.ndarray, p: np.ndarray, bins: int = 10) -> tuple[float, list[dict[str, float]]]:
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    ece, curve = 0.0, []
    for b in range(bins):
        mask = which == b
        if not mask.any():
            continue
        conf, freq = float(p[mask].mean()), float(y[mask].mean())
        ece += mask.mean() * abs(conf - freq)
        curve.append({"bin": b, "mean_predicted": conf, "fraction_violated": freq, "n": int(mask.sum())})
    return float(ece), curve


def auc_interval(y: np.ndarray, p: np.ndarray, sources: list[str], n_boot: int = 2000, seed: int = 0) -> tuple[float, float]:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    uniq, codes = np.unique(np.asarray(sources), return_inverse=True)
    groups = [np.flatnonzero(codes == k) for k in range(len(uniq))]
    values = []
    for _ in range(n_boot):
        idx = np.concatenate([groups[k] for k in rng.integers(0, len(groups), len(groups))])
        if len(set(y[idx])) == 2:
            values.append(roc_auc_score(y[idx], p[idx]))
    if not values:
        return float("nan"), float("nan")
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def evaluate(rows: list[dict[str, Any]], p: np.ndarray, threshold: float = 0.5) -> dict[str, Any]:
    from sklearn.metrics import precision_recall_fscore_support, roc_auc_score

    y = np.array([r["label"] for r in rows])
    pred = (p >= threshold).astype(int)
    precision, recall, f1, _ = precision_recall_fscore_support(y, pred, average="binary", zero_division=0)
    out: dict[str, Any] = {"n": int(len(y)), "violations": int(y.sum()), "precision": float(precision),
                           "recall": float(recall), "f1": float(f1)}
    if len(set(y)) == 2:
        out["roc_auc"] = float(roc_auc_score(y, p))
        out["roc_auc_ci95"] = auc_interval(y, p, [r["source_id"] for r in rows])
    else:
        out["roc_auc"] = None
    out["ece"], out["reliability"] = expected_calibration_error(y, p)
    return out


def axes(height: float) -> tuple[Any, Any]:
    """A small headless figure (Agg: no display on a server or in CI)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(4.5, height), dpi=110)


def save(fig: Any, ax: Any, title: str, path: Any) -> Any:
    import matplotlib.pyplot as plt

    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def reliability_figure(curves: dict[str, list[dict[str, float]]], path: Any) -> Any:
    fig, ax = axes(4.5)
    ax.plot([0, 1], [0, 1], "k--", linewidth=0.8, label="perfect calibration")
    for name, curve in curves.items():
        ax.plot([c["mean_predicted"] for c in curve], [c["fraction_violated"] for c in curve], "o-", label=name)
    ax.set_xlabel("predicted probability of a violation")
    ax.set_ylabel("fraction the oracle flagged")
    return save(fig, ax, "Verifier reliability", path)
