"""Run directories under faults: lone surrogates and non-finite numbers, duplicate keys, truncated files,
a full disk, and two writers (real processes, one killed with SIGKILL)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from matpcr.errors import MatpcrError
from matpcr.rundir import JsonlWriter, RunDir, RunDirLocked, dumps

from conftest import REPO, run_cli
from test_openai_backend import FakeOpenAI, _completion, _echo

TASKS = ("--tasks", "raman_text", "--limit", "4")


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name}")


def strict_lines(path: Path) -> list[dict]:
    """Every line of a JSONL file read as strict JSON in strict UTF-8 (no NaN/Infinity, no bad bytes)."""
    return [json.loads(line, parse_constant=_reject_constant) for line in path.read_bytes().decode("utf-8").splitlines()]


def _record(key: str, chain: str = "Answer: 1", **extra: object) -> dict:
    return {"key": key, "task": "t", "item_id": key, "source_id": key, "constraint": "c", "modality": "text",
            "seed": 0, "round": 0, "sample": 0, "model": "m", "prompt": [], "chain": chain, **extra}


def _run_dir(stdout: str) -> Path:
    return Path(stdout.strip().splitlines()[-1])


# -- strict JSON out --------------------------------------------------------------------------------

def test_lone_surrogates_and_non_finite_numbers_are_written_as_strict_json(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    with run.writer() as writer:
        writer.write_many([_record("a", "x\ud800y", latency_s=float("inf"), meta={"v": np.float64("nan"),
                                                                                  "\udfff": [float("-inf"), 1.5]}),
                           _record("b", "pair \ud83d\ude00 ok")])
    lines = strict_lines(run.samples_path)
    assert lines[0]["chain"] == "x\ufffdy" and lines[0]["latency_s"] is None
    assert lines[0]["meta"] == {"v": None, "\ufffd": [None, 1.5]}
    assert lines[1]["chain"] == "pair \U0001f600 ok"  # a surrogate pair is joined, not replaced
    [a, b] = run.records()
    assert a.chain == "x\ufffdy" and b.key == "b"
    run.write_results({"pcr": float("nan"), "label": "\ud800"})
    assert json.loads(run.results_path.read_text(encoding="utf-8"), parse_constant=_reject_constant) == \
        {"pcr": None, "label": "\ufffd"}
    assert dumps({"x": 1.0}) == '{"x": 1.0}'  # the fast path leaves clean data alone


def test_reading_is_tolerant_of_escaped_surrogates_and_bad_bytes(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.samples_path.write_bytes(json.dumps(_record("a", "x\ud800")).encode() + b"\n"
                                 + json.dumps(_record("b", "ok")).encode()[:-2] + b"\xff\xfe\"}\n")
    a, b = run.records()
    assert a.chain == "x\ufffd" and b.chain.endswith("\ufffd\ufffd")


def test_a_surrogate_from_the_server_survives_the_run_and_resume(tmp_path: Path, data_dir: Path) -> None:
    """The #14 probe: a valid-JSON reply holding a lone UTF-16 surrogate used to kill the run and --resume."""
    raw = '{"choices": [{"message": {"role": "assistant", "content": "Answer: 464 cm-1 \\ud800"}}]}'
    fake = FakeOpenAI(lambda n, body, auth: (200, {}, raw.encode(), 0))
    try:
        proc = run_cli("run", *TASKS, "--model", "openai:m", "--model-args", f"base_url={fake.base_url}",
                       "--data-dir", str(data_dir), "--output-dir", str(tmp_path), "--cache", str(tmp_path / "c.sqlite"),
                       "--no-progress")
        assert proc.returncode == 0, proc.stderr
        run_dir = _run_dir(proc.stdout)
        records = strict_lines(run_dir / "samples.jsonl")
        assert len(records) == 4 and all(r["chain"] == "Answer: 464 cm-1 \ufffd" and not r["error"] for r in records)
        again = run_cli("run", "--resume", str(run_dir), "--no-progress")
        assert again.returncode == 0, again.stderr
        assert len(strict_lines(run_dir / "samples.jsonl")) == 4
    finally:
        fake.close()


