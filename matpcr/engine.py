"""The engine: plan → execute (cache, backend, scorer stages) → judge → record, round after round.

Each round is one pass of batches; interventions add rounds. Records are appended as each batch
finishes, so ``--resume`` continues a killed run without losing or repeating one (records whose
generation failed are retried). The parts live in their own modules: ``planning`` (config, items,
requests), ``execution`` (cache and backends), ``scoring`` (oracles, scorers, checkers), ``results``
(aggregation).
"""

from __future__ import annotations

import logging
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from matpcr import scoring
from matpcr.cache import ResponseCache, default_cache_path
from matpcr.datadir import resolve_data_dir
from matpcr.errors import MatpcrError
from matpcr.execution import Executor, run_stage
from matpcr.planning import (DEFAULT_MODEL, Plan, RunConfig, build_request, parse_shard, plan_items, record_key,
                             request_seed, sample_items)
from matpcr.plugins import PluginManager, get_manager
from matpcr.protocols import Intervention, Scorer
from matpcr.records import Item, Message, Record, Request, Response, Sampling, Verdict
from matpcr.rundir import RunDir
from matpcr.spec import coerce_call_args
from matpcr.tasks import TaskConfig, resolve

__all__ = ["DEFAULT_MODEL", "Evaluation", "RunConfig", "build_request", "evaluate", "record_key", "sample_items"]

log = logging.getLogger("matpcr.engine")


@dataclass
class Pending:
    """A request waiting for its batch, with what is needed to turn the answer into a record."""

    task: TaskConfig
    item: Item
    request: Request
    seed: int
    round: int
    sample: int
    meta: dict[str, Any] = field(default_factory=dict)


