"""Precision audits of oracle-fired cases: a review sheet for people, and its scoring.

``sample`` draws up to N violated records per constraint family from one or more runs and writes a
self-contained ``audit.html`` (the input as a plot or micrograph with the claim marked, the claim, the
reference and the oracle's message) plus ``audit.csv`` to fill in with real / false positive / unsure.
``score`` reports precision with a bootstrap interval (unsure excluded) and the tolerance effect: how
many false positives lie within twice the tolerance of a genuine reference feature.
"""

from __future__ import annotations

import base64
import csv
import html
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from matpcr import stats
from matpcr.errors import MatpcrError
from matpcr.records import Claim
from matpcr.rundir import RunDir
from matpcr.scoring import run_oracles

log = logging.getLogger("matpcr.audit")

JUDGEMENTS = ("real", "false positive", "unsure")
COLUMNS = ["case_id", "run_dir", "record_key", "constraint", "oracle", "source_id", "claim", "message",
           "distance_to_nearest_feature", "tolerance", "judgement", "notes"]


def sample(run_dirs: list[str | Path], out_dir: str | Path, per_family: int = 100, seed: int = 0) -> dict[str, Any]:
    out = Path(out_dir)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    fired: dict[str, list[tuple[RunDir, Any, int]]] = defaultdict(list)
    runs = {}
    for d in run_dirs:
        run = RunDir(d)
        config = run.read_config()
        config["oracles"] = run_oracles(config)[0]
        runs[str(run.path)] = (run, config, run.items())
        for record in run.records():
            for k, verdict in enumerate(record.verdicts):
                if verdict["status"] == "violated":
                    fired[record.constraint].append((run, record, k))
    rng = np.random.default_rng(seed)
    rows, blocks = [], []
    for family in sorted(fired):
        cases = fired[family]
        chosen = sorted(rng.choice(len(cases), size=min(per_family, len(cases)), replace=False))
        for idx in chosen:
            run, record, k = cases[idx]
            _, config, items = runs[str(run.path)]
            if record.task not in config["oracles"]:
                raise MatpcrError(f"task {record.task!r} is not in the run's config")
            name, oracle = config["oracles"][record.task]
            claim = Claim(**{**record.claims[k], "span": tuple(record.claims[k]["span"])})
            verdict = record.verdicts[k]
            item = items.get(f"{record.task}/{record.item_id}")
            case_id = f"{family}-{len(rows) + 1:04d}"
            figure = None
            if item is not None:
                try:
                    figure = oracle.render_case(item.reference, claim, out / "cases" / f"{case_id}.png")
                except Exception as exc:  # a case without its figure is still worth reviewing
                    log.warning("case %s: the %s oracle could not draw it: %s: %s", case_id, name, type(exc).__name__, exc)
                    figure = None
            tol = oracle.params.get(oracle.tolerance_param or "", "")
            rows.append({"case_id": case_id, "run_dir": str(run.path), "record_key": record.key, "constraint": family,
                         "oracle": name, "source_id": record.source_id, "claim": f"{claim.kind} = {claim.value} {claim.unit}",
                         "message": verdict["message"], "distance_to_nearest_feature": verdict["details"].get("distance", ""),
                         "tolerance": tol, "judgement": "", "notes": ""})
            shown = item.text if item is not None else ""
            img = ""
            if figure is not None and Path(figure).exists():
                img = f"<img src='data:image/png;base64,{base64.b64encode(Path(figure).read_bytes()).decode()}'>"
            blocks.append(f"<section id='{case_id}'><h3>{case_id} · {html.escape(family)} · {html.escape(record.task)}</h3>"
                          f"{img}<p><b>Claim:</b> {html.escape(rows[-1]['claim'])} <i>({html.escape(claim.text)})</i></p>"
                          f"<p><b>Oracle:</b> {html.escape(verdict['message'])}</p>"
                          f"<details><summary>Question shown to the model</summary><pre>{html.escape(shown[:3000])}</pre></details>"
                          f"<details><summary>Model's chain</summary><pre>{html.escape(record.chain)}</pre></details>"
                          f"<p><b>Judgement</b> (enter in audit.csv): real / false positive / unsure</p></section>")
    with open(out / "audit.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>matpcr precision audit</title><style>"
            "body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}section{border-top:1px solid #ccc;"
            "padding:1em 0}img{max-width:100%}pre{white-space:pre-wrap;background:#f8f9fa;padding:.5em}</style></head>"
            f"<body><h1>Precision audit: {len(rows)} oracle-fired cases</h1><p>Fill the <code>judgement</code> column of "
            "audit.csv with real, false positive or unsure, then run <code>matpcr audit score audit.csv</code>.</p>"
            + "".join(blocks) + "</body></html>")
    (out / "audit.html").write_text(page, encoding="utf-8")
    return {"cases": len(rows), "families": {f: sum(r["constraint"] == f for r in rows) for f in fired},
            "csv": str(out / "audit.csv"), "html": str(out / "audit.html")}


def score(sheet: str | Path, n_boot: int = stats.DEFAULT_B) -> dict[str, Any]:
    path = Path(sheet)
    if not path.exists():
        raise MatpcrError(f"{path}: audit sheet not found (write one with `matpcr audit sample`)")
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    bad = [r["case_id"] for r in rows if r.get("judgement", "").strip().lower() not in (*JUDGEMENTS, "")]
    if bad:
        raise MatpcrError(f"{path}: judgements must be one of {', '.join(JUDGEMENTS)} (see cases {', '.join(bad[:5])})")
    out: dict[str, Any] = {}
    for family in sorted({r["constraint"] for r in rows}):
        fam = [r for r in rows if r["constraint"] == family]
        judged = [r for r in fam if r["judgement"].strip().lower() in ("real", "false positive")]
        fps = [r for r in judged if r["judgement"].strip().lower() == "false positive"]
        near = 0
        for r in fps:
            try:
                near += float(r["distance_to_nearest_feature"]) <= 2 * float(r["tolerance"])
            except ValueError:
                pass
        precision = stats.bootstrap_rate([float(r["judgement"].strip().lower() == "real") for r in judged],
                                         [r["source_id"] for r in judged], n_boot=n_boot)
        out[family] = {"cases": len(fam), "real": len(judged) - len(fps), "false_positive": len(fps),
                       "unsure": sum(r["judgement"].strip().lower() == "unsure" for r in fam),
                       "unjudged": sum(not r["judgement"].strip() for r in fam),
                       "precision": precision.to_dict(), "false_positives_within_2x_tolerance": near}
    return out
