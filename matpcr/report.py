"""Reports people would rather look at than read: ``report.md``, a self-contained ``report.html`` and PNG
figures, for one run or several runs (models) side by side."""

from __future__ import annotations

import base64
import html
import logging
from pathlib import Path
from typing import Any

from matpcr.errors import MatpcrError
from matpcr.table import format_table

log = logging.getLogger("matpcr.report")


def load_results(run_dir: str | Path) -> dict[str, Any]:
    """A run's results.json (any schema version), checked against the typed schema."""
    from matpcr.schema import load_results as load_typed

    results = load_typed(Path(run_dir) / "results.json").to_json()
    results["run_dir"] = results.get("run_dir") or str(run_dir)
    if results.get("metrics") is None:
        raise MatpcrError(f"{run_dir}: the run has no metrics yet (status {results.get('status')!r}); "
                          f"finish it with `matpcr run --resume {run_dir}`")
    return results


def plugin_sections(runs: list[dict[str, Any]], labels: list[str]) -> list[tuple[str, list[str], list[list[str]]]]:
    """Tables that plugins declare (``register_report_sections``); a failing one is named, not fatal."""
    from matpcr.plugins import get_manager

    registry = get_manager().registry
    out = []
    for name in registry.names("report_sections"):
        entry = registry.get("report_sections", name)
        try:
            sections = entry.factory(runs, labels)
        except Exception as exc:
            log.warning("report section %r of plugin %r failed: %s: %s", name, entry.plugin, type(exc).__name__, exc)
            continue
        out += [(s.title, list(s.header), [[str(c) for c in row] for row in s.rows]) for s in sections]
    return out


def run_label(results: dict[str, Any]) -> str:
    config = results.get("config", {})
    label = config.get("model", "?")
    if config.get("intervention"):
        label += f" +{config['intervention']}"
    return label


def rate_cell(rate: dict[str, Any] | None) -> str:
    if not rate or rate.get("value") is None:
        return "–"
    return f"{rate['value']:.3f} [{rate['ci_low']:.3f}, {rate['ci_high']:.3f}] (n={rate['n']})"


