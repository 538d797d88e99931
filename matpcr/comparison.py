"""Model against model: each run's PCR beside the paired exact McNemar test on the items both answered.

Two runs of different models over the same tasks, limit and seeds draw the same items, so the honest
comparison is paired: match records by (task, item, seed), take first answers only (round 0, sample 0,
as ``results.first_answers`` does), keep the pairs where *both* answers were checkable (consistent or
violated), and test the discordant pairs with the exact McNemar test (``stats.paired_outcomes``):

- ``b``: model A consistent, model B violated; ``c``: A violated, B consistent;
- ΔPCR = PCR_B − PCR_A on the shared items = (c − b) / n_shared.

One family of tests per model pair: the groups (constraints or tasks) with at least one shared
checkable item, adjusted with Holm and Benjamini–Hochberg. The pooled ``overall`` row is reported but
kept out of the family (it re-uses the same items). Each model's own PCR, interval and n come from its
``results.json`` (the figures the run reported), and the counts of items each model left uncheckable
(abstain, unparsable, error) say why ``n_shared`` can be much smaller than either n.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from matpcr import stats
from matpcr.errors import MatpcrError

By = Literal["constraint", "task"]
Pairs = Literal["all", "first"]
BY_METRICS = {"constraint": "constraints", "task": "tasks"}
NO_SHARED = "no shared checkable items"
CHECKABLE = ("consistent", "violated")
UNCHECKABLE = ("abstain", "unparsable", "error")
#: configuration fields that, when two runs differ in them, change which items are paired or how they were judged
COMPARED_CONFIG = ("tasks", "limit", "seeds", "oracle_args", "generation", "shard")
SECTION_TITLE = "Models compared (paired exact McNemar on shared items)"
PAIR_HEADER = ["model A", "model B", "{by}", "n shared", "b (A ok, B violated)", "c (A violated, B ok)", "PCR A",
               "PCR B", "ΔPCR (B−A)", "p exact", "p Holm", "p BH", "uncheckable A/B", "unshared A/B", "note"]
MODEL_HEADER = ["model", "{by}", "PCR [95% CI]", "n", "consistent", "violated", "abstain", "unparsable (no answer)",
                "error"]
LEGEND = ("b: A consistent and B violated; c: A violated and B consistent (first answers matched by task, item and "
          "seed, both checkable). PCR A/B and ΔPCR are on those shared items; p exact is the two-sided exact "
          "McNemar test, Holm and BH adjust across the rows of one model pair (the overall row is outside that "
          "family). uncheckable A/B: matched items that A or B left abstain, unparsable or error; unshared A/B: "
          "items only one run has.")

Key = tuple[str, str, int]


@dataclass
class _Outcome:
    """What the comparison needs of one first answer (kept small: a run may hold many long chains)."""

    task: str
    constraint: str
    status: str
    no_answer: bool


@dataclass
class _Run:
    label: str
    run_dir: str
    results: dict[str, Any]
    first: dict[Key, _Outcome] = field(default_factory=dict)

    def group_of(self, outcome: _Outcome, by: By) -> str:
        return outcome.constraint if by == "constraint" else outcome.task


def _load_one(run_dir: str | Path) -> tuple[dict[str, Any], dict[Key, _Outcome]]:
    """A run's results.json and its first answers, keyed by (task, item, seed)."""
    from matpcr.report import load_results
    from matpcr.rundir import RunDir

    results = load_results(run_dir)
    run = RunDir(run_dir)
    if not run.samples_path.exists():
        raise MatpcrError(f"{run_dir}: no samples.jsonl; the paired test needs the run's records, not only "
                          "results.json")
    first: dict[Key, _Outcome] = {}
    for r in run.iter_records():
        if r.round == 0 and r.sample == 0:
            first[(r.task, r.item_id, r.seed)] = _Outcome(r.task, r.constraint, r.status, bool(r.error))
    return results, first


#: joins run directories of one model that cover different tasks ("runs/a+runs/b"), e.g. a model whose
#: long-prompt tasks were run separately
JOIN = "+"


def _load(spec: str | Path) -> tuple[dict[str, Any], dict[Key, _Outcome]]:
    """One run, or several runs of one model over disjoint tasks joined with ``+`` (their records aggregated
    together, so constraint and overall figures span all of them, computed as a single run would)."""
    parts = [p for p in str(spec).split(JOIN) if p] if JOIN in str(spec) and not Path(spec).exists() else [spec]
    if len(parts) == 1:
        return _load_one(parts[0])
    import json

    from matpcr.results import aggregate
    from matpcr.rundir import RunDir

    loaded = [_load_one(p) for p in parts]
    models = {json.dumps(r.get("model"), sort_keys=True, default=str) for r, _ in loaded}
    if len(models) > 1:
        raise MatpcrError(f"{spec}: runs joined with '{JOIN}' must be of one model (these are of {len(models)})")
    first: dict[Key, _Outcome] = {}
    for (results, part), path in zip(loaded, parts):
        overlap = {k[0] for k in part} & {k[0] for k in first}
        if overlap:
            raise MatpcrError(f"{spec}: task(s) {', '.join(sorted(overlap))} appear in more than one joined run "
                              f"({path}); join runs over disjoint tasks")
        first.update(part)
    records = [r for p in parts for r in RunDir(p).iter_records()]
    results = dict(loaded[0][0])
    results["metrics"] = aggregate(records)
    results["run_dir"] = JOIN.join(str(r.get("run_dir") or p) for (r, _), p in zip(loaded, parts))
    config = dict(results.get("config") or {})
    for name in ("limit", "seeds"):  # parts run with other settings are not hidden behind the first part's
        values = sorted({str((r.get("config") or {}).get(name)) for r, _ in loaded})
        config[name] = (loaded[0][0].get("config") or {}).get(name) if len(values) == 1 else "mixed: " + ", ".join(values)
    results["config"] = config
    results["tasks_config"] = {k: v for r, _ in loaded for k, v in (r.get("tasks_config") or {}).items()}
    return results, first


