"""Precision audits of oracle-fired cases: a review sheet for people, labels, agreement and scoring.

``sample`` draws up to N violated records per constraint family from one or more runs and writes a
self-contained ``audit.html`` (the input as a plot or micrograph with the claim marked, the claim, the
reference and the oracle's message) plus ``audit.csv`` to fill in with real / false positive / unsure.

Labels come either from the sheet's own ``judgement`` column (filled by hand) or from the browser
workbench (``matpcr audit serve``), which writes one file per reviewer beside the sheet,
``labels-NAME.csv``, rewritten atomically (temporary file + ``os.replace``) after every case, so
closing the browser or killing the server loses nothing.

``score`` reports, per family, precision with a bootstrap interval (unsure excluded), per reviewer,
the chance-corrected agreement between reviewers (Cohen's κ, with a bootstrap interval) and the
tolerance analysis the MatPCR paper reports: how many false positives lie within a fixed window of a
genuine reference feature (1° for diffraction, 10 cm⁻¹ for spectra; ``within=`` overrides), beside the
older "within twice the oracle's tolerance" count.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import itertools
import logging
import math
import os
import re
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from matpcr import stats
from matpcr.errors import MatpcrError
from matpcr.records import Claim
from matpcr.rundir import RunDir, write_atomic
from matpcr.scoring import run_oracles

log = logging.getLogger("matpcr.audit")

JUDGEMENTS = ("real", "false positive", "unsure")
#: what the workbench writes, one file per reviewer beside the sheet (labels-NAME.csv)
LABEL_COLUMNS = ["case_id", "record_key", "constraint", "judgement", "notes", "reviewer", "labelled_at"]
#: the paper's tolerance analysis: a false positive counts as "near" when the verdict's distance to the
#: nearest genuine reference feature (in the oracle's own unit: degrees 2θ, cm⁻¹) is within this window
PAPER_WINDOWS: dict[str, float] = {"diffraction": 1.0, "spectra": 10.0}
WINDOW_UNITS: dict[str, str] = {"diffraction": "°", "spectra": "cm⁻¹"}
_REVIEWER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SAVE_LOCK = threading.Lock()
COLUMNS = ["case_id", "run_dir", "record_key", "constraint", "oracle", "source_id", "claim", "message",
           "distance_to_nearest_feature", "tolerance", "judgement", "notes", "claim_index"]


def labelled_work(out: Path) -> list[Path]:
    """Files in an audit folder that hold someone's judgements (a filled sheet, reviewers' label files)."""
    found = sorted(out.glob("labels-*.csv"))
    sheet = out / "audit.csv"
    if sheet.exists():
        with open(sheet, newline="", encoding="utf-8") as handle:
            if any((row.get("judgement") or "").strip() for row in csv.DictReader(handle)):
                found.insert(0, sheet)
    return found


def sample(run_dirs: list[str | Path], out_dir: str | Path, per_family: int = 100, seed: int = 0,
           force: bool = False) -> dict[str, Any]:
    out = Path(out_dir)
    labelled = labelled_work(out) if out.is_dir() else []
    if labelled and not force:
        raise MatpcrError(f"{out} already holds judgements ({', '.join(p.name for p in labelled)}); a new sheet would "
                          "orphan them: pass another --output-dir, or --force to start over")
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
            rows.append({"case_id": case_id, "run_dir": str(run.path.resolve()), "record_key": record.key, "constraint": family,
                         "oracle": name, "source_id": record.source_id, "claim": f"{claim.kind} = {claim.value} {claim.unit}",
                         "message": verdict["message"], "distance_to_nearest_feature": verdict["details"].get("distance", ""),
                         "tolerance": tol, "judgement": "", "notes": "", "claim_index": k})
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
            "audit.csv with real, false positive or unsure (or label the cases in the browser with "
            "<code>matpcr audit serve audit.csv --reviewer NAME</code>), then run "
            "<code>matpcr audit score audit.csv</code>.</p>"
            + "".join(blocks) + "</body></html>")
    (out / "audit.html").write_text(page, encoding="utf-8")
    return {"cases": len(rows), "families": {f: sum(r["constraint"] == f for r in rows) for f in fired},
            "csv": str(out / "audit.csv"), "html": str(out / "audit.html")}




# -- sheets and labels ---------------------------------------------------------------------------

def normalize_judgement(value: Any) -> str:
    """``real`` / ``false positive`` / ``unsure`` (``false_positive``, ``False-Positive`` and ``fp`` accepted)."""
    text = re.sub(r"[\s_-]+", " ", str(value or "")).strip().lower()
    return {"fp": "false positive", "false": "false positive", "true": "real", "tp": "real"}.get(text, text)


def read_sheet(sheet: str | Path) -> list[dict[str, str]]:
    """The rows of an audit sheet written by :func:`sample` (a named error when it is not one)."""
    path = Path(sheet)
    if not path.is_file():
        raise MatpcrError(f"{path}: audit sheet not found (write one with `matpcr audit sample`)")
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            fields = reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise MatpcrError(f"{path}: unreadable audit sheet ({exc})") from None
    missing = [c for c in ("case_id", "record_key", "constraint") if c not in fields]
    if missing:
        raise MatpcrError(f"{path}: not an audit sheet (no {', '.join(missing)} column); write one with "
                          "`matpcr audit sample`")
    return rows


def check_reviewer(name: str) -> str:
    if not _REVIEWER.match(name or ""):
        raise MatpcrError(f"reviewer name {name!r}: use letters, digits, '.', '_' or '-' (it names the labels file)")
    return name


def labels_path(sheet: str | Path, reviewer: str) -> Path:
    """Where the workbench keeps one reviewer's labels: ``labels-NAME.csv`` beside the sheet."""
    return Path(sheet).parent / f"labels-{check_reviewer(reviewer)}.csv"


