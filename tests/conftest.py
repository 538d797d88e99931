"""Shared fixtures: the staged real data, an isolated response cache, the default model."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("MATPCR_DATA_DIR") or REPO.parent / "shared" / "data")


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA_DIR / "SOURCES.md").exists():
        pytest.fail(f"the staged data are missing at {DATA_DIR}; set MATPCR_DATA_DIR to the shared/data folder")
    return DATA_DIR


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts from a freshly loaded plugin manager."""
    from matpcr.plugins import reset_manager

    reset_manager()
    yield
    reset_manager()


@pytest.fixture
def cache_path(tmp_path: Path) -> str:
    return str(tmp_path / "responses.sqlite")


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    """The embedded default model, converted once to an HF folder (as `--model smollm2` does)."""
    from matpcr_plugins.backend_hf import converted_model_dir, smollm2_gguf

    return converted_model_dir(smollm2_gguf())


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: int = 900) -> "subprocess.CompletedProcess[str]":
    import subprocess

    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "matpcr.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=REPO)


def replay_file(path: Path, data_dir: Path, tasks: list[str], limit: int, seeds: int = 1,
                answers: dict[str, str] | None = None) -> Path:
    """A replay file with a chain for exactly the records a run of ``tasks`` will plan (the planner is
    deterministic), so tests drive the real engine, data and oracles without loading a model."""
    import json

    from matpcr.planning import plan_items, record_key
    from matpcr.plugins import get_manager
    from matpcr.tasks import resolve

    default = {"xrd": "The strongest reflections are at 2θ = 28.4°, 47.3° and 56.1°.\nAnswer: 28.4, 47.3, 56.1",
               "raman": "The main band lies near 520 cm⁻¹ with a weaker one at 1085 cm⁻¹.",
               "sem": "The particles are about 40 nm across.\nAnswer: 40 nm",
               "msqa": "YES"}
    answers = {**default, **(answers or {})}
    plan = plan_items(resolve(tasks), get_manager().registry, data_dir, seeds, limit)
    lines = []
    for task, seed, item in plan.entries:
        chain = answers.get(task.task) or answers[task.task.split("_")[0]]
        lines.append(json.dumps({"key": record_key(task.task, item.id, seed, 0, 0), "chain": chain}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
