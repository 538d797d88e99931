"""The full verifier evaluation, on real chains only (the test side of a source-disjoint split).

Rows: in distribution (overall, per constraint type, per model that wrote the chains); the baseline that
scores each chain with its constraint's training violation rate (reads no chain: the pooled AUC a verifier
must beat, since rates differ widely between constraints); one held-out-
constraint verifier per type (each separately trained, reported one by one and never pooled); the same
verifier retrained on real chains alone (what the gate's synthetic controls add); and a learning curve
(AUC against the number of real training examples) that says how much data a target AUC would need.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from matpcr_plugins.verifier.dataset import read_split
from matpcr_plugins.verifier.metrics import axes, evaluate, reliability_figure, save
from matpcr_plugins.verifier.model import Verifier, train


def _retrained(base: str, train_rows: list[dict[str, Any]], test_rows: list[dict[str, Any]], meta: dict[str, Any],
               epochs: int) -> dict[str, Any]:
    """Train a verifier like the evaluated one on other rows, score ``test_rows``, throw the model away."""
    with tempfile.TemporaryDirectory() as tmp:
        train(base, train_rows, tmp, epochs=epochs, lr=meta.get("lr", 5e-4), max_length=meta.get("max_length", 256),
              seed=meta.get("seed", 0), base_name=meta.get("base_name"))
        p = Verifier(tmp).p_violation([r["text"] for r in test_rows])
    return evaluate(test_rows, p)


def learning_curve(base: str, train_rows: list[dict[str, Any]], test_rows: list[dict[str, Any]], meta: dict[str, Any],
                   epochs: int, fractions: list[float]) -> list[dict[str, Any]]:
    """AUC on the real test chains against the number of real training chains (nested source subsets,
    so a larger point holds every source of a smaller one)."""
    real = [r for r in train_rows if r.get("origin", "real") == "real"]
    sources = sorted({r["source_id"] for r in real})
    order = list(np.random.default_rng(meta.get("seed", 0)).permutation(len(sources)))
    points = []
    for f in sorted(fractions):
        keep = {sources[i] for i in order[:max(1, int(round(f * len(sources))))]}
        rows = [r for r in real if r["source_id"] in keep]
        if len({r["label"] for r in rows}) < 2:
            continue
        m = _retrained(base, rows, test_rows, meta, epochs)
        points.append({"fraction": f, "train_examples": len(rows), "train_sources": len(keep),
                       **{k: m.get(k) for k in ("roc_auc", "roc_auc_ci95", "f1", "ece")}})
    return points


def curve_figure(points: list[dict[str, Any]], path: Path) -> Path:
    fig, ax = axes(3.5)
    pts = [p for p in points if p.get("roc_auc") is not None]
    x = [p["train_examples"] for p in pts]
    ax.plot(x, [p["roc_auc"] for p in pts], "o-", label="ROC AUC (real test chains)")
    ax.fill_between(x, [p["roc_auc_ci95"][0] for p in pts], [p["roc_auc_ci95"][1] for p in pts], alpha=0.2,
                    label="95% source bootstrap")
    ax.axhline(0.85, color="k", linestyle="--", linewidth=0.8, label="paper's verifier (0.850)")
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("real training chains")
    ax.set_ylabel("ROC AUC")
    return save(fig, ax, "Verifier learning curve", path)


def full_evaluation(dataset_dir: str, model_dir: str, heldout: bool, base: str | None, epochs: int, out: Path,
                    origins_ablation: bool = True, curve: list[float] | None = None) -> dict[str, Any]:
    verifier = Verifier(model_dir)
    meta = verifier.meta
    base = base or meta["base"]
    trained_on = tuple(meta.get("origins") or ("real",))
    train_rows, test_rows = read_split(dataset_dir, "in_distribution", trained_on)
    if not test_rows:
        from matpcr.errors import MatpcrError

        raise MatpcrError(f"{dataset_dir}: the test split holds no real chains to evaluate on")
    p = verifier.p_violation([r["text"] for r in test_rows])
    rows: dict[str, Any] = {"in_distribution": evaluate(test_rows, p)}
    curves = {f"in distribution ({meta.get('base_name', 'verifier')})": rows["in_distribution"]["reliability"]}
    # the bar a verifier must clear: each constraint's violation rate in the training rows, as a score. Rates
    # differ widely between constraints, so a pooled AUC can be high without reading a single chain
    rates = {c: float(np.mean([r["label"] for r in train_rows if r["constraint"] == c]))
             for c in {r["constraint"] for r in train_rows}}
    prior = float(np.mean([r["label"] for r in train_rows])) if train_rows else 0.5
    rows["baseline:constraint_rate"] = evaluate(test_rows, np.array([rates.get(r["constraint"], prior) for r in test_rows]))
    for key in ("constraint", "model"):
        for value in sorted({r.get(key, "") for r in test_rows}):
            idx = [i for i, r in enumerate(test_rows) if r.get(key, "") == value]
            rows[f"in_distribution:{key}={value}"] = evaluate([test_rows[i] for i in idx], p[idx])
    if origins_ablation and set(trained_on) - {"real"}:
        real_only = [r for r in train_rows if r["origin"] == "real"]
        if len({r["label"] for r in real_only}) == 2:
            rows["real_only:in_distribution"] = _retrained(base, real_only, test_rows, meta, epochs)
            curves["trained on real chains only"] = rows["real_only:in_distribution"]["reliability"]
    if heldout:
        manifest = json.loads((Path(dataset_dir) / "manifest.json").read_text())
        for c in manifest.get("heldout", {}):
            held_train, held_test = read_split(dataset_dir, f"heldout:{c}", trained_on)
            if len({r["label"] for r in held_train}) < 2 or not held_test:
                continue
            rows[f"heldout:{c}"] = _retrained(base, held_train, held_test, meta, epochs)
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"model": str(model_dir), "dataset": str(dataset_dir), "base": meta.get("base_name"),
                              "trained_on": meta.get("origins"), "rows": rows}
    figures = [reliability_figure(curves, out / "reliability.png")]
    if curve:
        result["learning_curve"] = learning_curve(base, train_rows, test_rows, meta, epochs, curve)
        if result["learning_curve"]:
            figures.append(curve_figure(result["learning_curve"], out / "learning_curve.png"))
    metrics_path = out / "metrics.json"
    metrics_path.write_text(json.dumps(result, indent=2))
    return {**result, "metrics_path": metrics_path, "figures": figures}
