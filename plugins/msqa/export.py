"""`matpcr export lm-eval DIR`: lm-evaluation-harness task YAML for the MSQA binary tasks.

The prompts are taken from matpcr's own task configs, so both tools send the same text; the scoring
function is the same paper rule (YES/NO keyword match; last five characters for chain-of-thought).
Run with: lm_eval --model hf --model_args pretrained=MODEL --tasks msqa_binary --include_path DIR
          --apply_chat_template --system_instruction "<the task's system prompt>" --batch_size 1
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from matpcr.tasks import resolve
from matpcr_plugins.msqa.data import read_msqa

UTILS = '''"""Scoring for the exported MSQA tasks: the same rule matpcr applies (msqa/scorers.py)."""


import re


def _paper_rule(text, cot):
    text = (text or "")[-5:] if cot else (text or "")
    found = {m.lower() for m in re.findall(r"\\b(yes|no)\\b", text, re.I)}
    if len(found) != 1:
        return None
    return found.pop().upper()


def process_results(doc, results):
    return {"acc": float(_paper_rule(results[0], False) == doc["label"])}


def process_results_cot(doc, results):
    return {"acc": float(_paper_rule(results[0], True) == doc["label"])}
'''


def export_lm_eval(out_dir: str | Path, msqa_path: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for r in read_msqa(msqa_path) if r.get("true_false_question") and r.get("true_false_question_answer")]
    data = out / "msqa_binary.jsonl"
    data.write_text("".join(json.dumps({"index": r["index"], "question": r["true_false_question"],
                                        "label": r["true_false_question_answer"].strip().upper(),
                                        "question_type": r.get("question_type", "")}) + "\n" for r in rows))
    (out / "msqa_utils.py").write_text(UTILS)
    written = [data, out / "msqa_utils.py"]
    for config in resolve(["msqa_binary", "msqa_binary_cot"]):
        cot = config.scorer == "msqa_binary_cot"
        task = {
            "task": config.task,
            "dataset_path": "json",
            "dataset_kwargs": {"data_files": {"test": str(data.resolve())}},
            "test_split": "test",
            "output_type": "generate_until",
            "doc_to_text": config.prompt.replace("{text}", "{{question}}"),
            "doc_to_target": "{{label}}",
            "generation_kwargs": {"until": [], "max_gen_toks": config.sampling.max_new_tokens, "do_sample": False},
            "process_results": "PROCESS_RESULTS_FUNCTION",
            "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
            "metadata": {"version": config.version, "system_instruction": config.system_prompt or "",
                         "exported_from": config.path},
        }
        path = out / f"{config.task}.yaml"
        text = yaml.safe_dump(task, sort_keys=False, allow_unicode=True)
        function = f"!function msqa_utils.process_results{'_cot' if cot else ''}"
        path.write_text(text.replace("PROCESS_RESULTS_FUNCTION", function))
        written.append(path)
    return written
