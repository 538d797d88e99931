"""Plugin loading and the registry of what plugins provide.

Order: built-ins named in ``matpcr_plugins/registry.toml``; setuptools entry points in the group
``matpcr`` (skipped when ``MATPCR_DISABLE_PLUGIN_AUTOLOAD=1``); modules named with ``-p``; objects
registered at run time with :func:`register`. A plugin that fails to import is recorded with its
error and the others keep working.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.resources
import os
import tomllib
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import pluggy

from matpcr import hookspecs
from matpcr.errors import UnknownNameError

KINDS = ("backends", "tasks", "oracles", "interventions")
_HOOK_FOR_KIND = {kind: f"register_{kind}" for kind in KINDS}


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
    source: str  # builtin | entrypoint | cli | runtime
    module: str = ""
    summary: str = ""


@dataclass
class PluginFailure:
    name: str
    source: str
    error: str
    hint: str = ""


class _Registrar:
    """The ``register`` callback handed to registration hooks."""

    def __init__(self, registry: "Registry", kind: str, plugin: str):
        self._registry, self._kind, self._plugin = registry, kind, plugin

    def __call__(self, name: str, factory: Callable[..., Any], summary: str = "") -> None:
        self._registry.entries[self._kind][name] = Entry(self._kind, name, factory, self._plugin, summary)

    def include_path(self, path: str | os.PathLike[str]) -> None:
        self._registry.include_paths.append(str(path))


@dataclass
class Registry:
    entries: dict[str, dict[str, Entry]] = field(default_factory=lambda: {k: {} for k in KINDS})
    include_paths: list[str] = field(default_factory=list)

    def get(self, kind: str, name: str) -> Entry:
        try:
            return self.entries[kind][name]
        except KeyError:
            raise UnknownNameError(kind.rstrip("s"), name, self.entries[kind]) from None

    def names(self, kind: str) -> list[str]:
        return sorted(self.entries[kind])


def builtin_catalog() -> list[dict[str, Any]]:
    """The built-in plugins from ``registry.toml``, read without importing any of them."""
    text = importlib.resources.files("matpcr_plugins").joinpath("registry.toml").read_text()
    return list(tomllib.loads(text).get("plugin", []))


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
        if self.pm.get_plugin(info.name) is not None:
            return
        self.pm.register(obj, name=info.name)
        self.info[info.name] = info
        self._registry = None

    def load_builtins(self) -> None:
        from matpcr import __version__

        for spec in builtin_catalog():
            try:
                module = importlib.import_module(spec["module"])
            except Exception as exc:  # a broken plugin must not take the others down
                self.failures.append(PluginFailure(spec["name"], "builtin", _describe(exc), _hint(exc)))
                continue
            self._add(module, PluginInfo(spec["name"], __version__, "builtin", spec["module"], spec.get("summary", "")))

    def load_entrypoints(self) -> None:
        if os.environ.get("MATPCR_DISABLE_PLUGIN_AUTOLOAD", "").strip() not in ("", "0", "false"):
            return
        for ep in importlib.metadata.entry_points(group="matpcr"):
            dist = getattr(ep, "dist", None)
            version = dist.version if dist is not None else ""
            try:
                obj = ep.load()
            except Exception as exc:
                self.failures.append(PluginFailure(ep.name, "entrypoint", _describe(exc), _hint(exc)))
                continue
            summary = (dist.metadata.get("Summary") or "") if dist is not None else ""
            self._add(obj, PluginInfo(ep.name, version, "entrypoint", ep.value, summary))

    def load_module(self, module_name: str, source: str = "cli") -> None:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            self.failures.append(PluginFailure(module_name, source, _describe(exc), _hint(exc)))
            return
        self._add(module, PluginInfo(module_name, getattr(module, "__version__", ""), source, module_name))

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
            for kind, hook_name in _HOOK_FOR_KIND.items():
                hook = getattr(self.pm.hook, hook_name)
                # oldest first, so a later plugin can override a built-in name on purpose
                for impl in reversed(hook.get_hookimpls()):
                    try:
                        impl.function(register=_Registrar(registry, kind, impl.plugin_name))
                    except Exception as exc:
                        self.failures.append(PluginFailure(impl.plugin_name, "hook " + hook_name, _describe(exc)))
            self._registry = registry
        return self._registry

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


def _describe(exc: BaseException) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _hint(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return f"install the missing package ({exc.name}) or uninstall the plugin"
    return "fix or uninstall the plugin; the other plugins still work"


_manager: PluginManager | None = None


def get_manager(extra_modules: list[str] | tuple[str, ...] = ()) -> PluginManager:
    """The process-wide plugin manager, loading built-ins and entry points on first use."""
    global _manager
    if _manager is None:
        manager = PluginManager()
        manager.load_builtins()
        manager.load_entrypoints()
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
