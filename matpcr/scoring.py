"""Judging answers: an oracle's verdicts or a scorer's scores, and a checker's predictions beside them.

Shared by the engine and ``matpcr rescore``. Judging never raises: a failing reader, oracle or scorer
makes the record ``error`` with the message (counted and reported, never a silent ``abstain``), so one
bad item cannot end a long run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from matpcr.errors import MatpcrError
from matpcr.protocols import Checker, Metric, Oracle, Scorer
from matpcr.records import Claim, Item, Record, Verdict, item_status


@dataclass
class TaskJudge:
    """What judges one task's records: an oracle (``kind="oracle"``) or a scorer."""

    kind: str
    name: str
    instance: Oracle | Scorer
    plugin: str = ""

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return tuple(self.instance.metrics)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "plugin": self.plugin, "class": type(self.instance).__qualname__,
                "params": dict(self.instance.params),
                "metrics": [m.to_dict() for m in self.metrics]}


def build_judges(tasks: list[dict[str, Any]], registry: Any, args: dict[str, dict[str, Any]]) -> dict[str, TaskJudge]:
    """One judge per task (instances shared between tasks that name the same oracle or scorer).
    ``tasks`` are task configs as dicts (``TaskConfig.to_dict()`` or a stored ``tasks_resolved``)."""
    shared: dict[tuple[str, str], TaskJudge] = {}
    out: dict[str, TaskJudge] = {}
    for task in tasks:
        kind, name = ("oracle", task.get("oracle")) if task.get("oracle") else ("scorer", task.get("scorer"))
        if not name:
            continue
        if (kind, name) not in shared:
            entry = registry.get(kind + "s", name)
            instance = entry.factory(**args.get(name, {}))
            expected = Oracle if kind == "oracle" else Scorer
            if not isinstance(instance, expected):
                raise MatpcrError(f"{kind} {name!r} from plugin {entry.plugin!r} is a {type(instance).__name__}, "
                                  f"not a matpcr.protocols.{expected.__name__}")
            shared[(kind, name)] = TaskJudge(kind, name, instance, entry.plugin)
        out[task["task"]] = shared[(kind, name)]
    for name in args:  # --oracle-args for a name no task uses: say so with close matches
        if not any(j.name == name for j in out.values()):
            registry.get("oracles" if name in registry.entries["oracles"] or name not in registry.entries["scorers"]
                         else "scorers", name)
    return out


def build_checker(spec: str | None, registry: Any) -> Checker | None:
    """``--checker NAME:ARG`` → a Checker instance (``ARG`` is handed to its factory)."""
    if not spec:
        return None
    name, _, arg = spec.partition(":")
    entry = registry.get("checkers", name)
    instance = entry.factory(arg)
    if not isinstance(instance, Checker):
        raise MatpcrError(f"checker {name!r} from plugin {entry.plugin!r} is not a matpcr.protocols.Checker")
    return instance


def run_judges(config: dict[str, Any], overrides: dict[str, dict[str, Any]] | None = None
               ) -> tuple[dict[str, TaskJudge], dict[str, dict[str, Any]]]:
    """The judges of a stored run, rebuilt from its ``config.json`` with the run's ``--oracle-args`` plus
    ``overrides``; shared by re-scoring, audits and the verifier, so all three read a run the same way."""
    from matpcr.plugins import get_manager

    registry = get_manager(config.get("plugins", [])).registry
    merged = {k: dict(v) for k, v in config.get("oracle_args", {}).items()}
    for name, params in (overrides or {}).items():
        merged.setdefault(name, {}).update(params)
    return build_judges(config.get("tasks_resolved", []), registry, merged), merged


def run_intervention(config: dict[str, Any]) -> Any:
    """The intervention of a stored run (for its ``summarize``), or None."""
    if not config.get("intervention"):
        return None
    from matpcr.plugins import get_manager

    registry = get_manager(config.get("plugins", [])).registry
    return registry.get("interventions", config["intervention"]).factory(**config.get("intervention_args", {}))


def stored_metrics(results: dict[str, Any], judges: dict[str, TaskJudge] | None = None) -> dict[str, list[Metric]]:
    """Per task, the metrics a stored run declared: its judges' (rebuilt, when given, else as stored in
    ``judged_by``) plus its checker's, whose scores are kept as they were stored."""
    checker = [Metric.from_dict(m) for m in (results.get("checker") or {}).get("metrics", [])]
    if judges is not None:
        return {task: [*judge.metrics, *checker] for task, judge in judges.items()}
    return {task: [*(Metric.from_dict(m) for m in spec.get("metrics", [])), *checker]
            for task, spec in (results.get("judged_by") or {}).items()}


def run_oracles(config: dict[str, Any], overrides: dict[str, dict[str, Any]] | None = None
                ) -> tuple[dict[str, tuple[str, Oracle]], dict[str, dict[str, Any]]]:
    """``run_judges`` restricted to oracle-checked tasks: ``{task: (oracle name, oracle)}``."""
    judges, merged = run_judges(config, overrides)
    return {t: (j.name, j.instance) for t, j in judges.items() if j.kind == "oracle"}, merged  # type: ignore[misc]


