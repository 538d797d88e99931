"""A run directory: ``config.json``, ``items.jsonl``, ``samples.jsonl``, ``results.json``.

Records are appended and flushed as they finish, so a killed run loses at most the batch in flight;
a torn last line (from ``kill -9``) is cut off on reopen so that resuming never duplicates a record.

Promises kept here (see docs/security.md and tests/test_faults_rundir.py):

- every file is written as strict JSON in UTF-8: lone UTF-16 surrogates (which servers do send) are
  replaced by U+FFFD and non-finite floats (``NaN``, ``Infinity``) are written as ``null``;
- reading is tolerant: invalid UTF-8 bytes become U+FFFD, a torn final line is ignored, and a key
  that appears twice in ``samples.jsonl`` counts once (the last line wins; ``RunDir.duplicates``);
- one writer at a time: the first write to a run directory takes an exclusive lock
  (``.matpcr.lock``, released when the process ends, even by ``kill -9``); a second process gets a
  ``RunDirLocked`` error naming the holder;
- a failed write (disk full, read-only folder) ends in a ``MatpcrError`` saying what is saved and
  how to resume, never a traceback and never a half-written line left behind.
"""

from __future__ import annotations

import errno
import json
import math
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from matpcr.errors import MatpcrError
from matpcr.records import Item, Record

SCHEMA_VERSION = 1
LOCK_NAME = ".matpcr.lock"


class RunDirLocked(MatpcrError):
    """Another process is writing the same run directory."""


# -- strict JSON out, tolerant JSON in ----------------------------------------------------------

def clean_text(text: str) -> str:
    """``text`` as valid Unicode: surrogate pairs are joined and lone surrogates become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _json_default(obj: Any) -> Any:
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(obj, (set, tuple, frozenset)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def sanitize(obj: Any) -> Any:
    """A copy of ``obj`` that strict JSON can hold: clean strings, non-finite floats as ``None``."""
    if isinstance(obj, str):
        return clean_text(obj)
    if isinstance(obj, bool) or obj is None or isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {(clean_text(k) if isinstance(k, str) else k): sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [sanitize(v) for v in obj]
    try:
        converted = _json_default(obj)
    except TypeError:
        return obj  # let json.dumps raise its own error for a programming mistake
    return sanitize(converted)


def dumps(obj: Any, indent: int | None = None) -> str:
    """Strict JSON (RFC 8259) that always encodes as UTF-8; the fast path leaves clean data untouched."""
    try:
        text = json.dumps(obj, default=_json_default, ensure_ascii=False, allow_nan=False, indent=indent)
        text.encode("utf-8")
        return text
    except (ValueError, UnicodeEncodeError):
        return json.dumps(sanitize(obj), default=_json_default, ensure_ascii=False, allow_nan=False, indent=indent)


def loads(text: str | bytes) -> Any:
    """Tolerant reading: invalid UTF-8 bytes become U+FFFD, escaped lone surrogates are cleaned."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    data = json.loads(text)
    if "\\ud" in text or "\\uD" in text:
        data = _clean_strings(data)
    return data


