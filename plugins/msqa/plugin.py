"""MSQA: the loader, its scorers, a report section and `matpcr export lm-eval` (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _loader() -> Any:
    from matpcr_plugins.msqa.data import MSQALoader

    return MSQALoader()


def _binary(**params: Any) -> Any:
    from matpcr_plugins.msqa.scorers import BinaryScorer

    return BinaryScorer(**params)


def _long(**params: Any) -> Any:
    from matpcr_plugins.msqa.scorers import LongAnswerScorer

    return LongAnswerScorer(**params)


@hookimpl
def register_tasks(register: Any) -> None:
    register("msqa", _loader, "MSQA items (binary or long answer) from a path, URL or hub dataset")


@hookimpl
def register_scorers(register: Any) -> None:
    register("msqa_binary", _binary, "MSQA YES/NO scorer: the paper's keyword rule and a robust final-answer rule")
    register("msqa_binary_cot", lambda **p: _binary(cot=True, **p),
             "MSQA YES/NO scorer for chain-of-thought: the paper's rule reads only the last five characters")
    register("msqa_judge", _long, "MSQA long answers graded by a judge model with the paper's rubric")


@hookimpl
def register_commands(cli: Any) -> None:
    import click

    @cli.group("export")
    def export() -> None:
        """Export tasks for other tools."""

    @export.command("lm-eval")
    @click.argument("out_dir")
    @click.option("--data-dir", default=None, help="Data directory holding msqa/ (default: $MATPCR_DATA_DIR).")
    @click.option("--path", default=None, help="MSQA JSON file or folder (overrides --data-dir).")
    def export_lm_eval(out_dir: str, data_dir: str | None, path: str | None) -> None:
        """Write lm-evaluation-harness task YAML for the MSQA binary tasks (same prompts as matpcr)."""
        from matpcr.datadir import resolve_data_dir
        from matpcr_plugins.msqa.export import export_lm_eval as do_export

        written = do_export(out_dir, path or (resolve_data_dir(data_dir) or ".") / "msqa")
        for p in written:
            click.echo(p)


@hookimpl
def register_report_sections(register: Any) -> None:
    def sections(runs: list[dict[str, Any]], labels: list[str]) -> list[Any]:
        from matpcr_plugins.msqa.report import msqa_sections

        return msqa_sections(runs, labels)

    register("msqa", sections, "MSQA accuracy by rule and question type; judged long answers")
