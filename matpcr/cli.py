"""The ``matpcr`` command line."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import click

from matpcr.errors import MatpcrError
from matpcr.plugins import KINDS, get_manager

log = logging.getLogger("matpcr.cli")


class _Group(click.Group):
    """Prints MatpcrError as a one-line error instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MatpcrError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)


@click.group(cls=_Group)
@click.option("-p", "--plugin", "plugins", multiple=True, metavar="MODULE", help="Load a plugin module by import name.")
@click.option("-v", "--verbose", count=True, help="More log output (-v: info, -vv: debug).")
@click.version_option(package_name="matpcr")
@click.pass_context
def cli(ctx: click.Context, plugins: tuple[str, ...], verbose: int) -> None:
    """Measure and correct the physics in models' materials-science reasoning."""
    logging.getLogger("matpcr").setLevel(logging.WARNING - 10 * min(verbose, 2))
    ctx.ensure_object(dict)
    ctx.obj["plugins"] = list(plugins)
    manager = get_manager(plugins)
    for failure in manager.failures:
        log.warning("plugin %r (%s) failed to load: %s%s", failure.name, failure.source, failure.error,
                    f"; {failure.hint}" if failure.hint else "")


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@cli.command()
@click.option("--tasks", default="geometric_text", show_default=True, help="Comma-separated task or group names.")
@click.option("--model", default="smollm2", show_default=True, help="NAME:MODEL[@REVISION], e.g. hf:Qwen/Qwen2.5-VL-7B-Instruct.")
@click.option("--model-args", default=None, help="k=v,... passed to the backend (dtype, device, max_connections, ...).")
@click.option("--limit", type=int, default=None, help="Items per task per seed.")
@click.option("--seeds", type=int, default=1, show_default=True, help="Seeds; each draws its own item sample.")
@click.option("--batch-size", type=int, default=8, show_default=True)
@click.option("--output-dir", default="runs", show_default=True, help="Parent folder for the run directory.")
@click.option("--resume", "resume", default=None, type=click.Path(file_okay=False), help="Complete an interrupted run.")
@click.option("--oracle-args", multiple=True, help="ORACLE.param=value,... (repeatable).")
@click.option("--intervention", default=None, help="Intervention plugin name (cgsv, self_refine, reprompt, best_of_n).")
@click.option("--intervention-args", default=None, help="k=v,... for the intervention.")
@click.option("--checker", default=None, help="A reference-free checker run beside the oracles: NAME:ARG, e.g. verifier:PATH.")
@click.option("--judge", default=None, help="Judge model for judged tasks (msqa_long), NAME:MODEL like --model.")
@click.option("--judge-args", default=None, help="k=v,... for the judge backend.")
@click.option("--generation", default=None, help="k=v,... overriding the tasks' generation settings (max_new_tokens, temperature, top_p).")
@click.option("--data-dir", default=None, help="Data directory (default: $MATPCR_DATA_DIR).")
@click.option("--include-path", multiple=True, help="Extra folder of task YAML files.")
@click.option("--cache", default="default", show_default=True, help="Response cache file, or 'none'.")
@click.option("--max-connections", type=int, default=None, help="Concurrent requests for API backends.")
@click.option("--no-progress", is_flag=True, help="No progress bar or summary on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print results.json to stdout.")
@click.pass_context
def run(ctx: click.Context, tasks: str, model: str, model_args: str | None, limit: int | None, seeds: int,
        batch_size: int, output_dir: str, resume: str | None, oracle_args: tuple[str, ...], intervention: str | None,
        intervention_args: str | None, checker: str | None, judge: str | None, judge_args: str | None, generation: str | None, data_dir: str | None, include_path: tuple[str, ...], cache: str,
        max_connections: int | None, no_progress: bool, as_json: bool) -> None:
    """Evaluate a model on tasks and write a run directory."""
    from matpcr.engine import evaluate
    from matpcr.spec import parse_kv, parse_oracle_args

    margs = parse_kv(model_args)
    if max_connections is not None:
        margs["max_connections"] = max_connections
    options: dict[str, Any] = {"progress": not no_progress, "plugins": ctx.obj["plugins"]}
    if resume:
        results = evaluate([], resume=resume, **options)
    else:
        options.update(model_args=margs, limit=limit, seeds=seeds, batch_size=batch_size, output_dir=output_dir,
                       oracle_args=parse_oracle_args(oracle_args), intervention=intervention,
                       intervention_args=parse_kv(intervention_args, "--intervention-args"),
                       generation=parse_kv(generation, "--generation"), judge=judge, checker=checker,
                       judge_args=parse_kv(judge_args, "--judge-args"), data_dir=data_dir,
                       include_paths=list(include_path), cache=cache)
        results = evaluate(_csv(tasks), model=model, **options)
    from matpcr.results import print_summary

    print_summary(results, file=sys.stderr)
    if as_json:
        click.echo(json.dumps(results, indent=2, default=str))
    else:
        click.echo(results["run_dir"])


