"""The ``replay:`` backend: answers from an earlier run directory or a JSONL file.

Stored chains can then be scored by new oracles or tasks without any model. A JSONL file holds
objects with ``key`` (the record key) and ``chain`` (or ``text``/``response``); a run directory's
``samples.jsonl`` already has that shape. A stored record with an ``error`` replays as that error.

The file is streamed, never held in memory: construction reads it once to check every line and to
note the byte offset of each key's last line; ``generate`` then reads just the lines it needs. The
identity sets ``cache_per_record`` so that the response cache keys answers by record: two items that
share a prompt still get their own chains.

``strict=true`` turns any missing or unusable chain into a ``MatpcrError`` that stops the run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from matpcr import hookimpl
from matpcr.errors import MatpcrError
from matpcr.protocols import Capabilities
from matpcr.records import Request, Response

TEXT_FIELDS = ("chain", "text", "response")
MAX_REPORTED = 5


def _describe(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


class ReplayBackend:
    def __init__(self, source: str, strict: bool = False):
        path = Path(str(source)).expanduser()
        if path.is_dir():
            path = path / "samples.jsonl"
        if not path.is_file():
            raise MatpcrError(f"replay: {path} not found; pass a run directory or a JSONL file of chains")
        self.path = path
        self.strict = bool(strict)
        self.offsets: dict[str, tuple[int, int]] = {}  # key -> (byte offset, line number) of its last line
        problems: list[str] = []
        digest = hashlib.sha256()
        try:
            self._scan(path, digest, problems)
        except OSError as exc:
            raise MatpcrError(f"replay: cannot read {path} ({exc.strerror or exc})") from None
        if problems:
            shown = "; ".join(problems[:MAX_REPORTED])
            more = f" (and {len(problems) - MAX_REPORTED} more)" if len(problems) > MAX_REPORTED else ""
            raise MatpcrError(f"replay: {len(problems)} unusable line(s) in {path}: {shown}{more}. Each line must be "
                              "a JSON object with \"key\" and \"chain\" (text)")
        self.identity = {"backend": "replay", "source": str(path), "sha256": digest.hexdigest(),
                         "cache_per_record": True}
        self.capabilities = Capabilities(images=True, max_images=64)

    def _scan(self, path: Path, digest: Any, problems: list[str]) -> None:
        offset = 0
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                digest.update(raw)
                start, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                if not raw.endswith(b"\n") and path.name == "samples.jsonl":
                    break  # the torn last line of a killed run; it was never a record
                problem, key = self._check_line(raw)
                if problem is not None:
                    problems.append(f"line {number}: {problem}")
                elif key is not None:
                    self.offsets[key] = (start, number)

    @staticmethod
    def _parse(raw: bytes) -> tuple[str | None, Any]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"not UTF-8 text (byte {exc.start})", None
        try:
            return None, json.loads(text, parse_constant=lambda name: None)
        except json.JSONDecodeError as exc:
            return f"not JSON ({exc.msg})", None
        except RecursionError:
            return "nested too deeply", None

    def _check_line(self, raw: bytes) -> tuple[str | None, str | None]:
        problem, row = self._parse(raw)
        if problem is not None:
            return problem, None
        if not isinstance(row, dict):
            return f"{_describe(row)}, not an object", None
        key = row.get("key")
        if not isinstance(key, str) or not key:
            return ("no \"key\"" if key is None else f"\"key\" is {_describe(key)}, not text"), None
        return None, key  # chain problems are reported per record, where the record is asked for

    def _row(self, key: str) -> tuple[dict[str, Any], int]:
        start, number = self.offsets[key]
        with open(self.path, "rb") as handle:
            handle.seek(start)
            raw = handle.readline()
        problem, row = self._parse(raw)
        if problem is not None or not isinstance(row, dict) or row.get("key") != key:
            raise MatpcrError(f"replay: {self.path} changed while replaying (line {number}); replay a copy that "
                              "nothing else writes")
        return row, number

    def _answer(self, key: str) -> Response:
        from matpcr.rundir import clean_text

        if key not in self.offsets:
            return Response("", error=f"replay: no stored chain for {key} in {self.path}")
        row, number = self._row(key)
        if row.get("error"):
            return Response("", error=f"replay: the stored record had an error: {clean_text(str(row['error']))[:500]}")
        field = next((f for f in TEXT_FIELDS if row.get(f) is not None), None)
        if field is None:
            return Response("", error=f"replay: {self.path}:{number} has no chain (expected one of "
                                      f"{', '.join(TEXT_FIELDS)})")
        text = row[field]
        if not isinstance(text, str):
            return Response("", error=f"replay: {self.path}:{number}: \"{field}\" is {_describe(text)}, not text")
        return Response(clean_text(text))

    def generate(self, requests: list[Request]) -> list[Response]:
        out = []
        for r in requests:
            response = self._answer(r.key)
            if self.strict and response.error is not None:
                raise MatpcrError(f"{response.error} (strict=true stops the run; drop strict to record such "
                                  "records as errors)")
            out.append(response)
        return out


def make_replay(model: str, revision: str | None = None, **args: Any) -> ReplayBackend:
    if not model:
        raise MatpcrError("replay backend needs a source: --model replay:RUN_DIR or replay:chains.jsonl")
    from matpcr.spec import coerce_call_args

    return ReplayBackend(model, **coerce_call_args("--model-args (replay)", ReplayBackend.__init__, args,
                                                   skip=("source",)))


@hookimpl
def register_backends(register: Any) -> None:
    register("replay", make_replay, "replay:RUN_DIR|FILE.jsonl - score stored chains without a model")
