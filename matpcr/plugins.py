"""Plugin loading and the registry of what plugins provide.

There is one way in: the setuptools entry-point group ``matpcr``. matpcr's own plugins are declared
there exactly like a third party's (``[project.entry-points.matpcr]`` in pyproject.toml); the
human-readable catalog of the built-ins is ``registry.toml`` at the repository root (shipped in the
wheel as ``matpcr_plugins/registry.toml``; a test checks the two agree).

Loading order, and the rule for a name registered twice — **the plugin loaded later wins**, with a
warning that names both:
1. matpcr's own entry points (the built-ins);
2. other distributions' entry points, sorted by distribution and entry-point name (skipped when
   ``MATPCR_DISABLE_PLUGIN_AUTOLOAD=1``);
3. modules named in ``MATPCR_PLUGINS`` (comma-separated), then ``-p MODULE`` on the command line — both
   before the CLI registers plugin commands, so they can add commands;
4. objects registered at run time with :func:`register`.
A plugin that fails to import is recorded with its error and a hint; the others keep working.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import pluggy

from matpcr import hookspecs
from matpcr.errors import UnknownNameError

log = logging.getLogger("matpcr.plugins")

KINDS = ("backends", "tasks", "oracles", "scorers", "checkers", "interventions", "report_sections")
_HOOK_FOR_KIND = {kind: f"register_{kind}" for kind in KINDS}
DISTRIBUTION = "matpcr"


@dataclass
class Entry:
    """One registered name: its lazy factory and the plugin that registered it."""

    kind: str
    name: str
    factory: Callable[..., Any]
    plugin: str
    summary: str = ""


@dataclass
class PluginInfo:
    name: str
    version: str
    source: str  # builtin | entrypoint | env | cli | runtime
    module: str = ""
    summary: str = ""


@dataclass
class PluginFailure:
    name: str
    source: str
    error: str
    hint: str = ""


@dataclass
class Conflict:
    """A name registered by two plugins; ``winner`` (the later one) is used."""

    kind: str
    name: str
    loser: str
    winner: str

    def message(self) -> str:
        return (f"{self.kind[:-1]} {self.name!r} is registered by both plugin {self.loser!r} and plugin "
                f"{self.winner!r}; using {self.winner!r} (the later-loaded plugin wins)")


class _Registrar:
    """The ``register`` callback handed to registration hooks."""

    def __init__(self, registry: "Registry", kind: str, plugin: str):
        self._registry, self._kind, self._plugin = registry, kind, plugin

    def __call__(self, name: str, factory: Callable[..., Any], summary: str = "") -> None:
        known = self._registry.entries[self._kind].get(name)
        if known is not None and known.plugin != self._plugin:
            self._registry.conflicts.append(Conflict(self._kind, name, known.plugin, self._plugin))
        self._registry.entries[self._kind][name] = Entry(self._kind, name, factory, self._plugin, summary)

    def include_path(self, path: str | os.PathLike[str]) -> None:
        self._registry.include_paths.append(str(path))

    def alias(self, name: str, backend: str, model: str, summary: str = "") -> None:
        """A short model name: ``--model NAME`` or ``--model BACKEND:NAME`` means ``BACKEND:MODEL``."""
        known = self._registry.aliases.get(name)
        if known is not None and known.plugin != self._plugin:
            self._registry.conflicts.append(Conflict("aliases", name, known.plugin, self._plugin))
        self._registry.aliases[name] = ModelAlias(name, backend, model, self._plugin, summary)


@dataclass
class ModelAlias:
    name: str
    backend: str
    model: str
    plugin: str
    summary: str = ""


@dataclass
class Registry:
    entries: dict[str, dict[str, Entry]] = field(default_factory=lambda: {k: {} for k in KINDS})
    include_paths: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    aliases: dict[str, "ModelAlias"] = field(default_factory=dict)

    def resolve_model(self, spec: str) -> tuple[Entry, str, str | None, "ModelAlias | None"]:
        """``--model`` → (backend entry, model, revision, alias used). ``NAME`` alone is a backend with a
        built-in model or a model alias (on the alias's backend); ``BACKEND:ALIAS`` runs the alias's model
        on that backend (``vllm:Qwen2.5-VL-7B``)."""
        from matpcr.spec import parse_model_spec

        parsed = parse_model_spec(spec)
        if parsed.backend not in self.entries["backends"] and not parsed.model and parsed.backend in self.aliases:
            alias = self.aliases[parsed.backend]
            return self.get("backends", alias.backend), alias.model, parsed.revision, alias
        if parsed.model in self.aliases:  # BACKEND:ALIAS: the alias's model on the backend asked for (hf, vllm)
            alias = self.aliases[parsed.model]
            return self.get("backends", parsed.backend), alias.model, parsed.revision, alias
        if parsed.backend not in self.entries["backends"] and not parsed.model:
            raise UnknownNameError("backend or model alias", parsed.backend, [*self.entries["backends"], *self.aliases])
        return self.get("backends", parsed.backend), parsed.model, parsed.revision, None

    def get(self, kind: str, name: str) -> Entry:
        try:
            return self.entries[kind][name]
        except KeyError:
            raise UnknownNameError(kind.rstrip("s").replace("_", " "), name, self.entries[kind]) from None

    def names(self, kind: str) -> list[str]:
        return sorted(self.entries[kind])


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """matpcr's own entry points first, then everyone else's in a stable order."""
    eps = list(importlib.metadata.entry_points(group="matpcr"))

    def dist_name(ep: importlib.metadata.EntryPoint) -> str:
        dist = getattr(ep, "dist", None)
        return (dist.metadata["Name"] or "") if dist is not None else ""

    seen: set[tuple[str, str]] = set()
    unique = []
    for ep in sorted(eps, key=lambda ep: (dist_name(ep).lower() != DISTRIBUTION, dist_name(ep).lower(), ep.name)):
        if (dist_name(ep), ep.name) not in seen:  # an editable install can list a distribution twice
            seen.add((dist_name(ep), ep.name))
            unique.append(ep)
    return unique


class PluginManager:
    """Wraps pluggy's manager and remembers where each plugin came from and what failed."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager("matpcr")
        self.pm.add_hookspecs(hookspecs)
        self.info: dict[str, PluginInfo] = {}
        self.failures: list[PluginFailure] = []
        self._registry: Registry | None = None

    # -- loading ---------------------------------------------------------------------------
    def _add(self, obj: Any, info: PluginInfo) -> None:
        known = self.pm.get_plugin(info.name)
        if known is not None:
            if known is obj:
                return
            log.warning("plugin %r (%s) replaces the plugin of the same name (%s)", info.name, info.source,
                        self.info[info.name].source)
            self.unregister(info.name)
        self.pm.register(obj, name=info.name)
        self.info[info.name] = info
        self._registry = None

    def load_entrypoints(self, third_party: bool = True) -> None:
        for ep in _entry_points():
            dist = getattr(ep, "dist", None)
            builtin = dist is not None and (dist.metadata["Name"] or "").lower() == DISTRIBUTION
            if not builtin and not third_party:
                continue
            source = "builtin" if builtin else "entrypoint"
            try:
                obj = ep.load()
            except Exception as exc:  # a broken plugin must not take the others down
                self.failures.append(PluginFailure(ep.name, source, _describe(exc), _hint(exc)))
                continue
            summary = _module_summary(obj) if builtin else ((dist.metadata.get("Summary") or "") if dist else "")
            self._add(obj, PluginInfo(ep.name, dist.version if dist is not None else "", source, ep.value, summary))

    def load_module(self, module_name: str, source: str = "cli") -> None:
        if module_name in self.info and self.info[module_name].module == module_name:
            return
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            self.failures.append(PluginFailure(module_name, source, _describe(exc), _hint(exc)))
            return
        self._add(module, PluginInfo(module_name, getattr(module, "__version__", ""), source, module_name,
                                     _module_summary(module)))

    def register(self, obj: Any, name: str | None = None) -> str:
        name = name or getattr(obj, "__name__", None) or f"runtime-{id(obj)}"
        self._add(obj, PluginInfo(name, getattr(obj, "__version__", ""), "runtime", type(obj).__name__))
        return name

    def unregister(self, name: str) -> None:
        self.pm.unregister(name=name)
        self.info.pop(name, None)
        self._registry = None

    # -- what plugins provide --------------------------------------------------------------
    @property
    def registry(self) -> Registry:
        if self._registry is None:
            registry = Registry()
            order = list(self.info)  # loading order; a later registration of a name wins
            for kind, hook_name in _HOOK_FOR_KIND.items():
                impls = getattr(self.pm.hook, hook_name).get_hookimpls()
                for impl in sorted(impls, key=lambda i: order.index(i.plugin_name) if i.plugin_name in order else 0):
                    try:
                        impl.function(register=_Registrar(registry, kind, impl.plugin_name))
                    except Exception as exc:
                        self.failures.append(PluginFailure(impl.plugin_name, "hook " + hook_name, _describe(exc),
                                                           "fix or uninstall the plugin; the other plugins still work"))
            for conflict in registry.conflicts:
                log.warning(conflict.message())
            self._registry = registry
        return self._registry

    def register_commands(self, cli: Any) -> None:
        self.pm.hook.register_commands(cli=cli)

    def hooks_of(self, name: str) -> list[str]:
        plugin = self.pm.get_plugin(name)
        callers = self.pm.get_hookcallers(plugin) or []
        return sorted(c.name for c in callers)

    def listing(self) -> list[dict[str, Any]]:
        rows = []
        for name, info in self.info.items():
            rows.append({"name": name, "version": info.version, "source": info.source,
                         "module": info.module, "hooks": self.hooks_of(name), "summary": info.summary})
        return rows


def _module_summary(obj: Any) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def _describe(exc: BaseException) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _hint(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return f"install the missing package ({exc.name}) or uninstall the plugin"
    return "fix or uninstall the plugin; the other plugins still work"


def autoload_disabled() -> bool:
    return os.environ.get("MATPCR_DISABLE_PLUGIN_AUTOLOAD", "").strip().lower() not in ("", "0", "false", "no")


_manager: PluginManager | None = None


def get_manager(extra_modules: list[str] | tuple[str, ...] = ()) -> PluginManager:
    """The process-wide plugin manager, loading entry points and ``MATPCR_PLUGINS`` on first use."""
    global _manager
    if _manager is None:
        manager = PluginManager()
        manager.load_entrypoints(third_party=not autoload_disabled())
        for name in os.environ.get("MATPCR_PLUGINS", "").split(","):
            if name.strip():
                manager.load_module(name.strip(), source="env")
        _manager = manager
    for module_name in extra_modules:
        _manager.load_module(module_name)
    return _manager


def reset_manager() -> None:
    """Forget the manager (tests, or after installing a plugin in-process)."""
    global _manager
    _manager = None


def register(obj: Any, name: str | None = None) -> str:
    """Register a plugin object (a module or an instance with ``@hookimpl`` methods) at run time."""
    return get_manager().register(obj, name)


def unregister(name: str) -> None:
    get_manager().unregister(name)