@cli.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--oracle-args", multiple=True, help="ORACLE.param=value,... overriding the run's settings.")
@click.option("--output-dir", default=None, help="Write the re-scored run here instead of in place.")
def rescore(run_dir: str, oracle_args: tuple[str, ...], output_dir: str | None) -> None:
    """Recompute verdicts and metrics from stored chains without calling a model."""
    from matpcr.rescore import rescore as do_rescore
    from matpcr.results import SUMMARY_HEADER, format_table, summary_rows
    from matpcr.spec import parse_oracle_args

    results = do_rescore(run_dir, parse_oracle_args(oracle_args), output_dir)
    click.echo(format_table(summary_rows(results), SUMMARY_HEADER))


@cli.command()
@click.argument("oracle")
@click.option("--reference", required=True, help="A file or id the oracle can read (CIF, pattern, spectrum, image, JSON).")
@click.option("--chain", required=True, help="The model's reasoning text (or @FILE to read it from a file).")
@click.option("--oracle-args", multiple=True, help="ORACLE.param=value,...")
@click.option("--json", "as_json", is_flag=True)
def check(oracle: str, reference: str, chain: str, oracle_args: tuple[str, ...], as_json: bool) -> None:
    """Run one oracle's parsing, check and accuracy on one chain against one reference."""
    from matpcr.checking import check_chain
    from matpcr.spec import parse_oracle_args

    if chain.startswith("@"):
        chain = Path(chain[1:]).read_text(encoding="utf-8")
    params = parse_oracle_args(oracle_args).get(oracle, {})
    report = check_chain(oracle, reference, chain, params)
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
        return
    click.echo(f"oracle {oracle}  reference {reference}  item verdict: {report['status']}")
    if not report["claims"]:
        click.echo("  no checkable claim found")
    for c in report["claims"]:
        acc = {True: "accurate", False: "inaccurate", None: "no accuracy criterion"}[c["accurate"]]
        click.echo(f"  {c['kind']} = {c['value']} {c['unit']}  ->  {c['verdict']['status']} ({acc}): {c['verdict']['message']}")


