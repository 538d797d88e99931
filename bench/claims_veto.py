"""Can a learned veto catch the rule reader's false claims? (issue #12: an experiment, on the dev split only)

    python bench/claims_veto.py

The claim reader is a rule reader. Before building a learned reader on top of it, this asks the cheapest form of the
question: train a classifier on the claims that this and four earlier versions of the reader made on the dev split
(git history supplies the versions), labelled true or false against the gold claims. Its features are the words to
the left and right of the claim (TF-IDF, uni- and bigrams) and the claim's family, kind and unit. Then score, out of
fold (folds grouped by chain), the current reader's dev claims and print how many false claims each threshold would
veto and how many true ones it would lose. The held-out split is not touched: a veto that does not pay on dev is not
worth a look there.
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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: the first reader, and the readers after the w12, w14 and w19 dev batches
VERSIONS = ("d4de5c4", "b9d1f9d", "275e598", "d02c8f3")

_COLLECT = r"""
import dataclasses, json, sys
tree, out = sys.argv[1], sys.argv[2]
if tree:
    sys.path.insert(0, tree)
sys.path.insert(0, sys.argv[3])
import claims as B
o = B.oracles()
with open(out, "w") as fh:
    for r in B.load("dev"):
        try:
            e = o[r["family"]].read(r["chain"], B.item_for(r))
        except Exception:
            continue  # an old reader that fails on a newer record simply has no claims for it
        for c in e.claims:
            a, b = c.span
            fh.write(json.dumps({"id": r["id"], "family": r["family"], "kind": c.kind, "value": repr(c.value),
                                 "unit": c.unit, "span": [a, b], "left": r["chain"][max(0, a - 100):a],
                                 "right": r["chain"][b:b + 60],
                                 "hit": B.match([dataclasses.asdict(c)], r["claims"]) == 1}) + "\n")
"""


def collect(tree: Path | None, out: Path) -> list[dict]:
    """The claims one plugin tree's reader makes on the dev split (run in a subprocess, so trees do not mix)."""
    subprocess.run([sys.executable, "-c", _COLLECT, str(tree or ""), str(out), str(ROOT / "bench")], check=True)
    return [json.loads(line) for line in out.open()]


def old_tree(commit: str, into: Path) -> Path:
    """``plugins/`` at ``commit``, importable as ``matpcr_plugins``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "plugins"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into / commit, filter="data")
    (into / commit / "plugins").rename(into / commit / "matpcr_plugins")
    return into / commit


def main() -> int:
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        current = collect(None, work / "current.jsonl")
        rows: dict[tuple, dict] = {}
        for commit in VERSIONS:
            for r in collect(old_tree(commit, work), work / f"{commit}.jsonl"):
                rows[(r["id"], tuple(r["span"]), r["kind"], r["value"], r["unit"])] = r
    for r in current:
        rows[(r["id"], tuple(r["span"]), r["kind"], r["value"], r["unit"])] = r
    train = list(rows.values())
    y = np.array([not r["hit"] for r in train], dtype=int)
    groups = np.array([r["id"] for r in train])
    print(f"training claims: {len(train)} from {len(VERSIONS) + 1} reader versions, {y.sum()} false")

    def features(batch: list[dict], vectorizers: list[TfidfVectorizer], fit: bool):
        columns = ([r["left"] for r in batch], [r["right"] for r in batch],
                   [f"F_{r['family']} K_{r['kind']} U_{r['unit'].replace('/', '_').replace(':', '_')}" for r in batch])
        return hstack([v.fit_transform(c) if fit else v.transform(c) for v, c in zip(vectorizers, columns)]).tocsr()

    scores = np.zeros(len(current))
    for fit_rows, _ in GroupKFold(n_splits=5).split(train, y, groups):
        held = set(groups) - set(groups[fit_rows])
        vectorizers = [TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=r"(?u)\b\w+\b|[^\w\s]"),
                       TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=r"(?u)\b\w+\b|[^\w\s]"),
                       TfidfVectorizer(token_pattern=r"\S+")]
        model = LogisticRegression(C=4.0, class_weight="balanced", max_iter=2000)
        model.fit(features([train[i] for i in fit_rows], vectorizers, fit=True), y[fit_rows])
        idx = [i for i, r in enumerate(current) if r["id"] in held]
        if idx:
            scores[idx] = model.predict_proba(features([current[i] for i in idx], vectorizers, fit=False))[:, 1]
    hit = np.array([r["hit"] for r in current])
    print(f"current reader on dev: {len(current)} claims, {(~hit).sum()} false (scored out of fold)")
    print(f"{'threshold':>9} {'vetoed':>7} {'false':>6} {'true lost':>9}")
    for t in (0.5, 0.7, 0.8, 0.9, 0.95, 0.98):
        veto = scores >= t
        print(f"{t:>9} {veto.sum():>7} {(veto & ~hit).sum():>6} {(veto & hit).sum():>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
