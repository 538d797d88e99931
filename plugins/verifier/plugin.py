"""Registers the LoRA verifier as a checker and `matpcr verifier dataset|train|eval` (imports nothing heavy)."""

from __future__ import annotations

import json
from typing import Any

from matpcr import hookimpl


def _checker(path: str = "") -> Any:
    from matpcr.errors import MatpcrError
    from matpcr_plugins.verifier.checker import VerifierChecker

    if not path:
        raise MatpcrError("the verifier checker needs a trained model: --checker verifier:PATH")
    return VerifierChecker(path)


@hookimpl
def register_checkers(register: Any) -> None:
    register("verifier", _checker, "trained LoRA verifier: predicts violations without reference data (--checker)")


@hookimpl
def register_commands(cli: Any) -> None:
    import click

    @cli.group("verifier")
    def verifier() -> None:
        """The LoRA verifier: learn to predict oracle violations from the chain alone."""

    @verifier.command("dataset")
    @click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
    @click.option("--out", required=True, help="Output folder.")
    @click.option("--test-fraction", type=float, default=0.2, show_default=True)
    @click.option("--controls-per-reference", type=int, default=0, show_default=True,
                  help="Add the validity gate's controls, each written through this many chain templates "
                       "(origin `control`, labelled by construction).")
    @click.option("--control-refs", type=int, default=60, show_default=True,
                  help="References per oracle the controls are built on (0: all).")
    @click.option("--audit", "audit", multiple=True, type=click.Path(exists=True, dir_okay=False),
                  help="An audit sheet (audit.csv) whose labelled cases join as origin `audit` (repeatable).")
    @click.option("--data-dir", default=None, help="Where the controls' references are (default: the runs' own).")
    @click.option("--seed", type=int, default=0, show_default=True)
    def dataset(run_dirs: tuple[str, ...], out: str, test_fraction: float, controls_per_reference: int,
                control_refs: int, audit: tuple[str, ...], data_dir: str | None, seed: int) -> None:
        """Labelled examples from real chains, gate controls and audits, split by source and by held-out constraint."""
        from matpcr.datadir import resolve_data_dir
        from matpcr_plugins.verifier.dataset import build

        manifest = build(list(run_dirs), out, test_fraction, seed, controls_per_reference, control_refs, list(audit),
                         resolve_data_dir(data_dir) if data_dir else None)
        click.echo(json.dumps(manifest, indent=2))

    @verifier.command("train")
    @click.option("--dataset", "dataset_dir", required=True)
    @click.option("--base", default="minilm", show_default=True,
                  help="minilm (all-MiniLM-L6-v2 encoder), smollm2 (SmolLM2-135M decoder with a classification "
                       "head), or an HF folder / hub id.")
    @click.option("--split", default="in_distribution", show_default=True, help="in_distribution or heldout:CONSTRAINT")
    @click.option("--origins", default="real,control,audit", show_default=True,
                  help="Which origins to train on (the test rows are real chains whatever this says).")
    @click.option("--out", required=True)
    @click.option("--epochs", type=int, default=3, show_default=True)
    @click.option("--lr", type=float, default=5e-4, show_default=True)
    @click.option("--max-length", type=int, default=256, show_default=True, help="Tokens per example.")
    @click.option("--seed", type=int, default=0, show_default=True)
    def train_cmd(dataset_dir: str, base: str, split: str, origins: str, out: str, epochs: int, lr: float,
                  max_length: int, seed: int) -> None:
        """LoRA fine-tuning (peft) of a sequence classifier; adapter, config and metrics saved together."""
        from pathlib import Path

        from matpcr.errors import MatpcrError
        from matpcr_plugins.verifier.dataset import ORIGINS, read_split
        from matpcr_plugins.verifier.metrics import evaluate
        from matpcr_plugins.verifier.model import Verifier, resolve_base, train

        chosen = tuple(o.strip() for o in origins.split(",") if o.strip())
        unknown = sorted(set(chosen) - set(ORIGINS))
        if unknown:
            raise MatpcrError(f"--origins: unknown {', '.join(unknown)} (known: {', '.join(ORIGINS)})")
        train_rows, test_rows = read_split(dataset_dir, split, chosen)
        meta = train(resolve_base(base), train_rows, out, epochs=epochs, lr=lr, max_length=max_length, seed=seed,
                     base_name=base)
        if test_rows:
            metrics = evaluate(test_rows, Verifier(out).p_violation([r["text"] for r in test_rows]))
            meta["test_metrics"] = {k: v for k, v in metrics.items() if k != "reliability"}
            (Path(out) / "metrics.json").write_text(json.dumps({"split": split, **metrics}, indent=2))
        click.echo(json.dumps(meta, indent=2, default=str))

    @verifier.command("eval")
    @click.option("--dataset", "dataset_dir", required=True)
    @click.option("--model", "model_dir", required=True, help="A trained verifier (in-distribution).")
    @click.option("--heldout/--no-heldout", default=True, show_default=True,
                  help="Also train and evaluate one verifier per held-out constraint type.")
    @click.option("--origins-ablation/--no-origins-ablation", default=True, show_default=True,
                  help="When the verifier saw controls or audits, also train one on real chains only.")
    @click.option("--learning-curve", "curve", default="", help="Fractions of the real training sources, e.g. "
                  "0.125,0.25,0.5,1: AUC against the number of real training chains.")
    @click.option("--base", default=None, help="Base for the retrained verifiers (default: the evaluated one's).")
    @click.option("--epochs", type=int, default=3, show_default=True)
    @click.option("--out", default=None, help="Write metrics.json and the figures here (default: --model).")
    def eval_cmd(dataset_dir: str, model_dir: str, heldout: bool, origins_ablation: bool, curve: str,
                 base: str | None, epochs: int, out: str | None) -> None:
        """Precision, recall, F1, ROC AUC and calibration on real chains: overall, per constraint, per model,
        held out, without the synthetic controls, and as a learning curve."""
        from pathlib import Path

        from matpcr.errors import MatpcrError
        from matpcr.table import format_table
        from matpcr_plugins.verifier.evaluation import full_evaluation
        from matpcr_plugins.verifier.model import resolve_base

        try:
            fractions = [float(f) for f in curve.split(",") if f.strip()]
        except ValueError:
            raise MatpcrError(f"--learning-curve {curve!r}: give fractions like 0.25,0.5,1") from None
        if any(not 0 < f <= 1 for f in fractions):
            raise MatpcrError(f"--learning-curve {curve!r}: each fraction must be in (0, 1]")
        result = full_evaluation(dataset_dir, model_dir, heldout, resolve_base(base) if base else None, epochs,
                                 Path(out or model_dir), origins_ablation, fractions)

        def auc(m: dict) -> str:
            return "-" if m.get("roc_auc") is None else \
                f"{m['roc_auc']:.3f} [{m['roc_auc_ci95'][0]:.3f}, {m['roc_auc_ci95'][1]:.3f}]"

        rows = [[name, str(m["n"]), str(m["violations"]), f"{m['precision']:.3f}", f"{m['recall']:.3f}",
                 f"{m['f1']:.3f}", auc(m), f"{m['ece']:.3f}"] for name, m in result["rows"].items()]
        click.echo(f"verifier {result['base']} trained on {result['trained_on']}; test rows are real chains only")
        click.echo(format_table(rows, ["split", "n", "violations", "precision", "recall", "F1", "ROC AUC [95% CI]", "ECE"]))
        if result.get("learning_curve"):
            click.echo(format_table([[str(p["train_examples"]), str(p["train_sources"]), auc(p)]
                                     for p in result["learning_curve"]],
                                    ["real training chains", "sources", "ROC AUC [95% CI]"]))
        click.echo(f"wrote {result['metrics_path']} and {', '.join(str(f) for f in result['figures'])}")
