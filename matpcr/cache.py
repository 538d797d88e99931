"""The response cache: one SQLite file in WAL mode, safe for several processes.

The key covers everything that can change an answer: the backend identity (model id, revision or
file hash, settings), the messages with images by content hash, the sampling settings and the seed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import platformdirs

from matpcr.records import Request, Response

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
"""


def default_cache_path() -> Path:
    return Path(platformdirs.user_cache_dir("matpcr")) / "responses.sqlite"


def cache_key(identity: dict[str, Any], request: Request) -> str:
    messages = []
    for message in request.messages:
        parts = [{"type": "image", "sha256": p["sha256"]} if p.get("type") == "image" else p for p in message.content]
        messages.append({"role": message.role, "content": parts})
    payload = {
        "identity": identity,
        "messages": messages,
        "sampling": vars(request.sampling),
        "seed": request.seed,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


class ResponseCache:
    """Get and put responses by key. ``path=None`` disables caching."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None
        self._conn: sqlite3.Connection | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)

    def get_many(self, keys: list[str]) -> dict[str, Response]:
        if self._conn is None or not keys:
            return {}
        found: dict[str, Response] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for key, text in self._conn.execute(f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk):
                found[key] = Response(**json.loads(text))
        return found

    def put_many(self, items: list[tuple[str, str, Response]]) -> None:
        """Store (key, model, response) rows; failed generations are never cached."""
        if self._conn is None:
            return
        rows = [(k, m, json.dumps(vars(r)), time.time()) for k, m, r in items if r.error is None]
        with self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        if self._conn is None:
            return 0
        return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