# -- reading damaged directories --------------------------------------------------------------------

def test_duplicate_keys_collapse_last_wins_and_are_counted(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    with run.writer() as writer:
        writer.write_many([_record("a", "first"), _record("b"), _record("a", "second"), _record("a", "third")])
    records = run.records()
    assert [r.key for r in records] == ["b", "a"] and records[1].chain == "third" and run.duplicates == 2


@pytest.mark.parametrize("name", ["config.json", "results.json"])
def test_truncated_config_or_results_names_the_file(tmp_path: Path, name: str) -> None:
    run = RunDir(tmp_path)
    run.create({"tasks": ["raman_text"], "model": "m"})
    run.write_results({"metrics": {"pcr": 0.5}})
    path = tmp_path / name
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(MatpcrError, match=rf"{name}: truncated or corrupt JSON"):
        run.read_config() if name == "config.json" else run.read_results()


def test_resume_of_a_truncated_config_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.create({"tasks": ["raman_text"], "model": "smollm2"})
    run.config_path.write_text('{"tasks": ["raman_')
    proc = run_cli("run", "--resume", str(tmp_path), "--no-progress")
    assert proc.returncode == 2 and "config.json: truncated or corrupt JSON" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_corrupt_middle_line_and_non_object_lines_name_the_line(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.samples_path.write_text(json.dumps(_record("a")) + "\n[1, 2]\n")
    with pytest.raises(MatpcrError, match=r"samples.jsonl:2: a record must be a JSON object"):
        run.records()


# -- disk full --------------------------------------------------------------------------------------

def test_disk_full_is_a_clear_error_that_keeps_what_was_saved(tmp_path: Path) -> None:
    """/dev/full answers every write with ENOSPC, as a full disk does."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    run = RunDir(tmp_path / "run")
    run.create({"model": "m"})
    run.samples_path.symlink_to("/dev/full")
    writer = run.writer()
    with pytest.raises(MatpcrError) as info:
        writer.write_many([_record("a")])
    message = str(info.value)
    assert "No space left on device" in message and f"matpcr run --resume {run.path}" in message
    writer.close()
    import threading

    tmp = run.path / f".results.json.{os.getpid()}.{threading.get_ident()}.tmp"  # rundir.write_atomic's temporary
    tmp.symlink_to("/dev/full")
    with pytest.raises(MatpcrError, match=r"could not write results.json .*No space left.*--resume"):
        run.write_results({"metrics": {}})
    assert not run.results_path.exists()


def _limit_file_size(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_run_that_hits_the_file_size_limit_stops_clearly_and_resumes_without_duplicates(tmp_path: Path,
                                                                                          data_dir: Path) -> None:
    long_answer = "Answer: 464 cm-1. " + "x" * 150_000
    fake = FakeOpenAI(lambda n, body, auth: (200, {}, _completion(long_answer), 0))
    env = {**os.environ, "MATPCR_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, "-m", "matpcr.cli", "run", *TASKS, "--batch-size", "1", "--model", "openai:m",
            "--model-args", f"base_url={fake.base_url}", "--output-dir", str(tmp_path), "--cache", "none",
            "--no-progress"]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=REPO, timeout=600,
                              preexec_fn=_limit_file_size(400_000))
        assert proc.returncode == 2, proc.stderr
        assert "could not write 1 record(s)" in proc.stderr and "--resume" in proc.stderr
        assert "Traceback" not in proc.stderr
        [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
        saved = strict_lines(run_dir / "samples.jsonl")  # whole lines only: the failed batch was cut back
        assert 1 <= len(saved) < 4
        again = run_cli("run", "--resume", str(run_dir), "--no-progress")
        assert again.returncode == 0, again.stderr
        keys = [r["key"] for r in strict_lines(run_dir / "samples.jsonl")]
        assert len(keys) == 4 == len(set(keys)) and keys[: len(saved)] == [r["key"] for r in saved]
    finally:
        fake.close()


def test_output_dir_that_is_a_file_is_a_clear_error(tmp_path: Path, data_dir: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(MatpcrError, match="a parent of this path is a file"):
        RunDir(blocker / "run").create({})
    chains = tmp_path / "chains.jsonl"
    chains.write_text('{"key": "k", "chain": "Answer: 1 cm-1"}\n')
    proc = run_cli("run", *TASKS, "--model", f"replay:{chains}", "--output-dir", str(blocker),
                   "--data-dir", str(data_dir), "--no-progress", "--cache", "none")
    assert proc.returncode == 2 and "a parent of this path is a file; pass another --output-dir" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_output_dir_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(MatpcrError, match="not writable|cannot create run directory"):
            RunDir(folder / "run").create({})
    finally:
        folder.chmod(0o700)


# -- one writer -------------------------------------------------------------------------------------

HOLD = """
import sys, time
from matpcr.rundir import RunDir
run = RunDir(sys.argv[1])
run.writer()
print("locked", flush=True)
time.sleep(120)
"""


def test_a_second_writer_gets_a_clear_error_until_the_first_is_killed(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              cwd=REPO)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirLocked) as info:
            RunDir(tmp_path).writer()
        assert f"pid {holder.pid}" in str(info.value) and f"matpcr run --resume {tmp_path}" in str(info.value)
        os.kill(holder.pid, signal.SIGKILL)  # the kernel drops the lock with the process
        holder.wait(timeout=30)
        with RunDir(tmp_path).writer() as writer:
            writer.write_many([_record("a")])
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_the_same_process_shares_its_lock(tmp_path: Path) -> None:
    first, second = RunDir(tmp_path), RunDir(tmp_path)
    first.create({})
    with second.writer() as writer:  # rescore and the engine in one process must not lock each other out
        writer.write_many([_record("a")])
    first.release()
    second.release()


def _wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while not predicate():
        if time.time() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.1)


def test_two_resumes_on_one_run_cannot_both_append(tmp_path: Path, data_dir: Path) -> None:
    """The #14 probe: two `--resume` processes on one directory duplicated records. Now the second stops with
    a message naming the first; a SIGKILLed writer leaves the directory resumable with every record once."""
    def slow(n: int, body: dict, auth: str | None) -> tuple:
        return (*_echo(n, body, auth)[:3], 1.0)

    fake = FakeOpenAI(slow)
    env = {**os.environ, "MATPCR_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    base = [sys.executable, "-m", "matpcr.cli", "run"]
    common = ["--batch-size", "1", "--cache", "none", "--no-progress"]
    try:
        first = subprocess.Popen([*base, *TASKS, "--model", "openai:m", "--model-args", f"base_url={fake.base_url}",
                                  "--output-dir", str(tmp_path), *common], cwd=REPO, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for(lambda: any((p / "samples.jsonl").exists() and (p / "samples.jsonl").stat().st_size > 0
                              for p in tmp_path.iterdir() if p.is_dir()))
        [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
        second = subprocess.run([*base, "--resume", str(run_dir), *common], cwd=REPO, env=env, capture_output=True,
                                text=True, timeout=300)
        assert second.returncode == 2 and f"pid {first.pid}" in second.stderr, second.stderr
        assert "Traceback" not in second.stderr
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        third = subprocess.run([*base, "--resume", str(run_dir), *common], cwd=REPO, env=env, capture_output=True,
                               text=True, timeout=300)
        assert third.returncode == 0, third.stderr
        keys = [r["key"] for r in strict_lines(run_dir / "samples.jsonl")]
        assert len(keys) == 4 == len(set(keys))
    finally:
        fake.close()