def _clean_strings(obj: Any) -> Any:
    if isinstance(obj, str):
        return clean_text(obj)
    if isinstance(obj, dict):
        return {(clean_text(k) if isinstance(k, str) else k): _clean_strings(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean_strings(v) for v in obj]
    return obj


def read_json(path: Path, what: str = "") -> Any:
    """A whole JSON file, or a ``MatpcrError`` naming the file when it is missing, truncated or not JSON."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise MatpcrError(f"{path}: not found{what}") from None
    except OSError as exc:
        raise MatpcrError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise MatpcrError(f"{path}: truncated or corrupt JSON ({detail}); {what or 'restore or remove the file'}") from None


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary sibling, flush it to disk and ``os.replace`` it over ``path``: a reader
    (or a crash) sees the old file or the new one, never half of one. An OSError leaves no temporary file."""
    import threading

    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each complete line; a torn final line (no newline) is skipped."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith(b"\n"):
                return  # a torn final line from an interrupted write
            if not line.strip():
                continue
            try:
                row = loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise MatpcrError(f"{path}:{number}: corrupt record ({exc}); remove that line and resume") from None
            if not isinstance(row, dict):
                raise MatpcrError(f"{path}:{number}: a record must be a JSON object, not {type(row).__name__}; "
                                  "remove that line and resume")
            yield number, row


def _cut_torn_tail(path: Path) -> None:
    """Drop bytes after the last newline (a line torn by ``kill -9``), reading only the file's tail."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as handle:
        end = handle.seek(0, os.SEEK_END)
        pos = end
        while pos > 0:
            step = min(pos, 1 << 16)
            handle.seek(pos - step)
            chunk = handle.read(step)
            if pos == end and chunk.endswith(b"\n"):
                return
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                handle.truncate(pos - step + cut + 1)
                return
            pos -= step
        handle.truncate(0)


# -- one writer per run directory ---------------------------------------------------------------

class _Lock:
    """An exclusive advisory lock on ``DIR/.matpcr.lock``, shared by every RunDir of one process."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None
        self.users = 0

    def acquire(self) -> None:
        if self.fd is not None:
            self.users += 1
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock_fd(fd)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK):
                os.close(fd)
                raise
            try:
                holder = os.read(fd, 4096).decode("utf-8", "replace")
                info = json.loads(holder)
                who = f"pid {info.get('pid')} on {info.get('host')}, since {info.get('since')}: {info.get('command')}"
            except (OSError, ValueError, AttributeError):
                who = "unknown process"
            os.close(fd)
            run = self.path.parent
            raise RunDirLocked(f"{run} is being written by another matpcr process ({who}). Wait for it to "
                               f"finish, or stop it and then run `matpcr run --resume {run}`; two writers would "
                               "duplicate records.") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": " ".join(sys.argv)[:300]}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self.fd, self.users = fd, 1

    def release(self) -> None:
        if self.fd is None:
            return
        self.users -= 1
        if self.users <= 0:
            fd, self.fd = self.fd, None
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            os.close(fd)  # closing drops the lock


