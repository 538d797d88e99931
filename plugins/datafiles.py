"""Locating staged data sets and rendering plots of them; shared by the task loaders."""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import numpy as np

from matpcr.errors import DataError


def require_dir(data_dir: Path | None, sub: str, what: str) -> Path:
    """The data set folder ``sub`` under the data directory, or a clear error saying how to get it."""
    if data_dir is None:
        raise DataError(f"{what} needs a data directory holding {sub}/: pass --data-dir DIR or set MATPCR_DATA_DIR")
    path = data_dir / sub
    if not path.is_dir():
        raise DataError(f"{what}: {path} is missing; the data directory must hold {sub}/ (see `matpcr data ls`)")
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a data set's index; a missing, non-UTF-8 or malformed file is a DataError naming it."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except FileNotFoundError:
        raise DataError(f"{path}: not found; the data set is incomplete (see `matpcr data ls`)") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    except csv.Error as exc:
        raise DataError(f"{path}: malformed CSV ({exc})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from None


def confine(folder: Path, name: Any, index: Path | str, row: int | None = None) -> Path:
    """``folder / name`` for a file named in a data set's index, refusing anything that would leave
    ``folder``: absolute paths, drive letters, ``..`` parts, NUL bytes, empty names."""
    where = f"{index}" + (f", row {row}" if row is not None else "")
    if not isinstance(name, str) or not name.strip() or "\0" in name:
        raise DataError(f"{where}: empty or invalid file name {name!r}")
    posix = PurePosixPath(name.replace("\\", "/"))
    if posix.is_absolute() or PureWindowsPath(name).drive or ".." in posix.parts:
        raise DataError(f"{where}: file name {name!r} points outside the data set folder {folder}; index files may "
                        "only name files inside it (no absolute paths, no '..')")
    return folder.joinpath(*posix.parts)


def read_xy(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Two numeric columns (x, y); comment lines (#, ##) and extra columns are skipped.

    Raises DataError naming the file for empty, non-numeric or non-monotonic data.
    """
    path = Path(path)
    xs: list[float] = []
    ys: list[float] = []
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                parts = line.replace(",", " ").split()
                if len(parts) < 2:
                    continue
                try:
                    x, y = float(parts[0]), float(parts[1])
                except ValueError:
                    continue
                xs.append(x)
                ys.append(y)
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    if len(xs) < 5:
        raise DataError(f"{path}: no usable data (found {len(xs)} numeric rows; need two columns x y)")
    x, y = np.asarray(xs), np.asarray(ys)
    if not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
        raise DataError(f"{path}: contains non-finite values")
    steps = np.diff(x)
    if not (np.all(steps > 0) or np.all(steps < 0)):
        raise DataError(f"{path}: x values are not monotonic (a spectrum or pattern must be sorted by its axis)")
    if steps[0] < 0:
        x, y = x[::-1], y[::-1]
    return x, y


def render_dir() -> Path:
    import platformdirs

    path = Path(os.environ.get("MATPCR_RENDER_DIR", Path(platformdirs.user_cache_dir("matpcr")) / "renders"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def plot_xy(x: np.ndarray, y: np.ndarray, *, xlabel: str, ylabel: str, title: str, key: str,
            sticks: bool = False, size: tuple[float, float] = (8, 4), dpi: int = 110) -> Path:
    """Render a labelled line (or stick) plot to PNG once; the file name hashes data and settings."""
    digest = hashlib.sha256()
    for part in (np.asarray(x, float).tobytes(), np.asarray(y, float).tobytes(), xlabel, ylabel, title, str(sticks),
                 str(size), str(dpi), "v1"):
        digest.update(part if isinstance(part, bytes) else part.encode())
    out = render_dir() / f"{key}-{digest.hexdigest()[:16]}.png"
    if out.exists():
        return out
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size, dpi=dpi)
    if sticks:
        ax.vlines(x, 0, y, color="k", linewidth=1.2)
        ax.set_ylim(bottom=0)
    else:
        ax.plot(x, y, color="k", linewidth=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.minorticks_on()
    ax.grid(alpha=0.3, which="major")
    fig.tight_layout()
    tmp = out.with_suffix(f".{os.getpid()}.png")
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, out)
    return out


def downsample_table(x: np.ndarray, y: np.ndarray, bin_width: float, floor_fraction: float,
                     decimals: int = 2) -> list[tuple[float, float]]:
    """Max-pool into bins of ``bin_width``: each row keeps the x of the bin's highest sample (so peak
    positions stay exact) and rows below ``floor_fraction`` of the maximum are dropped (baseline)."""
    edges = np.floor((x - x[0]) / bin_width).astype(int)
    rows = []
    top = float(y.max()) if y.size else 0.0
    for b in np.unique(edges):
        idx = np.flatnonzero(edges == b)
        j = idx[np.argmax(y[idx])]
        if y[j] >= floor_fraction * top:
            rows.append((round(float(x[j]), decimals), round(float(y[j]), 1)))
    return rows


def plot_case(x: Any, y: Any, marks: list[tuple[float, float]], *, xlabel: str, ylabel: str, title: str,
              out: Path, sticks: bool = False, peaks: Any = None) -> Path:
    """An audit figure: the reference data with each claimed position marked (red) inside its tolerance band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.5), dpi=100)
    if sticks:
        ax.vlines(x, 0, y, color="k", linewidth=1)
    else:
        ax.plot(x, y, color="k", linewidth=0.8)
    if peaks is not None and len(peaks):
        import numpy as np

        idx = np.searchsorted(np.asarray(x), np.asarray(peaks)).clip(0, len(x) - 1)
        ax.plot(np.asarray(x)[idx], np.asarray(y)[idx], "o", color="#1c7ed6", markersize=3, label="reference features")
    for position, tol in marks:
        ax.axvspan(position - tol, position + tol, color="#ffa8a8", alpha=0.5)
        ax.axvline(position, color="#c92a2a", linestyle="--", linewidth=1, label="claim ± tolerance")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        unique = dict(zip(labels, handles))
        ax.legend(unique.values(), unique.keys(), fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
