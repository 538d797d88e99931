"""Claim extraction against the labelled corpus in tests/data/claims/ (issue #12).

    python bench/claims.py                  # held-out split: the figures to report
    python bench/claims.py --split dev -v   # the tuning split, with every disagreement printed
    python bench/claims.py --split dev --batch m2   # one new batch, scored before any fix

Claim-level precision and recall per family: a predicted claim matches a gold claim of the same kind whose
value agrees within 1e-3 relative or 5e-4 absolute (class claims by value; 0.01 absolute was as large as a
typical hull energy); each gold claim is matched at most
once. Item agreement: the predicted claim set equals the gold set. Reason agreement: of the gold non-claims
the reader reported as rejected (a rejected span overlapping the gold text), the share with the gold reason;
"seen" is the share of gold non-claims that were rejected at all (the rest were silently skipped, never
taken as claims). Each precision and recall also gets two 95% intervals: a bootstrap with chains resampled and the
exact Clopper-Pearson interval over claims (informative when every claim agrees). Failure cases are printed for the
dev split only: the held-out split is never tuned on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "claims"
FAMILIES = ("xrd", "raman", "sem", "stability", "metallicity", "magnetism")
TASKS = {"xrd": "xrd_text", "raman": "raman_text", "sem": "sem_text", "stability": "stability_text",
         "metallicity": "metallicity_text", "magnetism": "magnetism_text"}


def load(split: str, batch: str | None = None) -> list[dict[str, Any]]:
    """Every labelled chain of a split; ``batch`` keeps one file prefix (``w5`` reads ``w5_*.jsonl``)."""
    rows = []
    for path in sorted((CORPUS / split).glob(f"{batch}_*.jsonl" if batch else "*.jsonl")):
        name = path.stem.split("_")[0] if "_" in path.stem else "first"  # "h3_sem" → h3; "sem" → the first batch
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append({**json.loads(line), "_batch": name})
    return rows


def same(pred: dict[str, Any], gold: dict[str, Any]) -> bool:
    if pred["kind"] != gold["kind"]:
        return False
    a, b = pred["value"], gold["value"]
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    if abs(a - b) <= 5e-4 or abs(a - b) <= 1e-3 * max(abs(a), abs(b)):
        return pred.get("unit", "") == gold.get("unit", "") or not gold.get("unit")
    return False


def match(pred: list[dict[str, Any]], gold: list[dict[str, Any]]) -> int:
    """Greedy one-to-one matches between predicted and gold claims."""
    used = [False] * len(gold)
    hits = 0
    for p in pred:
        for j, g in enumerate(gold):
            if not used[j] and same(p, g):
                used[j] = True
                hits += 1
                break
    return hits


def oracles() -> dict[str, Any]:
    from matpcr.plugins import get_manager

    registry = get_manager().registry
    return {f: registry.get("oracles", f).factory() for f in FAMILIES}


def item_for(row: dict[str, Any]) -> Any:
    from matpcr.records import Item

    family = row["family"]
    return Item(id=row.get("id", ""), task=row.get("task") or TASKS.get(family, family), constraint=family,
                modality="text", text=row.get("question") or "")


def _occurrences(chain: str, text: str) -> list[tuple[int, int]]:
    out, start = [], 0
    while text:
        k = chain.find(text, start)
        if k < 0:
            break
        out.append((k, k + len(text)))
        start = k + 1
    return out


def evaluate(rows: list[dict[str, Any]], verbose: bool = False,
             per_item: dict[str, list[tuple[int, int, int]]] | None = None) -> dict[str, dict[str, float]]:
    """Pooled counts per family; ``per_item`` (if given) collects each chain's (matched, predicted, gold) counts."""
    import dataclasses

    readers = oracles()
    stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        family = row["family"]
        oracle = readers[family]
        extraction = oracle.read(row["chain"], item_for(row))
        pred = [dataclasses.asdict(c) for c in extraction.claims]
        gold = row.get("claims", [])
        hits = match(pred, gold)
        s = stats[family]
        s["items"] += 1
        s["pred"] += len(pred)
        s["gold"] += len(gold)
        s["tp"] += hits
        agree = hits == len(pred) == len(gold)
        s["agree"] += agree
        if per_item is not None:
            per_item.setdefault(family, []).append((hits, len(pred), len(gold)))
        seen = agreed = 0
        wrong_reasons = []
        for nc in row.get("non_claims", []):
            spans = _occurrences(row["chain"], nc["text"])
            got = [r for r in extraction.rejected if any(r.span[0] < b and a < r.span[1] for a, b in spans)]
            if got:
                seen += 1
                if any(r.reason == nc["reason"] for r in got):
                    agreed += 1
                else:
                    wrong_reasons.append((nc["text"], nc["reason"], got[0].reason))
        s["nc"] += len(row.get("non_claims", []))
        s["nc_seen"] += seen
        s["nc_agree"] += agreed
        if verbose and (not agree or wrong_reasons):
            print(f"--- {row.get('id')} ({family}) {'' if agree else 'CLAIMS DIFFER'}")
            print("  chain:", row["chain"].replace("\n", "\n         ")[:1500])
            if not agree:
                print("  gold: ", [(g["kind"], g["value"], g.get("unit", "")) for g in gold])
                print("  pred: ", [(p["kind"], p["value"], p["unit"]) for p in pred])
            for text, want, got_reason in wrong_reasons:
                print(f"  reason for {text!r}: gold {want}, read {got_reason}")
    return stats


