"""A run directory: ``config.json``, ``items.jsonl``, ``samples.jsonl``, ``results.json``.

Records are appended and flushed as they finish, so a killed run loses at most the batch in flight;
a torn last line (from ``kill -9``) is cut off on reopen so that resuming never duplicates a record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from matpcr.errors import MatpcrError
from matpcr.records import Item, Record

SCHEMA_VERSION = 1


def _json_default(obj: Any) -> Any:
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(obj, (set, tuple)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def dumps(obj: Any) -> str:
    return json.dumps(obj, default=_json_default, ensure_ascii=False)


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith("\n"):
                return  # a torn final line from an interrupted write
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise MatpcrError(f"{path}:{number}: corrupt record ({exc}); remove that line and resume") from None


def _cut_torn_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return
        handle.truncate(data.rfind(b"\n") + 1)


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def samples_path(self) -> Path:
        return self.path / "samples.jsonl"

    @property
    def items_path(self) -> Path:
        return self.path / "items.jsonl"

    @property
    def results_path(self) -> Path:
        return self.path / "results.json"

    def create(self, config: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(config, indent=2, default=_json_default))

    def read_config(self) -> dict[str, Any]:
        if not self.config_path.exists():
            raise MatpcrError(f"{self.path}: not a run directory (no config.json); pass the folder `matpcr run` wrote")
        return json.loads(self.config_path.read_text())

    def records(self) -> list[Record]:
        return [Record.from_dict(d) for d in _read_jsonl(self.samples_path)]

    def items(self) -> dict[str, Item]:
        return {f"{d['task']}/{d['id']}": Item(**d) for d in _read_jsonl(self.items_path)}

    def writer(self, name: str = "samples.jsonl") -> "JsonlWriter":
        return JsonlWriter(self.path / name)

    def write_results(self, results: dict[str, Any]) -> None:
        tmp = self.results_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=2, default=_json_default))
        os.replace(tmp, self.results_path)


class JsonlWriter:
    """Appends one JSON object per line and flushes each batch to disk."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        _cut_torn_tail(path)
        self._handle = open(path, "a", encoding="utf-8")

    def write_many(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        self._handle.write("".join(dumps(r) + "\n" for r in rows))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
