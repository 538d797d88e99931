"""The engine: items → batched requests → cached responses → oracle verdicts → records.

Each round is one pass of batches per backend; interventions add rounds. Records are appended as
each batch finishes, so ``--resume`` continues a killed run without losing or repeating one.
"""

from __future__ import annotations

import hashlib
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from matpcr import scoring
from matpcr.cache import ResponseCache, cache_key, default_cache_path
from matpcr.errors import MatpcrError
from matpcr.plugins import PluginManager, get_manager
from matpcr.protocols import Backend, Intervention, Oracle
from matpcr.records import Item, Message, Record, Request, Response, Sampling, Verdict, image_part, text_part
from matpcr.rundir import RunDir
from matpcr.spec import parse_model_spec
from matpcr.tasks import TaskConfig, resolve

DEFAULT_MODEL = "smollm2"


@dataclass
class RunConfig:
    """Everything that defines a run; saved as ``config.json`` and reused by ``--resume``."""

    tasks: list[str]
    model: str = DEFAULT_MODEL
    model_args: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None
    seeds: int = 1
    batch_size: int = 8
    output_dir: str | None = None
    oracle_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    intervention: str | None = None
    intervention_args: dict[str, Any] = field(default_factory=dict)
    generation: dict[str, Any] = field(default_factory=dict)
    checker: str | None = None
    judge: str | None = None
    judge_args: dict[str, Any] = field(default_factory=dict)
    data_dir: str | None = None
    include_paths: list[str] = field(default_factory=list)
    cache: str | None = "default"
    plugins: list[str] = field(default_factory=list)
    progress: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


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


def record_key(task: str, item_id: str, seed: int, round_: int, sample: int) -> str:
    return f"{task}/{item_id}/s{seed}/r{round_}/n{sample}"


def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def sample_items(items: list[Item], task: str, seed: int, limit: int | None) -> list[Item]:
    """Each seed draws its own deterministic sample (a seeded permutation, then the first ``limit``)."""
    rng = np.random.default_rng([_stable_int(task), seed])
    order = rng.permutation(len(items))
    chosen = order if limit is None else order[: max(0, limit)]
    return [items[i] for i in chosen]


def resolve_data_dir(data_dir: str | None) -> Path | None:
    import os

    value = data_dir or os.environ.get("MATPCR_DATA_DIR")
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        raise MatpcrError(f"data directory {path} does not exist; pass --data-dir DIR or set MATPCR_DATA_DIR "
                          "(see `matpcr data ls`)")
    return path.resolve()


def build_request(config: TaskConfig, item: Item, seed: int, key: str, sampling: Sampling) -> Request:
    messages: list[Message] = []
    if config.system_prompt:
        messages.append(Message("system", [text_part(config.system_prompt)]))
    parts = [image_part(path) for path in item.images] if config.modality == "image" else []
    parts.append(text_part(config.render_prompt(item)))
    messages.append(Message("user", parts))
    return Request(messages, sampling, seed=seed, key=key)


