"""The ``openai:`` backend: any OpenAI-compatible chat-completions server, through the official
``openai`` client (``AsyncOpenAI``).

- Requests run concurrently, at most ``max_connections`` at a time.
- Retries (408/409/429/5xx, dropped connections, timeouts) are the client's own: exponential backoff
  with jitter, ``Retry-After`` / ``retry-after-ms`` honoured up to two minutes, ``max_retries`` times.
- Every failure is recorded on its own request as ``Response(error=...)``: a malformed reply (not JSON,
  an error object in an HTTP 200, no choices, ``content: null``) never discards the other answers of
  its batch. ``content: null`` is a generation error, not an empty chain.
- The API key is read from the environment variable named by ``api_key_env`` (default
  ``OPENAI_API_KEY``) when a batch starts; it is never part of the identity, the cache, a record or an
  error message, and any text stored from the server is redacted of it (a server may echo headers).
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import os
import re
import time
from typing import Any

from matpcr import hookimpl
from matpcr.errors import MatpcrError
from matpcr.protocols import Capabilities
from matpcr.records import Request, Response

OPENAI_URL = "https://api.openai.com/v1"
#: sent when no key is configured, for local servers that need none (vLLM, `transformers serve`)
NO_KEY = "no-key"
RETRIED_STATUS = {408, 409, 429}
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',;}\]]+")
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")


def redact(text: str, secret: str | None) -> str:
    """``text`` without the key, any ``Bearer <token>`` and anything shaped like an OpenAI key."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    return _SK.sub("[redacted]", _BEARER.sub(r"\1[redacted]", text))


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


def _count(value: Any) -> int:
    """A token count from ``usage``; a server's nonsense there must not cost the answer."""
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return number if number >= 0 else 0


