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
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Items per task per seed.")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True, help="Seeds; each draws its own item sample.")
@click.option("--batch-size", type=click.IntRange(min=1), default=8, show_default=True)
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
@click.option("--max-connections", type=click.IntRange(min=1), default=None, help="Concurrent requests for API backends.")
@click.option("--gate", "gate_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A gate report (`matpcr validate --output FILE`) whose recall and false-alarm figures bound the "
                   "true PCR (Corollary 2) instead of the figures stored with each oracle.")
@click.option("--shard", default=None, metavar="I/N", help="Run only part I of N of the work (items × seeds); "
              "combine the parts with `matpcr merge`.")
@click.option("--no-progress", is_flag=True, help="No progress bar or summary on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print results.json to stdout.")
@click.pass_context
def run(ctx: click.Context, tasks: str, model: str, model_args: str | None, limit: int | None, seeds: int,
        batch_size: int, output_dir: str, resume: str | None, oracle_args: tuple[str, ...], intervention: str | None,
        intervention_args: str | None, checker: str | None, judge: str | None, judge_args: str | None, generation: str | None, data_dir: str | None, include_path: tuple[str, ...], cache: str,
        max_connections: int | None, gate_file: str | None, shard: str | None, no_progress: bool,
        as_json: bool) -> None:
    """Evaluate a model on tasks and write a run directory."""
    from matpcr.engine import evaluate
    from matpcr.spec import parse_kv, parse_oracle_args

    if gate_file:  # read by each oracle when it is built (Oracle.load_gate_figures)
        import os

        os.environ["MATPCR_GATE_FILE"] = str(Path(gate_file).resolve())
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
                       include_paths=list(include_path), cache=cache, shard=shard)
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


@cli.command("merge")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", required=True, help="New folder for the merged run.")
def merge_cmd(run_dirs: tuple[str, ...], out: str) -> None:
    """Merge the shards of one run (`matpcr run ... --shard i/n`) into the run it would have been."""
    from matpcr.merge import merge
    from matpcr.results import print_summary

    results = merge(list(run_dirs), out)
    print_summary(results, file=sys.stderr)
    click.echo(results["run_dir"])


@cli.command()
@click.argument("oracle")
@click.option("--reference", default=None, help="A file or id the oracle can read (CIF, pattern, spectrum, image, JSON); "
              "with --batch, the default for lines without one.")
@click.option("--chain", default=None, help="The model's reasoning text (or @FILE to read it from a file).")
@click.option("--question", default="", help="The question the chain answers (numbers copied from it are echoes).")
@click.option("--batch", "batch", default=None, type=click.Path(dir_okay=False, allow_dash=True),
              help='JSONL file (or - for stdin) of {"reference": ..., "chain": ...} lines; prints one JSON result per line.')
@click.option("--oracle-args", multiple=True, help="ORACLE.param=value,...")
@click.option("--json", "as_json", is_flag=True)
def check(oracle: str, reference: str | None, chain: str | None, question: str, batch: str | None,
          oracle_args: tuple[str, ...], as_json: bool) -> None:
    """Run one oracle's claim reader, check and accuracy on one chain against one reference (or a batch)."""
    from matpcr.checking import check as run_check
    from matpcr.checking import check_batch
    from matpcr.spec import parse_oracle_args

    params = parse_oracle_args(oracle_args).get(oracle, {})
    if batch is not None:
        with click.open_file(batch, encoding="utf-8") as handle:
            for result in check_batch(oracle, handle, params, reference):
                click.echo(json.dumps(result, default=str))
        return
    if reference is None or chain is None:
        raise click.UsageError("give --reference and --chain, or --batch FILE.jsonl")
    if chain.startswith("@"):
        chain = Path(chain[1:]).read_text(encoding="utf-8")
    report = run_check(oracle, reference, chain, question=question, **params)
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
        return
    click.echo(f"oracle {oracle}  reference {reference}  item verdict: {report['status']}")
    if report.get("error"):
        click.echo(f"  {report['error']}")
    if not report["claims"]:
        click.echo("  no checkable claim found")
    for c in report["claims"]:
        acc = {True: "accurate", False: "inaccurate", None: "no accuracy criterion"}[c["accurate"]]
        click.echo(f"  {c['kind']} = {c['value']} {c['unit']}  ->  {c['verdict']['status']} ({acc}): {c['verdict']['message']}")
    for r in report["rejected"]:
        click.echo(f"  not a claim: {r['text']!r} ({r['reason']})")
    for note in report["notes"]:
        click.echo(f"  note: {note}")