class Evaluation:
    """One run: resolves plugins, loads items, drives rounds and writes the run directory."""

    def __init__(self, config: RunConfig, run_dir: str | Path | None = None, manager: PluginManager | None = None):
        self.config = config
        self.manager = manager or get_manager(config.plugins)
        registry = self.manager.registry
        self.tasks = resolve(config.tasks, config.include_paths)
        self.data_dir = resolve_data_dir(config.data_dir)
        spec = parse_model_spec(config.model)
        self.spec = spec
        self._backend_entry = registry.get("backends", spec.backend)
        self._backend: Backend | None = None
        self.oracles: dict[str, Oracle] = {}
        for task in self.tasks:
            name = task.oracle or task.scorer
            if name and name not in self.oracles:
                self.oracles[name] = registry.get("oracles", name).factory(**config.oracle_args.get(name, {}))
        for name in config.oracle_args:
            if name not in self.oracles:
                registry.get("oracles", name)  # unknown oracle names error with close matches
        needs_judge = [t.task for t in self.tasks if hasattr(self.oracles.get(t.oracle or t.scorer or ""), "judge_request")]
        if needs_judge and not config.judge:
            raise MatpcrError(f"task(s) {', '.join(needs_judge)} are graded by a judge model: pass --judge SPEC "
                              "(e.g. --judge openai:gpt-4o or --judge smollm2)")
        self._judge_backend: Backend | None = None
        self.checker: Any = None
        if config.checker:
            name, _, path = config.checker.partition(":")
            self.checker = registry.get("oracles", name).factory(path=path)
            if not hasattr(self.checker, "predict"):
                raise MatpcrError(f"{name!r} is an oracle, not a reference-free checker")
        self.intervention: Intervention | None = None
        if config.intervention:
            self.intervention = registry.get("interventions", config.intervention).factory(**config.intervention_args)
        if run_dir is None:
            stamp = time.strftime("%Y%m%dT%H%M%S")
            base = Path(config.output_dir or "runs")
            run_dir = base / f"{stamp}_{uuid.uuid4().hex[:6]}"
        self.run = RunDir(run_dir)
        cache_path = default_cache_path() if config.cache == "default" else config.cache
        self.cache = ResponseCache(None if cache_path in (None, "", "none") else cache_path)
        self.items: dict[str, Item] = {}
        self.bad_items: dict[str, str] = {}
        self.loader_reports: dict[str, Any] = {}
        self.stats = {"generated": 0, "cached": 0, "resumed": 0, "generate_s": 0.0}

    # -- backend -----------------------------------------------------------------------------
    @property
    def backend(self) -> Backend:
        if self._backend is None:
            spec = self.spec
            self._backend = self._backend_entry.factory(spec.model, spec.revision, **self.config.model_args)
        return self._backend

    def sampling(self, task: TaskConfig) -> Sampling:
        """The task's generation settings with the run's ``--generation`` overrides on top."""
        extra = {}
        if self.intervention is not None and self.intervention.applies(task.constraint):
            extra = dict(getattr(self.intervention, "generation", {}) or {})
        try:
            return Sampling(**{**task.generation, **extra, **self.config.generation})
        except TypeError as exc:
            raise MatpcrError(f"--generation: {exc}; known settings: max_new_tokens, temperature, top_p") from None

    # -- items -------------------------------------------------------------------------------
    def load_items(self) -> list[tuple[TaskConfig, int, Item]]:
        registry = self.manager.registry
        plan: list[tuple[TaskConfig, int, Item]] = []
        for task in self.tasks:
            loader = registry.get("tasks", task.loader).factory()
            items = loader.load(task, self.data_dir)
            if not items:
                raise MatpcrError(f"task {task.task!r} loaded no items (loader {task.loader!r}, data dir "
                                  f"{self.data_dir}); check --data-dir")
            if task.modality == "image" and not self.backend.capabilities.images:
                raise MatpcrError(f"task {task.task!r} shows images but model {self.config.model!r} takes text only; "
                                  "pick the task's text variant or a vision-language model")
            if getattr(loader, "report", None):
                self.loader_reports[task.task] = loader.report
            complete = getattr(loader, "complete", None)
            for seed in range(self.config.seeds):
                for item in sample_items(items, task.task, seed, self.config.limit):
                    key = f"{task.task}/{item.id}"
                    if key not in self.items:
                        self.items[key] = item
                        if complete is not None:
                            try:
                                self.items[key] = complete(item)
                            except Exception as exc:  # one bad file must not end the run
                                self.bad_items[key] = f"{type(exc).__name__}: {exc}"
                    plan.append((task, seed, self.items[key]))
        return plan

    # -- the run -----------------------------------------------------------------------------
    def execute(self, resume: bool = False) -> dict[str, Any]:
        from matpcr.results import build_results

        started = time.time()
        if resume:
            existing = self.run.records()
        else:
            if self.run.samples_path.exists():
                raise MatpcrError(f"{self.run.path} already holds samples; use --resume {self.run.path} or another --output-dir")
            existing = []
        self.run.create(self._config_json())
        plan = self.load_items()
        known = self.run.items()
        with self.run.writer("items.jsonl") as writer:
            writer.write_many([asdict(v) for k, v in self.items.items() if k not in known])
        done: dict[str, Record] = {r.key: r for r in existing}
        self.stats["resumed"] = len(done)
        todo = [(task, item, record_key(task.task, item.id, seed, 0, n), seed, n)
                for task, seed, item in plan for n in range(self._samples(task))]
        pending = []
        unusable = []
        for task, item, key, seed, n in todo:
            if key in done:
                continue
            problem = self.bad_items.get(f"{task.task}/{item.id}")
            if problem is not None:
                unusable.append(Record(key=key, task=task.task, item_id=item.id, source_id=item.source_id,
                                       constraint=task.constraint, modality=task.modality, seed=seed, round=0,
                                       sample=n, model=self.config.model, prompt=[], chain="", status="abstain",
                                       error=f"item unusable: {problem}", meta={"item_error": problem}))
                continue
            # sample n of seed s uses s + 1000·n: distinct across samples and seeds (for < 1000 seeds)
            request = build_request(task, item, seed + 1000 * n, key, self.sampling(task))
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
                pending = self._follow_ups(round_, plan, done)
                self._run_requests(pending, done, writer, progress)
        progress.close()
        results = build_results(self, list(done.values()), started)
        self.run.write_results(results)
        self.cache.close()
        return results

    def _progress(self, total: int) -> Any:
        from tqdm import tqdm

        return tqdm(total=total, desc="matpcr", unit="rec", disable=not self.config.progress, file=sys.stderr)

    def _samples(self, task: TaskConfig) -> int:
        if self.intervention is not None and self.intervention.applies(task.constraint):
            return max(1, int(self.intervention.samples))
        return 1

    def _follow_ups(self, round_: int, plan: list[tuple[TaskConfig, int, Item]],
                    done: dict[str, Record]) -> list["Pending"]:
        assert self.intervention is not None
        pending = []
        for task, seed, item in plan:
            if not self.intervention.applies(task.constraint):
                continue
            for n in range(self._samples(task)):
                key = record_key(task.task, item.id, seed, round_, n)
                prev = done.get(record_key(task.task, item.id, seed, round_ - 1, n))
                if key in done or prev is None:
                    continue
                prev_request = Request([Message(**m) for m in prev.prompt], self.sampling(task),
                                       seed=prev.meta.get("request_seed", seed), key=prev.key)
                verdicts = [Verdict(**v) for v in prev.verdicts]
                follow = self.intervention.follow_up(prev, prev_request, verdicts)
                if follow is None:
                    continue
                follow.request.key = key
                pending.append(Pending(task, item, follow.request, seed, round_, n, follow.meta))
        return pending

    def _run_requests(self, pending: list["Pending"], done: dict[str, Record], writer: Any, progress: Any) -> None:
        size = max(1, self.config.batch_size)
        for start in range(0, len(pending), size):
            chunk = pending[start:start + size]
            responses = self._generate([p.request for p in chunk])
            self._judge([(p, resp) for p, resp in zip(chunk, responses)])
            records = [self._make_record(p, resp) for p, resp in zip(chunk, responses)]
            if self.checker is not None:  # kept apart from oracle verdicts
                answered = [(r, p.item) for r, p in zip(records, chunk) if r.chain]
                for (r, _), pred in zip(answered, self.checker.predict([a for a, _ in answered], [b for _, b in answered])):
                    r.meta["checker"] = pred
            writer.write_many([r.to_dict() for r in records])
            for record in records:
                done[record.key] = record
            progress.update(len(records))

    # -- judge models ------------------------------------------------------------------------
    @property
    def judge_backend(self) -> Backend:
        if self._judge_backend is None:
            spec = parse_model_spec(self.config.judge or "")
            entry = self.manager.registry.get("backends", spec.backend)
            self._judge_backend = entry.factory(spec.model, spec.revision, **self.config.judge_args)
        return self._judge_backend

    def _judge(self, pairs: list[tuple["Pending", Response]]) -> None:
        """Grade answers with the judge model (batched and cached like answers). Malformed judge output is
        retried with a stricter reminder, then recorded as unjudged: never guessed."""
        waiting = []
        for p, resp in pairs:
            scorer = self.oracles.get(p.task.oracle or p.task.scorer or "")
            if hasattr(scorer, "judge_request") and not resp.error:
                waiting.append((p, resp, scorer))
        if not waiting:
            return
        identity = dict(self.judge_backend.identity)
        results: dict[int, dict[str, Any]] = {}
        attempts = max(getattr(w[2], "max_attempts", 3) for w in waiting)
        for attempt in range(attempts):
            todo = [(i, p, resp, sc) for i, (p, resp, sc) in enumerate(waiting) if i not in results or
                    (results[i].get("judgment") is None and attempt < getattr(sc, "max_attempts", 3))]
            if not todo:
                break
            requests = [sc.judge_request(p.item, resp.text, attempt) for _, p, resp, sc in todo]
            replies = self._generate(requests, backend=self.judge_backend, identity=identity)
            for (i, p, resp, sc), reply in zip(todo, replies):
                parsed = sc.parse_judgement(reply.text) if not reply.error else None
                entry = results.setdefault(i, {"attempts": 0, "raw": [], "judge": identity})
                entry["attempts"] += 1
                entry["raw"].append(reply.text if not reply.error else f"error: {reply.error}")
                if parsed is not None:
                    entry.update(parsed)
                else:
                    entry.setdefault("judgment", None)
        for i, (p, _, _) in enumerate(waiting):
            p.meta["judge"] = results.get(i, {"judgment": None})

    def _generate(self, requests: list[Request], backend: Backend | None = None,
                  identity: dict[str, Any] | None = None) -> list[Response]:
        backend_given = backend is not None
        identity = identity or self._identity()
        keys = [cache_key(identity, r) for r in requests]
        hits = self.cache.get_many(keys)
        missing = [i for i, k in enumerate(keys) if k not in hits]
        out: list[Response | None] = [None] * len(requests)
        for i, key in enumerate(keys):
            if key in hits:
                hits[key].cached = True
                out[i] = hits[key]
        if missing:
            t0 = time.perf_counter()
            try:
                fresh = (backend if backend_given else self.backend).generate([requests[i] for i in missing])
            except Exception as exc:  # one failing batch must not kill the run
                fresh = [Response("", error=f"{type(exc).__name__}: {exc}") for _ in missing]
            self.stats["generate_s"] += time.perf_counter() - t0
            if len(fresh) != len(missing):
                raise MatpcrError(f"backend {self.config.model!r} returned {len(fresh)} responses for {len(missing)} requests")
            for i, resp in zip(missing, fresh):
                out[i] = resp
            label = self.config.judge if backend_given else self.config.model
            self.cache.put_many([(keys[i], label, out[i]) for i in missing])  # type: ignore[misc]
        prefix = "judge_" if backend_given else ""
        self.stats[prefix + "generated"] = self.stats.get(prefix + "generated", 0) + len(missing)
        self.stats[prefix + "cached"] = self.stats.get(prefix + "cached", 0) + len(requests) - len(missing)
        return out  # type: ignore[return-value]

    def _identity(self) -> dict[str, Any]:
        if not hasattr(self, "_identity_cache"):
            self._identity_cache = dict(self.backend.identity)
        return self._identity_cache

    def _make_record(self, p: "Pending", response: Response) -> Record:
        task, item, request = p.task, p.item, p.request
        record = Record(
            key=request.key, task=task.task, item_id=item.id, source_id=item.source_id,
            constraint=task.constraint, modality=task.modality, seed=p.seed,
            round=p.round, sample=p.sample, model=self.config.model,
            prompt=[asdict(m) for m in request.messages], chain=response.text,
            cached=response.cached, latency_s=response.latency_s, prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens, error=response.error,
            intervention=self.config.intervention if self._samples(task) > 1 or (
                self.intervention is not None and self.intervention.applies(task.constraint)) else None,
            meta={"request_seed": request.seed, **({"group": item.meta["group"]} if "group" in item.meta else {}),
                  **p.meta},
        )
        oracle = self.oracles.get(task.oracle or task.scorer or "")
        if oracle is not None:
            scoring.score_record(record, oracle, item)
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
