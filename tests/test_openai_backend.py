"""The OpenAI-compatible backend against real servers on loopback: `transformers serve` with the
default model, and a small HTTP server that rate-limits, fails and misbehaves on purpose."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from matpcr.records import Message, Request, Sampling, text_part
from matpcr_plugins.backend_openai import OpenAIBackend

from conftest import run_cli

SECRET = "sk-test-DO-NOT-LEAK-4242"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served_model(smollm2_dir: Path):
    port = _free_port()
    serve = Path(sys.executable).with_name("transformers")
    proc = subprocess.Popen([str(serve), "serve", str(smollm2_dir), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as reply:
                if reply.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("transformers serve did not come up on loopback")
    yield {"base_url": base + "/v1", "model": str(smollm2_dir)}
    proc.terminate()
    proc.wait(timeout=30)


def test_run_against_transformers_serve(served_model: dict, data_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    proc = run_cli("run", "--tasks", "sem_text,raman_text", "--limit", "2", "--model", f"openai:{served_model['model']}",
                   "--model-args", f"base_url={served_model['base_url']},api_key_env=MATPCR_TEST_KEY",
                   "--max-connections", "2", "--generation", "max_new_tokens=24", "--data-dir", str(data_dir),
                   "--output-dir", str(tmp_path / "runs"), "--cache", str(cache), "--no-progress",
                   env={"MATPCR_TEST_KEY": SECRET})
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    records = [json.loads(l) for l in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["chain"] and not r["error"] for r in records)
    assert all(r["completion_tokens"] > 0 for r in records)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["model"]["backend"] == "openai" and results["model"]["base_url"] == served_model["base_url"]
    # the key is never written anywhere
    for path in [*run_dir.iterdir(), cache, *tmp_path.glob("*.sqlite*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in proc.stdout + proc.stderr


class _Script(BaseHTTPRequestHandler):
    """Answers according to the server's script: a list of (status, headers, body) per request."""

    def do_POST(self) -> None:  # noqa: N802
        server = self.server
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length))
        server.seen.append({"t": time.monotonic(), "auth": self.headers.get("authorization"), "body": body})
        status, headers, payload = server.script.pop(0) if server.script else server.default
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _completion(text: str) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3}}


@pytest.fixture
def scripted_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Script)
    server.seen, server.script, server.default = [], [], (200, {}, _completion("Answer: 464 cm-1"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def _request(text: str = "Where is the main band?") -> Request:
    return Request([Message("user", [text_part(text)])], Sampling(max_new_tokens=8), seed=3)


def test_retries_honour_retry_after_and_5xx(scripted_server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATPCR_TEST_KEY", SECRET)
    scripted_server.script = [(429, {"Retry-After": "1"}, {"error": "slow down"}), (503, {}, {"error": "busy"})]
    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{scripted_server.server_port}/v1",
                            api_key_env="MATPCR_TEST_KEY", backoff_base=0.05, backoff_max=2)
    [response] = backend.generate([_request()])
    assert response.text == "Answer: 464 cm-1" and response.error is None
    seen = scripted_server.seen
    assert len(seen) == 3 and backend.retries == 2
    assert seen[1]["t"] - seen[0]["t"] >= 0.95  # waited as Retry-After asked
    assert seen[0]["auth"] == f"Bearer {SECRET}" and seen[0]["body"]["seed"] == 3
    assert SECRET not in json.dumps(backend.identity)


def test_gives_up_with_an_error_not_an_exception(scripted_server) -> None:
    scripted_server.default = (500, {}, {"error": "down"})
    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{scripted_server.server_port}/v1", max_retries=2,
                            backoff_base=0.01, backoff_max=0.05)
    [response] = backend.generate([_request()])
    assert response.text == "" and "gave up after 2 retries" in response.error
    assert len(scripted_server.seen) == 3


def test_malformed_reply_and_client_error_are_recorded(scripted_server) -> None:
    scripted_server.script = [(200, {}, {"unexpected": True}), (400, {}, {"error": "bad model"})]
    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{scripted_server.server_port}/v1", max_connections=1)
    first, second = backend.generate([_request("a"), _request("b")])
    assert "malformed reply" in first.error and "HTTP 400" in second.error


def test_concurrency_is_bounded(scripted_server) -> None:
    class Slow(_Script):
        active = 0
        peak = 0
        lock = threading.Lock()

        def do_POST(self) -> None:  # noqa: N802
            with Slow.lock:
                Slow.active += 1
                Slow.peak = max(Slow.peak, Slow.active)
            time.sleep(0.2)
            super().do_POST()
            with Slow.lock:
                Slow.active -= 1

    scripted_server.RequestHandlerClass = Slow
    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{scripted_server.server_port}/v1", max_connections=3)
    responses = backend.generate([_request(str(i)) for i in range(9)])
    assert all(r.text for r in responses) and len(scripted_server.seen) == 9
    assert Slow.peak == 3