@cli.command()
@click.option("--oracles", default=None, help="Comma-separated oracle names (default: all).")
@click.option("--rates", default="0.1,0.3,0.5", show_default=True, help="Violation shares of the planted mixtures.")
@click.option("--per-reference", type=int, default=2, show_default=True,
              help="Chain templates each control is written through, per reference.")
@click.option("--max-refs", type=int, default=60, show_default=True,
              help="References per oracle and loader (a seeded random sample; 0: all).")
@click.option("--data-dir", default=None, help="Data directory (default: $MATPCR_DATA_DIR).")
@click.option("--oracle-args", multiple=True, help="ORACLE.param=value,...")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--no-sensitivity", is_flag=True, help="Skip the tolerance grid.")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option("--output", default=None, help="Write the full report as JSON here (usable as `matpcr run --gate`).")
def validate(oracles: str | None, rates: str, per_reference: int, max_refs: int, data_dir: str | None,
             oracle_args: tuple[str, ...], seed: int, no_sensitivity: bool, as_json: bool, output: str | None) -> None:
    """The oracle validity gate: negative and positive controls built from real references, written through
    chain templates and judged through reader and oracle (docs/oracles.md, "The validity gate")."""
    from matpcr.datadir import resolve_data_dir
    from matpcr.spec import parse_oracle_args
    from matpcr.table import format_table
    from matpcr.validate import validate as run_gate

    try:
        planted_rates = tuple(float(r) for r in _csv(rates))
    except ValueError:
        raise MatpcrError(f"--rates {rates!r}: expected comma-separated fractions such as 0.1,0.3,0.5") from None
    if not planted_rates or not all(0 < r < 1 for r in planted_rates):
        raise MatpcrError(f"--rates {rates!r}: each planted violation rate must lie strictly between 0 and 1")
    if per_reference < 1:
        raise MatpcrError("--per-reference must be at least 1")
    report = run_gate(_csv(oracles) or None, planted_rates, per_reference, resolve_data_dir(data_dir),
                      max_refs or None, seed, parse_oracle_args(oracle_args), sensitivity=not no_sensitivity)
    if output:
        Path(output).write_text(json.dumps(report, indent=2, default=str))
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
        return
    rows = []
    for name, fam in report["families"].items():
        for control, c in fam["controls"].items():
            rate = "-" if c["rate"] is None else f"{c['rate']:.3f}"
            rows.append([name, control, c["kind"], str(c["n"]), rate, f"[{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]",
                         str(c["unparsed"])])
    click.echo(format_table(rows, ["family", "control", "kind", "n", "flagged", "95% CI (Clopper-Pearson)", "unparsed"]))
    click.echo("")
    rows = []
    for name, fam in report["families"].items():
        for rate, m in fam["mixtures"].items():
            rows.append([name, rate, str(m["n"]), f"{m['true_pcr']:.3f}",
                         "-" if m["measured_pcr"] is None else f"{m['measured_pcr']:.3f}",
                         f"[{m.get('pcr_true_lo', float('nan')):.3f}, {m.get('pcr_true_hi', float('nan')):.3f}]"])
    click.echo(format_table(rows, ["family", "violations", "chains", "true PCR", "measured PCR", "Corollary-2 PCR* range"]))
    click.echo("")
    rows = []
    for name, fam in report["families"].items():
        d = fam["power"]["distribution"]
        rows.append([name, str(fam["n_references"]), f"{fam['recall'] or 0:.3f}", f"{fam['false_alarm'] or 0:.3f}",
                     "-" if not d else f"{d['q50']:.3f}", "-" if not d else f"{d['q90']:.3f}"])
    click.echo(format_table(rows, ["family", "references", "recall d", "false alarm f", "p_chance median", "p_chance q90"]))
    rows = [[name, setting, f"{r['recall'] or 0:.3f}", f"{r['false_alarm'] or 0:.3f}"]
            for name, fam in report["families"].items() for setting, r in fam["sensitivity"].items()]
    if rows:
        click.echo("")
        click.echo(format_table(rows, ["family", "tolerance", "recall d", "false alarm f"]))


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--output-dir", default=None, help="Where to write (default: the run folder, or ./report for several).")
def report(run_dirs: tuple[str, ...], output_dir: str | None) -> None:
    """Write report.md, a self-contained report.html and PNG figures for one or more runs."""
    from matpcr.report import build_report, summary_text

    paths = build_report(list(run_dirs), output_dir)
    click.echo(summary_text(list(run_dirs)))
    click.echo(f"wrote {paths['md']} and {paths['html']}")


