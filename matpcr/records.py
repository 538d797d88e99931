"""The data model: plain dataclasses that every part of matpcr passes around.

They are JSON-friendly on purpose: records are the unit of storage, statistics and re-scoring,
so every field must survive a round trip through ``samples.jsonl``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Modality = Literal["image", "text"]
Status = Literal["consistent", "violated", "abstain", "unparsable"]
STATUSES: tuple[str, ...] = ("consistent", "violated", "abstain", "unparsable")


def file_sha256(path: str | Path) -> str:
    """Hash a file's bytes; images enter cache keys by content, never by path."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class Item:
    """One question. ``reference`` feeds the oracle and is never shown to the model."""

    id: str
    task: str
    constraint: str
    modality: Modality
    text: str
    images: list[str] = field(default_factory=list)
    reference: dict[str, Any] = field(default_factory=dict)
    source_id: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.source_id:
            self.source_id = self.id


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(path: str | Path) -> dict[str, Any]:
    return {"type": "image", "path": str(path), "sha256": file_sha256(path)}


@dataclass
class Message:
    """A chat message whose content is a list of parts (``text`` or ``image``)."""

    role: str
    content: list[dict[str, Any]]

    @property
    def text(self) -> str:
        return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")

    @property
    def image_paths(self) -> list[str]:
        return [p["path"] for p in self.content if p.get("type") == "image"]


@dataclass
class Sampling:
    """Generation settings; greedy unless ``temperature`` > 0."""

    max_new_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0


@dataclass
class Request:
    messages: list[Message]
    sampling: Sampling = field(default_factory=Sampling)
    seed: int = 0
    key: str = ""  # the engine's record key; backends ignore it

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Request":
        return cls(
            messages=[Message(**m) for m in data["messages"]],
            sampling=Sampling(**data.get("sampling", {})),
            seed=data.get("seed", 0),
            key=data.get("key", ""),
        )


@dataclass
class Response:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None


@dataclass
class Claim:
    """One checkable quantity parsed from a chain."""

    kind: str
    value: Any
    unit: str = ""
    span: tuple[int, int] = (0, 0)
    text: str = ""


@dataclass
class Verdict:
    """The oracle's judgement of one claim. ``message`` is shown to models by CGSV, so it must
    name the violated constraint without revealing the reference answer."""

    status: Status
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Record:
    """One (item, model, seed, round, sample) with everything needed to re-score it."""

    key: str
    task: str
    item_id: str
    source_id: str
    constraint: str
    modality: str
    seed: int
    round: int
    sample: int
    model: str
    prompt: list[dict[str, Any]]
    chain: str
    claims: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    status: Status = "unparsable"
    accurate: bool | None = None
    cached: bool = False
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    intervention: str | None = None
    #: named per-record scores from a task scorer (e.g. MSQA accuracy under two extraction rules)
    scores: dict[str, float | None] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Record":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def item_status(verdicts: list[Verdict]) -> Status:
    """Fold claim verdicts into one item verdict: any violation wins, then any consistent claim;
    an item whose claims all abstain abstains; an item with no claim is unparsable."""
    statuses = {v.status for v in verdicts}
    if "violated" in statuses:
        return "violated"
    if "consistent" in statuses:
        return "consistent"
    if "abstain" in statuses:
        return "abstain"
    return "unparsable"
