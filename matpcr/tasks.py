"""Declarative task configs (YAML) and the protocol for the loaders they name.

A task YAML binds a loader (registered by a plugin) to an oracle or scorer, a prompt template and
generation settings. Errors name the file and the line, because a user editing YAML needs both.
"""

from __future__ import annotations

import difflib
import importlib.resources
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from matpcr.errors import MatpcrError, UnknownNameError
from matpcr.records import Item, Sampling

DEFAULT_PROMPT = "{text}"


class TaskConfigError(MatpcrError):
    """A task YAML that cannot be used; the message names the file and line."""


@dataclass
class TaskConfig:
    """One task as declared in YAML."""

    task: str
    loader: str
    constraint: str
    modality: str = "text"
    oracle: str | None = None
    scorer: str | None = None
    group: list[str] = field(default_factory=list)
    loader_args: dict[str, Any] = field(default_factory=dict)
    system_prompt: str | None = None
    prompt: str = DEFAULT_PROMPT
    generation: dict[str, Any] = field(default_factory=dict)
    version: int = 1
    description: str = ""
    path: str = ""

    @property
    def sampling(self) -> Sampling:
        return Sampling(**self.generation)

    def render_prompt(self, item: Item) -> str:
        return self.prompt.format(text=item.text, **{k: v for k, v in item.meta.items() if isinstance(v, (str, int, float))})

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


_FIELDS = {f for f in TaskConfig.__dataclass_fields__ if f != "path"}
_REQUIRED = ("task", "loader", "constraint")


class TaskLoader(Protocol):
    """What a plugin registers with ``register_tasks``: turns a config into items. Optional:
    ``complete(item)`` (called only for sampled items), ``data_sets`` (folder names it reads, for
    ``matpcr data ls``) and ``report`` (a dict put into the run's data provenance)."""

    def load(self, config: TaskConfig, data_dir: Path | None) -> list[Item]: ...


def _key_lines(text: str) -> dict[str, int]:
    """Line numbers (1-based) of the top-level keys, so schema errors can point at them."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: k.start_mark.line + 1 for k, _ in node.value}


def parse_task_yaml(text: str, path: str) -> TaskConfig:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # the construct that failed starts at the context mark (an unclosed bracket); the problem mark is
        # where the parser gave up, which can be the end of the file
        start = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        end = getattr(exc, "problem_mark", None)
        line = f":{start.line + 1}" if start is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        where = f", noticed at line {end.line + 1}" if end is not None and start is not None and end.line != start.line else ""
        raise TaskConfigError(f"{path}{line}: invalid YAML ({problem}{where}); fix the syntax at that line") from None
    if not isinstance(data, dict):
        raise TaskConfigError(f"{path}:1: a task file must be a mapping of keys (task, loader, constraint, ...)")
    lines = _key_lines(text)
    for key in data:
        if key not in _FIELDS:
            close = difflib.get_close_matches(str(key), _FIELDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; allowed keys: {', '.join(sorted(_FIELDS))}"
            raise TaskConfigError(f"{path}:{lines.get(key, 1)}: unknown key {key!r}{hint}")
    for key in _REQUIRED:
        if not data.get(key):
            raise TaskConfigError(f"{path}:1: missing required key {key!r}")
    if isinstance(data.get("group"), str):
        data["group"] = [data["group"]]
    for key, kind in (("loader_args", dict), ("generation", dict), ("group", list)):
        if key in data and not isinstance(data[key], kind):
            raise TaskConfigError(f"{path}:{lines.get(key, 1)}: {key!r} must be a {kind.__name__}")
    if data.get("modality", "text") not in ("text", "image"):
        raise TaskConfigError(f"{path}:{lines.get('modality', 1)}: modality must be 'text' or 'image'")
    try:
        Sampling(**data.get("generation", {}))
    except TypeError as exc:
        raise TaskConfigError(f"{path}:{lines.get('generation', 1)}: bad generation settings ({exc})") from None
    return TaskConfig(path=path, **data)


def builtin_task_dir() -> Path:
    return Path(str(importlib.resources.files("matpcr_tasks")))


def discover(include_paths: list[str] | tuple[str, ...] = ()) -> dict[str, TaskConfig]:
    """All task configs: the shipped ones, plugins' folders, then ``--include-path`` folders
    (later definitions of a name override earlier ones)."""
    from matpcr.plugins import get_manager

    folders = [builtin_task_dir(), *map(Path, get_manager().registry.include_paths), *map(Path, include_paths)]
    tasks: dict[str, TaskConfig] = {}
    for folder in folders:
        if not folder.is_dir():
            raise TaskConfigError(f"{folder}: task folder does not exist (check --include-path)")
        for path in sorted(folder.glob("*.yaml")):
            config = parse_task_yaml(path.read_text(encoding="utf-8"), str(path))
            tasks[config.task] = config
    return tasks


def groups(tasks: dict[str, TaskConfig]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for config in tasks.values():
        for group in config.group:
            out.setdefault(group, []).append(config.task)
    return {k: sorted(v) for k, v in out.items()}


def resolve(names: list[str], include_paths: list[str] | tuple[str, ...] = ()) -> list[TaskConfig]:
    """Expand task and group names into task configs, keeping order and dropping repeats."""
    tasks = discover(include_paths)
    grouped = groups(tasks)
    out: list[TaskConfig] = []
    for name in names:
        if name in tasks:
            chosen = [tasks[name]]
        elif name in grouped:
            chosen = [tasks[t] for t in grouped[name]]
        else:
            raise UnknownNameError("task", name, [*tasks, *grouped])
        out.extend(c for c in chosen if c not in out)
    return out
