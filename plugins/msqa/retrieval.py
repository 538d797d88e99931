"""BM25 retrieval (bm25s) of the top-5 paragraphs for retrieval-augmented prompting.

The paper retrieves from the Methods and Results paragraphs of the source papers, which are not
distributed. A user supplies that corpus as JSONL (``{"id": ..., "text": ..., "source": ...}`` per
paragraph) with ``loader_args.corpus``. Without one, the default corpus is a *proxy*: the reference
answers and topic summaries of the other MSQA items, excluding every item from the question's own source
paper (so no item sees its own answer). Its limits: it is small (the staged data hold 19 answers), it is
written by the benchmark's generator rather than the papers' authors, and gains measured with it say
little about retrieval from real papers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matpcr.errors import DataError

TOP_K = 5


class Retriever:
    def __init__(self, paragraphs: list[dict[str, str]], k: int = TOP_K):
        import bm25s

        if not paragraphs:
            raise DataError("retrieval corpus is empty")
        self.paragraphs = paragraphs
        self.k = k
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize([p["text"] for p in paragraphs], stopwords="en", show_progress=False),
                         show_progress=False)

    @classmethod
    def from_args(cls, args: dict[str, Any], rows: list[dict[str, Any]]) -> "Retriever":
        corpus = args.get("corpus")
        if corpus:
            path = Path(corpus)
            if not path.exists():
                raise DataError(f"retrieval corpus {path} not found (JSONL with a 'text' field per paragraph)")
            paragraphs = []
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        raise DataError(f"{path}:{n}: not JSON") from None
                    if "text" not in row:
                        raise DataError(f"{path}:{n}: no 'text' field")
                    paragraphs.append({"id": str(row.get("id", n)), "text": row["text"], "source": row.get("source", "")})
        else:
            paragraphs = []
            for row in rows:
                for field in ("answer", "topic"):
                    if row.get(field):
                        paragraphs.append({"id": f"msqa-{row['index']}:{field}", "text": row[field],
                                           "source": row.get("source", "")})
        return cls(paragraphs, int(args.get("top_k", TOP_K)))

    def context(self, query: str, exclude_source: str = "") -> list[dict[str, str]]:
        import bm25s

        k = min(len(self.paragraphs), self.k + 10)
        docs, scores = self.index.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False), k=k,
                                           show_progress=False)
        out = []
        for idx, score in zip(docs[0], scores[0]):
            p = self.paragraphs[int(idx)]
            if exclude_source and p.get("source") == exclude_source:
                continue
            out.append({"id": p["id"], "text": p["text"], "score": float(score)})
            if len(out) == self.k:
                break
        return out
