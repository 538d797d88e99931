"""The typed, versioned schema of ``results.json`` (pydantic), and its JSON Schema.

``docs/results.schema.json`` is generated from these models (``python -m matpcr.schema > docs/...``);
a test checks it is current and validates every results.json the tests write against it. Older run
directories (schema version 1) still load: :func:`load_results` fills what they lack.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 2
RunStatus = Literal["started", "success", "error", "cancelled"]


class _Open(BaseModel):
    """Known fields are typed; plugins may add their own (kept, not validated)."""

    model_config = ConfigDict(extra="allow")


class Rate(_Open):
    """A rate with its percentile-bootstrap interval (``stats.Rate``)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    numerator: float
    n: int
    n_sources: int
    confidence: float = 0.95
    n_boot: int = 10_000
    hoeffding_halfwidth: float | None = None
    unscored: int | None = None


class GroupMetrics(_Open):
    """The metrics of one group of first answers (a task, a constraint, a modality, or all)."""

    n_records: int
    status_counts: dict[str, int]
    pcr: Rate | None = None
    claim_violation_rate: Rate | None = None
    accuracy: Rate | None = None
    accuracy_vs_consistency: dict[str, Any] | None = None
    claim_pcr: Rate | None = Field(None, description="consistent claims / checked claims")
    first_claim_pcr: Rate | None = Field(None, description="PCR on each item's first checked claim (single-claim PCR)")
    p_chance: dict[str, Any] | None = Field(None, description="distribution of the checked claims' chance-pass "
                                            "probability (oracle power); item_mean is p̄")
    pcr_chance_corrected: Rate | None = Field(None, description="(PCR − p̄)/(1 − p̄), docs/statistics.md")
    pcr_true_range: dict[str, Any] | None = Field(None, description="Corollary 2: the true-PCR range the validity "
                                                  "gate's d̂, f̂ (in gate) allow")
    balanced_accuracy: dict[str, Any] | None = Field(None, description="mean per-class recall, with per-class counts")
    scores: dict[str, Rate] = Field(default_factory=dict)
    scores_by_group: dict[str, dict[str, Rate]] = Field(default_factory=dict)
    generation_errors: int = 0
    errors: list[str] = Field(default_factory=list, description="first error messages (status 'error')")


class Metrics(_Open):
    overall: GroupMetrics
    tasks: dict[str, GroupMetrics] = Field(default_factory=dict)
    constraints: dict[str, GroupMetrics] = Field(default_factory=dict)
    modalities: dict[str, GroupMetrics] = Field(default_factory=dict)
    intervention: dict[str, Any] | None = None


class MetricSpec(_Open):
    name: str
    aggregation: str
    higher_is_better: bool
    interval: str
    description: str = ""
    params: dict[str, Any] = Field(default_factory=dict)


class Judgement(_Open):
    """The oracle, scorer or checker that judged a task's records."""

    kind: Literal["oracle", "scorer", "checker"]
    plugin: str = ""
    class_: str = Field("", alias="class")
    params: dict[str, Any] = Field(default_factory=dict)
    metrics: list[MetricSpec] = Field(default_factory=list)


class TaskData(_Open):
    loader: str
    version: int | None = None
    config_path: str | None = None
    data_dir: str | None = None
    datasets: list[str] = Field(default_factory=list)
    licences: list[str] = Field(default_factory=list)
    n_items: int = 0
    loader_report: dict[str, Any] | None = None
    unusable_items: dict[str, str] = Field(default_factory=dict)


class Results(_Open):
    """What ``results.json`` holds."""

    schema_version: int
    status: RunStatus
    error: str | None = None
    created: str
    finished: str | None = None
    run_dir: str
    config: dict[str, Any]
    tasks_config: dict[str, dict[str, Any]] = Field(default_factory=dict)
    versions: dict[str, str | None] = Field(default_factory=dict)
    git_revision: str | None = None
    model: dict[str, Any] = Field(default_factory=dict)
    judged_by: dict[str, Judgement] = Field(default_factory=dict, description="per task: what judged its records")
    judge: dict[str, Any] | None = None
    checker: Judgement | None = None
    data: dict[str, TaskData] = Field(default_factory=dict)
    skipped_tasks: dict[str, str] = Field(default_factory=dict, description="tasks left out, with the reason")
    model_alias: dict[str, str] | None = Field(None, description="the short model name used, and what it means")
    timing: dict[str, Any] = Field(default_factory=dict)
    metrics: Metrics | None = None
    rescored: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=False)


def json_schema() -> dict[str, Any]:
    schema = Results.model_json_schema(by_alias=True)
    schema["$id"] = "https://matpcr.invalid/results.schema.json"
    schema["title"] = f"matpcr results.json (schema version {SCHEMA_VERSION})"
    return schema


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A schema-version-1 results object in today's shape (same numbers, new field names)."""
    data = dict(data)
    if data.get("schema_version", 1) < 2:
        # v1 had "oracles" keyed by oracle name (kept as an extra field) and no per-task judged_by
        data.setdefault("created", "")
        data["upgraded_from"] = data.get("schema_version", 1)
        data["schema_version"] = SCHEMA_VERSION
    return data


def load_results(path: str | Path) -> Results:
    from matpcr.errors import MatpcrError

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MatpcrError(f"{path}: no results.json (run `matpcr run` or `matpcr rescore` first)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MatpcrError(f"{path}: unreadable results.json ({exc}); `matpcr rescore` rebuilds it from the "
                          "run's samples") from None
    if not isinstance(data, dict):
        raise MatpcrError(f"{path}: results.json is not a JSON object")
    return Results.model_validate(upgrade(data))


if __name__ == "__main__":  # pragma: no cover - regenerates docs/results.schema.json
    json.dump(json_schema(), sys.stdout, indent=2)
    sys.stdout.write("\n")
