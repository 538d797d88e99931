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
#: Oracle verdicts: consistent, violated, abstain, unparsable. Scorer outcomes: scored, unscored.
#: ``error``: reading, checking or scoring raised; the record keeps the message and stays counted
#: (never ``abstain``).
Status = Literal["consistent", "violated", "abstain", "unparsable", "scored", "unscored", "error"]
VERDICT_STATUSES: tuple[str, ...] = ("consistent", "violated", "abstain", "unparsable", "error")
STATUSES: tuple[str, ...] = ("consistent", "violated", "abstain", "unparsable", "scored", "unscored", "error")


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
    """One checkable quantity parsed from a chain. ``span`` indexes the original chain. A number that
    was seen and *not* taken is kept as a Claim with ``reason`` set (range, uncertainty, ...)."""

    kind: str
    value: Any
    unit: str = ""
    span: tuple[int, int] = (0, 0)
    text: str = ""
    reason: str = ""


@dataclass
class Extraction:
    """What an oracle read from a chain: the claims it will check, the numbers it saw and rejected
    (each with its ``reason``), and notes such as a chain cut at the length cap."""

    claims: list[Claim] = field(default_factory=list)
    rejected: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    """The oracle's judgement of one claim. ``message`` is shown to models by CGSV, so it must
    name the violated constraint without revealing the reference answer."""

    status: Status
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Score:
    """One named score of one record (a scorer's accuracy, a checker's prediction). ``value`` is None
    when the answer could not be scored (e.g. the judge never gave a valid verdict)."""

    value: float | None
    answer: str | None = None
    explanation: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> "Score":
        """Scores as stored; run directories written before 0.2 stored bare numbers."""
        if isinstance(data, dict):
            return cls(**{k: v for k, v in data.items() if k in ("value", "answer", "explanation", "meta")})
        return cls(None if data is None else float(data))


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
    #: numbers the reader saw and did not take as claims, each with its reason
    rejected: list[dict[str, Any]] = field(default_factory=list)
    #: reader notes (e.g. chain truncated at the length cap)
    notes: list[str] = field(default_factory=list)
    status: Status = "unparsable"
    accurate: bool | None = None
    cached: bool = False
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    intervention: str | None = None
    #: named scores from a task scorer or a checker (e.g. MSQA accuracy under two extraction rules)
    scores: dict[str, Score] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Record":
        names = {f.name for f in dataclasses.fields(cls)}
        record = cls(**{k: v for k, v in data.items() if k in names})
        record.scores = {k: Score.from_json(v) for k, v in (record.scores or {}).items()}
        return record

    def slim(self) -> "Record":
        """This record without its prompt and chain: all that aggregation needs, a fraction of the memory."""
        return dataclasses.replace(self, prompt=[], chain="")

    def score_value(self, name: str) -> float | None:
        score = self.scores.get(name)
        return None if score is None else score.value


def item_status(verdicts: list[Verdict]) -> Status:
    """Fold claim verdicts into one item verdict: an error wins (the item cannot be judged), then any violation, then any consistent claim;
    an item whose claims all abstain abstains; an item with no claim is unparsable."""
    statuses = {v.status for v in verdicts}
    if "error" in statuses:
        return "error"
    if "violated" in statuses:
        return "violated"
    if "consistent" in statuses:
        return "consistent"
    if "abstain" in statuses:
        return "abstain"
    return "unparsable"
