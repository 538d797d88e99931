"""Registers the reference-store task loader and `matpcr refs` (imports nothing heavy)."""

from __future__ import annotations

import json
from typing import Any

from matpcr import hookimpl


def _loader() -> Any:
    from matpcr_plugins.dft.loader import MaterialsLoader

    return MaterialsLoader()


@hookimpl
def register_tasks(register: Any) -> None:
    register("dft.materials", _loader, "materials from the DFT reference store (stability, metallicity, magnetism)")


@hookimpl
def register_commands(cli: Any) -> None:
    import click

    @cli.group("refs")
    def refs() -> None:
        """The DFT reference store (SQLite): import, pull from the Materials Project, inspect."""

    @refs.command("import")
    @click.argument("file", required=False)
    @click.option("--data-dir", default=None, help="Import every staged set under this data directory.")
    @click.option("--source", default=None, help="Source name for FILE (e.g. mp:mysnapshot).")
    @click.option("--map", "mapping", default=None, help="field=COLUMN,... for FILE (see docs/references.md).")
    @click.option("--store", default=None, help="Store path (default: $MATPCR_REFSTORE or the user data dir).")
    def refs_import(file: str | None, data_dir: str | None, source: str | None, mapping: str | None, store: str | None) -> None:
        """Import the staged sets (--data-dir) or one CSV/JSON FILE with a column mapping."""
        from pathlib import Path

        from matpcr.datadir import resolve_data_dir
        from matpcr.errors import MatpcrError
        from matpcr.spec import parse_kv
        from matpcr_plugins.dft.store import ReferenceStore, import_staged, import_table

        db = ReferenceStore(store)
        if file:
            if not source:
                raise MatpcrError("--source NAME is required with FILE")
            n = import_table(db, Path(file), source, {k: str(v) for k, v in parse_kv(mapping, "--map").items()})
            click.echo(f"imported {n} rows from {file} as {source} into {db.path}")
        else:
            counts = import_staged(db, resolve_data_dir(data_dir))
            for name, n in counts.items():
                click.echo(f"{name}: {n}")
            click.echo(f"store: {db.path}")

    @refs.command("pull")
    @click.argument("database", type=click.Choice(["mp"]))
    @click.option("--ids", default=None, help="Comma-separated material ids.")
    @click.option("--chemsys", default=None, help="Comma-separated chemical systems (e.g. Li-Fe-O).")
    @click.option("--formula", default=None, help="Comma-separated formulas.")
    @click.option("--batch-size", type=int, default=500, show_default=True)
    @click.option("--store", default=None)
    def refs_pull(database: str, ids: str | None, chemsys: str | None, formula: str | None, batch_size: int,
                  store: str | None) -> None:
        """Fill the store from the Materials Project (MP_API_KEY from the environment; resumable)."""
        from matpcr_plugins.dft.store import ReferenceStore, pull_mp

        split = lambda v: [x.strip() for x in (v or "").split(",") if x.strip()]  # noqa: E731
        n = pull_mp(ReferenceStore(store), split(ids), split(chemsys), split(formula), batch_size)
        click.echo(f"pulled {n} materials")

    @refs.command("ls")
    @click.option("--store", default=None)
    def refs_ls(store: str | None) -> None:
        """Sources in the store and their row counts."""
        from matpcr_plugins.dft.store import ReferenceStore

        db = ReferenceStore(store)
        for name, n in db.sources().items():
            click.echo(f"{name}\t{n}")

    @refs.command("show")
    @click.argument("material_id")
    @click.option("--store", default=None)
    def refs_show(material_id: str, store: str | None) -> None:
        """One material's rows (all sources), without the structure."""
        from dataclasses import asdict

        from matpcr_plugins.dft.store import ReferenceStore

        db = ReferenceStore(store)
        rows = [asdict(m) | {"structure": bool(m.structure)} for m in db.iter(where=f"material_id = '{material_id.replace(chr(39), '')}'")]
        if not rows:
            db.get(material_id)  # raises the named error
        click.echo(json.dumps(rows, indent=2, default=str))

    @refs.command("stats")
    @click.option("--store", default=None)
    @click.option("--json", "as_json", is_flag=True)
    def refs_stats(store: str | None, as_json: bool) -> None:
        """Counts per source: on/near the hull, metallic, magnetic, abstention bands, ε vs is_stable."""
        from matpcr.table import format_table
        from matpcr_plugins.dft.stats import store_stats

        result = store_stats(store)
        if as_json:
            click.echo(json.dumps(result, indent=2))
            return
        from matpcr_plugins.dft.thresholds import NEAR_HULL_EV, NONZERO_GAP_EV, ZERO_GAP_EV, ZERO_MOMENT_MUB_PER_ATOM

        header = ["source", "rows", "on hull", f"near hull (≤{NEAR_HULL_EV:g})", f"metallic (≤{ZERO_GAP_EV:g} eV)",
                  f"gap band {ZERO_GAP_EV:g}–{NONZERO_GAP_EV:g}", f"magnetic (≥{ZERO_MOMENT_MUB_PER_ATOM:g} µB/atom)",
                  "is_stable vs ε disagree"]
        rows = [[s, str(r["rows"]), str(r["on_hull"]), str(r["near_hull"]), str(r["metallic"]), str(r["gap_abstain"]),
                 str(r["magnetic"]), "-" if r["is_stable_n"] == 0 else
                 f"{r['epsilon_disagree']}/{r['is_stable_n']} ({r['epsilon_disagree'] / r['is_stable_n']:.1%})"]
                for s, r in result["sources"].items()]
        click.echo(format_table(rows, header))
        for eps, row in result["epsilon_sensitivity"].items():
            click.echo(f"ε = {eps} eV/atom: {row['disagree']}/{row['n']} disagree with is_stable ({row['share']:.1%})")
