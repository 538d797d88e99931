"""Every hook a matpcr plugin can implement.

Registration hooks receive a ``register`` callback (the pattern of simonw/llm). Each call registers a
name and a *lazy factory*: a callable that does the heavy imports only when the thing is used, so
``matpcr ls`` and ``matpcr plugins`` stay instant. When two plugins register the same name, the one
loaded later wins and a warning names both (loading order: see ``matpcr.plugins``).
"""

from __future__ import annotations

from typing import Any, Callable

import pluggy

hookspec = pluggy.HookspecMarker("matpcr")
hookimpl = pluggy.HookimplMarker("matpcr")


@hookspec
def register_backends(register: Callable[..., None]) -> None:
    """Register model backends: ``register(name, factory, summary="")``.

    ``factory(model: str, revision: str | None, **model_args) -> Backend`` is called once per run.
    The spec ``NAME:MODEL[@REVISION]`` selects it by ``NAME``.
    """


@hookspec
def register_tasks(register: Callable[..., None]) -> None:
    """Register task loaders and task configs: ``register(name, factory, summary="")``.

    ``factory() -> TaskLoader``; a task YAML names its loader with ``loader: NAME``. A plugin may also
    register a folder of task YAML files with ``register.include_path(path)``.
    """


@hookspec
def register_oracles(register: Callable[..., None]) -> None:
    """Register physical oracles: ``register(name, factory, summary="")``.

    ``factory(**oracle_args) -> Oracle``; ``oracle_args`` come from ``--oracle-args NAME.key=value``.
    A task names its oracle with ``oracle: NAME``; its records make the Physical-Consistency Rate.
    """


@hookspec
def register_scorers(register: Callable[..., None]) -> None:
    """Register task scorers (accuracy-style grading, optionally model-judged): ``register(name, factory,
    summary="")``.

    ``factory(**args) -> Scorer``; ``args`` come from ``--oracle-args NAME.key=value`` like an oracle's.
    A task names its scorer with ``scorer: NAME``.
    """


@hookspec
def register_checkers(register: Callable[..., None]) -> None:
    """Register reference-free checkers: ``register(name, factory, summary="")``.

    ``factory(arg: str) -> Checker``; ``--checker NAME:ARG`` selects it (ARG is e.g. a model path).
    """


@hookspec
def register_interventions(register: Callable[..., None]) -> None:
    """Register interventions that run rounds after the first answer: ``register(name, factory, summary="")``.

    ``factory(**args) -> Intervention``.
    """


@hookspec
def register_report_sections(register: Callable[..., None]) -> None:
    """Register tables for ``matpcr report``: ``register(name, factory, summary="")``.

    ``factory(runs: list[dict], labels: list[str]) -> list[ReportSection]`` gets every run's results.json
    and its label, and returns the sections it has something to say about (often none).
    """


@hookspec
def register_commands(cli: Any) -> None:
    """Add subcommands to the ``matpcr`` click group ``cli``."""


@hookspec
def register_data_sets(register: Callable[..., None]) -> None:
    """Declare data sets: ``register(name, factory, summary="")``.

    ``factory() -> matpcr.datadir.DataSet``: the set's public origin (repository, commit, licence,
    citation), its files (URL, path inside the set's folder, sha256) and, optionally, an embedded slice
    shipped with the plugin, its own ``fetch`` and a local ``derive`` step. ``matpcr data pull NAME``
    downloads it; ``matpcr data ls`` lists it; loaders find it with ``matpcr.datadir.find``.
    """