def stage_context(record: Record) -> dict[str, Any]:
    """What a scorer's ``score`` sees besides the chain: the pre-scoring stage's outcome (a judge's
    verdict). Records written before 0.2 kept it under ``meta["judge"]``."""
    return {"stage": record.meta.get("stage", record.meta.get("judge"))}


def score_with_scorer(record: Record, scorer: Scorer, item: Item) -> Record:
    """Scores from a task scorer; the primary one sets ``accurate``. Status: ``scored``, ``unscored``
    (no value, e.g. never judged) or ``error`` (the scorer raised)."""
    record.claims, record.verdicts, record.rejected, record.notes = [], [], [], []
    record.meta.pop("scoring_error", None)
    if record.error:  # no answer was generated: nothing to grade (not a wrong answer)
        record.scores, record.accurate, record.status = {}, None, "unscored"
        record.meta["scoring_error"] = f"no answer: {record.error}"
        return record
    try:
        scores = scorer.score(record.chain or "", item, stage_context(record))
    except Exception as exc:
        record.scores, record.accurate, record.status = {}, None, "error"
        record.meta["scoring_error"] = f"scorer {scorer.name!r} failed: {type(exc).__name__}: {exc}"
        return record
    checker_scores = {k: v for k, v in record.scores.items() if k not in scores and "." in k}
    record.scores = {**scores, **checker_scores}
    primary = record.score_value(scorer.primary)
    record.accurate = None if primary is None else bool(primary)
    record.status = "unscored" if primary is None else "scored"
    return record


def judge_claims(oracle: Oracle, claims: list[Claim], reference: Any) -> list[tuple[Verdict, bool | None]]:
    """Each claim's verdict and accuracy; an oracle exception is that claim's ``error`` verdict."""
    out: list[tuple[Verdict, bool | None]] = []
    for claim in claims:
        try:
            out.append((oracle.check(claim, reference), oracle.accurate(claim, reference)))
        except Exception as exc:
            out.append((Verdict("error", f"oracle failed: {type(exc).__name__}: {exc}"), None))
    return out


def score_with_oracle(record: Record, oracle: Oracle, item: Item) -> Record:
    """Fill claims, verdicts, rejected numbers, status and accuracy of ``record`` in place."""
    record.claims, record.verdicts, record.rejected, record.notes, record.accurate = [], [], [], [], None
    record.meta.pop("scoring_error", None)
    if record.error:
        record.status = "unparsable"
        record.meta["scoring_error"] = f"no answer: {record.error}"
        return record
    try:
        reference = oracle.prepared(item)
    except Exception as exc:
        record.status = "abstain"  # the definitions: a missing or unusable reference abstains
        record.meta["scoring_error"] = f"reference unusable: {type(exc).__name__}: {exc}"
        return record
    try:
        extraction = oracle.read(record.chain or "", item)
    except Exception as exc:
        record.status = "error"
        record.meta["scoring_error"] = f"claim reader failed: {type(exc).__name__}: {exc}"
        return record
    judged = judge_claims(oracle, extraction.claims, reference)
    verdicts = [v for v, _ in judged]
    accuracies = [bool(a) for v, a in judged if a is not None and v.status in ("consistent", "violated")]
    record.claims = [dataclasses.asdict(c) for c in extraction.claims]
    record.verdicts = [dataclasses.asdict(v) for v in verdicts]
    record.rejected = [dataclasses.asdict(c) for c in extraction.rejected]
    record.notes = list(extraction.notes)
    record.status = item_status(verdicts)
    record.accurate = all(accuracies) if accuracies else None
    if record.status == "error":
        record.meta["scoring_error"] = next(v.message for v in verdicts if v.status == "error")
    elif not extraction.claims:
        record.meta["scoring_error"] = "no checkable claim found in the answer"
    return record


def score_record(record: Record, judge: TaskJudge | Oracle | Scorer, item: Item) -> Record:
    """Judge one record with its task's oracle or scorer."""
    instance = judge.instance if isinstance(judge, TaskJudge) else judge
    if isinstance(instance, Scorer):
        return score_with_scorer(record, instance, item)
    return score_with_oracle(record, instance, item)


def apply_checker(checker: Checker, records: list[Record], items: list[Item]) -> None:
    """A checker's predictions go into ``record.scores`` (never into the oracle's status). A failing
    checker leaves the records unscored by it and notes the error on each."""
    answered = [(r, i) for r, i in zip(records, items) if r.chain]
    if not answered:
        return
    try:
        predictions = checker.predict([r for r, _ in answered], [i for _, i in answered])
    except Exception as exc:
        for r, _ in answered:
            r.meta["checker_error"] = f"checker {checker.name!r} failed: {type(exc).__name__}: {exc}"
        return
    for (r, _), scores in zip(answered, predictions):
        r.scores.update(scores)