def _bars(path: Path, groups: list[str], series: dict[str, dict[str, dict[str, Any]]], title: str, ylabel: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(groups) * max(1, len(series))), 4), dpi=110)
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for k, (label, rates) in enumerate(series.items()):
        vals = [(rates.get(g) or {}).get("value") for g in groups]
        lo = [(rates.get(g) or {}).get("ci_low") for g in groups]
        hi = [(rates.get(g) or {}).get("ci_high") for g in groups]
        v = np.array([np.nan if a is None else a for a in vals], dtype=float)
        err = np.array([[0 if a is None or b is None else a - b for a, b in zip(vals, lo)],
                        [0 if a is None or c is None else c - a for a, c in zip(vals, hi)]], dtype=float)
        ax.bar(x + (k - (len(series) - 1) / 2) * width, v, width, yerr=err, capsize=3, label=label)
    ax.set_xticks(x, groups)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _cells_figure(path: Path, runs: list[dict[str, Any]]) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(f"{run_label(r)}\n{task}", m["accuracy_vs_consistency"]) for r in runs
            for task, m in r["metrics"]["tasks"].items() if m.get("accuracy_vs_consistency")]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(8, 1.4 + 0.6 * len(rows)), dpi=110)
    colors = {"AC": "#2b8a3e", "AI": "#f08c00", "WC": "#1c7ed6", "WI": "#c92a2a"}
    names = {"AC": "accurate, consistent", "AI": "accurate, inconsistent", "WC": "wrong, consistent", "WI": "wrong, inconsistent"}
    for i, (_, cells) in enumerate(rows):
        left = 0.0
        for key in ("AC", "AI", "WC", "WI"):
            share = cells[key] / cells["n"] if cells["n"] else 0
            ax.barh(i, share, left=left, color=colors[key], label=names[key] if i == 0 else None)
            left += share
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of checkable items with an accuracy criterion")
    ax.set_title("Accuracy versus physical consistency")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=4, frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def build_report(run_dirs: list[str | Path], out_dir: str | Path | None = None) -> dict[str, Path]:
    """Write report.md, report.html and figures (into the single run's folder, or ``out_dir``)."""
    runs = [load_results(d) for d in run_dirs]
    out = Path(out_dir or (run_dirs[0] if len(run_dirs) == 1 else "report"))
    out.mkdir(parents=True, exist_ok=True)
    labels = [run_label(r) for r in runs]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} ({Path(r['run_dir']).name})" for lab, r in zip(labels, runs)]
    # PCR tables and figures cover what oracles judged (scored tasks such as MSQA report their own metrics)
    constraints = sorted({c for r in runs for c, m in r["metrics"]["constraints"].items() if m.get("pcr")})
    modalities = sorted({k for r in runs for k, m in r["metrics"]["modalities"].items() if m.get("pcr")})
    tasks = sorted({t for r in runs for t in r["metrics"]["tasks"]})

    figures = {
        "pcr_by_constraint": _bars(out / "pcr_by_constraint.png", constraints + ["overall"],
                                   {lab: {**{c: m["pcr"] for c, m in r["metrics"]["constraints"].items()},
                                          "overall": r["metrics"]["overall"]["pcr"]} for lab, r in zip(labels, runs)},
                                   "Physical-Consistency Rate by constraint (95% bootstrap CI)", "PCR"),
        "pcr_by_modality": _bars(out / "pcr_by_modality.png", modalities,
                                 {lab: {m: v["pcr"] for m, v in r["metrics"]["modalities"].items()}
                                  for lab, r in zip(labels, runs)}, "PCR by input modality", "PCR"),
    }
    cells = _cells_figure(out / "accuracy_vs_consistency.png", runs)
    if cells:
        figures["accuracy_vs_consistency"] = cells

    sections: list[tuple[str, list[str], list[list[str]]]] = []
    sections.append(("PCR per model and constraint", ["model", *constraints, "overall"],
                     [[lab, *[rate_cell(r["metrics"]["constraints"].get(c, {}).get("pcr")) for c in constraints],
                       rate_cell(r["metrics"]["overall"]["pcr"])] for lab, r in zip(labels, runs)]))
    sections.append(("PCR per model and modality", ["model", *modalities],
                     [[lab, *[rate_cell(r["metrics"]["modalities"].get(m, {}).get("pcr")) for m in modalities]]
                      for lab, r in zip(labels, runs)]))
    rows = []
    for lab, r in zip(labels, runs):
        for t in tasks:
            m = r["metrics"]["tasks"].get(t)
            if not m:
                continue
            c = m["status_counts"]
            cells4 = m.get("accuracy_vs_consistency") or {}
            true = m.get("pcr_true_range") or {}
            true_cell = "–" if true.get("pcr_true_low") is None else \
                f"[{true['pcr_true_low']:.3f}, {true['pcr_true_high']:.3f}]"
            rows.append([lab, t, rate_cell(m.get("pcr")), true_cell, rate_cell(m.get("pcr_chance_corrected")),
                         rate_cell(m.get("first_claim_pcr")), rate_cell(m.get("claim_violation_rate")),
                         str(c.get("violated", 0)), str(c.get("abstain", 0)), str(c.get("unparsable", 0)),
                         str(c.get("error", 0)), rate_cell(m.get("accuracy")),
                         " ".join(f"{k}={cells4[k]}" for k in ("AC", "AI", "WC", "WI") if k in cells4) or "–"])
    sections.append(("Per task", ["model", "task", "PCR", "true PCR range (Corollary 2, gate d̂/f̂)",
                                  "chance-corrected PCR", "first-claim PCR",
                                  "claim violation rate ρ", "violated", "abstain", "unparsable", "error", "accuracy",
                                  "cells"], rows))
    rows = [[lab, t, name, rate_cell(rate), str(rate.get("unscored", 0))]
            for lab, r in zip(labels, runs) for t, m in r["metrics"]["tasks"].items()
            for name, rate in (m.get("scores") or {}).items()]
    if rows:
        sections.append(("Declared scores (scorers and checkers)", ["model", "task", "score", "rate", "unscored"], rows))
    rows = []
    for lab, r in zip(labels, runs):
        inter = r["metrics"].get("intervention")
        if not inter:
            continue
        for t, cell in inter.items():
            if not isinstance(cell, dict) or "b" not in cell:
                continue
            rows.append([lab, t, f"{cell['pcr_before']:.3f}", f"{cell['pcr_after']:.3f}", str(cell["b"]), str(cell["c"]),
                         f"{cell['p']:.3g}", f"{cell.get('p_holm', float('nan')):.3g}", f"{cell.get('p_bh', float('nan')):.3g}",
                         str(cell["residual_violations"]), str(cell.get("withdrawn", 0)),
                         f"{cell['claims_per_item_before']:.2f}→{cell['claims_per_item_after']:.2f}",
                         "–" if cell.get("accuracy_after") is None else f"{cell['accuracy_after']:.3f}"])
    if rows:
        sections.append(("Interventions (before → after, exact McNemar)",
                         ["model", "task", "PCR before", "PCR after", "b", "c", "p", "p Holm", "p BH", "residual",
                          "withdrawn", "claims/item", "accuracy after"], rows))

    if len(runs) >= 2:
        from matpcr.comparison import SECTION_TITLE, compare_runs, pair_rows

        try:
            header, body = pair_rows(compare_runs(list(run_dirs)))
            sections.append((SECTION_TITLE, header, body))
        except MatpcrError as exc:  # e.g. a run folder holding results.json but no samples.jsonl
            log.warning("no model comparison in the report: %s", exc)

    for title, header, body in plugin_sections(runs, labels):
        sections.append((title, header, body))

    md = ["# matpcr report", "", "Runs: " + ", ".join(f"`{r['run_dir']}`" for r in runs), ""]
    for title, header, body in sections:
        md += [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        md += ["| " + " | ".join(row) + " |" for row in body] + [""]
    md += ["## Figures", ""] + [f"![{k}]({p.name})" for k, p in figures.items()]
    (out / "report.md").write_text("\n".join(md) + "\n")

    def img(p: Path) -> str:
        return f'<img alt="{p.stem}" src="data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}">'

    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>matpcr report</title><style>",
             "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
             "margin-bottom:1.5em;font-size:13px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
             "th{background:#f1f3f5}img{max-width:100%;margin:1em 0;border:1px solid #eee}</style></head><body>",
             "<h1>matpcr report</h1>", "<p>Runs: " + ", ".join(html.escape(r["run_dir"]) for r in runs) + "</p>"]
    for title, header, body in sections:
        parts.append(f"<h2>{html.escape(title)}</h2><table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header)
                     + "</tr>" + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body)
                     + "</table>")
    parts.append("<h2>Figures</h2>" + "".join(f"<figure id='{k}'>{img(p)}</figure>" for k, p in figures.items()))
    parts.append("</body></html>")
    (out / "report.html").write_text("".join(parts))
    return {"md": out / "report.md", "html": out / "report.html", **figures}


def summary_text(run_dirs: list[str | Path]) -> str:
    runs = [load_results(d) for d in run_dirs]
    rows = [[run_label(r), t, rate_cell(m["pcr"])] for r in runs for t, m in r["metrics"]["tasks"].items()]
    return format_table(rows, ["model", "task", "PCR"])
