"""The response cache: one SQLite file in WAL mode, safe for several processes.

The key covers everything that can change an answer: the backend identity (model id, revision or
file hash, settings), the messages with images by content hash, the sampling settings and the seed.
A backend whose answer depends on the record rather than the prompt (``replay``) sets
``identity["cache_per_record"] = True`` and the record key joins the cache key.

Faults (tests/test_faults_cache.py): a corrupt, foreign (another program's SQLite file) or read-only
cache stops the run before any work with an error naming the path and what to do (``--cache OTHER``
or ``--cache none``); read-only is an error rather than a silent fallback to no cache, because a user
paying for API calls should know their answers are not being kept. Several processes may share one
cache (WAL, a 60 s busy timeout, retries while another process is switching the journal mode). A
failure to *store* an answer mid-run (disk full, a lock held past the timeout) only warns: the
answer is already in the run's records.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import time
import warnings
from pathlib import Path
from typing import Any

import platformdirs

from matpcr.errors import MatpcrError
from matpcr.records import Request, Response

#: ``PRAGMA application_id`` of a matpcr cache ("mpcr"), so other programs' SQLite files are recognised
APPLICATION_ID = 0x6D706372
BUSY_TIMEOUT_S = 60.0
SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
"""
COLUMNS = ["key", "model", "response", "created"]
_RESPONSE_FIELDS = {f.name for f in dataclasses.fields(Response)}


class CacheError(MatpcrError):
    """The response cache file cannot be used; the message names it."""


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
    if identity.get("cache_per_record"):
        payload["record"] = request.key  # two records with one prompt must not share an answer
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _what_to_do() -> str:
    return "pass --cache PATH for another file, or --cache none to run without a cache"


class ResponseCache:
    """Get and put responses by key. ``path=None`` disables caching."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path).expanduser() if path else None
        self._conn: sqlite3.Connection | None = None
        self._warned = False
        if self.path is not None:
            self._conn = self._open(self.path)

    # -- opening -----------------------------------------------------------------------------
    def _open(self, path: Path) -> sqlite3.Connection:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"response cache {path}: cannot create its folder ({exc.strerror or exc}); "
                             f"{_what_to_do()}") from None
        if path.exists():
            if not path.is_file():
                raise CacheError(f"response cache {path} is not a file; {_what_to_do()}")
            if not os.access(path, os.R_OK | os.W_OK):
                raise CacheError(f"response cache {path} is read-only; make it writable or {_what_to_do()}")
            with open(path, "rb") as handle:
                head = handle.read(len(SQLITE_MAGIC))
            if head and head != SQLITE_MAGIC:
                raise CacheError(f"response cache {path} is not a SQLite database (corrupt, or another program's "
                                 f"file); delete it if it is an old matpcr cache, or {_what_to_do()}")
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise CacheError(f"response cache {path}: its folder is read-only (SQLite needs to write the -wal file "
                             f"beside it); {_what_to_do()}")
        try:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            self._check_foreign(conn, path)  # before anything writes (WAL mode rewrites the header)
            self._retry(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
            conn.execute("PRAGMA synchronous=NORMAL")
            self._retry(lambda: conn.executescript(SCHEMA))
            self._retry(lambda: conn.execute(f"PRAGMA application_id={APPLICATION_ID}"))
            conn.commit()
        except sqlite3.DatabaseError as exc:
            raise self._error(exc, path) from None
        except CacheError:
            conn.close()
            raise
        return conn

    @staticmethod
    def _retry(action: Any, attempts: int = 20) -> Any:
        """Run ``action``, retrying while another process holds the lock for a schema or mode change."""
        for attempt in range(attempts):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == attempts - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        return None  # pragma: no cover

    @staticmethod
    def _check_foreign(conn: sqlite3.Connection, path: Path) -> None:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app_id == APPLICATION_ID or (app_id == 0 and not tables):
            return
        if app_id == 0 and tables == {"responses"}:  # a cache from before application_id was set
            columns = [r[1] for r in conn.execute("PRAGMA table_info(responses)")]
            if columns == COLUMNS:
                return
        raise CacheError(f"response cache {path} is another program's SQLite database (tables: "
                         f"{', '.join(sorted(tables)) or 'none'}); matpcr will not write into it; {_what_to_do()}")

    @staticmethod
    def _error(exc: sqlite3.DatabaseError, path: Path) -> CacheError:
        text = str(exc)
        if "readonly" in text or "read-only" in text:
            return CacheError(f"response cache {path} is read-only ({text}); {_what_to_do()}")
        if "locked" in text or "busy" in text:
            return CacheError(f"response cache {path} stayed locked by another process for {BUSY_TIMEOUT_S:.0f} s "
                              f"({text}); {_what_to_do()}")
        if "malformed" in text or "not a database" in text or "corrupt" in text:
            return CacheError(f"response cache {path} is corrupt ({text}); delete it (it only holds cached "
                              f"answers) or {_what_to_do()}")
        return CacheError(f"response cache {path}: {text}; {_what_to_do()}")

    # -- use ---------------------------------------------------------------------------------
    def get_many(self, keys: list[str]) -> dict[str, Response]:
        if self._conn is None or not keys:
            return {}
        found: dict[str, Response] = {}
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for key, text in self._conn.execute(f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk):
                    try:
                        data = json.loads(text)
                        found[key] = Response(**{k: v for k, v in data.items() if k in _RESPONSE_FIELDS})
                    except (ValueError, TypeError, AttributeError):
                        continue  # an unreadable entry is a miss: the request is generated again
        except sqlite3.DatabaseError as exc:
            assert self.path is not None
            raise self._error(exc, self.path) from None
        return found

    def put_many(self, items: list[tuple[str, str, Response]]) -> None:
        """Store (key, model, response) rows; failed generations are never cached."""
        if self._conn is None:
            return
        from matpcr.rundir import dumps

        rows = [(k, m, dumps(vars(r)), time.time()) for k, m, r in items if r.error is None]
        if not rows:
            return
        try:
            with self._conn:
                self._conn.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", rows)
        except sqlite3.DatabaseError as exc:
            if not self._warned:
                self._warned = True
                warnings.warn(f"could not store {len(rows)} answer(s) in the response cache {self.path} ({exc}); "
                              "the run continues and its records are saved, but those answers are not cached",
                              RuntimeWarning, stacklevel=2)

    def __len__(self) -> int:
        if self._conn is None:
            return 0
        return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