@cli.command("compare")
@click.argument("run_dirs", nargs=-1, required=True)
@click.option("--by", type=click.Choice(["constraint", "task"]), default="constraint", show_default=True,
              help="Compare per constraint or per task.")
@click.option("--pairs", type=click.Choice(["all", "first"]), default="all", show_default=True,
              help="Test every pair of runs, or the first run against each of the others.")
@click.option("--json", "as_json", is_flag=True, help="Print the full comparison as JSON.")
@click.option("--markdown", is_flag=True, help="Print GitHub tables ready to paste into a README.")
def compare_cmd(run_dirs: tuple[str, ...], by: str, pairs: str, as_json: bool, markdown: bool) -> None:
    """Compare models run on the same items: each run's PCR with its interval, and for each pair of runs the
    paired exact McNemar test on shared checkable items (b, c, ΔPCR, p, Holm and BH across the groups).
    Runs of one model over different tasks count as one when joined with '+': runs/a+runs/b."""
    from matpcr.comparison import compare_runs, to_markdown, to_text

    if len(run_dirs) < 2:
        raise click.UsageError("give at least two RUN directories (one per model)")
    if as_json and markdown:
        raise click.UsageError("--json and --markdown are alternatives; pick one")
    result = compare_runs(list(run_dirs), by=by, pairs=pairs)  # type: ignore[arg-type]
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(to_markdown(result) if markdown else to_text(result))


@cli.group()
def audit() -> None:
    """Precision audits of oracle-fired cases."""


