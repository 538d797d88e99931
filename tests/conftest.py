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
