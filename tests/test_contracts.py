"""The engine's contracts with plugins, end to end in-process: errors are records with status ``error``
(never ``abstain``), a run's results.json says how it ended, and declared metrics are aggregated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import matpcr
from matpcr.errors import MatpcrError
from matpcr.protocols import Capabilities, Metric, Oracle, Scorer, TaskLoader
from matpcr.records import Claim, Item, Request, Response, Score, Verdict

from test_results_schema import validate_results


class ScriptBackend:
    """Answers each item with the text its id maps to (a real backend object, no model)."""

    identity = {"backend": "script"}
    capabilities = Capabilities()
    fail_after: int | None = None

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.calls = 0

    def generate(self, requests: list[Request]) -> list[Response]:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise MatpcrError("the script ran out")
        return [Response(self.answers[r.key.split("/")[1]]) for r in requests]


class NumbersLoader(TaskLoader):
    def load(self, config: Any, data_dir: Path | None) -> list[Item]:
        return [Item(id=f"i{k}", task=config.task, constraint="toy", modality="text", text=f"question {k}",
                     reference={"floor": 0}) for k in range(6)]


class PositiveOracle(Oracle):
    """Claims are the integers in the chain; each must be positive. ``boom`` makes the reader fail and
    ``crash`` makes the check fail — the two kinds of error a real oracle can have."""

    name, constraint = "positive", "toy"

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        if "boom" in chain:
            raise ValueError("the reader cannot read this")
        return [Claim("x", tok) for tok in chain.split() if tok.lstrip("-").isdigit() or tok == "crash"]

    def check(self, claim: Claim, reference: Any) -> Verdict:
        if claim.value == "crash":
            raise ZeroDivisionError("division by zero in the check")
        return Verdict("consistent" if int(claim.value) > reference["floor"] else "violated", "must be positive")


class ShortScorer(Scorer):
    name, primary = "short", "short"
    metrics = (Metric("short", description="answers under 12 characters"),)

    def score(self, chain: str, item: Item, context: dict[str, Any]) -> dict[str, Score]:
        return {"short": Score(float(len(chain) < 12))}


ANSWERS = {"i0": "3 4", "i1": "-2", "i2": "boom", "i3": "5 crash", "i4": "no numbers here", "i5": "7"}


@pytest.fixture
def toy(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "toy.yaml").write_text("task: toy_pos\nloader: toy.numbers\nconstraint: toy\noracle: positive\n")
    (tmp_path / "tasks" / "toy_short.yaml").write_text(
        "task: toy_short\nloader: toy.numbers\nconstraint: toy\nscorer: short\n")
    backend = ScriptBackend(ANSWERS)

    class Plugin:
        @matpcr.hookimpl
        def register_backends(self, register: Any) -> None:
            register("script", lambda model, revision=None, **kw: backend)

        @matpcr.hookimpl
        def register_tasks(self, register: Any) -> None:
            register("toy.numbers", NumbersLoader)
            register.include_path(tmp_path / "tasks")

        @matpcr.hookimpl
        def register_oracles(self, register: Any) -> None:
            register("positive", PositiveOracle)

        @matpcr.hookimpl
        def register_scorers(self, register: Any) -> None:
            register("short", ShortScorer)

    matpcr.register(Plugin(), name="toy-plugin")
    return {"backend": backend, "out": tmp_path / "runs"}


def test_reader_and_oracle_errors_are_counted_not_abstained(toy: dict[str, Any]) -> None:
    results = matpcr.evaluate("toy_pos", model="script:x", output_dir=str(toy["out"]), cache="none", progress=False)
    run_dir = Path(results["run_dir"])
    records = {json.loads(l)["item_id"]: json.loads(l) for l in (run_dir / "samples.jsonl").read_text().splitlines()}
    assert {k: r["status"] for k, r in records.items()} == {
        "i0": "consistent", "i1": "violated", "i2": "error", "i3": "error", "i4": "unparsable", "i5": "consistent"}
    assert "the reader cannot read this" in records["i2"]["meta"]["scoring_error"]
    assert "ZeroDivisionError" in records["i3"]["meta"]["scoring_error"]
    task = validate_results(run_dir / "results.json")["metrics"]["tasks"]["toy_pos"]
    assert task["status_counts"]["error"] == 2 and task["status_counts"]["abstain"] == 0
    assert task["pcr"]["n"] == 3 and task["pcr"]["value"] == pytest.approx(2 / 3)
    assert len(task["errors"]) == 2 and any("i2" in e for e in task["errors"])


def test_scorer_tasks_report_their_declared_metric_not_pcr(toy: dict[str, Any]) -> None:
    results = matpcr.evaluate("toy_short,toy_pos", model="script:x", output_dir=str(toy["out"]), cache="none",
                              progress=False)
    short = results["metrics"]["tasks"]["toy_short"]
    assert short.get("pcr") is None and short["status_counts"]["scored"] == 6
    # five of the six answers are under 12 characters
    assert short["scores"]["short"]["value"] == pytest.approx(5 / 6) and short["scores"]["short"]["n"] == 6
    assert results["metrics"]["overall"]["pcr"]["n"] == 3  # PCR counts oracle-checked records only


def test_a_run_that_fails_says_so_in_results_json(toy: dict[str, Any]) -> None:
    toy["backend"].fail_after = 0
    with pytest.raises(MatpcrError, match="ran out"):
        matpcr.evaluate("toy_pos", model="script:x", output_dir=str(toy["out"]), cache="none", progress=False)
    [results_path] = toy["out"].glob("*/results.json")
    data = validate_results(results_path)
    assert data["status"] == "error" and "ran out" in data["error"] and data["finished"]


def test_resume_retries_failed_generations(toy: dict[str, Any]) -> None:
    class Flaky(ScriptBackend):
        def generate(self, requests: list[Request]) -> list[Response]:
            self.calls += 1
            return [Response("", error="HTTP 503") if self.calls == 1 and r.key.split("/")[1] in ("i1", "i2")
                    else Response(self.answers[r.key.split("/")[1]]) for r in requests]

    flaky = Flaky(ANSWERS)
    toy_backend = toy["backend"]
    toy_backend.generate = flaky.generate  # type: ignore[method-assign]
    first = matpcr.evaluate("toy_pos", model="script:x", output_dir=str(toy["out"]), cache="none", progress=False)
    assert first["metrics"]["overall"]["generation_errors"] == 2
    again = matpcr.evaluate([], resume=first["run_dir"])
    assert again["metrics"]["overall"]["generation_errors"] == 0
    assert again["timing"]["resumed"] == 4 and again["timing"]["generated"] == 2
    assert again["metrics"]["tasks"]["toy_pos"]["status_counts"]["error"] == 2  # i2 (boom) and i3 (crash)


def test_completed_items_are_kept_on_disk_by_the_loaders_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loader that gives a cache key has ``complete`` called once per key; a changed key recomputes."""
    from matpcr.planning import complete_cached
    from matpcr.tasks import TaskConfig

    monkeypatch.setenv("MATPCR_ITEM_CACHE", str(tmp_path / "items"))

    class Counting(NumbersLoader):
        version = "v1"
        calls = 0

        def complete(self, item: Item) -> Item:
            Counting.calls += 1
            item.text = f"completed {item.id} with {self.version}"
            return item

        def cache_key(self, item: Item) -> str | None:
            return self.version

    loader, task = Counting(), TaskConfig(task="toy_pos", loader="toy.numbers", constraint="toy")
    first = [complete_cached(loader, task, i) for i in loader.load(task, None)]
    again = [complete_cached(loader, task, i) for i in loader.load(task, None)]
    assert Counting.calls == 6 and [i.text for i in again] == [i.text for i in first]
    loader.version = "v2"
    assert complete_cached(loader, task, loader.load(task, None)[0]).text == "completed i0 with v2"
    assert Counting.calls == 7
    monkeypatch.setenv("MATPCR_ITEM_CACHE", "none")
    complete_cached(loader, task, loader.load(task, None)[0])
    assert Counting.calls == 8