def _lock_fd(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            raise OSError(errno.EACCES, str(exc)) from None
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


_LOCKS: dict[str, _Lock] = {}


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.duplicates = 0  # records whose key appeared more than once in samples.jsonl (last one kept)
        self._holds_lock = False

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

    # -- locking -----------------------------------------------------------------------------
    def lock(self) -> "RunDir":
        """Become the only writer of this directory (idempotent). Every write method calls it; the engine
        should call it before reading records for ``--resume``. Raises ``RunDirLocked`` naming the holder."""
        if self._holds_lock:
            return self
        self._mkdir()
        key = os.path.realpath(self.path)
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = _Lock(Path(key) / LOCK_NAME)
        try:
            lock.acquire()
        except OSError as exc:
            raise MatpcrError(f"{self.path}: cannot lock the run directory ({exc.strerror or exc}); "
                              "pass a writable --output-dir") from None
        self._holds_lock = True
        return self

    def release(self) -> None:
        """Give up the lock (it is also dropped when this object is collected or the process ends)."""
        if self._holds_lock:
            self._holds_lock = False
            lock = _LOCKS.get(os.path.realpath(self.path))
            if lock is not None:
                lock.release()

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def _mkdir(self) -> None:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise MatpcrError(f"{self.path} is a file, not a folder; pass another --output-dir") from None
        except NotADirectoryError:
            raise MatpcrError(f"{self.path}: a parent of this path is a file; pass another --output-dir") from None
        except OSError as exc:
            raise MatpcrError(f"cannot create run directory {self.path} ({exc.strerror or exc}); "
                              "pass a writable --output-dir") from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise MatpcrError(f"{self.path} is not writable; pass a writable --output-dir")

    # -- writing -----------------------------------------------------------------------------
    def create(self, config: dict[str, Any]) -> None:
        self.lock()
        self._write_atomic(self.config_path, dumps(config, indent=2), "config.json")

    def writer(self, name: str = "samples.jsonl") -> "JsonlWriter":
        self.lock()
        return JsonlWriter(self.path / name, run_dir=self.path)

    def write_results(self, results: dict[str, Any]) -> None:
        self.lock()
        self._write_atomic(self.results_path, dumps(results, indent=2), "results.json")

    def _write_atomic(self, path: Path, text: str, what: str) -> None:
        try:
            write_atomic(path, text.encode("utf-8"))
        except OSError as exc:
            saved = "records in samples.jsonl are saved; " if self.samples_path.exists() else ""
            raise MatpcrError(f"could not write {what} in {self.path} ({exc.strerror or exc}); {saved}"
                              f"fix that (free disk space?) and run `matpcr run --resume {self.path}`") from None

    # -- reading -----------------------------------------------------------------------------
    def read_config(self) -> dict[str, Any]:
        if not self.config_path.exists():
            raise MatpcrError(f"{self.path}: not a run directory (no config.json); pass the folder `matpcr run` wrote")
        data = read_json(self.config_path, "the run's configuration cannot be recovered from it; start a new run")
        if not isinstance(data, dict):
            raise MatpcrError(f"{self.config_path}: not a run configuration (a JSON object is expected)")
        return data

    def read_results(self) -> dict[str, Any]:
        if not self.results_path.exists():
            raise MatpcrError(f"{self.path}: no results.json (run `matpcr run` or `matpcr rescore` first)")
        data = read_json(self.results_path, f"rebuild it with `matpcr rescore {self.path}`")
        if not isinstance(data, dict):
            raise MatpcrError(f"{self.results_path}: not a results object; rebuild it with `matpcr rescore {self.path}`")
        return data

    def records(self) -> list[Record]:
        """Every record once: when a key appears twice (two writers, an older matpcr), the last line wins
        and ``self.duplicates`` counts the extra lines."""
        return list(self.iter_records())

    def iter_records(self) -> Iterator[Record]:
        """``records()`` one at a time, in file order of each key's last line: memory stays flat with the
        size of samples.jsonl (a first pass notes only which line of each key counts)."""
        last: dict[str, int] = {}
        seen = 0
        for number, row in _read_jsonl(self.samples_path):
            seen += 1
            last[str(row.get("key"))] = number
        self.duplicates = seen - len(last)
        keep = set(last.values())
        del last
        for number, row in _read_jsonl(self.samples_path):
            if number not in keep:
                continue
            try:
                yield Record.from_dict(row)
            except (TypeError, KeyError, ValueError, AttributeError) as exc:
                raise MatpcrError(f"{self.samples_path}:{number}: not a matpcr record ({exc}); remove that line "
                                  "and resume") from None

    def items(self) -> dict[str, Item]:
        out: dict[str, Item] = {}
        for number, row in _read_jsonl(self.items_path):
            try:
                item = Item(**row)
                out[f"{item.task}/{item.id}"] = item
            except TypeError as exc:
                raise MatpcrError(f"{self.items_path}:{number}: not a matpcr item ({exc})") from None
        return out


class JsonlWriter:
    """Appends one JSON object per line and flushes each batch to disk.

    Writes are unbuffered and all-or-nothing per batch: on an OSError (ENOSPC, EIO, EROFS) the file is cut
    back to where the batch began and a ``MatpcrError`` says what is saved and how to resume.
    """

    def __init__(self, path: Path, run_dir: Path | None = None):
        self.path = path
        self.run_dir = run_dir or path.parent
        self.written = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _cut_torn_tail(path)
            self._handle = open(path, "ab", buffering=0)
        except OSError as exc:
            raise MatpcrError(f"cannot open {path} for writing ({exc.strerror or exc}); pass a writable "
                              "--output-dir") from None

    def write_many(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        data = "".join(dumps(r) + "\n" for r in rows).encode("utf-8")
        try:
            start = self._handle.seek(0, os.SEEK_END)
        except OSError:
            start = None
        try:
            view = memoryview(data)
            while view:
                n = self._handle.write(view)
                view = view[n:]
            try:
                os.fsync(self._handle.fileno())
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EROFS):
                    raise
        except OSError as exc:
            if start is not None:
                try:
                    os.ftruncate(self._handle.fileno(), start)
                except OSError:
                    pass
            raise MatpcrError(
                f"could not write {len(rows)} record(s) to {self.path} ({exc.strerror or exc}). Saved: every "
                f"record already in that file ({self.written} written by this process); the batch in flight was "
                f"not. Free disk space (or fix the error) and run `matpcr run --resume {self.run_dir}` to "
                "continue without repeating them.") from None
        self.written += len(rows)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
