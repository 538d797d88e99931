"""matpcr: physical-consistency evaluation of materials-science reasoning."""

from __future__ import annotations

from typing import Any

from matpcr.checking import check
from matpcr.hookspecs import hookimpl
from matpcr.plugins import register, unregister

__version__ = "0.2.0"
__all__ = ["hookimpl", "register", "unregister", "evaluate", "check", "__version__"]


def evaluate(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """Run an evaluation from Python; see :func:`matpcr.engine.evaluate`."""
    from matpcr.engine import evaluate as _evaluate

    return _evaluate(*args, **kwargs)
