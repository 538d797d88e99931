"""Every hook a matpcr plugin can implement.

Registration hooks receive a ``register`` callback (the pattern of simonw/llm). Each call registers a
name and a *lazy factory*: a zero-argument-free callable that does the heavy imports only when the
thing is used, so ``matpcr ls`` and ``matpcr plugins`` stay instant.
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
    """


@hookspec
def register_interventions(register: Callable[..., None]) -> None:
    """Register interventions that run rounds after the first answer: ``register(name, factory, summary="")``.

    ``factory(**args) -> Intervention``.
    """


@hookspec
def register_commands(cli: Any) -> None:
    """Add subcommands to the ``matpcr`` click group ``cli``."""
