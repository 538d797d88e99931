"""Registers the microscopy oracle, its task loader and `matpcr sem-calibration` (imports nothing heavy)."""

from __future__ import annotations

import json
from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.sem.oracle import SEMOracle

    return SEMOracle(**params)


def _micrographs() -> Any:
    from matpcr_plugins.sem.micrographs import MicrographLoader

    return MicrographLoader()


@hookimpl
def register_oracles(register: Any) -> None:
    register("sem", _oracle, "microscopy: feature sizes must fit in the field of view calibrated from the scale bar")


@hookimpl
def register_tasks(register: Any) -> None:
    register("sem.micrographs", _micrographs, "SEM micrographs with burned-in scale bars (BAM TiO2)")


@hookimpl
def register_commands(cli: Any) -> None:
    import click

    @cli.command("sem-calibration")
    @click.option("--data-dir", default=None, help="Data directory (default: $MATPCR_DATA_DIR).")
    @click.option("--json", "as_json", is_flag=True)
    def sem_calibration(data_dir: str | None, as_json: bool) -> None:
        """Check scale-bar detection and OCR against the staged metadata for every micrograph."""
        from matpcr.datadir import resolve_data_dir
        from matpcr_plugins.sem.micrographs import calibration_report

        report = calibration_report(resolve_data_dir(data_dir))
        if as_json:
            click.echo(json.dumps(report, indent=2, default=str))
            return
        for r in report["rows"]:
            click.echo(f"{r['file']}: label {r.get('label_ocr')} (metadata {r.get('label_metadata')}), "
                       f"{r.get('nm_per_px', float('nan')):.3f} nm/px (metadata {r.get('nm_per_px_metadata')})"
                       + (f"  ERROR {r['error']}" if r["error"] else ""))
        click.echo(f"label agrees on {report['label_agree']}/{report['n_images']} images; calibration within "
                   f"{report['tolerance']:.0%} on {report['calibration_agree']}/{report['n_images']}")