def table(stats: dict[str, dict[str, float]]) -> str:
    lines = [f"{'family':<12} {'items':>5} {'gold':>5} {'pred':>5} {'precision':>9} {'recall':>7} {'item agree':>10} "
             f"{'nc seen':>8} {'reason ok':>9}"]
    totals: dict[str, float] = defaultdict(float)
    for family in [f for f in FAMILIES if f in stats] + sorted(set(stats) - set(FAMILIES)):
        s = stats[family]
        for k, v in s.items():
            totals[k] += v
        lines.append(_row(family, s))
    lines.append(_row("all", totals))
    return "\n".join(lines)


def intervals(per_item: dict[str, list[tuple[int, int, int]]], confidence: float = 0.95) -> str:
    """Intervals of precision and recall: a percentile bootstrap with chains resampled (a chain's claims move
    together: one misread construction often costs several claims of one chain), and the exact Clopper-Pearson
    interval over claims, which stays informative when every claim agrees (the bootstrap then collapses to a point)."""
    from matpcr.stats import bootstrap_rate, clopper_pearson

    lines = [f"{'family':<12} {'chains':>6} {'precision':>9} {'bootstrap':>17} {'exact':>17} "
             f"{'recall':>7} {'bootstrap':>17} {'exact':>17}"]
    pooled = [u for f in per_item for u in per_item[f]]
    for family in [f for f in FAMILIES if f in per_item] + ["all"]:
        units = per_item[family] if family != "all" else pooled
        hits = [u[0] for u in units]
        cells = []
        for weights in ([u[1] for u in units], [u[2] for u in units]):
            rate = bootstrap_rate(hits, weights=weights, confidence=confidence)
            if rate.value is None:
                cells.append(f"{'n/a':>9} {'':>17} {'':>17}")
                continue
            lo, hi = clopper_pearson(rate.numerator, rate.n, 1 - confidence)
            cells.append(f"{rate.value:>9.4f} {f'[{rate.ci_low:.4f}, {rate.ci_high:.4f}]':>17} {f'[{lo:.4f}, {hi:.4f}]':>17}")
        lines.append(f"{family:<12} {len(units):>6} {cells[0]} {cells[1][2:]}")
    return "\n".join(lines)


def _row(name: str, s: dict[str, float]) -> str:
    p = s["tp"] / s["pred"] if s["pred"] else 1.0
    r = s["tp"] / s["gold"] if s["gold"] else 1.0
    agree = s["agree"] / s["items"] if s["items"] else 0.0
    seen = s["nc_seen"] / s["nc"] if s["nc"] else 1.0
    ok = s["nc_agree"] / s["nc_seen"] if s["nc_seen"] else 1.0
    return (f"{name:<12} {int(s['items']):>5} {int(s['gold']):>5} {int(s['pred']):>5} {p:>9.4f} {r:>7.4f} {agree:>10.4f} "
            f"{seen:>8.4f} {ok:>9.4f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="heldout", choices=["heldout", "dev"])
    parser.add_argument("-v", "--verbose", action="store_true", help="print every disagreement (dev split only)")
    parser.add_argument("--family", default=None, help="only this family")
    parser.add_argument("--batch", default=None, help="only one dev batch's files, e.g. w5 (score a new batch before any fix)")
    parser.add_argument("--by-batch", action="store_true", help="also print the all-family figures of each batch")
    args = parser.parse_args(argv)
    if args.verbose and args.split != "dev":
        parser.error("failure cases are shown for the dev split only; the held-out split is never tuned on")
    rows = load(args.split, args.batch)
    if args.family:
        rows = [r for r in rows if r["family"] == args.family]
    if not rows:
        print(f"no labelled chains under {CORPUS / args.split}", file=sys.stderr)
        return 1
    per_item: dict[str, list[tuple[int, int, int]]] = {}
    stats = evaluate(rows, verbose=args.verbose, per_item=per_item)
    print(f"claim extraction, {args.split} split ({len(rows)} chains)")
    print(table(stats))
    print()
    print("95% intervals: bootstrap over chains (10,000 draws) and exact Clopper-Pearson over claims:")
    print(intervals(per_item))
    if args.by_batch:  # is a pooled figure carried by old batches the reader was fixed against, or does a new one agree?
        print()
        for name in sorted({r["_batch"] for r in rows}):
            part = evaluate([r for r in rows if r["_batch"] == name])
            print(_row(f"batch {name}", {k: sum(s[k] for s in part.values()) for k in next(iter(part.values()))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
