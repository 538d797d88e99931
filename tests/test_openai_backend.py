"""The OpenAI-compatible backend (the official ``openai`` client) against real servers on loopback:
`transformers serve` with the default model, and a small HTTP server that rate-limits, fails, stalls and
misbehaves on purpose (429/5xx storms, timeouts, malformed JSON, ``content: null``, an HTTP 200 carrying
an error, a server echoing the Authorization header, lone UTF-16 surrogates)."""

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
    """Answers each POST with ``server.plan(n, body, auth)`` -> (status, headers, payload, delay_s), where
    ``n`` counts requests from 0; ``server.script`` (a list of such tuples) is consumed first."""

    def do_POST(self) -> None:  # noqa: N802
        server = self.server
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length))
        auth = self.headers.get("authorization")
        with server.lock:
            n = len(server.seen)
            server.seen.append({"t": time.monotonic(), "auth": auth, "body": body})
            step = server.script.pop(0) if server.script else None
        status, headers, payload, delay = (*step, 0)[:4] if step else server.plan(n, body, auth)
        if delay:
            time.sleep(delay)
        data = payload if isinstance(payload, bytes) else payload.encode() if isinstance(payload, str) \
            else json.dumps(payload).encode()
        try:
            self.send_response(status)
            headers = {"content-type": "application/json", **headers}
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def log_message(self, *args: object) -> None:
        pass


def _completion(text: str, usage: object = None) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": usage if usage is not None else {"prompt_tokens": 5, "completion_tokens": 3}}


def _prompt(body: dict) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def _echo(n: int, body: dict, auth: str | None) -> tuple:
    """The default plan: answer every request with its own prompt (so answers can be matched to requests)."""
    return 200, {}, _completion(f"echo: {_prompt(body)}"), 0


class FakeOpenAI:
    """A real HTTP server on 127.0.0.1 speaking the chat-completions protocol, for this file and the
    fault tests (tests/test_faults_*.py import it)."""

    def __init__(self, plan=_echo) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Script)
        self.server.daemon_threads = True
        self.server.seen, self.server.script, self.server.plan = [], [], plan
        self.server.lock = threading.Lock()
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    @property
    def seen(self) -> list[dict]:
        return self.server.seen

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    server = FakeOpenAI()
    yield server
    server.close()


def _request(text: str = "Where is the main band?") -> Request:
    return Request([Message("user", [text_part(text)])], Sampling(max_new_tokens=8), seed=3)


def test_retries_honour_retry_after_and_5xx(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATPCR_TEST_KEY", SECRET)
    fake.server.script = [(429, {"Retry-After": "1"}, {"error": "slow down"}), (503, {}, {"error": "busy"})]
    backend = OpenAIBackend("m", base_url=fake.base_url, api_key_env="MATPCR_TEST_KEY")
    [response] = backend.generate([_request()])
    assert response.text == "echo: Where is the main band?" and response.error is None
    seen = fake.seen
    assert len(seen) == 3 and backend.retries == 2
    assert seen[1]["t"] - seen[0]["t"] >= 0.95  # waited as Retry-After asked
    assert seen[0]["auth"] == f"Bearer {SECRET}" and seen[0]["body"]["seed"] == 3
    assert SECRET not in json.dumps(backend.identity)


def test_gives_up_with_an_error_not_an_exception(fake: FakeOpenAI) -> None:
    fake.server.plan = lambda n, body, auth: (500, {"retry-after-ms": "10"}, {"error": "down"}, 0)
    backend = OpenAIBackend("m", base_url=fake.base_url, max_retries=2)
    [response] = backend.generate([_request()])
    assert response.text == "" and "gave up after 2 retries" in response.error and "HTTP 500" in response.error
    assert len(fake.seen) == 3


def test_malformed_reply_and_client_error_are_recorded(fake: FakeOpenAI) -> None:
    fake.server.script = [(200, {}, {"unexpected": True}), (400, {}, {"error": "bad model"})]
    backend = OpenAIBackend("m", base_url=fake.base_url, max_connections=1)
    first, second = backend.generate([_request("a"), _request("b")])
    assert "malformed reply" in first.error and "HTTP 400" in second.error


def test_concurrency_is_bounded(fake: FakeOpenAI) -> None:
    active, peak, lock = [0], [0], threading.Lock()

    def slow(n: int, body: dict, auth: str | None) -> tuple:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.2)
        with lock:
            active[0] -= 1
        return _echo(n, body, auth)

    fake.server.plan = slow
    backend = OpenAIBackend("m", base_url=fake.base_url, max_connections=3)
    responses = backend.generate([_request(str(i)) for i in range(9)])
    assert [r.text for r in responses] == [f"echo: {i}" for i in range(9)] and len(fake.seen) == 9
    assert peak[0] == 3


def test_a_429_and_5xx_storm_loses_and_duplicates_nothing(fake: FakeOpenAI) -> None:
    """Every prompt is refused twice (429 with Retry-After, then a 5xx) before it is answered: all 12 answers
    arrive, each matched to its own request, none asked for more than three times."""
    attempts: dict[str, int] = {}
    lock = threading.Lock()

    def storm(n: int, body: dict, auth: str | None) -> tuple:
        prompt = _prompt(body)
        with lock:
            attempts[prompt] = attempts.get(prompt, 0) + 1
            k = attempts[prompt]
        if k == 1:
            return 429, {"Retry-After": "0.05"}, {"error": {"message": "rate limited"}}, 0
        if k == 2:
            return (502, 503, 504)[n % 3], {"retry-after-ms": "20"}, "<html>bad gateway</html>", 0
        return _echo(n, body, auth)

    fake.server.plan = storm
    backend = OpenAIBackend("m", base_url=fake.base_url, max_connections=4, max_retries=3)
    responses = backend.generate([_request(f"q{i}") for i in range(12)])
    assert [r.error for r in responses] == [None] * 12
    assert [r.text for r in responses] == [f"echo: q{i}" for i in range(12)]
    assert attempts == {f"q{i}": 3 for i in range(12)} and backend.retries == 24