class Evaluation:
    """One run: resolves plugins, plans items, drives rounds and writes the run directory."""

    def __init__(self, config: RunConfig, run_dir: str | Path | None = None, manager: PluginManager | None = None):
        self.config = config
        self.manager = manager or get_manager(config.plugins)
        registry = self.manager.registry
        self.tasks = resolve(config.tasks, config.include_paths)
        self.data_dir = resolve_data_dir(config.data_dir)
        if self.data_dir is not None:  # config.json keeps the folder used, so --resume needs no environment
            config.data_dir = str(self.data_dir)
        backend_entry, model, revision, self.model_alias = registry.resolve_model(config.model)
        self.judges = scoring.build_judges([t.to_dict() for t in self.tasks], registry, config.oracle_args)
        staged = [t for t, j in self.judges.items() if isinstance(j.instance, Scorer) and j.instance.needs_model]
        if staged and not config.judge:
            raise MatpcrError(f"task(s) {', '.join(staged)} are graded by a judge model: pass --judge SPEC "
                              "(e.g. --judge openai:gpt-4o or --judge smollm2)")
        self.checker = scoring.build_checker(config.checker, registry)
        self.intervention: Intervention | None = None
        if config.intervention:
            factory = registry.get("interventions", config.intervention).factory
            self.intervention = factory(**coerce_call_args("--intervention-args", factory, config.intervention_args))
        if run_dir is None:
            stamp = time.strftime("%Y%m%dT%H%M%S")
            run_dir = Path(config.output_dir or "runs") / f"{stamp}_{uuid.uuid4().hex[:6]}"
        self.run = RunDir(run_dir)
        cache_path = default_cache_path() if config.cache == "default" else config.cache
        self.cache = ResponseCache(None if cache_path in (None, "", "none") else cache_path)
        model_args = coerce_call_args("--model-args", backend_entry.factory, config.model_args, skip=("model", "revision"))
        self.executor = Executor(lambda: backend_entry.factory(model, revision, **model_args), self.cache, config.model)
        self.judge_executor: Executor | None = None
        if config.judge:
            judge_entry, judge_model, judge_revision, _ = registry.resolve_model(config.judge)
            self.judge_executor = Executor(
                lambda: judge_entry.factory(judge_model, judge_revision, **config.judge_args), self.cache, config.judge)
        self.plan = Plan()
        self.resumed = 0
        self.skipped_tasks: dict[str, str] = {}

    # -- settings ----------------------------------------------------------------------------
    def sampling(self, task: TaskConfig) -> Sampling:
        """The task's generation settings with the intervention's and the run's ``--generation`` on top."""
        extra = dict(self.intervention.generation) if self._treated(task) else {}
        merged = {**task.generation, **extra, **self.config.generation}
        try:
            sampling = Sampling(**merged)
            sampling.max_new_tokens = int(sampling.max_new_tokens)
            sampling.temperature = float(sampling.temperature)
            sampling.top_p = float(sampling.top_p)
        except (TypeError, ValueError) as exc:
            raise MatpcrError(f"--generation {merged}: {exc}; known settings: max_new_tokens (int > 0), "
                              "temperature (>= 0), top_p (0 < p <= 1)") from None
        if sampling.max_new_tokens <= 0 or sampling.temperature < 0 or not 0 < sampling.top_p <= 1:
            raise MatpcrError(f"--generation: max_new_tokens must be > 0, temperature >= 0 and 0 < top_p <= 1 "
                              f"(got {merged})")
        return sampling

    def _treated(self, task: TaskConfig) -> bool:
        return self.intervention is not None and self.intervention.applies(task.constraint)

    def _samples(self, task: TaskConfig) -> int:
        return max(1, int(self.intervention.samples)) if self._treated(task) else 1  # type: ignore[union-attr]

    # -- the run -----------------------------------------------------------------------------
    def execute(self, resume: bool = False) -> dict[str, Any]:
        from matpcr.results import build_results

        started = time.time()
        if not resume and self.run.samples_path.exists():
            raise MatpcrError(f"{self.run.path} already holds samples; use --resume {self.run.path} or another --output-dir")
        self.executor.backend  # a missing model or replay file fails here, before anything is written
        self._drop_unseeable_tasks()
        self.run.create(self._config_json())
        self.run.lock()  # one writer per run directory: a second --resume stops with the holder named
        done: dict[str, Record] = {}
        if resume:
            for record in self.run.records():  # the last record of a key wins; failed generations are retried
                done[record.key] = record
            if self.run.duplicates:
                log.warning("%s: %d duplicate record line(s) ignored (the last line of each key counts)",
                            self.run.path, self.run.duplicates)
            done = {k: r for k, r in done.items() if not r.error}
        self.resumed = len(done)
        self.run.write_results(build_results(self, list(done.values()), started, status="started"))
        try:
            self._execute(done)
        except KeyboardInterrupt:
            self._finish(done, started, "cancelled", "interrupted by the user; `matpcr run --resume "
                                                     f"{self.run.path}` continues")
            raise
        except Exception as exc:
            self._finish(done, started, "error", f"{type(exc).__name__}: {exc}")
            raise
        return self._finish(done, started, "success")

    def _drop_unseeable_tasks(self) -> None:
        """Before anything is written: image tasks a text-only model cannot see. Named explicitly, they are
        an error; reached through a group (``--tasks xrd``), they are skipped with a message."""
        image = [t for t in self.tasks if t.modality == "image"]
        if not image or self.executor.backend.capabilities.images:
            return
        named = [t.task for t in image if t.task in self.config.tasks]
        if named:
            raise MatpcrError(f"task(s) {', '.join(named)} show images but model {self.config.model!r} takes text only; "
                              "pick the text variant (e.g. xrd_text) or a vision-language model")
        self.skipped_tasks = {t.task: f"needs a vision-language model; {self.config.model} takes text only"
                              for t in image}
        self.tasks = [t for t in self.tasks if t.modality != "image"]
        self.judges = {k: v for k, v in self.judges.items() if k not in self.skipped_tasks}
        log.warning("skipping image task(s) %s: model %s takes text only (they need a vision-language model)",
                    ", ".join(self.skipped_tasks), self.config.model)
        if not self.tasks:
            raise MatpcrError(f"every selected task shows images and model {self.config.model!r} takes text only")

    def _finish(self, done: dict[str, Record], started: float, status: str, error: str | None = None) -> dict[str, Any]:
        from matpcr.results import build_results

        results = build_results(self, list(done.values()), started, status=status, error=error)
        self.run.write_results(results)
        self.run.release()
        self.cache.close()
        return results

    def _execute(self, done: dict[str, Record]) -> None:
        shard = parse_shard(self.config.shard) if self.config.shard else None
        self.plan = plan_items(self.tasks, self.manager.registry, self.data_dir, self.config.seeds, self.config.limit,
                               shard)
        known = self.run.items()
        with self.run.writer("items.jsonl") as writer:
            writer.write_many([asdict(v) for k, v in self.plan.items.items() if k not in known])
        todo = [(task, item, record_key(task.task, item.id, seed, 0, n), seed, n)
                for task, seed, item in self.plan.entries for n in range(self._samples(task))]
        pending, unusable = [], []
        for task, item, key, seed, n in todo:
            if key in done:
                continue
            problem = self.plan.bad_items.get(f"{task.task}/{item.id}")
            if problem is not None:  # the definitions: an unusable reference abstains, with the reason kept
                unusable.append(Record(key=key, task=task.task, item_id=item.id, source_id=item.source_id,
                                       constraint=task.constraint, modality=task.modality, seed=seed, round=0,
                                       sample=n, model=self.config.model, prompt=[], chain="", status="abstain",
                                       meta={"scoring_error": f"item unusable: {problem}", "item_error": problem}))
                continue
            request = build_request(task, item, request_seed(seed, n), key, self.sampling(task))
            pending.append(Pending(task, item, request, seed, 0, n))
        rounds = self.intervention.rounds if self.intervention else 0
        progress = self._progress(len(todo) * (1 + rounds))
        progress.update(len(done))
        with self.run.writer() as writer:
            writer.write_many([r.to_dict() for r in unusable])
            done.update({r.key: r for r in unusable})
            progress.update(len(unusable))
            self._run_requests(pending, done, writer, progress)
            for round_ in range(1, rounds + 1):
                self._run_requests(self._follow_ups(round_, done), done, writer, progress)
        progress.close()

    def _progress(self, total: int) -> Any:
        from tqdm import tqdm

        return tqdm(total=total, desc="matpcr", unit="rec", disable=not self.config.progress, file=sys.stderr)

    def _follow_ups(self, round_: int, done: dict[str, Record]) -> list[Pending]:
        assert self.intervention is not None
        pending = []
        for task, seed, item in self.plan.entries:
            if not self._treated(task):
                continue
            for n in range(self._samples(task)):
                key = record_key(task.task, item.id, seed, round_, n)
                prev = done.get(record_key(task.task, item.id, seed, round_ - 1, n))
                if key in done or prev is None:
                    continue
                prev_request = Request([Message(**m) for m in prev.prompt], self.sampling(task),
                                       seed=prev.meta.get("request_seed", seed), key=prev.key)
                follow = self.intervention.follow_up(prev, prev_request, [Verdict(**v) for v in prev.verdicts])
                if follow is None:
                    continue
                follow.request.key = key
                pending.append(Pending(task, item, follow.request, seed, round_, n, follow.meta))
        return pending

    def _run_requests(self, pending: list[Pending], done: dict[str, Record], writer: Any, progress: Any) -> None:
        size = max(1, self.config.batch_size)
        for start in range(0, len(pending), size):
            chunk = pending[start:start + size]
            responses = self.executor.generate([p.request for p in chunk])
            self._stage(chunk, responses)
            records = [self._make_record(p, resp) for p, resp in zip(chunk, responses)]
            if self.checker is not None:
                scoring.apply_checker(self.checker, records, [p.item for p in chunk])
            writer.write_many([r.to_dict() for r in records])
            for record in records:  # interventions need the conversation; otherwise keep the slim copy
                done[record.key] = record if self.intervention is not None else record.slim()
            progress.update(len(records))

    def _stage(self, chunk: list[Pending], responses: list[Response]) -> None:
        """Scorers' model-graded stage (the judge), batched and cached like answers."""
        work = [(i, self.judges[p.task.task].instance) for i, p in enumerate(chunk)
                if p.task.task in self.judges and isinstance(self.judges[p.task.task].instance, Scorer)]
        if not work or self.judge_executor is None:
            return
        outcomes = run_stage(self.judge_executor, [(s, chunk[i].item, responses[i]) for i, s in work])  # type: ignore[misc]
        for (i, _), outcome in zip(work, outcomes):
            if outcome is not None:
                chunk[i].meta["stage"] = outcome

    def _make_record(self, p: Pending, response: Response) -> Record:
        task, item, request = p.task, p.item, p.request
        treated = self._treated(task)
        record = Record(
            key=request.key, task=task.task, item_id=item.id, source_id=item.source_id,
            constraint=task.constraint, modality=task.modality, seed=p.seed,
            round=p.round, sample=p.sample, model=self.config.model,
            prompt=[asdict(m) for m in request.messages], chain=response.text,
            cached=response.cached, latency_s=response.latency_s, prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens, error=response.error,
            intervention=self.config.intervention if treated else None,
            meta={"request_seed": request.seed, **({"group": item.meta["group"]} if "group" in item.meta else {}),
                  **p.meta},
        )
        judge = self.judges.get(task.task)
        if judge is not None:
            scoring.score_record(record, judge, item)
        return record

    def _config_json(self) -> dict[str, Any]:
        data = self.config.to_dict()
        data["run_dir"] = str(self.run.path)
        data["tasks_resolved"] = [t.to_dict() for t in self.tasks]
        return data


def evaluate(tasks: list[str] | str, model: str = DEFAULT_MODEL, *, resume: str | Path | None = None,
             **options: Any) -> dict[str, Any]:
    """Do what ``matpcr run`` does and return the results object (also written to results.json)."""
    if resume is not None:
        saved = RunDir(resume).read_config()
        config = RunConfig.from_dict({**saved, **options})
        return Evaluation(config, run_dir=resume).execute(resume=True)
    if isinstance(tasks, str):
        tasks = [t for t in tasks.split(",") if t]
    config = RunConfig(tasks=list(tasks), model=model, **options)
    return Evaluation(config).execute()
