"""The full verifier evaluation: in distribution, per constraint type, and one held-out-constraint verifier
per type (each separately trained, so their AUCs are reported one by one and never pooled)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from matpcr_plugins.verifier.dataset import read_split
from matpcr_plugins.verifier.metrics import evaluate, reliability_figure
from matpcr_plugins.verifier.model import Verifier, default_base, train


def full_evaluation(dataset_dir: str, model_dir: str, heldout: bool, base: str | None, epochs: int,
                    out: Path) -> dict[str, Any]:
    _, test_rows = read_split(dataset_dir, "in_distribution")
    verifier = Verifier(model_dir)
    p = verifier.p_violation([r["text"] for r in test_rows])
    rows: dict[str, Any] = {"in_distribution": evaluate(test_rows, p)}
    curves = {"in distribution": rows["in_distribution"]["reliability"]}
    for c in sorted({r["constraint"] for r in test_rows}):
        idx = [i for i, r in enumerate(test_rows) if r["constraint"] == c]
        rows[f"in_distribution:{c}"] = evaluate([test_rows[i] for i in idx], p[idx])
    if heldout:
        manifest = json.loads((Path(dataset_dir) / "manifest.json").read_text())
        for c in manifest.get("heldout", {}):
            train_rows, held_rows = read_split(dataset_dir, f"heldout:{c}")
            if len({r["label"] for r in train_rows}) < 2:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                train(base or verifier.meta["base"] or default_base(), train_rows, tmp, epochs=epochs,
                      seed=verifier.meta.get("seed", 0))
                ph = Verifier(tmp).p_violation([r["text"] for r in held_rows])
            rows[f"heldout:{c}"] = evaluate(held_rows, ph)
    out.mkdir(parents=True, exist_ok=True)
    figure = reliability_figure(curves, out / "reliability.png")
    metrics_path = out / "metrics.json"
    metrics_path.write_text(json.dumps({"model": str(model_dir), "dataset": str(dataset_dir), "rows": rows}, indent=2))
    return {"rows": rows, "metrics_path": metrics_path, "figure": figure}