def test_a_stalled_request_times_out_alone(fake: FakeOpenAI) -> None:
    def stall(n: int, body: dict, auth: str | None) -> tuple:
        return (*_echo(n, body, auth)[:3], 3.0 if _prompt(body) == "slow" else 0)

    fake.server.plan = stall
    backend = OpenAIBackend("m", base_url=fake.base_url, timeout=0.5, max_retries=1)
    t0 = time.monotonic()
    fast, slow, other = backend.generate([_request("fast"), _request("slow"), _request("other")])
    assert time.monotonic() - t0 < 2.9  # two attempts of 0.5 s plus backoff, not the server's 3 s
    assert fast.text == "echo: fast" and other.text == "echo: other"
    assert slow.text == "" and "timed out after 0.5 s" in slow.error and "1 retries" in slow.error


MALFORMED = {
    "html": (200, {"content-type": "text/html"}, "<html>maintenance</html>"),
    "badjson": (200, {}, '{"choices": [{"message": '),
    "usage": (200, {}, _completion("Answer: 464 cm-1", usage={"prompt_tokens": "many", "completion_tokens": [1]})),
    "null": (200, {}, {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "length"}]}),
    "error200": (200, {}, {"error": {"message": "quota exceeded", "type": "insufficient_quota"}}),
    "nochoices": (200, {}, {"choices": []}),
    "echo401": None,  # filled in by the plan: the server echoes the Authorization header
    "good": (200, {}, _completion("Answer: 520 cm-1")),
}


def _malformed(n: int, body: dict, auth: str | None) -> tuple:
    kind = _prompt(body)
    if kind == "echo401":
        return 401, {}, {"error": {"message": f"invalid header: Authorization: {auth}"}}, 0
    return (*MALFORMED[kind], 0)


def test_one_malformed_reply_never_discards_the_others(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATPCR_TEST_KEY", SECRET)
    fake.server.plan = _malformed
    backend = OpenAIBackend("m", base_url=fake.base_url, api_key_env="MATPCR_TEST_KEY", max_retries=0)
    kinds = list(MALFORMED)
    got = dict(zip(kinds, backend.generate([_request(k) for k in kinds])))
    assert got["good"].text == "Answer: 520 cm-1" and got["good"].error is None
    assert got["usage"].text == "Answer: 464 cm-1" and got["usage"].error is None  # nonsense usage costs nothing
    assert got["usage"].prompt_tokens == 0 and got["usage"].completion_tokens == 0
    assert "not JSON" in got["html"].error and "maintenance" in got["html"].error
    assert "malformed reply" in got["badjson"].error
    assert got["null"].text == "" and "no content" in got["null"].error and "length" in got["null"].error
    assert "HTTP 200" in got["error200"].error and "quota exceeded" in got["error200"].error
    assert "no choices" in got["nochoices"].error
    assert "HTTP 401" in got["echo401"].error and "[redacted]" in got["echo401"].error
    for kind, response in got.items():  # a server echoing the key never gets it stored
        assert SECRET not in (response.error or "") + response.text, kind
    assert all(r.text == "" for k, r in got.items() if k not in ("good", "usage"))


def test_lone_surrogates_and_the_key_in_a_chain_are_cleaned(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATPCR_TEST_KEY", SECRET)
    body = '{"choices": [{"message": {"role": "assistant", "content": "Answer: 5\\ud800 nm \\ud83d\\ude00 %s"}}]}' % SECRET
    fake.server.script = [(200, {}, body.encode())]
    backend = OpenAIBackend("m", base_url=fake.base_url, api_key_env="MATPCR_TEST_KEY")
    [response] = backend.generate([_request()])
    assert response.text == "Answer: 5\ufffd nm \U0001f600 [redacted]"
    response.text.encode("utf-8")  # strict UTF-8 holds it


def test_no_key_for_openai_itself_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from matpcr.errors import MatpcrError

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("MATPCR_UNSET_KEY", raising=False)
    with pytest.raises(MatpcrError, match=r"set \$MATPCR_UNSET_KEY"):
        OpenAIBackend("gpt-4o", api_key_env="MATPCR_UNSET_KEY")


def test_another_servers_key_is_never_sent(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client library would read $OPENAI_API_KEY by itself; pointed at another server with another
    key variable (unset), that key must not travel."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    backend = OpenAIBackend("m", base_url=fake.base_url, api_key_env="MATPCR_UNSET_KEY")
    backend.generate([_request()])
    assert SECRET not in str(fake.seen[0]["auth"])


def test_unknown_or_mistyped_model_args_are_clear_errors() -> None:
    from matpcr.errors import MatpcrError
    from matpcr_plugins.backend_openai import make_openai

    with pytest.raises(MatpcrError, match="unknown setting 'max_conections'; did you mean 'max_connections'"):
        make_openai("m", base_url="http://127.0.0.1:9/v1", max_conections=2)
    with pytest.raises(MatpcrError, match="timeout: 'soon' is not a number"):
        make_openai("m", base_url="http://127.0.0.1:9/v1", timeout="soon")
    with pytest.raises(MatpcrError, match="max_connections must be"):
        make_openai("m", base_url="http://127.0.0.1:9/v1", max_connections=0)


def test_the_old_hand_written_client_is_gone() -> None:
    import matpcr_plugins.backend_openai as module

    source = Path(module.__file__).read_text()
    assert "AsyncOpenAI" in source and "httpx" not in source and "tenacity" not in source
