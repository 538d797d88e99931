"""Where a loader finds its data set folder.

With ``--data-dir`` / ``$MATPCR_DATA_DIR`` only that folder counts (as before). Without one: the user data
directory (what ``matpcr data pull`` wrote), then the slice embedded in the package.
"""

from __future__ import annotations

from pathlib import Path

from matpcr.datadir import find, user_data_dir
from matpcr.errors import DataError
from matpcr_plugins.datafiles import require_dir


def optional_dir(data_dir: Path | None, name: str, what: str = "") -> Path | None:
    """The folder ``name`` (a data set, or ``SET/SUBFOLDER``), or None when no data directory is configured
    and neither the user data directory nor the embedded set has it."""
    if data_dir is not None:
        return require_dir(data_dir, name, what or f"data set {name}")
    dataset, _, sub = name.partition("/")
    found = find(dataset)
    if found is None:
        return None
    folder = found[0] / sub if sub else found[0]
    return folder if folder.is_dir() else None


def dataset_dir(data_dir: Path | None, name: str, what: str) -> Path:
    """Like :func:`optional_dir`, but a clear error naming how to get the data when it is nowhere."""
    if data_dir is not None:
        return require_dir(data_dir, name, what)
    folder = optional_dir(None, name, what)
    if folder is None:
        dataset = name.split("/", 1)[0]
        raise DataError(f"{what} needs the data set {dataset}: run `matpcr data pull {dataset}` (it goes to "
                        f"{user_data_dir()}), or pass --data-dir DIR / set MATPCR_DATA_DIR to a folder holding {name}/")
    return folder


def data_root(data_dir: Path | None, names: tuple[str, ...] | list[str]) -> Path | None:
    """The folder holding data sets ``names`` side by side (loaders that read several at once): the
    configured data directory; else the user data directory if it holds any of them; else the embedded
    set's folder if it holds any; else None."""
    if data_dir is not None:
        return data_dir
    roots = []
    for name in names:
        found = find(name)
        if found is not None:
            roots.append((found[1], found[0].parent))
    for where in ("user", "embedded"):
        for kind, root in roots:
            if kind.split(" ")[0] == where:
                return root
    return None
