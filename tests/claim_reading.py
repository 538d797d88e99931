"""What the reader tests ask of an oracle's reader: its claims as (kind, value, unit), their values, and the reasons
it gives for the numbers it turns down, for a chain read with or without the question it answers."""

from __future__ import annotations

from matpcr.records import Item


def item(question: str) -> Item | None:
    return Item(id="t", task="t", constraint="", modality="text", text=question) if question else None


def claims(oracle: object, text: str, question: str = "") -> list[tuple[str, object, str]]:
    return [(c.kind, c.value, c.unit) for c in oracle.read(text, item(question)).claims]  # type: ignore[attr-defined]


def values(oracle: object, text: str, question: str = "", kind: str | None = None) -> list[object]:
    return [v for k, v, _ in claims(oracle, text, question) if kind is None or k == kind]


def reasons(oracle: object, text: str, question: str = "") -> dict[str, str]:
    return {c.text.strip(): c.reason for c in oracle.read(text, item(question)).rejected}  # type: ignore[attr-defined]
