"""MSQA scoring: YES/NO answers (the paper's keyword rule and a robust final-answer extraction) and
long answers graded by a judge model with the paper's rubric."""

from __future__ import annotations

import json
import re
from typing import Any

from matpcr.records import Item, Message, Request, Sampling, text_part

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


class BinaryScorer:
    """Scores ``accuracy_paper_rule`` (primary, as in the paper: no keyword = wrong) and
    ``accuracy_robust`` (final-answer extraction; no answer = wrong), plus ``answered_robust``."""

    name = "msqa_binary"
    constraint = "msqa"
    primary = "accuracy_paper_rule"
    params: dict[str, Any] = {}

    def __init__(self, cot: bool = False):
        self.cot = bool(cot)
        self.params = {"cot": self.cot}

    def score(self, chain: str, item: Item, meta: dict[str, Any]) -> dict[str, float | None]:
        label = str(item.reference["label"]).strip().upper()
        paper = paper_rule(chain, self.cot)
        robust = robust_answer(chain)
        return {"accuracy_paper_rule": float(paper == label), "accuracy_robust": float(robust == label),
                "answered_robust": float(robust is not None)}


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


class LongAnswerScorer:
    """Scores ``accuracy`` (correct + mostly correct) and one-hot ``correct``, ``mostly_correct``,
    ``incorrect`` from the judge's verdict; unjudged answers score None and are counted apart."""

    name = "msqa_judge"
    constraint = "msqa"
    primary = "accuracy"
    max_attempts = 3

    def __init__(self, max_new_tokens: int = 256):
        self.params = {"max_new_tokens": int(max_new_tokens)}

    def judge_request(self, item: Item, answer: str, attempt: int) -> Request:
        user = (f"Question: {item.reference['question']}\n\nGold answer: {item.reference['answer']}\n\n"
                f"Inference answer: {answer}")
        messages = [Message("system", [text_part(JUDGE_PROMPT)]), Message("user", [text_part(user)])]
        sampling = Sampling(max_new_tokens=self.params["max_new_tokens"])
        if attempt:
            messages.append(Message("user", [text_part(RETRY_REMINDER)]))
            sampling = Sampling(max_new_tokens=self.params["max_new_tokens"], temperature=0.3)
        return Request(messages, sampling, seed=attempt)

    parse_judgement = staticmethod(parse_judgement)

    def score(self, chain: str, item: Item, meta: dict[str, Any]) -> dict[str, float | None]:
        judgment = (meta.get("judge") or {}).get("judgment")
        if judgment is None:
            return {"accuracy": None, "correct": None, "mostly_correct": None, "incorrect": None}
        return {"accuracy": float(judgment in ("correct", "mostly correct")), "correct": float(judgment == "correct"),
                "mostly_correct": float(judgment == "mostly correct"), "incorrect": float(judgment == "incorrect")}


def long_answer_accuracy(correct: int, mostly: int, incorrect: int) -> float:
    """The paper's long-answer accuracy: (correct + mostly correct) / all."""
    total = correct + mostly + incorrect
    return (correct + mostly) / total if total else float("nan")