@cli.command()
@click.option("--oracles", default=None, help="Comma-separated oracle names (default: all).")
@click.option("--rates", default="0.1,0.3,0.5", show_default=True, help="Planted violation rates.")
@click.option("--per-reference", type=int, default=10, show_default=True, help="Planted claims per reference.")
@click.option("--max-refs", type=int, default=None, help="Use at most this many references per oracle.")
@click.option("--data-dir", default=None, help="Data directory (default: $MATPCR_DATA_DIR).")
@click.option("--oracle-args", multiple=True, help="ORACLE.param=value,...")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--output", default=None, help="Write the full report as JSON here.")
def validate(oracles: str | None, rates: str, per_reference: int, max_refs: int | None, data_dir: str | None,
             oracle_args: tuple[str, ...], seed: int, output: str | None) -> None:
    """The oracle validity gate: planted violations and consistent claims on real references."""
    from matpcr.datadir import resolve_data_dir
    from matpcr.spec import parse_oracle_args
    from matpcr.table import format_table
    from matpcr.validate import validate as run_gate

    report = run_gate(_csv(oracles) or None, tuple(float(r) for r in _csv(rates)), per_reference,
                      resolve_data_dir(data_dir), max_refs, seed, parse_oracle_args(oracle_args))
    rows = []
    for name, entry in report["oracles"].items():
        for rate, r in entry["by_rate"].items():
            rows.append([name, str(entry["n_references"]), rate, str(r["n"]), f"{r['fn_rate']:.4f}", f"{r['fp_rate']:.4f}",
                         str(r["unparsed"])])
    click.echo(format_table(rows, ["oracle", "references", "rate", "claims", "FN rate", "FP rate", "unparsed"]))
    click.echo("")
    rows = [[name, setting, f"{r['fn_rate']:.4f}", f"{r['fp_rate']:.4f}"]
            for name, entry in report["oracles"].items() for setting, r in entry["sensitivity"].items()]
    click.echo(format_table(rows, ["oracle", "tolerance", "FN rate", "FP rate"]))
    if output:
        Path(output).write_text(json.dumps(report, indent=2, default=str))


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--output-dir", default=None, help="Where to write (default: the run folder, or ./report for several).")
def report(run_dirs: tuple[str, ...], output_dir: str | None) -> None:
    """Write report.md, a self-contained report.html and PNG figures for one or more runs."""
    from matpcr.report import build_report, summary_text

    paths = build_report(list(run_dirs), output_dir)
    click.echo(summary_text(list(run_dirs)))
    click.echo(f"wrote {paths['md']} and {paths['html']}")


@cli.group()
def audit() -> None:
    """Precision audits of oracle-fired cases."""


@audit.command("sample")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--per-family", type=int, default=100, show_default=True)
@click.option("--output-dir", default="audit", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def audit_sample(run_dirs: tuple[str, ...], per_family: int, output_dir: str, seed: int) -> None:
    """Write a review sheet (audit.html + audit.csv) of oracle-fired cases."""
    from matpcr.audit import sample

    result = sample(list(run_dirs), output_dir, per_family, seed)
    click.echo(f"{result['cases']} cases {result['families']}: {result['html']} and {result['csv']}")


@audit.command("score")
@click.argument("sheet", type=click.Path())
@click.option("--json", "as_json", is_flag=True)
def audit_score(sheet: str, as_json: bool) -> None:
    """Precision (unsure excluded) with a bootstrap interval, and the tolerance effect."""
    from matpcr.audit import score
    from matpcr.table import format_table

    result = score(sheet)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    rows = [[fam, str(r["cases"]), str(r["real"]), str(r["false_positive"]), str(r["unsure"]), str(r["unjudged"]),
             "-" if r["precision"]["value"] is None else
             f"{r['precision']['value']:.3f} [{r['precision']['ci_low']:.3f}, {r['precision']['ci_high']:.3f}]",
             str(r["false_positives_within_2x_tolerance"])] for fam, r in result.items()]
    click.echo(format_table(rows, ["family", "cases", "real", "false pos.", "unsure", "unjudged", "precision [95% CI]",
                                   "FP within 2x tol."]))


@cli.command("contamination")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True)
def contamination_cmd(run_dir: str, as_json: bool) -> None:
    """Count chains that state source metadata never shown to the model (sample ids, localities)."""
    from matpcr.contamination import contamination

    result = contamination(run_dir)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"{result['contaminated']} of {result['records_checked']} checked records state hidden source metadata")
    for hit in result["hits"][:20]:
        click.echo(f"  {hit['record_key']}: {hit['field']} = {hit['value']}")