@audit.command("sample")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--per-family", type=int, default=100, show_default=True)
@click.option("--output-dir", default="audit", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--force", is_flag=True, help="Replace a sheet that already holds judgements.")
def audit_sample(run_dirs: tuple[str, ...], per_family: int, output_dir: str, seed: int, force: bool) -> None:
    """Write a review sheet (audit.html + audit.csv) of oracle-fired cases."""
    from matpcr.audit import sample

    result = sample(list(run_dirs), output_dir, per_family, seed, force)
    click.echo(f"{result['cases']} cases {result['families']}: {result['html']} and {result['csv']}")


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
    """Data sets: where they come from, whether they are here (--data-dir, $MATPCR_DATA_DIR, else the user
    data directory, else the embedded default set), pulling them, and checking them."""


@data_group.command("ls")
@click.option("--data-dir", default=None)
@click.option("--json", "as_json", is_flag=True)
def data_ls(data_dir: str | None, as_json: bool) -> None:
    """Every data set: origin, licence, whether and where it is present, size, and the tasks that read it."""
    from matpcr.datadir import data_sets
    from matpcr.datadir import resolve_data_dir
    from matpcr.table import format_table

    resolved = resolve_data_dir(data_dir)
    sets = data_sets(resolved)
    if as_json:
        click.echo(json.dumps(sets, indent=2))
        return

    def human(n: float) -> str:
        return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"

    def size(d: dict[str, Any]) -> str:
        if d["present"] in ("data dir", "user") or d["present"].startswith("embedded"):
            return human(d["bytes"])
        return f"({human(d['declared_bytes'])})" if d.get("declared_bytes") else "-"

    rows = [[d["name"], d["origin"], d["licence"], d["present"], size(d), ", ".join(d["tasks"]) or "-"] for d in sets]
    click.echo(format_table(rows, ["data set", "origin", "licence", "present", "size", "used by tasks"]))
    if resolved is None:
        from matpcr.datadir import user_data_dir

        click.echo(f"\nno data directory configured: sets are read from {user_data_dir()} (`matpcr data pull`), "
                   "else from the embedded default set", err=True)


@data_group.command("pull")
@click.argument("names", nargs=-1)
@click.option("--all", "pull_all", is_flag=True, help="Every declared data set.")
@click.option("--data-dir", default=None, help="Where to put them (default: $MATPCR_DATA_DIR, else the user data directory).")
@click.option("--base-url", default=None, help="Fetch https://HOST/PATH from BASE_URL/HOST/PATH instead (a mirror); "
              "default $MATPCR_DATA_BASE_URL.")
@click.option("--no-progress", is_flag=True, help="No progress bars.")
def data_pull(names: tuple[str, ...], pull_all: bool, data_dir: str | None, base_url: str | None,
              no_progress: bool) -> None:
    """Download data sets from their public origins, verify each file's sha256 and lay them out as the tasks
    expect. Resumable: run it again after a failure."""
    from matpcr.datadir import catalog, pull, pull_dir
    from matpcr.table import format_table

    known = catalog()
    if pull_all:
        names = tuple(known)
    if not names:
        raise click.UsageError(f"name the data sets to pull, or pass --all (known: {', '.join(sorted(known))})")
    unknown = [n for n in names if n not in known]
    if unknown:
        from matpcr.errors import UnknownNameError

        raise UnknownNameError("data set", unknown[0], known)
    target = pull_dir(data_dir)
    click.echo(f"pulling {len(names)} data set(s) into {target}", err=True)
    results = pull(names, target, base_url=base_url, progress=not no_progress, datasets=known)
    rows = [[r["name"], r["status"], str(r.get("files", "-")),
             f"{r['bytes'] / 1e6:.1f} MB" if "bytes" in r else "-", r.get("note", "")] for r in results]
    click.echo(format_table(rows, ["data set", "status", "files", "size", "note"]))


@data_group.command("check")
@click.option("--data-dir", default=None)
def data_check(data_dir: str | None) -> None:
    """Verify every file against the data directory's MANIFEST.sha256 (default: the user data directory)."""
    from matpcr.datadir import user_data_dir, verify_manifest
    from matpcr.datadir import resolve_data_dir

    result = verify_manifest(resolve_data_dir(data_dir) or user_data_dir())
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
@click.argument("kind", type=click.Choice([*KINDS, "groups", "models"]))
@click.option("--include-path", multiple=True, help="Extra folder of task YAML files.")
@click.option("--json", "as_json", is_flag=True)
def ls_cmd(kind: str, include_path: tuple[str, ...], as_json: bool) -> None:
    """List what plugins provide: tasks (and task groups), backends, model aliases (models), oracles,
    scorers, checkers, interventions, report sections — without importing heavy libraries."""
    from matpcr.table import format_table

    registry = get_manager().registry
    if kind in ("tasks", "groups"):
        from matpcr.tasks import discover, groups

        tasks = discover(include_path)
        if kind == "tasks":
            rows = [{"name": t.task, "group": ",".join(t.group), "constraint": t.constraint, "modality": t.modality,
                     "judged by": t.oracle or t.scorer or "", "loader": t.loader, "path": t.path}
                    for t in tasks.values()]
            header = ["name", "group", "constraint", "modality", "judged by", "loader"]
        else:
            rows = [{"group": g, "tasks": ",".join(members)} for g, members in sorted(groups(tasks).items())]
            header = ["group", "tasks"]
    elif kind == "models":
        rows = [{"name": a.name, "means": f"{a.backend}:{a.model}", "plugin": a.plugin, "summary": a.summary}
                for a in sorted(registry.aliases.values(), key=lambda a: a.name.lower())]
        header = ["name", "means", "plugin", "summary"]
    else:
        rows = [{"name": e.name, "plugin": e.plugin, "summary": e.summary} for e in
                (registry.entries[kind][n] for n in registry.names(kind))]
        header = ["name", "plugin", "summary"]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(format_table([[r[h] for h in header] for r in rows], header))
        if kind == "tasks":
            click.echo("\ngroups: " + "; ".join(f"{g} = {','.join(m)}" for g, m in sorted(groups(tasks).items())))


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


# -- the run viewer and the audit workbench (matpcr.view; docs/viewer.md) --------------------------------

def _reviewer_name(reviewer: str | None) -> str:
    import getpass
    import re

    if reviewer:
        return reviewer
    try:
        name = getpass.getuser()
    except Exception:  # no login name (containers)
        name = ""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "reviewer"


@cli.command("view")
@click.argument("run_dirs", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: any free port; the address is printed).")
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in a web browser.")
@click.option("--audit", "audit_sheet", default=None, type=click.Path(exists=True),
              help="An audit sheet (audit.csv from `matpcr audit sample`, or its folder) to label in the workbench.")
@click.option("--reviewer", default=None, help="Your name for --audit: labels go to labels-NAME.csv beside the sheet "
              "(default: your login name).")
def view_cmd(run_dirs: tuple[str, ...], port: int, open_browser: bool, audit_sheet: str | None,
             reviewer: str | None) -> None:
    """Browse runs in a local web app: per-task PCR side by side, a filterable sample table, and each
    verdict drawn against its reference. Read-only; a run still being written shows new records on refresh."""
    if not run_dirs and not audit_sheet:
        raise click.UsageError("give at least one RUN directory (or --audit SHEET)")
    from matpcr.view.app import create_app, serve

    app = create_app(list(run_dirs), audit_sheet, _reviewer_name(reviewer) if audit_sheet else None)
    serve(app, port, open_browser, echo=lambda url: click.echo(f"matpcr view: serving {len(run_dirs)} run(s) at {url} "
                                                               "(Ctrl-C to stop)"))


@audit.command("serve")
@click.argument("sheet", type=click.Path(exists=True))
@click.option("--reviewer", default=None, help="Your name: labels go to labels-NAME.csv beside the sheet "
              "(default: your login name). Two reviewers label the same sheet into two files.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: any free port; the address is printed).")
@click.option("--open", "open_browser", is_flag=True, help="Open the workbench in a web browser.")
def audit_serve(sheet: str, reviewer: str | None, port: int, open_browser: bool) -> None:
    """Label an audit sheet's oracle-fired cases one at a time in the browser (real violation / false
    positive / unsure, plus a note; keys 1/2/3). Every label is saved atomically at once."""
    from matpcr.view.app import create_app, serve

    name = _reviewer_name(reviewer)
    app = create_app([], sheet, name)
    serve(app, port, open_browser, path="/audit",
          echo=lambda url: click.echo(f"matpcr audit: reviewer {name} at {url} (Ctrl-C to stop)"))


@audit.command("score")
@click.argument("sheet", type=click.Path())
@click.option("--labels", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A reviewer's labels file (repeatable; default: every labels-*.csv beside the sheet).")
@click.option("--reviewer", default=None, help="Whose labels give the headline precision (default: the sheet's "
              "own judgement column when filled, else the first labels file by name).")
@click.option("--within", multiple=True, metavar="FAMILY=VALUE",
              help="Tolerance-analysis window per family, in the oracle's unit (default: diffraction=1, spectra=10).")
@click.option("--json", "as_json", is_flag=True)
def audit_score_with_agreement(sheet: str, labels: tuple[str, ...], reviewer: str | None, within: tuple[str, ...],
                               as_json: bool) -> None:
    """Precision (unsure excluded) with a bootstrap interval per family and reviewer, Cohen's κ between
    reviewers, and the tolerance analysis (false positives near a genuine reference feature)."""
    from matpcr.audit import overall_agreement, score
    from matpcr.table import format_table

    windows: dict[str, float] = {}
    for entry in within:
        family, _, value = entry.partition("=")
        try:
            windows[family.strip()] = float(value)
        except ValueError:
            raise click.BadParameter(f"{entry!r}: expected FAMILY=NUMBER", param_hint="--within") from None
    files = list(labels) or None
    result = score(sheet, labels=files, primary=reviewer, within=windows)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return

    def rate(r: dict[str, Any]) -> str:
        p = r["precision"]
        return "-" if p["value"] is None else f"{p['value']:.3f} [{p['ci_low']:.3f}, {p['ci_high']:.3f}]"

    def near(t: dict[str, Any]) -> str:
        if t["window"] is None:
            return "-"
        return f"{t['within_window']}/{t['false_positives']} within {t['window']:g}{t['unit']}"

    lead = next(iter(result.values()), {}).get("reviewer", "sheet")
    click.echo(f"precision by family (labels of {lead}):")
    rows = [[fam, str(r["cases"]), str(r["real"]), str(r["false_positive"]), str(r["unsure"]), str(r["unjudged"]),
             rate(r), near(r["tolerance_analysis"]), str(r["false_positives_within_2x_tolerance"])]
            for fam, r in result.items()]
    click.echo(format_table(rows, ["family", "cases", "real", "false pos.", "unsure", "unjudged", "precision [95% CI]",
                                   "FP near a reference feature", "FP within 2x tol."]))
    reviewers = sorted({name for r in result.values() for name in r["reviewers"]})
    if len(reviewers) > 1:
        click.echo("\nper reviewer:")
        rows = [[fam, name, str(t["real"]), str(t["false_positive"]), str(t["unsure"]), str(t["unjudged"]), rate(t)]
                for fam, r in result.items() for name, t in r["reviewers"].items()]
        click.echo(format_table(rows, ["family", "reviewer", "real", "false pos.", "unsure", "unjudged",
                                       "precision [95% CI]"]))

        def kappa_row(group: str, a: dict[str, Any]) -> list[str]:
            k = "-" if a["kappa"] is None else f"{a['kappa']:.3f}"
            if a["kappa"] is not None and a["kappa_ci_low"] is not None:
                k += f" [{a['kappa_ci_low']:.3f}, {a['kappa_ci_high']:.3f}]"
            agree = "-" if a["observed_agreement"] is None else f"{a['observed_agreement']:.3f}"
            definite = "-" if a["kappa_definite"] is None else f"{a['kappa_definite']:.3f} (n={a['n_definite']})"
            return [group, " vs ".join(a["reviewers"]), str(a["n"]), agree, k, definite]

        click.echo("\nagreement between reviewers (Cohen's κ over cases both labelled):")
        rows = [kappa_row(fam, a) for fam, r in result.items() for a in r["agreement"]]
        rows += [kappa_row("all", a) for a in overall_agreement(sheet, files)]
        click.echo(format_table(rows, ["family", "reviewers", "both labelled", "agreement", "κ [95% CI]",
                                       "κ real vs false pos."]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
