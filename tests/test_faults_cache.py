"""The response cache under faults: corrupt, foreign and read-only files, several processes writing at once,
and replayed chains that share a prompt."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from matpcr.cache import CacheError, ResponseCache, cache_key
from matpcr.records import Message, Request, Response, Sampling, text_part

from conftest import REPO, run_cli


def _request(text: str, key: str = "") -> Request:
    return Request([Message("user", [text_part(text)])], Sampling(), seed=0, key=key)


def test_corrupt_cache_names_the_path(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "responses.sqlite"
    path.write_bytes(os.urandom(4096))
    with pytest.raises(CacheError, match=rf"{path} is not a SQLite database"):
        ResponseCache(path)
    proc = run_cli("run", "--tasks", "raman_text", "--limit", "1", "--model", "replay:" + str(tmp_path),
                   "--data-dir", str(data_dir), "--output-dir", str(tmp_path / "runs"), "--cache", str(path),
                   "--no-progress")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_damaged_pages_name_the_path(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    cache.put_many([(f"k{i}", "m", Response("x" * 500)) for i in range(200)])
    cache.close()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    data = bytearray(path.read_bytes())
    data[4096:] = os.urandom(len(data) - 4096)  # keep the header, wreck every page after the first
    path.write_bytes(bytes(data))
    with pytest.raises(CacheError, match=rf"response cache {path}"):
        cache = ResponseCache(path)
        cache.get_many([f"k{i}" for i in range(200)])


def test_foreign_sqlite_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    before = path.read_bytes()
    with pytest.raises(CacheError, match=r"another program's SQLite database \(tables: notes\)"):
        ResponseCache(path)
    assert path.read_bytes() == before


def test_a_legacy_matpcr_cache_is_still_used(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL, "
                     "created REAL NOT NULL)")
        conn.execute("INSERT INTO responses VALUES ('k', 'm', ?, 0)", (json.dumps({"text": "old answer"}),))
    assert ResponseCache(path).get_many(["k"])["k"].text == "old answer"


def test_a_cache_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CacheError, match="is not a file"):
        ResponseCache(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only files")
def test_read_only_cache_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    ResponseCache(path).close()
    path.chmod(0o400)
    try:
        with pytest.raises(CacheError, match="read-only.*--cache none"):
            ResponseCache(path)
    finally:
        path.chmod(0o600)


WRITER = """
import sys, time
from pathlib import Path
from matpcr.cache import ResponseCache
from matpcr.records import Response
path, tag, start = sys.argv[1], sys.argv[2], Path(sys.argv[3])
while not start.exists():
    time.sleep(0.01)
cache = ResponseCache(path)
for batch in range(40):
    rows = [(f"{tag}-{batch}-{i}", "m", Response(f"{tag} answer {batch} {i}")) for i in range(10)]
    rows += [(f"shared-{batch}", "m", Response("shared"))]
    cache.put_many(rows)
    got = cache.get_many([k for k, _, _ in rows])
    assert len(got) == len(rows), (tag, batch, len(got))
print("ok", len(cache))
"""


def test_several_processes_write_one_cache_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"  # created by the racing processes themselves
    start = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(start)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("a", "b", "c")]
    time.sleep(1.0)  # let all three import and wait at the start line
    start.touch()
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.startswith("ok"), err
    assert len(ResponseCache(path)) == 3 * 400 + 40


def test_replay_answers_are_cached_per_record() -> None:
    same_prompt = [_request("Identical question", key="t/a/s0/r0/n0"), _request("Identical question", key="t/b/s0/r0/n0")]
    replay = {"backend": "replay", "source": "x", "sha256": "0", "cache_per_record": True}
    model = {"backend": "hf", "model": "m"}
    assert cache_key(replay, same_prompt[0]) != cache_key(replay, same_prompt[1])
    assert cache_key(model, same_prompt[0]) == cache_key(model, same_prompt[1])  # a model answers the prompt


def test_two_items_with_one_prompt_keep_their_own_chains(tmp_path: Path, data_dir: Path) -> None:
    """The #14 probe: replay plus the default cache served one item's chain to another sharing its prompt."""
    from matpcr.engine import record_key, sample_items
    from matpcr.plugins import get_manager
    from matpcr.tasks import resolve

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "same.yaml").write_text("task: same_prompt\nloader: raman.spectra\nconstraint: spectra\noracle: raman\n"
                                     "prompt: Name the strongest Raman band of the mineral.\n")
    [task] = resolve(["same_prompt"], [str(tasks)])
    loader = get_manager().registry.get("tasks", task.loader).factory()
    items = sample_items(loader.load(task, data_dir), task.task, 0, 3)
    chains = {record_key(task.task, item.id, 0, 0, 0): f"Answer: {100 + 10 * n} cm-1" for n, item in enumerate(items)}
    source = tmp_path / "chains.jsonl"
    source.write_text("".join(json.dumps({"key": k, "chain": c}) + "\n" for k, c in chains.items()))
    cache = tmp_path / "cache.sqlite"
    for attempt in range(2):  # the second run is answered from the cache
        proc = run_cli("run", "--tasks", "same_prompt", "--limit", "3", "--include-path", str(tasks), "--model",
                       f"replay:{source}", "--data-dir", str(data_dir), "--output-dir", str(tmp_path / "runs"),
                       "--cache", str(cache), "--no-progress")
        assert proc.returncode == 0, proc.stderr
        run_dir = Path(proc.stdout.strip().splitlines()[-1])
        got = {r["key"]: r["chain"] for r in map(json.loads, (run_dir / "samples.jsonl").read_text().splitlines())}
        assert got == chains, attempt