class OpenAIBackend:
    def __init__(self, model: str, revision: str | None = None, *, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", max_connections: int = 8, max_retries: int = 6,
                 timeout: float = 120.0, images: bool = True, extra_body: dict[str, Any] | None = None):
        self.model = model
        self.base_url = str(base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        self.api_key_env = str(api_key_env)
        self.max_connections, self.max_retries, self.timeout = int(max_connections), int(max_retries), float(timeout)
        if self.max_connections < 1 or self.max_retries < 0 or not self.timeout > 0:
            raise MatpcrError("openai backend: max_connections must be ≥ 1, max_retries ≥ 0 and timeout > 0 "
                              f"(got {max_connections}, {max_retries}, {timeout})")
        if extra_body is not None and not isinstance(extra_body, dict):
            raise MatpcrError("openai backend: extra_body must be a JSON object, e.g. extra_body={\"top_k\":20}")
        if self.base_url == OPENAI_URL and not os.environ.get(self.api_key_env):
            raise MatpcrError(f"openai backend: set ${self.api_key_env} to your API key (it is read from the "
                              "environment only), or pass base_url=... for a server that needs none")
        self.extra_body = extra_body or {}
        self.identity = {"backend": "openai", "model": model, "revision": revision, "base_url": self.base_url,
                         "extra_body": self.extra_body}
        self.capabilities = Capabilities(images=bool(images), max_images=16)
        self.retries = 0

    # -- batches -----------------------------------------------------------------------------
    def generate(self, requests: list[Request]) -> list[Response]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._generate_all(requests))
        # called from inside an event loop (a notebook): run the batch on a thread of its own
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self._generate_all(requests)).result()

    async def _generate_all(self, requests: list[Request]) -> list[Response]:
        import openai

        key = os.environ.get(self.api_key_env) or None
        semaphore = asyncio.Semaphore(self.max_connections)
        async with openai.AsyncOpenAI(api_key=key or NO_KEY, base_url=self.base_url, max_retries=self.max_retries,
                                      timeout=self.timeout) as client:
            results = await asyncio.gather(*(self._one(client, semaphore, r, key) for r in requests),
                                           return_exceptions=True)
        out = []
        for result in results:
            if isinstance(result, BaseException):  # _one catches everything; this is the last line of defence
                if not isinstance(result, Exception):
                    raise result
                result = Response("", error=redact(f"{type(result).__name__}: {result}", key))
            out.append(result)
        return out

    # -- one request -------------------------------------------------------------------------
    def _body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(request),
                                "max_tokens": request.sampling.max_new_tokens, "seed": request.seed,
                                "temperature": request.sampling.temperature}
        if not request.sampling.greedy:
            body["top_p"] = request.sampling.top_p
        if self.extra_body:
            body["extra_body"] = self.extra_body
        return body

    async def _one(self, client: Any, semaphore: asyncio.Semaphore, request: Request, key: str | None) -> Response:
        import openai

        t0 = time.perf_counter()
        try:
            body = self._body(request)
            async with semaphore:
                raw = await client.chat.completions.with_raw_response.create(**body)
            self.retries += int(getattr(raw, "retries_taken", 0) or 0)
            response = self._read(raw.parse())
        except openai.APIStatusError as exc:
            status = exc.status_code
            excerpt = _excerpt(exc.response)
            if status in RETRIED_STATUS or status >= 500:
                error = f"gave up after {self.max_retries} retries: HTTP {status} from {self.base_url}: {excerpt}"
                self.retries += self.max_retries
            else:
                error = f"HTTP {status} from {self.base_url}: {excerpt}"
            response = Response("", error=error)
        except openai.APITimeoutError:
            self.retries += self.max_retries
            response = Response("", error=f"timed out after {self.timeout:g} s talking to {self.base_url} "
                                          f"(gave up after {self.max_retries} retries)")
        except openai.APIConnectionError as exc:
            self.retries += self.max_retries
            cause = exc.__cause__ or exc
            response = Response("", error=f"cannot reach {self.base_url} (gave up after {self.max_retries} retries): "
                                          f"{type(cause).__name__}: {cause}")
        except OSError as exc:  # an image file that cannot be read
            response = Response("", error=f"cannot build the request: {exc}")
        except Exception as exc:  # a reply the client could not parse (invalid JSON and the like)
            response = Response("", error=f"malformed reply from {self.base_url}: {type(exc).__name__}: "
                                          f"{str(exc)[:300]}")
        response.latency_s = time.perf_counter() - t0
        if response.error is not None:
            response.error = redact(_clean(response.error), key)
        elif key and key in response.text:
            response.text = response.text.replace(key, "[redacted]")
        return response

    def _read(self, completion: Any) -> Response:
        """A Response from whatever the server sent, or one that says exactly what was wrong with it."""
        where = f"from {self.base_url}"
        if isinstance(completion, (str, bytes)):
            text = completion.decode("utf-8", "replace") if isinstance(completion, bytes) else completion
            return Response("", error=f"malformed reply {where}: not JSON: {text[:200]!r}")
        extra = getattr(completion, "model_extra", None) or {}
        choices = getattr(completion, "choices", None)
        if not choices:
            if extra.get("error") is not None:
                return Response("", error=f"server error in an HTTP 200 reply {where}: {str(extra['error'])[:300]}")
            return Response("", error=f"malformed reply {where}: no choices ({str(completion)[:200]})")
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if content is None:
            refusal = getattr(message, "refusal", None)
            reason = getattr(choice, "finish_reason", None)
            detail = f"refusal: {str(refusal)[:200]}" if refusal else f"finish_reason={reason}"
            return Response("", error=f"the model returned no content ({detail})")
        if not isinstance(content, str):
            return Response("", error=f"malformed reply {where}: content is {type(content).__name__}, not text")
        usage = getattr(completion, "usage", None)
        return Response(_clean(content).strip(), prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
                        completion_tokens=_count(getattr(usage, "completion_tokens", 0)))


def _clean(text: str) -> str:
    from matpcr.rundir import clean_text

    return clean_text(text)


def _excerpt(response: Any) -> str:
    try:
        return str(response.text)[:300]
    except Exception:  # a body that cannot be decoded
        return "(unreadable body)"


def make_openai(model: str, revision: str | None = None, **args: Any) -> OpenAIBackend:
    if not model:
        raise MatpcrError("openai backend needs a model name: --model openai:gpt-4o (key from $OPENAI_API_KEY)")
    from matpcr.spec import coerce_call_args

    return OpenAIBackend(model, revision, **coerce_call_args("--model-args (openai)", OpenAIBackend.__init__, args,
                                                             skip=("model", "revision")))


@hookimpl
def register_backends(register: Any) -> None:
    register("openai", make_openai, "OpenAI-compatible chat completions (base_url=..., api_key_env=..., max_connections=...)")
