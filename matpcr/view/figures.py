"""Figures of verdicts, drawn by the oracles themselves and kept in a cache folder.

The viewer knows no physics: for a claim it asks the task's oracle for ``render_case(reference, claim,
path)`` (``matpcr.protocols.Oracle``; the base class returns None, "this oracle draws nothing") and
serves the PNG it wrote. Drawing is serialised (matplotlib's pyplot is not thread-safe) and cached by
run, record, claim and the claim's content, so a re-scored run redraws what changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

from matpcr.records import Record
from matpcr.view.data import RunView, claim_from_dict

log = logging.getLogger("matpcr.view")
_DRAW = threading.Lock()


class FigureCache:
    def __init__(self, folder: str | Path | None = None):
        if folder is None:
            folder = tempfile.mkdtemp(prefix="matpcr-view-")
            weakref.finalize(self, shutil.rmtree, folder, True)
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.failures: dict[str, str] = {}

    def _name(self, run: RunView, record: Record, k: int) -> str:
        basis = json.dumps([str(run.path), record.key, k, record.claims[k], record.verdicts[k:k + 1]],
                           sort_keys=True, default=str)
        return hashlib.sha256(basis.encode()).hexdigest()[:32]

    def claim_figure(self, run: RunView, record: Record, k: int) -> tuple[Path | None, str]:
        """(PNG path, "") or (None, why not)."""
        if not 0 <= k < len(record.claims):
            return None, "no such claim"
        oracle = run.oracle_for(record.task)
        if oracle is None:
            return None, run.judges_error or f"task {record.task!r} is not checked by an oracle"
        item = run.item_of(record)
        if item is None:
            return None, "the run's items.jsonl has no reference for this item"
        name = self._name(run, record, k)
        out = self.folder / f"{name}.png"
        if out.is_file():
            return out, ""
        if name in self.failures:
            return None, self.failures[name]
        return self.draw(name, oracle, item.reference, record.claims[k], out)

    def draw(self, name: str, oracle: Any, reference: dict[str, Any], claim: dict[str, Any],
             out: Path) -> tuple[Path | None, str]:
        with _DRAW:
            if out.is_file():
                return out, ""
            tmp = out.with_name(f"tmp-{out.name}")
            try:
                drawn = oracle.render_case(reference, claim_from_dict(claim), tmp)
            except Exception as exc:  # a figure that fails must not take the page down
                why = f"the oracle could not draw this claim: {type(exc).__name__}: {exc}"
                log.warning("%s", why)
                self.failures[name] = why
                return None, why
            if drawn is None or not Path(drawn).is_file():
                why = "this oracle draws no figure"
                self.failures[name] = why
                return None, why
            Path(drawn).replace(out)
            return out, ""

    def case_figure(self, name: str, oracle: Any, reference: dict[str, Any], claim: dict[str, Any]
                    ) -> tuple[Path | None, str]:
        out = self.folder / f"case-{hashlib.sha256(name.encode()).hexdigest()[:32]}.png"
        if out.is_file():
            return out, ""
        return self.draw(name, oracle, reference, claim, out)


def to_png(path: Path, cache: FigureCache) -> Path:
    """A browser-viewable copy of an image the model saw (micrographs are often TIFF)."""
    if path.suffix.lower() in (".png", ".jpg", ".jpeg", ".gif", ".webp"):
        return path
    st = path.stat()
    out = cache.folder / f"img-{hashlib.sha256(f'{path.resolve()}|{st.st_mtime_ns}|{st.st_size}'.encode()).hexdigest()[:32]}.png"
    if not out.is_file():
        from PIL import Image

        with Image.open(path) as image:
            if image.mode.startswith("I") or image.mode == "F":  # 16-bit or float: stretch to 8 bits
                import numpy as np

                arr = np.asarray(image, dtype=float)
                lo, hi = float(arr.min()), float(arr.max())
                arr = (arr - lo) / (hi - lo) * 255.0 if hi > lo else arr * 0.0
                image = Image.fromarray(arr.astype("uint8"), mode="L")
            else:
                image = image.convert("RGB")
            image.thumbnail((1600, 1600))
            tmp = out.with_name(f"tmp-{out.name}")
            image.save(tmp, format="PNG")
            tmp.replace(out)
    return out
