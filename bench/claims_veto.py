"""Can a learned veto catch the rule reader's false claims? (issue #12: an experiment, on the dev split only)

    python bench/claims_veto.py            # veto trained on five reader versions, scored on the current reader
    python bench/claims_veto.py --fresh    # each dev batch read by the reader that had not yet seen it

The claim reader is a rule reader. Before building a learned reader on top of it, this asks the cheapest form of the
question: train a classifier on the claims that this and four earlier versions of the reader made on the dev split
(git history supplies the versions), labelled true or false against the gold claims. Its features are the words to
the left and right of the claim (TF-IDF, uni- and bigrams) and the claim's family, kind and unit. Then score, out of
fold (folds grouped by chain), the current reader's dev claims and print how many false claims each threshold would
veto and how many true ones it would lose. The held-out split is not touched: a veto that does not pay on dev is not
worth a look there.

``--fresh`` asks the question where a veto would matter: on text the reader was not tuned on. Each dev batch was
committed together with the rules it prompted, so the reader of the parent of that commit is the reader that had never
seen the batch. This mode scores every batch group with that reader (pooled fresh precision and recall per family: an
estimate of how the reader does on new text, from dev alone), sorts its errors (the gold non-claim reason next to
each false claim; magnetism claims whose value is right and whose basis is wrong), and trains the veto leaving one
batch group out at a time.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: the first reader, and the readers after the w12, w14 and w19 dev batches
VERSIONS = ("d4de5c4", "b9d1f9d", "275e598", "d02c8f3")

_COLLECT = r"""
import dataclasses, json, sys
tree, out, batches = sys.argv[1], sys.argv[2], sys.argv[4:]
if tree:
    sys.path.insert(0, tree)
sys.path.insert(0, sys.argv[3])
import claims as B
o = B.oracles()
rows = [r for b in batches for r in B.load("dev", b)] if batches else B.load("dev")
with open(out, "w") as fh:
    for r in rows:
        try:
            e = o[r["family"]].read(r["chain"], B.item_for(r))
        except Exception as exc:  # an old reader that fails on a newer record has no claims for it: counted, not hidden
            fh.write(json.dumps({"id": r["id"], "family": r["family"], "failed": repr(exc)}) + "\n")
            continue
        used = [False] * len(r["claims"])
        for c in e.claims:
            a, b = c.span
            hit = next((j for j, g in enumerate(r["claims"]) if not used[j] and B.same(dataclasses.asdict(c), g)), None)
            if hit is not None:
                used[hit] = True
            near = [n["reason"] for n in r.get("non_claims", []) if n["text"] and n["text"] in r["chain"][max(0, a - 40):b + 40]]
            fh.write(json.dumps({"id": r["id"], "family": r["family"], "kind": c.kind, "value": repr(c.value),
                                 "unit": c.unit, "span": [a, b], "left": r["chain"][max(0, a - 100):a],
                                 "right": r["chain"][b:b + 60], "near": near, "hit": hit is not None}) + "\n")
        for j, g in enumerate(r["claims"]):
            if not used[j]:
                fh.write(json.dumps({"id": r["id"], "family": r["family"], "kind": g["kind"], "value": repr(g["value"]),
                                     "unit": g.get("unit", ""), "missed": True}) + "\n")
"""


def collect(tree: Path | None, out: Path, batches: list[str] = ()) -> list[dict]:
    """The claims one plugin tree's reader makes on the dev split, or on some of its batches (run in a subprocess, so
    trees do not mix), with the gold claims it missed (``missed``) and the records it failed on (``failed``)."""
    subprocess.run([sys.executable, "-c", _COLLECT, str(tree or ""), str(out), str(ROOT / "bench"), *batches], check=True)
    return [json.loads(line) for line in out.open()]


def old_tree(commit: str, into: Path) -> Path:
    """``plugins/`` at ``commit``, importable as ``matpcr_plugins``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "plugins"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into / commit, filter="data")
    (into / commit / "plugins").rename(into / commit / "matpcr_plugins")
    return into / commit


def batch_groups() -> dict[str, list[str]]:
    """The commit that added each dev batch, mapped to the batches it added (their rules came in the same commit)."""
    groups: dict[str, list[str]] = {}
    for name in sorted({p.name.split("_")[0] for p in (ROOT / "tests/data/claims/dev").glob("w*_*.jsonl")}):
        log = subprocess.run(["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%h", "--",
                              f"tests/data/claims/dev/{name}_*.jsonl"], check=True, capture_output=True, text=True)
        commits = log.stdout.split()
        if commits:  # a batch not committed yet has no reader that predates it but the current one
            groups.setdefault(commits[-1], []).append(name)
    return groups


def _vectorizers() -> list[Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    words = r"(?u)\b\w+\b|[^\w\s]"
    return [TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=words),
            TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=words),
            TfidfVectorizer(token_pattern=r"\S+")]


def features(batch: list[dict], vectorizers: list[Any], fit: bool) -> Any:
    from scipy.sparse import hstack

    columns = ([r["left"] for r in batch], [r["right"] for r in batch],
               [f"F_{r['family']} K_{r['kind']} U_{r['unit'].replace('/', '_').replace(':', '_')}" for r in batch])
    return hstack([v.fit_transform(c) if fit else v.transform(c) for v, c in zip(vectorizers, columns)]).tocsr()


