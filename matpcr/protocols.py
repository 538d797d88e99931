"""The small contracts plugins implement: backends, oracles, interventions.

Plugins need not inherit from these classes (they are ``Protocol``s); the base classes below give
sensible defaults for the optional parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from matpcr.records import Claim, Item, Record, Request, Response, Verdict


@dataclass
class Capabilities:
    images: bool = False
    max_images: int = 0


@runtime_checkable
class Backend(Protocol):
    """Generates whole batches, so HF/vLLM can batch and API backends can run concurrently."""

    identity: dict[str, Any]  # model id, revision or file hash, settings: part of every cache key
    capabilities: Capabilities

    def generate(self, requests: list[Request]) -> list[Response]: ...


class Oracle:
    """A physical check. Subclasses set ``name``, ``constraint``, the tolerance ``params`` and
    implement ``extract`` and ``check``."""

    name: str = ""
    constraint: str = ""
    #: named tolerances with the paper's defaults; ``--oracle-args NAME.key=value`` overrides them
    defaults: dict[str, Any] = {}

    def __init__(self, **params: Any) -> None:
        unknown = set(params) - set(self.defaults)
        if unknown:
            from matpcr.errors import UnknownNameError

            raise UnknownNameError(f"{self.name} oracle parameter", sorted(unknown)[0], self.defaults)
        self.params = {k: type(v)(params[k]) if k in params and v is not None else params.get(k, v)
                       for k, v in self.defaults.items()}

    def prepare(self, reference: dict[str, Any]) -> Any:
        """Turn a JSON reference into whatever ``check`` needs (arrays, peak lists); done once per item."""
        return reference

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        raise NotImplementedError

    def check(self, claim: Claim, reference: Any) -> Verdict:
        raise NotImplementedError

    def accurate(self, claim: Claim, reference: Any) -> bool | None:
        """Non-circular accuracy where one exists, else ``None``."""
        return None

    def plant_violation(self, reference: Any, rng: np.random.Generator) -> Claim:
        raise NotImplementedError

    def plant_consistent(self, reference: Any, rng: np.random.Generator) -> Claim:
        raise NotImplementedError

    #: the tolerance the validity gate sweeps in its sensitivity grid
    tolerance_param: str | None = None

    def render_claim(self, claim: Claim) -> str:
        """A chain that states ``claim`` the way a model would; the validity gate parses it back, so the
        gate tests the parser as well as the check."""
        unit = {"deg": "°", "angstrom": "Å", "cm-1": "cm⁻¹"}.get(claim.unit, claim.unit)
        return f"Reasoning omitted.\nAnswer: {claim.value:g} {unit}".strip()

    def read_reference(self, spec: str) -> dict[str, Any]:
        """Read a reference for ``matpcr check`` from a file (or id) this oracle understands."""
        raise NotImplementedError(f"oracle {self.name!r} cannot read references for `matpcr check`")

    @staticmethod
    def read_json_reference(path: str | Path) -> dict[str, Any]:
        """A reference stored as a JSON record (what ``items.jsonl`` holds), with a named error."""
        import json

        from matpcr.errors import DataError

        try:
            return json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise DataError(f"{path}: not a readable JSON reference ({exc})") from None


@dataclass
class FollowUp:
    """What an intervention asks the engine to generate next for one record."""

    request: Request
    meta: dict[str, Any] = field(default_factory=dict)


class Intervention:
    """Runs rounds after the first answer. It never calls a backend: it returns follow-up
    requests and the engine batches, caches and records them like first answers."""

    name: str = ""
    #: extra rounds after round 0
    rounds: int = 1
    #: independent samples drawn in round 0 (best-of-N uses N > 1)
    samples: int = 1
    #: constraint types it applies to (None = all)
    constraints: tuple[str, ...] | None = None

    def applies(self, constraint: str) -> bool:
        return self.constraints is None or constraint in self.constraints

    def follow_up(self, record: Record, request: Request, verdicts: list[Verdict]) -> FollowUp | None:
        raise NotImplementedError
