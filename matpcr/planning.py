"""Planning a run: its configuration, the items each seed draws, and the requests to send.

Everything here is deterministic: the same configuration plans the same (task, item, seed, sample)
keys, which is what lets ``--resume`` skip work already on disk.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import MatpcrError
from matpcr.protocols import TaskLoader, as_loader
from matpcr.records import Item, Message, Request, Sampling, image_part, text_part
from matpcr.tasks import TaskConfig

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
    #: "i/n": run only the i-th of n disjoint, deterministic parts of the work (items × seeds)
    shard: str | None = None

    def __post_init__(self) -> None:
        if self.shard is not None:
            parse_shard(self.shard)
        if self.limit is not None and int(self.limit) <= 0:
            raise MatpcrError(f"--limit must be a positive number of items, not {self.limit}")
        if int(self.seeds) <= 0:
            raise MatpcrError(f"--seeds must be at least 1, not {self.seeds}")
        if int(self.batch_size) <= 0:
            raise MatpcrError(f"--batch-size must be at least 1, not {self.batch_size}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` with 1 ≤ i ≤ n → (i, n)."""
    try:
        i, n = (int(x) for x in str(text).split("/"))
    except ValueError:
        raise MatpcrError(f"--shard {text!r}: expected I/N, e.g. --shard 2/4") from None
    if not 1 <= i <= n:
        raise MatpcrError(f"--shard {text!r}: I must be between 1 and N")
    return i, n


def in_shard(task: str, item_id: str, seed: int, shard: tuple[int, int] | None) -> bool:
    """Whether (task, item, seed) belongs to shard i of n: a stable hash, so every shard agrees."""
    if shard is None:
        return True
    i, n = shard
    return _stable_int(f"{task}/{item_id}/s{seed}") % n == i - 1


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


def build_request(config: TaskConfig, item: Item, seed: int, key: str, sampling: Sampling) -> Request:
    messages: list[Message] = []
    if config.system_prompt:
        messages.append(Message("system", [text_part(config.system_prompt)]))
    parts = [image_part(path) for path in item.images] if config.modality == "image" else []
    parts.append(text_part(config.render_prompt(item)))
    messages.append(Message("user", parts))
    return Request(messages, sampling, seed=seed, key=key)


def request_seed(seed: int, sample: int) -> int:
    """Sample n of seed s uses s + 1000·n: distinct across samples and seeds (for < 1000 seeds)."""
    return seed + 1000 * sample


def item_cache_dir() -> Path | None:
    """Where completed items are kept (``$MATPCR_ITEM_CACHE``, default the user cache dir; ``none``: off)."""
    import os

    value = os.environ.get("MATPCR_ITEM_CACHE", "")
    if value.strip().lower() in ("none", "off", "0"):
        return None
    if value:
        return Path(value).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("matpcr")) / "items"


def complete_cached(loader: TaskLoader, task: TaskConfig, item: Item) -> Item:
    """``loader.complete(item)``, read from disk when the loader gave a cache key and the same item was
    completed before (the first request of a big run then waits for no reference parsing)."""
    import json
    import os

    key = loader.cache_key(item)
    folder = item_cache_dir()
    if key is None or folder is None:
        return loader.complete(item)
    ident = json.dumps([type(loader).__qualname__, key, task.task, task.modality, task.loader_args, item.id],
                       sort_keys=True, default=str)
    path = folder / f"{hashlib.sha256(ident.encode()).hexdigest()}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cached = Item(**data)
        if all(Path(p).exists() for p in cached.images):
            return cached
    except (OSError, ValueError, TypeError):
        pass  # not cached yet, or unreadable: complete it again
    done = loader.complete(item)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(done), ensure_ascii=False, allow_nan=False), encoding="utf-8")
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass  # a read-only cache only costs time
    return done


@dataclass
class Plan:
    """The items a run uses, per (task, seed), with the ones that could not be completed."""

    entries: list[tuple[TaskConfig, int, Item]] = field(default_factory=list)
    items: dict[str, Item] = field(default_factory=dict)
    bad_items: dict[str, str] = field(default_factory=dict)
    loader_reports: dict[str, Any] = field(default_factory=dict)

    def items_of(self, task: str) -> list[Item]:
        return [i for k, i in self.items.items() if k.startswith(task + "/")]


def plan_items(tasks: list[TaskConfig], registry: Any, data_dir: Path | None, seeds: int,
               limit: int | None, shard: tuple[int, int] | None = None) -> Plan:
    """Load each task's items, draw each seed's sample and complete the drawn items (reading their
    reference files). An item that cannot be completed is kept in ``bad_items`` with the reason: the
    engine records it as unusable instead of ending the run. With ``shard`` only that part of the
    (item, seed) pairs is planned, and only its items are completed."""
    plan = Plan()
    for task in tasks:
        loader = as_loader(registry.get("tasks", task.loader).factory())
        items = loader.load(task, data_dir)
        if not items:
            raise MatpcrError(f"task {task.task!r} loaded no items (loader {task.loader!r}, data dir "
                              f"{data_dir}); check --data-dir")
        if loader.report:
            plan.loader_reports[task.task] = loader.report
        for seed in range(seeds):
            for item in sample_items(items, task.task, seed, limit):
                if not in_shard(task.task, item.id, seed, shard):
                    continue
                key = f"{task.task}/{item.id}"
                if key not in plan.items:
                    plan.items[key] = item
                    try:
                        plan.items[key] = complete_cached(loader, task, item)
                    except Exception as exc:  # one bad file must not end the run: recorded as unusable
                        plan.bad_items[key] = f"{type(exc).__name__}: {exc}"
                plan.entries.append((task, seed, plan.items[key]))
    return plan