def veto_table(hit: np.ndarray, scores: np.ndarray, thresholds: tuple[float, ...]) -> None:
    print(f"{'threshold':>9} {'vetoed':>7} {'false':>6} {'true lost':>9} {'precision':>9} {'true kept':>9}")
    for t in thresholds:
        veto = scores >= t
        kept = len(hit) - veto.sum()
        print(f"{t:>9} {veto.sum():>7} {(veto & ~hit).sum():>6} {(veto & hit).sum():>9} "
              f"{(hit & ~veto).sum() / max(kept, 1):>9.3f} {(hit & ~veto).sum() / max(hit.sum(), 1):>9.4f}")


def fresh() -> int:
    """Every dev batch read by the reader from before its own fixes; errors sorted; a veto left one group out."""
    from collections import Counter

    from sklearn.linear_model import LogisticRegression

    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for commit, names in batch_groups().items():
            got = collect(old_tree(f"{commit}^", work), work / f"{commit}.jsonl", names)
            rows += [{**r, "group": commit} for r in got]
    failed = [r for r in rows if "failed" in r]
    claims = [r for r in rows if "failed" not in r and not r.get("missed")]
    missed = [r for r in rows if r.get("missed")]
    print(f"{len({r['group'] for r in rows})} batch groups, each read by the reader before its fixes; "
          f"{len(failed)} records an old reader failed on (left out)")
    print(f"{'family':<12} {'claims':>6} {'false':>5} {'missed':>6} {'precision':>9} {'recall':>7}")
    for family in sorted({r["family"] for r in claims}):
        true = sum(r["hit"] for r in claims if r["family"] == family)
        made = sum(1 for r in claims if r["family"] == family)
        lost = sum(1 for r in missed if r["family"] == family)
        print(f"{family:<12} {made:>6} {made - true:>5} {lost:>6} {true / max(made, 1):>9.3f} {true / max(true + lost, 1):>7.3f}")
    print("\nfalse claims by the gold non-claim next to them (reason set; empty: none listed there)")
    for family in sorted({r["family"] for r in claims}):
        near = Counter(",".join(sorted(set(r["near"]))) or "-" for r in claims if r["family"] == family and not r["hit"])
        print(f"  {family}: " + "; ".join(f"{k} {v}" for k, v in near.most_common(5)))
    wrong_basis = 0
    for r in claims:
        if r["family"] == "magnetism" and not r["hit"]:
            twin = next((m for m in missed if m["id"] == r["id"] and m["value"] == r["value"] and m["unit"] != r["unit"]), None)
            if twin is not None:
                missed.remove(twin)
                wrong_basis += 1
    print(f"  magnetism: {wrong_basis} false claims are a gold moment with the wrong basis (cell or f.u. for a site)")
    groups = np.array([r["group"] for r in claims])
    hit = np.array([r["hit"] for r in claims])
    scores = np.zeros(len(claims))
    for group in sorted(set(groups)):
        fit, held = groups != group, groups == group
        vectorizers = _vectorizers()
        model = LogisticRegression(C=4.0, class_weight="balanced", max_iter=2000)
        model.fit(features([claims[i] for i in np.where(fit)[0]], vectorizers, fit=True), (~hit[fit]).astype(int))
        scores[held] = model.predict_proba(features([claims[i] for i in np.where(held)[0]], vectorizers, fit=False))[:, 1]
    print("\nlearned veto, trained leaving each batch group out, on the fresh claims")
    veto_table(hit, scores, (0.5, 0.7, 0.8, 0.9, 0.95))
    return 0


def main(argv: list[str] | None = None) -> int:
    if "--fresh" in (argv if argv is not None else sys.argv[1:]):
        return fresh()
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        current = [r for r in collect(None, work / "current.jsonl") if "hit" in r]
        rows: dict[tuple, dict] = {}
        for commit in VERSIONS:
            for r in collect(old_tree(commit, work), work / f"{commit}.jsonl"):
                if "hit" in r:
                    rows[(r["id"], tuple(r["span"]), r["kind"], r["value"], r["unit"])] = r
    for r in current:
        rows[(r["id"], tuple(r["span"]), r["kind"], r["value"], r["unit"])] = r
    train = list(rows.values())
    y = np.array([not r["hit"] for r in train], dtype=int)
    groups = np.array([r["id"] for r in train])
    print(f"training claims: {len(train)} from {len(VERSIONS) + 1} reader versions, {y.sum()} false")

    scores = np.zeros(len(current))
    for fit_rows, _ in GroupKFold(n_splits=5).split(train, y, groups):
        held = set(groups) - set(groups[fit_rows])
        vectorizers = _vectorizers()
        model = LogisticRegression(C=4.0, class_weight="balanced", max_iter=2000)
        model.fit(features([train[i] for i in fit_rows], vectorizers, fit=True), y[fit_rows])
        idx = [i for i, r in enumerate(current) if r["id"] in held]
        if idx:
            scores[idx] = model.predict_proba(features([current[i] for i in idx], vectorizers, fit=False))[:, 1]
    hit = np.array([r["hit"] for r in current])
    print(f"current reader on dev: {len(current)} claims, {(~hit).sum()} false (scored out of fold)")
    veto_table(hit, scores, (0.5, 0.7, 0.8, 0.9, 0.95, 0.98))
    return 0


if __name__ == "__main__":
    sys.exit(main())
