"""Throughput of the ``openai:`` backend against a loopback OpenAI-compatible server with a fixed latency.

The server (Starlette on uvicorn, in its own process, no rate limit) answers every chat-completions
request after ``--latency`` seconds. matpcr's backend sends batches at 1, 8, 64 and 256 connections; the
ideal rate is connections ÷ latency. Also measured: the time from starting ``matpcr run --limit 30`` on a
task to the server seeing its first request (item loading included).

    python bench/api_throughput.py            # target: >= 0.9 of ideal at 64 connections; first request < 5 s
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SERVER = r'''
import asyncio, json, sys, time
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
import uvicorn

latency = float(sys.argv[2]); log = open(sys.argv[3], "a", buffering=1)

async def chat(request):
    body = await request.json()
    log.write(f"{time.time()}\n")
    await asyncio.sleep(latency)
    return JSONResponse({"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": "Answer: 2θ = 28.4°"}}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", backlog=2048, limit_concurrency=4096)
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, timeout: float = 30.0) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"server on port {port} did not start")


def throughput(port: int, connections: int, n: int) -> tuple[float, float]:
    from matpcr.records import Message, Request, Sampling, text_part
    from matpcr_plugins.backend_openai import make_openai

    backend = make_openai("bench-model", None, base_url=f"http://127.0.0.1:{port}/v1", max_connections=connections)
    requests = [Request([Message("user", [text_part(f"question {i}")])], Sampling(max_new_tokens=16), seed=i)
                for i in range(n)]
    t0 = time.perf_counter()
    responses = backend.generate(requests)
    wall = time.perf_counter() - t0
    errors = sum(1 for r in responses if r.error)
    if errors:
        print(f"  {errors} errors, e.g. {next(r.error for r in responses if r.error)}")
    return n / wall, wall


def first_request(port: int, log: Path, task: str, data_dir: str) -> float:
    log.write_text("")
    with tempfile.TemporaryDirectory() as out:
        start = time.time()
        proc = subprocess.Popen([sys.executable, "-m", "matpcr.cli", "run", "--tasks", task, "--limit", "30",
                                 "--model", "openai:bench-model", "--model-args",
                                 f"base_url=http://127.0.0.1:{port}/v1,max_connections=64", "--data-dir", data_dir,
                                 "--output-dir", out, "--cache", "none", "--no-progress"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO)
        while proc.poll() is None and not log.read_text().strip():
            time.sleep(0.02)
        first = float(log.read_text().split()[0]) - start if log.read_text().strip() else float("nan")
        proc.wait(timeout=600)
        if proc.returncode:
            print(f"  {task}: run failed: {proc.stderr.read()[-300:]}")
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--data-dir", default=os.environ.get("MATPCR_DATA_DIR", str(REPO.parent / "shared" / "data")))
    parser.add_argument("--tasks", default="xrd_text,xrd_pattern_text,raman_text,sem_text,stability_text,msqa_binary")
    args = parser.parse_args()
    port = free_port()
    log = Path(tempfile.mkdtemp()) / "requests.log"
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(args.latency), str(log)])
    try:
        wait_for(port)
        print(f"loopback server, latency {args.latency * 1000:.0f} ms, no rate limit")
        rows = []
        for connections, n in ((1, 25), (8, 400), (64, 2000), (256, 2000)):
            rate, wall = throughput(port, connections, n)
            ideal = connections / args.latency
            rows.append({"connections": connections, "requests": n, "req_per_s": rate, "ideal": ideal,
                         "fraction_of_ideal": rate / ideal, "wall_s": wall})
            print(f"  {connections:>3} connections, {n:>4} requests: {rate:8.1f} req/s  (ideal {ideal:7.1f}, "
                  f"{rate / ideal:.2f} of ideal, {wall:.1f} s)")
        print("time to the first request, `matpcr run --limit 30` (item loading included):")
        firsts = {}
        for task in args.tasks.split(","):
            firsts[task] = first_request(port, log, task, args.data_dir)
            print(f"  {task:<18} {firsts[task]:.2f} s")
        print(json.dumps({"throughput": rows, "first_request_s": firsts}))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
