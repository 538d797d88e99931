"""MSQA scoring: YES/NO answers (the paper's keyword rule and a robust final-answer extraction) and
long answers graded by a judge model with the paper's rubric."""

from __future__ import annotations

import json
import re
from typing import Any

from matpcr.protocols import Metric, Scorer
from matpcr.records import Item, Message, Request, Sampling, Score, text_part

_WORD = re.compile(r"\b(yes|no|true|false)\b", re.I)
_FINAL = re.compile(r"(?:final answer|answer)\s*(?:is)?\s*[:=]?\s*\**\s*(yes|no|true|false)\b", re.I)


_KEYWORD = re.compile(r"\b(yes|no)\b", re.I)


def paper_rule(chain: str, cot: bool) -> str | None:
    """The MSQA rule: keyword match of YES or NO (whole words, any case); for chain-of-thought only the
    last five characters. A reply with both keywords, or neither, scores as wrong."""
    text = (chain or "")[-5:] if cot else (chain or "")
    found = {m.lower() for m in _KEYWORD.findall(text)}
    if len(found) != 1:
        return None
    return found.pop().upper()


def robust_answer(chain: str) -> str | None:
    """The committed answer: an explicit "answer: yes/no" if present (the last one), else the first
    yes/no/true/false word of the reply when it opens with one, else the last such word."""
    text = chain or ""
    finals = _FINAL.findall(text)
    words = finals or _WORD.findall(text)
    if not words:
        return None
    if not finals and _WORD.match(text.strip()):
        choice = _WORD.match(text.strip()).group(1)
    else:
        choice = words[-1]
    return "YES" if choice.lower() in ("yes", "true") else "NO"


class BinaryScorer(Scorer):
    """Scores ``accuracy_paper_rule`` (primary, as in the paper: no keyword = wrong) and
    ``accuracy_robust`` (final-answer extraction; no answer = wrong), plus ``answered_robust``."""

    name = "msqa_binary"
    constraint = "msqa"
    primary = "accuracy_paper_rule"
    metrics = (Metric("accuracy_paper_rule", description="MSQA's rule: whole-word YES/NO keyword, both or neither = wrong"),
               Metric("accuracy_robust", description="the committed final answer (answer: yes/no, else first/last word)"),
               Metric("answered_robust", description="share of replies with a readable YES/NO answer"))

    def __init__(self, cot: bool = False):
        self.cot = bool(cot)
        self.params = {"cot": self.cot}

    def score(self, chain: str, item: Item, context: dict[str, Any]) -> dict[str, Score]:
        label = str(item.reference["label"]).strip().upper()
        paper = paper_rule(chain, self.cot)
        robust = robust_answer(chain)
        return {"accuracy_paper_rule": Score(float(paper == label), paper),
                "accuracy_robust": Score(float(robust == label), robust),
                "answered_robust": Score(float(robust is not None), robust)}


JUDGE_PROMPT = """Your task is to evaluate the accuracy of LLM-generated answers to materials science questions by comparing them to expert-validated "gold" answers.

For each evaluation, you will receive:
- A materials science question
- A gold answer, based on authoritative domain knowledge
- An LLM-generated inference answer, which you must assess

Your goal is to evaluate how well the inference answer aligns with the gold answer in terms of factual accuracy, conceptual completeness, and relevance.

Use the following evaluation rubric:
    - Correct: The inference answer fully captures all essential concepts from the gold answer, with no significant omissions or factual errors.
    - Mostly Correct: The inference answer conveys the main idea or correct conclusion, even if minor details are missing or slight inaccuracies are present. Additional non-conflicting information is acceptable.
    - Incorrect: The inference answer demonstrates substantial misunderstanding, includes major factual errors, or omits core concepts present in the gold answer.

Provide a short justification for your rating, highlighting key similarities or discrepancies between the inference and gold answers. Output your response in the following JSON format:
{
    "reasoning": "A concise explanation supporting your judgment.",
    "judgment": "correct|mostly correct|incorrect"
}"""
RETRY_REMINDER = ("Your previous reply was not valid JSON of the required form. Reply with only the JSON object: "
                  '{"reasoning": "<one or two sentences>", "judgment": "<one of: correct, mostly correct, incorrect>"}.')
JUDGMENTS = ("correct", "mostly correct", "incorrect")


def parse_judgement(text: str) -> dict[str, Any] | None:
    """The judge's JSON verdict, or None when it is malformed (then it is retried, never guessed)."""
    for match in re.finditer(r"\{.*?\}", text or "", re.S):
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        judgment = str(data.get("judgment", "")).strip().lower().replace("_", " ")
        if judgment in JUDGMENTS:
            return {"judgment": judgment, "reasoning": str(data.get("reasoning", ""))}
    return None


class LongAnswerScorer(Scorer):
    """Scores ``accuracy`` (correct + mostly correct) and one-hot ``correct``, ``mostly_correct``,
    ``incorrect`` from the judge's verdict; unjudged answers score None and are counted apart."""

    name = "msqa_judge"
    constraint = "msqa"
    primary = "accuracy"
    needs_model = True
    stage_attempts = 3
    metrics = (Metric("accuracy", description="(correct + mostly correct) / judged, the MSQA paper's long-answer rule"),
               Metric("correct"), Metric("mostly_correct"), Metric("incorrect", higher_is_better=False))

    def __init__(self, max_new_tokens: int = 256):
        self.params = {"max_new_tokens": int(max_new_tokens)}

    def stage_request(self, item: Item, answer: str, attempt: int) -> Request:
        user = (f"Question: {item.reference['question']}\n\nGold answer: {item.reference['answer']}\n\n"
                f"Inference answer: {answer}")
        messages = [Message("system", [text_part(JUDGE_PROMPT)]), Message("user", [text_part(user)])]
        sampling = Sampling(max_new_tokens=self.params["max_new_tokens"])
        if attempt:
            messages.append(Message("user", [text_part(RETRY_REMINDER)]))
            sampling = Sampling(max_new_tokens=self.params["max_new_tokens"], temperature=0.3)
        return Request(messages, sampling, seed=attempt)

    def stage_parse(self, text: str) -> dict[str, Any] | None:
        return parse_judgement(text)

    def score(self, chain: str, item: Item, context: dict[str, Any]) -> dict[str, Score]:
        stage = context.get("stage") or {}
        verdict = stage.get("result", stage if "judgment" in stage else None) or {}  # 0.1 runs stored it flat
        judgment = verdict.get("judgment")
        meta = {"attempts": stage.get("attempts"), "judge": stage.get("model")}
        if judgment is None:
            return {name: Score(None, None, "never judged: the judge gave no valid verdict", meta)
                    for name in ("accuracy", "correct", "mostly_correct", "incorrect")}
        why = str(verdict.get("reasoning", ""))
        return {"accuracy": Score(float(judgment in ("correct", "mostly correct")), judgment, why, meta),
                "correct": Score(float(judgment == "correct"), judgment),
                "mostly_correct": Score(float(judgment == "mostly correct"), judgment),
                "incorrect": Score(float(judgment == "incorrect"), judgment)}


def long_answer_accuracy(correct: int, mostly: int, incorrect: int) -> float:
    """The paper's long-answer accuracy: (correct + mostly correct) / all."""
    total = correct + mostly + incorrect
    return (correct + mostly) / total if total else float("nan")
