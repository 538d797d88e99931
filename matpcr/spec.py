"""Parsing of the small string languages on the command line: model specs and ``k=v`` lists."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from matpcr.errors import MatpcrError


@dataclass
class ModelSpec:
    backend: str
    model: str
    revision: str | None = None

    def __str__(self) -> str:
        rev = f"@{self.revision}" if self.revision else ""
        return f"{self.backend}:{self.model}{rev}" if self.model else self.backend


def parse_model_spec(spec: str) -> ModelSpec:
    """``NAME:MODEL[@REVISION]``; a bare ``NAME`` selects a backend with a built-in model."""
    spec = spec.strip()
    if not spec:
        raise MatpcrError("empty --model; use NAME:MODEL[@REVISION], e.g. hf:HuggingFaceTB/SmolLM2-135M-Instruct")
    backend, _, rest = spec.partition(":")
    revision = None
    head, at, tail = rest.rpartition("@")
    if at and head and tail and "/" not in tail:
        rest, revision = head, tail
    return ModelSpec(backend, rest, revision)


def coerce(value: str) -> Any:
    """Turn a command-line string into int, float, bool, None or JSON where it clearly is one."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    if value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            pass
    return value


def parse_kv(text: str | None, what: str = "--model-args") -> dict[str, Any]:
    """``k=v,k2=v2`` into a dict with coerced values."""
    out: dict[str, Any] = {}
    if not text:
        return out
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            continue
        if "=" not in piece:
            raise MatpcrError(f"{what}: {piece!r} is not key=value (write e.g. {what} dtype=bfloat16,max_length=4096)")
        key, value = piece.split("=", 1)
        out[key.strip()] = coerce(value.strip())
    return out


def parse_oracle_args(texts: list[str] | tuple[str, ...] | str | None) -> dict[str, dict[str, Any]]:
    """``ORACLE.key=value`` (comma-separated or repeated) into ``{oracle: {key: value}}``."""
    if isinstance(texts, str):
        texts = [texts]
    out: dict[str, dict[str, Any]] = {}
    for text in texts or ():
        for key, value in parse_kv(text, "--oracle-args").items():
            if "." not in key:
                raise MatpcrError(f"--oracle-args: {key!r} must be ORACLE.param=value, e.g. raman.tolerance_cm1=10")
            oracle, param = key.split(".", 1)
            out.setdefault(oracle, {})[param] = value
    return out
