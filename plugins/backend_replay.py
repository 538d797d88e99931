"""The ``replay:`` backend: answers from an earlier run directory or a JSONL file.

Stored chains can then be scored by new oracles or tasks without any model. A JSONL file holds
objects with ``key`` (the record key) and ``chain`` (or ``text``/``response``); a run directory's
``samples.jsonl`` already has that shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matpcr import hookimpl
from matpcr.errors import MatpcrError
from matpcr.protocols import Capabilities
from matpcr.records import Request, Response


class ReplayBackend:
    def __init__(self, source: str, strict: bool = False):
        path = Path(source).expanduser()
        if path.is_dir():
            path = path / "samples.jsonl"
        if not path.exists():
            raise MatpcrError(f"replay: {path} not found; pass a run directory or a JSONL file of chains")
        self.path = path
        self.strict = strict
        self.chains: dict[str, str] = {}
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise MatpcrError(f"replay: {path}:{number} is not JSON ({exc})") from None
                text = row.get("chain", row.get("text", row.get("response")))
                if "key" in row and text is not None:
                    self.chains[row["key"]] = text
        from matpcr.records import file_sha256

        self.identity = {"backend": "replay", "source": str(path), "sha256": file_sha256(path)}
        self.capabilities = Capabilities(images=True, max_images=64)

    def generate(self, requests: list[Request]) -> list[Response]:
        out = []
        for r in requests:
            if r.key in self.chains:
                out.append(Response(self.chains[r.key]))
            elif self.strict:
                raise MatpcrError(f"replay: no stored chain for {r.key}")
            else:
                out.append(Response("", error=f"replay: no stored chain for {r.key} in {self.path}"))
        return out


def make_replay(model: str, revision: str | None = None, **args: Any) -> ReplayBackend:
    if not model:
        raise MatpcrError("replay backend needs a source: --model replay:RUN_DIR or replay:chains.jsonl")
    return ReplayBackend(model, **args)


@hookimpl
def register_backends(register: Any) -> None:
    register("replay", make_replay, "replay:RUN_DIR|FILE.jsonl - score stored chains without a model")
