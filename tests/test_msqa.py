"""MSQA: loading the staged items, both binary scoring rules, retrieval, the judge loop, lm-eval export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import matpcr
from matpcr.protocols import Capabilities
from matpcr.records import Request, Response
from matpcr.tasks import TaskConfig
from matpcr_plugins.msqa.data import MSQALoader, read_msqa
from matpcr_plugins.msqa.scorers import long_answer_accuracy, paper_rule, parse_judgement, robust_answer

from conftest import run_cli


def test_staged_items_load_and_missing_fields_are_reported(data_dir: Path) -> None:
    rows = read_msqa(data_dir / "msqa")
    assert [r["index"] for r in rows] == list(range(136))
    loader = MSQALoader()
    binary = loader.load(TaskConfig("b", "msqa", "msqa", loader_args={"kind": "binary"}), data_dir)
    assert len(binary) == 136 and loader.report["skipped_missing_fields"] == {}
    labels = [i.reference["label"] for i in binary]
    assert labels.count("YES") == 69 and labels.count("NO") == 67  # 3+66 and 3+64 per the data README
    long = loader.load(TaskConfig("l", "msqa", "msqa", loader_args={"kind": "long"}), data_dir)
    assert len(long) == 6 + 13
    assert loader.report["skipped_missing_fields"]["answer"]["count"] == 136 - 19
    assert {i.meta["group"] for i in binary} >= {"structure-property relationships", "computational"}


def test_paper_accuracies_from_counts() -> None:
    # MSQA Table 3, long answers, direct prompting: Qwen-2.5-7B 51.28 (41/860/856), RAG 87.48 (504/1033/220)
    assert long_answer_accuracy(41, 860, 856) == pytest.approx(0.5128, abs=5e-5)
    assert long_answer_accuracy(504, 1033, 220) == pytest.approx(0.8748, abs=5e-5)
    assert long_answer_accuracy(16, 676, 1065) == pytest.approx(0.3939, abs=5e-5)  # Llama-3-8B


@pytest.mark.parametrize("chain, cot, paper, robust", [
    ("YES", False, "YES", "YES"),
    ("No.", False, "NO", "NO"),
    ("Yes, but in fact no.", False, None, "YES"),  # the opening word commits
    ("I do not know.", False, None, None),
    ("Let me think... the effect is large. Final answer: YES", True, "YES", "YES"),
    ("YES. Step 1: ... so the claim fails, the answer is: no, it does not", True, None, "NO"),
    ("True", False, None, "YES"),
])
def test_binary_rules(chain: str, cot: bool, paper: str | None, robust: str | None) -> None:
    assert paper_rule(chain, cot) == paper
    assert robust_answer(chain) == robust


def test_judge_output_parsing() -> None:
    assert parse_judgement('{"reasoning": "close", "judgment": "Mostly Correct"}')["judgment"] == "mostly correct"
    assert parse_judgement('Sure! {"reasoning": "x", "judgment": "incorrect"} done')["judgment"] == "incorrect"
    assert parse_judgement('{"judgment": "<one of: correct, mostly correct, incorrect>"}') is None
    assert parse_judgement("it is correct") is None


def test_retrieval_excludes_the_items_own_source(data_dir: Path) -> None:
    loader = MSQALoader()
    items = loader.load(TaskConfig("r", "msqa", "msqa", loader_args={"kind": "binary", "mode": "rag", "top_k": 5}),
                        data_dir)
    rows = {r["index"]: r for r in read_msqa(data_dir / "msqa")}
    for item in items[:40]:
        ids = [c for c in item.meta["context_ids"].split(",") if c]
        assert 1 <= len(ids) <= 5 and item.meta["context_text"].startswith("[1] ")
        for cid in ids:
            assert rows[int(cid.split("-")[1].split(":")[0])]["source"] != item.source_id


class ScriptedJudge:
    """A judge backend whose replies follow a script: garbage first, then JSON (tests the retry loop)."""

    def __init__(self, script: list[str]):
        self.script, self.identity, self.capabilities, self.calls = script, {"backend": "scripted"}, Capabilities(), 0

    def generate(self, requests: list[Request]) -> list[Response]:
        out = []
        for r in requests:
            out.append(Response(self.script[min(self.calls, len(self.script) - 1)]))
            self.calls += 1
        return out


@pytest.mark.parametrize("script, judgment, attempts", [
    (["not json", '{"reasoning": "ok", "judgment": "correct"}'], "correct", 2),
    (["nope", "still nope", "no json here"], None, 3),
])
def test_judge_retries_then_records_unjudged(script: list[str], judgment: str | None, attempts: int,
                                              data_dir: Path, tmp_path: Path) -> None:
    judge = ScriptedJudge(script)

    class Plugin:
        @matpcr.hookimpl
        def register_backends(self, register: Any) -> None:
            register("scripted", lambda model, revision=None, **kw: judge)
            register("answers", lambda model, revision=None, **kw: ScriptedJudge(["Graphene oxide is reduced."]))

    matpcr.register(Plugin(), name="scripted-judge")
    results = matpcr.evaluate("msqa_long", model="answers", judge="scripted", limit=1, data_dir=str(data_dir),
                              output_dir=str(tmp_path), cache="none", progress=False)
    record = json.loads((Path(results["run_dir"]) / "samples.jsonl").read_text().splitlines()[0])
    stage = record["meta"]["stage"]
    assert (stage["result"] or {}).get("judgment") == judgment and stage["attempts"] == attempts
    assert (record["scores"]["accuracy"]["value"] is None) == (judgment is None)
    assert record["scores"]["accuracy"]["answer"] == judgment
    assert record["status"] == ("unscored" if judgment is None else "scored")
    assert results["judge"] == {"backend": "scripted"}
    scores = results["metrics"]["tasks"]["msqa_long"]["scores"]["accuracy"]
    assert scores["unscored"] == (1 if judgment is None else 0)
    from matpcr.report import build_report

    md = build_report([results["run_dir"]])["md"].read_text()
    counts = "1/0/0" if judgment == "correct" else "0/0/0"
    assert "## MSQA long answers (judge)" in md and f"| {counts} | {1 if judgment is None else 0} |" in md


def test_long_task_needs_a_judge(data_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "msqa_long", "--data-dir", str(data_dir))
    assert proc.returncode == 2 and "--judge" in proc.stderr


def test_binary_run_with_the_default_model_reports_both_rules_by_type(data_dir: Path, tmp_path: Path,
                                                                       smollm2_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "msqa_binary,msqa_binary_rag", "--limit", "4", "--data-dir", str(data_dir),
                   "--output-dir", str(tmp_path), "--cache", "none", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    results = json.loads((Path(proc.stdout.strip().splitlines()[-1]) / "results.json").read_text())
    for task in ("msqa_binary", "msqa_binary_rag"):
        m = results["metrics"]["tasks"][task]
        assert set(m["scores"]) == {"accuracy_paper_rule", "accuracy_robust", "answered_robust"}
        assert m["scores"]["accuracy_paper_rule"]["n"] == 4 and m["scores_by_group"]
    records = [json.loads(l) for l in (Path(results["run_dir"]) / "samples.jsonl").read_text().splitlines()]
    rag = [r for r in records if r["task"] == "msqa_binary_rag"]
    assert all("Context:\n[1] " in r["prompt"][-1]["content"][-1]["text"] for r in rag)


def test_export_lm_eval_matches_our_prompts(data_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("export", "lm-eval", str(tmp_path), "--data-dir", str(data_dir))
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "msqa_binary.yaml").read_text()
    assert "process_results: !function msqa_utils.process_results\n" in text
    spec = yaml.safe_load(text.replace("!function ", ""))
    ours = yaml.safe_load((Path(matpcr.__file__).parents[1] / "tasks" / "msqa_binary.yaml").read_text())
    assert spec["doc_to_text"] == ours["prompt"].replace("{text}", "{{question}}")
    assert spec["metadata"]["system_instruction"] == ours["system_prompt"]
    docs = [json.loads(l) for l in (tmp_path / "msqa_binary.jsonl").read_text().splitlines()]
    assert len(docs) == 136 and {d["label"] for d in docs} == {"YES", "NO"}
    ns: dict[str, Any] = {}
    exec((tmp_path / "msqa_utils.py").read_text(), ns)
    assert ns["process_results"]({"label": "NO"}, ["No."]) == {"acc": 1.0}
    assert ns["process_results_cot"]({"label": "YES"}, ["...so: YES"]) == {"acc": 1.0}