def labels(results: list[dict[str, Any]]) -> list[str]:
    """Model labels as ``matpcr report`` writes them; the run folder is added where two would read alike."""
    from matpcr.report import run_label

    out = [run_label(r) for r in results]
    if len(set(out)) < len(out):
        out = [f"{lab} ({Path(r['run_dir']).name})" for lab, r in zip(out, results)]
    return out


def _groups(runs: list[_Run], by: By) -> list[str]:
    """Groups some run reported a PCR for (scored tasks, which no oracle judges, have none)."""
    names: set[str] = set()
    for run in runs:
        for name, m in run.results["metrics"].get(BY_METRICS[by], {}).items():
            if isinstance(m, dict) and m.get("pcr") is not None:
                names.add(name)
    return sorted(names)


def _counts(outcomes: list[_Outcome]) -> dict[str, int]:
    out = {s: sum(o.status == s for o in outcomes) for s in (*CHECKABLE, *UNCHECKABLE)}
    out["n_records"] = len(outcomes)
    out["checkable"] = out["consistent"] + out["violated"]
    out["uncheckable"] = sum(out[s] for s in UNCHECKABLE)
    out["no_answer"] = sum(o.no_answer for o in outcomes)  # generation failed; counted under unparsable
    return out


def model_cell(run: _Run, group: str | None, by: By, groups: list[str]) -> dict[str, Any]:
    """One model in one group (``None``: overall): PCR from results.json, status counts from its first answers."""
    metrics = run.results["metrics"]
    m = metrics["overall"] if group is None else metrics.get(BY_METRICS[by], {}).get(group) or {}
    wanted = set(groups) if group is None else {group}
    outcomes = [o for o in run.first.values() if run.group_of(o, by) in wanted]
    return {"pcr": m.get("pcr"), **_counts(outcomes)}


def paired_cell(a: dict[Key, _Outcome], b: dict[Key, _Outcome]) -> dict[str, Any]:
    """The exact McNemar test of A against B on the keys both hold and both judged checkable."""
    matched = sorted(a.keys() & b.keys())
    shared = [k for k in matched if a[k].status in CHECKABLE and b[k].status in CHECKABLE]
    cell: dict[str, Any] = {
        "n_a": len(a), "n_b": len(b), "matched": len(matched), "only_a": len(a) - len(matched),
        "only_b": len(b) - len(matched),
        "a_uncheckable": sum(a[k].status not in CHECKABLE for k in matched),
        "b_uncheckable": sum(b[k].status not in CHECKABLE for k in matched),
        "n_shared": len(shared), "b": None, "c": None, "p": None, "delta_pcr": None, "pcr_a": None,
        "pcr_b": None, "p_holm": None, "p_bh": None, "note": None}
    if not shared:
        cell["note"] = NO_SHARED
        return cell
    out = stats.paired_outcomes([a[k].status == "consistent" for k in shared],
                                [b[k].status == "consistent" for k in shared])
    cell.update(b=out["b"], c=out["c"], p=out["p"], delta_pcr=out["delta_pcr"], pcr_a=out["pcr_before"],
                pcr_b=out["pcr_after"])
    return cell


def _config_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    def effective(results: dict[str, Any], name: str) -> Any:
        config = results.get("config") or {}
        if name == "oracle_args" and results.get("rescored"):
            return (results["rescored"] or {}).get("oracle_args", config.get(name))
        if name == "tasks":  # the tasks the run resolved to, so "dft" and its three tasks read alike
            return sorted(results.get("tasks_config") or config.get(name) or [])
        return config.get(name)

    return [name for name in COMPARED_CONFIG if effective(a, name) != effective(b, name)]


def compare_pair(a: _Run, b: _Run, by: By, groups: list[str]) -> dict[str, Any]:
    """Every group's paired test for one model pair, Holm and BH across the groups that could be tested."""
    def part(run: _Run, group: str | None) -> dict[Key, _Outcome]:
        wanted = set(groups) if group is None else {group}
        return {k: o for k, o in run.first.items() if run.group_of(o, by) in wanted}

    cells = {g: paired_cell(part(a, g), part(b, g)) for g in groups}
    family = [g for g in groups if cells[g]["p"] is not None]
    pvalues = [cells[g]["p"] for g in family]
    for g, holm, bh in zip(family, stats.holm(pvalues), stats.benjamini_hochberg(pvalues)):
        cells[g]["p_holm"], cells[g]["p_bh"] = holm, bh
    overall = paired_cell(part(a, None), part(b, None))
    differs = _config_differences(a.results, b.results)
    return {"a": a.label, "b": b.label, "a_run": a.run_dir, "b_run": b.run_dir, "groups": cells, "overall": overall,
            "family": family, "config_differs": differs, "note": overall["note"]}