def read_labels(path: str | Path) -> dict[str, dict[str, str]]:
    """``{case_id: label row}`` of a labels file (empty when there is none yet)."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise MatpcrError(f"{path}: unreadable labels file ({exc})") from None
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        if not row.get("case_id"):
            continue
        row["judgement"] = normalize_judgement(row.get("judgement"))
        if row["judgement"] not in (*JUDGEMENTS, ""):
            raise MatpcrError(f"{path}: judgements must be one of {', '.join(JUDGEMENTS)} "
                              f"(case {row['case_id']}: {row['judgement']!r})")
        out[row["case_id"]] = {c: row.get(c) or "" for c in LABEL_COLUMNS}
    return out


def _write_csv_atomic(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """The whole sheet written atomically (``rundir.write_atomic``): a crash leaves the old file or the new one."""
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    try:
        write_atomic(path, buffer.getvalue().encode("utf-8"))
    except OSError as exc:
        raise MatpcrError(f"could not save labels to {path} ({exc.strerror or exc}); the labels saved before "
                          "this one are intact") from None


def save_label(path: str | Path, case: dict[str, Any], judgement: str, notes: str = "",
               reviewer: str = "") -> dict[str, str]:
    """Record one reviewer's label for one case (replacing an earlier one) and save the file atomically."""
    path = Path(path)
    judgement = normalize_judgement(judgement)
    if judgement not in JUDGEMENTS:
        raise MatpcrError(f"label {judgement!r}: must be one of {', '.join(JUDGEMENTS)}")
    row = {"case_id": str(case["case_id"]), "record_key": str(case.get("record_key", "")),
           "constraint": str(case.get("constraint", "")), "judgement": judgement,
           "notes": " ".join(str(notes or "").split())[:2000], "reviewer": reviewer,
           "labelled_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    with _SAVE_LOCK:
        labels = read_labels(path)
        labels[row["case_id"]] = row
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_csv_atomic(path, LABEL_COLUMNS, list(labels.values()))
    return row


def reviewer_labels(sheet: str | Path, labels: list[str | Path] | None = None,
                    rows: list[dict[str, str]] | None = None) -> dict[str, dict[str, str]]:
    """``{reviewer: {case_id: judgement}}``: the sheet's own judgement column (reviewer ``sheet``, when it
    holds any) and each labels file (``labels`` or every ``labels-*.csv`` beside the sheet)."""
    rows = read_sheet(sheet) if rows is None else rows
    bad = [r["case_id"] for r in rows if normalize_judgement(r.get("judgement")) not in (*JUDGEMENTS, "")]
    if bad:
        raise MatpcrError(f"{sheet}: judgements must be one of {', '.join(JUDGEMENTS)} (see cases {', '.join(bad[:5])})")
    ids = {r["case_id"] for r in rows}
    out: dict[str, dict[str, str]] = {}
    own = {r["case_id"]: normalize_judgement(r.get("judgement")) for r in rows if (r.get("judgement") or "").strip()}
    if own:
        out["sheet"] = own
    files = [Path(f) for f in labels] if labels is not None else sorted(Path(sheet).parent.glob("labels-*.csv"))
    for f in files:
        name = f.stem[len("labels-"):] if f.stem.startswith("labels-") else f.stem
        found = read_labels(f)
        if labels is not None and not f.exists():
            raise MatpcrError(f"{f}: labels file not found")
        unknown = sorted(set(found) - ids)
        if unknown:
            log.warning("%s: %d label(s) for cases not in %s (e.g. %s) are ignored", f, len(unknown), sheet, unknown[0])
        out[name] = {cid: lab["judgement"] for cid, lab in found.items() if cid in ids and lab["judgement"]}
    return out


# -- agreement -------------------------------------------------------------------------------------

def cohen_kappa(a: list[str], b: list[str]) -> float | None:
    """Cohen's κ of two reviewers' labels of the same cases (scikit-learn); ``None`` when undefined
    (no case, or both reviewers used one and the same label throughout, so chance agreement is 1)."""
    if not a or len(set(a) | set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score(a, b, labels=sorted(set(a) | set(b))))
    return value if math.isfinite(value) else None


def kappa_interval(a: list[str], b: list[str], n_boot: int = stats.DEFAULT_B, confidence: float = 0.95,
                   seed: int = 0) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of Cohen's κ, resampling cases (vectorised; resamples where κ is
    undefined are dropped)."""
    cats = sorted(set(a) | set(b))
    n, k = len(a), len(cats)
    if n < 2 or k < 2:
        return None, None
    code = {c: i for i, c in enumerate(cats)}
    pairs = np.array([code[x] * k + code[y] for x, y in zip(a, b)])
    rng = np.random.default_rng(seed)
    values = []
    chunk = max(1, min(n_boot, 5_000_000 // n))
    for start in range(0, n_boot, chunk):
        m = min(chunk, n_boot - start)
        flat = pairs[rng.integers(0, n, size=(m, n))] + (k * k) * np.arange(m)[:, None]
        table = np.bincount(flat.ravel(), minlength=m * k * k).reshape(m, k, k) / n
        po = np.trace(table, axis1=1, axis2=2)
        pe = (table.sum(axis=2) * table.sum(axis=1)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            values.append((po - pe) / (1 - pe))
    boots = np.concatenate(values)
    boots = boots[np.isfinite(boots)]
    if not boots.size:
        return None, None
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boots, [alpha, 1 - alpha])
    return float(low), float(high)


def agreement(by_reviewer: dict[str, dict[str, str]], case_ids: list[str], n_boot: int = stats.DEFAULT_B
              ) -> list[dict[str, Any]]:
    """Cohen's κ for every pair of reviewers over the cases both labelled: over the three labels, and over
    the cases both called real or false positive (``kappa_definite``)."""
    out = []
    for ra, rb in itertools.combinations(sorted(by_reviewer), 2):
        la, lb = by_reviewer[ra], by_reviewer[rb]
        both = [c for c in case_ids if la.get(c) and lb.get(c)]
        a, b = [la[c] for c in both], [lb[c] for c in both]
        definite = [(x, y) for x, y in zip(a, b) if x != "unsure" and y != "unsure"]
        low, high = kappa_interval(a, b, n_boot)
        out.append({"reviewers": [ra, rb], "n": len(both),
                    "observed_agreement": (sum(x == y for x, y in zip(a, b)) / len(both)) if both else None,
                    "kappa": cohen_kappa(a, b), "kappa_ci_low": low, "kappa_ci_high": high,
                    "n_definite": len(definite),
                    "kappa_definite": cohen_kappa([x for x, _ in definite], [y for _, y in definite])})
    return out


# -- scoring ---------------------------------------------------------------------------------------

def _tally(fam: list[dict[str, str]], labels: dict[str, str], n_boot: int) -> dict[str, Any]:
    judged = [r for r in fam if labels.get(r["case_id"]) in ("real", "false positive")]
    real = [float(labels[r["case_id"]] == "real") for r in judged]
    precision = stats.bootstrap_rate(real, [r.get("source_id") or r["case_id"] for r in judged], n_boot=n_boot)
    return {"real": int(sum(real)), "false_positive": len(judged) - int(sum(real)),
            "unsure": sum(labels.get(r["case_id"]) == "unsure" for r in fam),
            "unjudged": sum(not labels.get(r["case_id"]) for r in fam), "precision": precision.to_dict()}


def _distance(row: dict[str, str]) -> float | None:
    try:
        value = float(row.get("distance_to_nearest_feature") or "nan")
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def tolerance_analysis(fam: list[dict[str, str]], labels: dict[str, str], window: float | None,
                       unit: str = "") -> dict[str, Any]:
    """How many false positives lie within ``window`` of a genuine reference feature (the verdict's
    distance to the nearest one): the paper's test of whether a looser tolerance would remove them."""
    fps = [r for r in fam if labels.get(r["case_id"]) == "false positive"]
    distances = [d for d in (_distance(r) for r in fps) if d is not None]
    within = sum(d <= window for d in distances) if window is not None else None
    return {"window": window, "unit": unit, "false_positives": len(fps), "with_distance": len(distances),
            "within_window": within,
            "share": (within / len(fps)) if within is not None and fps else None,
            "median_distance": float(np.median(distances)) if distances else None}


