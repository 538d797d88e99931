"""The ``openai:`` backend: any OpenAI-compatible chat-completions server.

Requests run concurrently (bounded by ``max_connections``) with exponential-backoff retries that
honour ``Retry-After`` on 429 and 5xx. The API key is read from an environment variable and never
appears in the identity, the cache, a record or an error message.
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import os
import time
from typing import Any

from matpcr import hookimpl
from matpcr.errors import MatpcrError
from matpcr.protocols import Capabilities
from matpcr.records import Request, Response

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class RetryableHTTPError(Exception):
    def __init__(self, status: int, retry_after: float | None, body: str):
        super().__init__(f"HTTP {status}: {body[:200]}")
        self.status, self.retry_after = status, retry_after


def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _image_url(path: str) -> str:
    mime = mimetypes.guess_type(path)[0] or "image/png"
    with open(path, "rb") as handle:
        return f"data:{mime};base64,{base64.b64encode(handle.read()).decode()}"


def to_openai_messages(request: Request) -> list[dict[str, Any]]:
    messages = []
    for m in request.messages:
        if not m.image_paths:
            messages.append({"role": m.role, "content": m.text})
            continue
        parts = []
        for p in m.content:
            if p["type"] == "image":
                parts.append({"type": "image_url", "image_url": {"url": _image_url(p["path"])}})
            else:
                parts.append({"type": "text", "text": p["text"]})
        messages.append({"role": m.role, "content": parts})
    return messages


class OpenAIBackend:
    def __init__(self, model: str, revision: str | None = None, *, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", max_connections: int = 8, max_retries: int = 6,
                 timeout: float = 120.0, images: bool = True, backoff_base: float = 1.0, backoff_max: float = 60.0,
                 extra_body: dict[str, Any] | None = None):
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.api_key_env = api_key_env
        self.max_connections, self.max_retries, self.timeout = int(max_connections), int(max_retries), float(timeout)
        self.backoff_base, self.backoff_max = float(backoff_base), float(backoff_max)
        self.extra_body = extra_body or {}
        self.identity = {"backend": "openai", "model": model, "revision": revision, "base_url": self.base_url,
                         "extra_body": self.extra_body}
        self.capabilities = Capabilities(images=bool(images), max_images=16)
        self.retries = 0

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def generate(self, requests: list[Request]) -> list[Response]:
        return asyncio.run(self._generate_all(requests))

    async def _generate_all(self, requests: list[Request]) -> list[Response]:
        import httpx

        limits = httpx.Limits(max_connections=self.max_connections, max_keepalive_connections=self.max_connections)
        semaphore = asyncio.Semaphore(self.max_connections)
        async with httpx.AsyncClient(timeout=self.timeout, limits=limits) as client:
            return list(await asyncio.gather(*(self._one(client, semaphore, r) for r in requests)))

    async def _one(self, client: Any, semaphore: asyncio.Semaphore, request: Request) -> Response:
        import httpx
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

        body: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(request),
                                "max_tokens": request.sampling.max_new_tokens, "seed": request.seed,
                                "temperature": request.sampling.temperature, **self.extra_body}
        if not request.sampling.greedy:
            body["top_p"] = request.sampling.top_p
        backoff = wait_exponential_jitter(initial=self.backoff_base, max=self.backoff_max)

        def wait(state: Any) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, RetryableHTTPError) and exc.retry_after is not None:
                return min(exc.retry_after, self.backoff_max)
            return backoff(state)

        def retryable(exc: BaseException) -> bool:
            return isinstance(exc, (RetryableHTTPError, httpx.TransportError))

        def count(_: Any) -> None:
            self.retries += 1

        t0 = time.perf_counter()
        try:
            async with semaphore:
                async for attempt in AsyncRetrying(stop=stop_after_attempt(self.max_retries + 1), wait=wait,
                                                   retry=retry_if_exception(retryable), reraise=True, before_sleep=count):
                    with attempt:
                        reply = await client.post(f"{self.base_url}/chat/completions", json=body, headers=self._headers())
                        if reply.status_code in RETRY_STATUS:
                            raise RetryableHTTPError(reply.status_code, _retry_after(reply.headers), reply.text)
                        if reply.status_code >= 400:
                            return Response("", error=f"HTTP {reply.status_code} from {self.base_url}: {reply.text[:300]}")
                        data = reply.json()
        except RetryableHTTPError as exc:
            return Response("", error=f"gave up after {self.max_retries} retries: {exc}")
        except httpx.HTTPError as exc:
            return Response("", error=f"{type(exc).__name__} talking to {self.base_url}: {exc}")
        try:
            text = data["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError):
            return Response("", error=f"malformed reply from {self.base_url}: {str(data)[:300]}")
        usage = data.get("usage") or {}
        return Response(text.strip(), prompt_tokens=int(usage.get("prompt_tokens") or 0),
                        completion_tokens=int(usage.get("completion_tokens") or 0),
                        latency_s=time.perf_counter() - t0)


def make_openai(model: str, revision: str | None = None, **args: Any) -> OpenAIBackend:
    if not model:
        raise MatpcrError("openai backend needs a model name: --model openai:gpt-4o (key from $OPENAI_API_KEY)")
    return OpenAIBackend(model, revision, **args)


@hookimpl
def register_backends(register: Any) -> None:
    register("openai", make_openai, "OpenAI-compatible chat completions (base_url=..., api_key_env=..., max_connections=...)")
