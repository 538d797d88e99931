"""Declarative task configs (YAML) and the protocol for the loaders they name.

A task YAML binds a loader (registered by a plugin) to an oracle or scorer, a prompt template and
generation settings. Errors name the file and the line, because a user editing YAML needs both.

YAML is read with ``yaml.SafeLoader`` (no Python objects) and bounded: a file larger than
``MATPCR_MAX_YAML_BYTES`` (default 1,000,000) or whose size after alias expansion exceeds
``MATPCR_MAX_YAML_EXPANDED`` (default 10,000,000 characters and nodes; an alias bomb is billions) is
rejected before anything walks it. Prompts are templates with ``{name}`` placeholders for the item's
text and plain metadata fields (``{{``/``}}`` for literal braces); they are never passed to
``str.format``, so a placeholder cannot reach attributes (``{text.__class__}`` is an error).
"""

from __future__ import annotations

import difflib
import importlib.resources
import os
import re
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
        fields = {k: v for k, v in item.meta.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
        fields["text"] = item.text
        return render_template(self.prompt, fields, f"{self.path or self.task}: prompt", f"item {item.id}")

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


# -- prompt templates --------------------------------------------------------------------------------

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def template_fields(template: str, where: str = "prompt") -> list[str]:
    """The placeholder names of a prompt template, or a TaskConfigError for anything but ``{name}``."""
    names = []
    for match in _TOKEN.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            continue
        name = match.group(1)
        if name is None:
            raise TaskConfigError(f"{where}: a lone {token!r} at character {match.start() + 1}; write {token * 2} for a "
                                  "literal brace")
        if not _NAME.match(name):
            raise TaskConfigError(f"{where}: bad placeholder {token!r}; placeholders are plain field names such as "
                                  "{text} (no attributes, indexes or format specs; {{ and }} for literal braces)")
        names.append(name)
    return names


def render_template(template: str, fields: dict[str, Any], where: str = "prompt", what: str = "the item") -> str:
    """Substitute ``{name}`` placeholders from ``fields``: values are inserted as text, never evaluated."""
    template_fields(template, where)

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        if name not in fields:
            raise TaskConfigError(f"{where}: placeholder {{{name}}} is not a field of {what} "
                                  f"(available: {', '.join(sorted(fields))})")
        return str(fields[name])

    return _TOKEN.sub(substitute, template)


# -- bounded YAML ------------------------------------------------------------------------------------

def _limit(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        raise MatpcrError(f"${name} must be a whole number (got {os.environ[name]!r})") from None


def _expanded_size(root: yaml.Node, limit: int, path: str) -> int:
    """Characters plus nodes of the document with every alias expanded, computed without expanding it
    (shared nodes are counted once per use, in time linear in the distinct nodes)."""
    memo: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in memo:
            return memo[key]
        if key in active:
            raise TaskConfigError(f"{path}:{node.start_mark.line + 1}: a YAML alias refers to itself "
                                  "(recursive structure); task files cannot hold one")
        active.add(key)
        if isinstance(node, yaml.ScalarNode):
            total = 1 + len(node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size(child) for child in node.value)
        else:
            total = 1 + sum(size(k) + size(v) for k, v in node.value)
        active.discard(key)
        if total > limit:
            raise TaskConfigError(f"{path}:{node.start_mark.line + 1}: the YAML expands to more than {limit:,} "
                                  "characters (an alias bomb?); raise $MATPCR_MAX_YAML_EXPANDED if it is genuine")
        memo[key] = total
        return total

    return size(root)


def _safe_load_bounded(text: str, path: str) -> tuple[Any, yaml.Node | None]:
    """``yaml.safe_load`` with a size bound before parsing and an expansion bound before constructing."""
    max_bytes = _limit("MATPCR_MAX_YAML_BYTES", 1_000_000)
    if len(text) > max_bytes:
        raise TaskConfigError(f"{path}:1: task file is {len(text):,} characters, more than the limit of {max_bytes:,} "
                              "($MATPCR_MAX_YAML_BYTES)")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _expanded_size(node, _limit("MATPCR_MAX_YAML_EXPANDED", 10_000_000), path)
        return loader.construct_document(node), node
    finally:
        loader.dispose()


def _key_lines(node: yaml.Node | None) -> dict[str, int]:
    """Line numbers (1-based) of the top-level keys, so schema errors can point at them."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(k.value): k.start_mark.line + 1 for k, _ in node.value}


_TEXT_KEYS = ("task", "loader", "constraint", "modality", "oracle", "scorer", "system_prompt", "prompt", "description")
_TASK_NAME = re.compile(r"[^\s,/]+\Z")


def parse_task_file(path: Path) -> TaskConfig:
    """Read and parse one task YAML; unreadable or non-UTF-8 files get an error naming the file and line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TaskConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise TaskConfigError(f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                              "save the file as UTF-8") from None
    return parse_task_yaml(text, str(path))


def parse_task_yaml(text: str, path: str) -> TaskConfig:
    try:
        data, node = _safe_load_bounded(text, path)
    except RecursionError:
        raise TaskConfigError(f"{path}:1: the YAML is nested too deeply") from None
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
    lines = _key_lines(node)
    for key in data:
        if key not in _FIELDS:
            close = difflib.get_close_matches(str(key), _FIELDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; allowed keys: {', '.join(sorted(_FIELDS))}"
            raise TaskConfigError(f"{path}:{lines.get(key, 1)}: unknown key {key!r}{hint}")
    for key in _REQUIRED:
        if not data.get(key):
            raise TaskConfigError(f"{path}:1: missing required key {key!r}")
    for key in _TEXT_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise TaskConfigError(f"{path}:{lines.get(key, 1)}: {key!r} must be text, not a {type(value).__name__}")
    if not _TASK_NAME.match(data["task"]):
        raise TaskConfigError(f"{path}:{lines.get('task', 1)}: task name {data['task']!r} may not contain spaces, "
                              "commas or slashes")
    if "version" in data and (isinstance(data["version"], bool) or not isinstance(data["version"], int)):
        raise TaskConfigError(f"{path}:{lines.get('version', 1)}: 'version' must be a whole number")
    if isinstance(data.get("group"), str):
        data["group"] = [data["group"]]
    for key, kind in (("loader_args", dict), ("generation", dict), ("group", list)):
        if key in data and not isinstance(data[key], kind):
            raise TaskConfigError(f"{path}:{lines.get(key, 1)}: {key!r} must be a {kind.__name__}")
    if data.get("group") and not all(isinstance(g, str) and g for g in data["group"]):
        raise TaskConfigError(f"{path}:{lines.get('group', 1)}: 'group' must be a name or a list of names "
                              "(no nested lists)")
    if data.get("modality", "text") not in ("text", "image"):
        raise TaskConfigError(f"{path}:{lines.get('modality', 1)}: modality must be 'text' or 'image'")
    from matpcr.spec import check_generation

    try:
        data["generation"] = check_generation(data.get("generation") or {}, "generation")
        Sampling(**data["generation"])
    except (TypeError, MatpcrError) as exc:
        raise TaskConfigError(f"{path}:{lines.get('generation', 1)}: bad generation settings ({exc})") from None
    if data.get("prompt") is not None:  # the system prompt is sent as written, braces included
        template_fields(data["prompt"], f"{path}:{lines.get('prompt', 1)}: prompt")
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
            config = parse_task_file(path)
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