def compare_runs(run_dirs: list[str | Path], by: By = "constraint", pairs: Pairs = "all") -> dict[str, Any]:
    """Compare two or more runs (usually one per model): each model's PCR per ``by`` group, and for each pair
    of runs (all pairs, or the first run against each other with ``pairs="first"``) the paired exact McNemar
    test on shared checkable items with Holm/BH across the groups. JSON-ready; see the module docstring."""
    if by not in BY_METRICS:
        raise MatpcrError(f"by={by!r}: compare by one of {', '.join(BY_METRICS)}")
    if pairs not in ("all", "first"):
        raise MatpcrError(f"pairs={pairs!r}: expected 'all' or 'first'")
    if len(run_dirs) < 2:
        raise MatpcrError("compare needs at least two run directories (one per model)")
    loaded = [_load(d) for d in run_dirs]
    names = labels([r for r, _ in loaded])
    runs = [_Run(lab, str(r.get("run_dir") or d), r, first) for lab, (r, first), d in zip(names, loaded, run_dirs)]
    groups = _groups(runs, by)
    index = (itertools.combinations(range(len(runs)), 2) if pairs == "all"
             else ((0, j) for j in range(1, len(runs))))
    return {
        "by": by, "pairs": pairs, "groups": groups,
        "runs": [{"label": run.label, "run_dir": run.run_dir, "model": (run.results.get("config") or {}).get("model"),
                  "groups": {g: model_cell(run, g, by, groups) for g in groups},
                  "overall": model_cell(run, None, by, groups)} for run in runs],
        "comparisons": [compare_pair(runs[i], runs[j], by, groups) for i, j in index],
    }


# -- tables --------------------------------------------------------------------------------------------

def _rate(rate: dict[str, Any] | None) -> str:
    if not rate or rate.get("value") is None:
        return "–"
    return f"{rate['value']:.3f} [{rate['ci_low']:.3f}, {rate['ci_high']:.3f}]"


def _num(value: float | None, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)


def model_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of each model's PCR (from results.json) and status counts per group."""
    header = [h.format(by=result["by"]) for h in MODEL_HEADER]
    rows = []
    for run in result["runs"]:
        for name, cell in [*run["groups"].items(), ("overall", run["overall"])]:
            pcr = cell["pcr"] or {}
            unparsable = f"{cell['unparsable']} ({cell['no_answer']})" if cell["no_answer"] else str(cell["unparsable"])
            rows.append([run["label"], name, _rate(pcr), str(pcr.get("n", cell["checkable"])), str(cell["consistent"]),
                         str(cell["violated"]), str(cell["abstain"]), unparsable, str(cell["error"])])
    return header, rows


def pair_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the paired tests, one row per model pair and group plus the pair's overall row."""
    header = [h.format(by=result["by"]) for h in PAIR_HEADER]
    rows = []
    for comp in result["comparisons"]:
        for name, c in [*comp["groups"].items(), ("overall", comp["overall"])]:
            note = c["note"] or ""
            if name == "overall" and comp["config_differs"]:
                note = "; ".join(filter(None, [note, "runs differ in " + ", ".join(comp["config_differs"])]))
            rows.append([comp["a"], comp["b"], name, str(c["n_shared"]), _num(c["b"], "d"), _num(c["c"], "d"),
                         _num(c["pcr_a"], ".3f"), _num(c["pcr_b"], ".3f"), _num(c["delta_pcr"], "+.3f"),
                         _num(c["p"], ".3g"), _num(c["p_holm"], ".3g"), _num(c["p_bh"], ".3g"),
                         f"{c['a_uncheckable']}/{c['b_uncheckable']}", f"{c['only_a']}/{c['only_b']}", note])
    if not any(row[-1] for row in rows):  # the note column only where some row has one
        header, rows = header[:-1], [row[:-1] for row in rows]
    return header, rows


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub table (pipes in cells escaped) ready to paste into a README."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def to_markdown(result: dict[str, Any]) -> str:
    """Both tables and the legend as Markdown."""
    return "\n".join([f"### PCR per model and {result['by']}", "", markdown_table(*model_rows(result)), "",
                      f"### {SECTION_TITLE}", "", markdown_table(*pair_rows(result)), "", LEGEND, ""])


def to_text(result: dict[str, Any]) -> str:
    """Both tables and the legend for the terminal."""
    from matpcr.table import format_table

    model_header, models = model_rows(result)
    pair_header, pairs = pair_rows(result)
    return "\n".join([f"PCR per model and {result['by']} (from each run's results.json)",
                      format_table(models, model_header), "", SECTION_TITLE, format_table(pairs, pair_header), "",
                      LEGEND])