@cli.group("data")
def data_group() -> None:
    """The data directory (--data-dir, $MATPCR_DATA_DIR): what is there and whether it is intact."""


@data_group.command("ls")
@click.option("--data-dir", default=None)
def data_ls(data_dir: str | None) -> None:
    """Data sets in the data directory and the tasks whose loaders read them."""
    from matpcr.datadir import data_sets
    from matpcr.datadir import resolve_data_dir
    from matpcr.table import format_table

    rows = [[d["name"], str(d["files"]), f"{d['bytes'] / 1e6:.1f} MB", ", ".join(d["tasks"]) or "-"]
            for d in data_sets(resolve_data_dir(data_dir))]
    click.echo(format_table(rows, ["data set", "files", "size", "used by tasks"]))


@data_group.command("check")
@click.option("--data-dir", default=None)
def data_check(data_dir: str | None) -> None:
    """Verify every file against the data directory's MANIFEST.sha256."""
    from matpcr.datadir import verify_manifest
    from matpcr.datadir import resolve_data_dir

    result = verify_manifest(resolve_data_dir(data_dir))
    click.echo(f"{result['ok']} files match, {len(result['missing'])} missing, {len(result['changed'])} changed")
    for path in result["missing"][:20] + result["changed"][:20]:
        click.echo(f"  {path}")
    if result["missing"] or result["changed"]:
        raise click.exceptions.Exit(1)


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True)
def plugins_cmd(as_json: bool) -> None:
    """List installed plugins with their version and hooks."""
    manager = get_manager()
    rows = manager.listing()
    failures = [vars(f) for f in manager.failures]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "failures": failures}, indent=2))
        return
    from matpcr.table import format_table

    click.echo(format_table([[r["name"], r["version"], r["source"], ", ".join(r["hooks"])] for r in rows],
                            ["name", "version", "source", "hooks"]))
    for f in failures:
        click.echo(f"FAILED {f['name']} ({f['source']}): {f['error']}")


@cli.command("ls")
@click.argument("kind", type=click.Choice(KINDS))
@click.option("--include-path", multiple=True, help="Extra folder of task YAML files.")
@click.option("--json", "as_json", is_flag=True)
def ls_cmd(kind: str, include_path: tuple[str, ...], as_json: bool) -> None:
    """List what plugins provide: tasks, backends, oracles, scorers, checkers, interventions, report sections."""
    from matpcr.table import format_table

    registry = get_manager().registry
    if kind == "tasks":
        from matpcr.tasks import discover

        tasks = discover(include_path)
        rows = [{"name": t.task, "group": ",".join(t.group), "constraint": t.constraint, "modality": t.modality,
                 "oracle": t.oracle or t.scorer or "", "loader": t.loader, "path": t.path} for t in tasks.values()]
        header = ["name", "group", "constraint", "modality", "oracle", "loader"]
    else:
        rows = [{"name": e.name, "plugin": e.plugin, "summary": e.summary} for e in
                (registry.entries[kind][n] for n in registry.names(kind))]
        header = ["name", "plugin", "summary"]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(format_table([[r[h] for h in header] for r in rows], header))


def early_plugins(argv: list[str]) -> list[str]:
    """``-p MODULE`` options given before the subcommand: loaded before plugin commands are registered,
    so a ``-p`` plugin can add commands too."""
    found: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-p", "--plugin") and i + 1 < len(argv):
            found.append(argv[i + 1])
            i += 2
            continue
        if arg.startswith("--plugin="):
            found.append(arg.split("=", 1)[1])
        elif arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            found.append(arg[2:])
        elif not arg.startswith("-"):
            break  # the subcommand: its own options are not ours
        i += 1
    return found


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(format="%(levelname)s: %(message)s", stream=sys.stderr)
    manager = get_manager(early_plugins(argv))
    manager.register_commands(cli)
    cli(args=argv, obj={}, prog_name="matpcr")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
