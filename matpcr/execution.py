"""Executing requests: the response cache in front of a backend, and scorers' model-graded stages.

A backend failure becomes ``Response(error=...)`` for the requests it concerned, never an exception out
of a batch: answers already paid for are cached and recorded.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from matpcr.cache import ResponseCache, cache_key
from matpcr.errors import MatpcrError
from matpcr.protocols import Backend, Scorer
from matpcr.records import Item, Request, Response

log = logging.getLogger("matpcr.execution")


@dataclass
class Executor:
    """Sends requests to one backend through the response cache and counts what it did."""

    backend_factory: Callable[[], Backend]
    cache: ResponseCache
    label: str
    stats: dict[str, Any] = field(default_factory=lambda: {"generated": 0, "cached": 0, "generate_s": 0.0})
    _backend: Backend | None = None
    _identity: dict[str, Any] | None = None

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = self.backend_factory()
        return self._backend

    @property
    def started(self) -> bool:
        return self._backend is not None

    @property
    def identity(self) -> dict[str, Any]:
        if self._identity is None:
            self._identity = dict(self.backend.identity)
        return self._identity

    def generate(self, requests: list[Request]) -> list[Response]:
        if not requests:
            return []
        keys = [cache_key(self.identity, r) for r in requests]
        hits = self.cache.get_many(keys)
        out: list[Response | None] = [None] * len(requests)
        missing = []
        for i, key in enumerate(keys):
            if key in hits:
                hits[key].cached = True
                out[i] = hits[key]
            else:
                missing.append(i)
        if missing:
            t0 = time.perf_counter()
            try:
                fresh = self.backend.generate([requests[i] for i in missing])
            except MatpcrError:
                raise  # a configuration problem (bad model path, strict replay): stop with its message
            except Exception as exc:  # a failing batch must not kill the run: each request records the error
                log.warning("backend %s failed on a batch of %d: %s: %s", self.label, len(missing), type(exc).__name__, exc)
                fresh = [Response("", error=f"{type(exc).__name__}: {exc}") for _ in missing]
            self.stats["generate_s"] += time.perf_counter() - t0
            if len(fresh) != len(missing):
                raise MatpcrError(f"backend {self.label!r} returned {len(fresh)} responses for {len(missing)} requests")
            for i, resp in zip(missing, fresh):
                out[i] = resp
            self.cache.put_many([(keys[i], self.label, out[i]) for i in missing if not out[i].error])  # type: ignore[union-attr]
        self.stats["generated"] += len(missing)
        self.stats["cached"] += len(requests) - len(missing)
        return out  # type: ignore[return-value]


def run_stage(executor: Executor, work: list[tuple[Scorer, Item, Response]]) -> list[dict[str, Any] | None]:
    """A scorer's pre-scoring stage (a judge model) for a batch of answers: each answer's request is
    batched and cached like answers; a malformed reply is retried up to ``stage_attempts`` times, then
    recorded as not graded (``{"result": None, ...}``) — never guessed. Answers the scorer does not
    stage (or that failed to generate) get None."""
    outcomes: list[dict[str, Any] | None] = [None] * len(work)
    active = [i for i, (scorer, item, resp) in enumerate(work)
              if not resp.error and scorer.stage_request(item, resp.text, 0) is not None]
    for i in active:
        outcomes[i] = {"result": None, "attempts": 0, "raw": [], "model": executor.label}
    attempt = 0
    while active:
        requests = [work[i][0].stage_request(work[i][1], work[i][2].text, attempt) for i in active]
        replies = executor.generate(requests)  # type: ignore[arg-type]
        still = []
        for i, reply in zip(active, replies):
            scorer = work[i][0]
            entry = outcomes[i]
            assert entry is not None
            entry["attempts"] += 1
            entry["raw"].append(f"error: {reply.error}" if reply.error else reply.text)
            parsed = None if reply.error else scorer.stage_parse(reply.text)
            if parsed is not None:
                entry["result"] = parsed
            elif entry["attempts"] < scorer.stage_attempts:
                still.append(i)
        active = still
        attempt += 1
    for entry in outcomes:
        if entry is not None:
            entry["identity"] = executor.identity
    return outcomes