def score(sheet: str | Path, n_boot: int = stats.DEFAULT_B, labels: list[str | Path] | None = None,
          primary: str | None = None, within: dict[str, float] | None = None) -> dict[str, Any]:
    """Per family: the primary reviewer's counts and precision (the sheet's own column when filled, else
    the first labels file by name), every reviewer's, their agreement (Cohen's κ) and the tolerance
    analysis."""
    rows = read_sheet(sheet)
    by_reviewer = reviewer_labels(sheet, labels, rows)
    if primary is not None and primary not in by_reviewer:
        raise MatpcrError(f"reviewer {primary!r} has no labels for {sheet} (found: {', '.join(sorted(by_reviewer)) or 'none'})")
    lead = primary or ("sheet" if "sheet" in by_reviewer else (sorted(by_reviewer)[0] if by_reviewer else "sheet"))
    chosen = by_reviewer.get(lead, {})
    windows = {**PAPER_WINDOWS, **(within or {})}
    out: dict[str, Any] = {}
    for family in sorted({r["constraint"] for r in rows}):
        fam = [r for r in rows if r["constraint"] == family]
        tally = _tally(fam, chosen, n_boot)
        near = 0
        for r in fam:
            if chosen.get(r["case_id"]) != "false positive":
                continue
            try:
                near += float(r["distance_to_nearest_feature"]) <= 2 * float(r["tolerance"])
            except (KeyError, TypeError, ValueError):
                pass
        ids = [r["case_id"] for r in fam]
        out[family] = {"cases": len(fam), **tally, "false_positives_within_2x_tolerance": near, "reviewer": lead,
                       "reviewers": {name: _tally(fam, labs, n_boot) for name, labs in sorted(by_reviewer.items())},
                       "agreement": agreement(by_reviewer, ids, n_boot),
                       "tolerance_analysis": tolerance_analysis(fam, chosen, windows.get(family),
                                                                WINDOW_UNITS.get(family, ""))}
    return out


def overall_agreement(sheet: str | Path, labels: list[str | Path] | None = None,
                      n_boot: int = stats.DEFAULT_B) -> list[dict[str, Any]]:
    """Cohen's κ between every pair of reviewers over all the sheet's cases."""
    rows = read_sheet(sheet)
    return agreement(reviewer_labels(sheet, labels, rows), [r["case_id"] for r in rows], n_boot)
