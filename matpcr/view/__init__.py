"""``matpcr view``: a local web app over run directories, and the precision-audit workbench.

The core stays free of physics and of any particular plugin: figures come from each task's oracle
(``Oracle.render_case``); everything else is the core's records, items and results. See docs/viewer.md.
"""

from __future__ import annotations

from typing import Any


def create_app(*args: Any, **kwargs: Any) -> Any:
    """:func:`matpcr.view.app.create_app` (imported lazily: Starlette loads only when serving)."""
    from matpcr.view.app import create_app as make

    return make(*args, **kwargs)


def serve(*args: Any, **kwargs: Any) -> None:
    from matpcr.view.app import serve as run

    run(*args, **kwargs)
