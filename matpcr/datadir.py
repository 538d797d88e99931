"""The data directory: which data sets exist, where each one is, pulling them, and checking them.

Plugins declare data sets through the ``register_data_sets`` hook: ``register(name, factory, summary)``
with ``factory() -> DataSet``. A data set names its public origin (repository, commit, licence,
citation) and its files: for each, the URL it is downloaded from, where it goes inside the set's folder
and its sha256 (from the manifest the plugin ships). ``matpcr data pull`` downloads them into the data
directory; a plugin may replace the per-file download with its own ``fetch`` (e.g. a ``datasets`` loader)
or build index files locally after it (``derive``).

Where a data set is looked for:

1. ``--data-dir DIR`` or ``$MATPCR_DATA_DIR``: that folder only (a missing set is an error);
2. otherwise the user data directory (``platformdirs``; ``$XDG_DATA_HOME/matpcr/data`` on Linux,
   ``$MATPCR_DATA_HOME`` overrides), where ``matpcr data pull`` puts what it downloads;
3. otherwise the small slice of the set embedded in the package, where the plugin ships one.

Downloads are resumable (HTTP Range on a ``.part`` file), retried with exponential backoff, verified
against the sha256 before they are renamed into place, so a failed or tampered download leaves nothing at
the final name. ``--base-url URL`` (or ``$MATPCR_DATA_BASE_URL``) redirects every origin to a mirror that
serves ``URL/HOST/PATH`` for ``https://HOST/PATH``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable
from urllib.parse import quote, urlsplit

from matpcr.errors import DataError, MatpcrError, UnknownNameError
from matpcr.records import file_sha256

log = logging.getLogger("matpcr.data")

MARKER = ".matpcr-pull"  # written in a data set folder while it is being pulled, and when it is complete
MANIFEST = "MANIFEST.sha256"


# -- declarations ---------------------------------------------------------------------------------

@dataclass
class RemoteFile:
    """One file of a data set: ``path`` inside the set's folder, the ``url`` it comes from, its sha256.

    With ``member`` set, ``url`` is a zip archive and ``member`` the name of the file inside it (the
    archive itself is not verified; each extracted member is). ``sha256=None`` means the digest cannot
    be known in advance; such a file must be fetched by the data set's own ``fetch``, which checks it
    some other way."""

    path: str
    url: str
    sha256: str | None = None
    size: int | None = None
    member: str | None = None


@dataclass
class PullContext:
    """What a data set's own ``fetch`` gets: the destination folder, a cache folder, the downloader."""

    dataset: "DataSet"
    folder: Path
    cache_dir: Path
    downloader: "Downloader"
    base_url: str | None = None

    def url(self, url: str) -> str:
        return redirect(url, self.base_url)

    def download(self, remote: RemoteFile) -> Path:
        return self.downloader.fetch(self.url(remote.url), self.folder / remote.path, remote.sha256, remote.size)


@dataclass
class DataSet:
    """A data set a plugin declares. ``files`` are pulled into ``DATA_DIR/name/``."""

    name: str
    title: str = ""
    repository: str = ""  # e.g. "owner/repo" on GitHub, or a site
    commit: str = ""  # commit, tag or release the files are pinned to
    licence: str = ""
    citation: str = ""
    files: list[RemoteFile] = field(default_factory=list)
    redistributable: bool = False  # may matpcr ship or mirror it (False: only ever pulled from its origin)
    embedded: Path | None = None  # a small slice shipped in the package, laid out like the set's folder
    fetch: Callable[[PullContext], None] | None = None  # replaces the per-file download
    derive: Callable[[Path], None] | None = None  # builds local files (indexes) after the download
    via: str = "https"  # how it is pulled, for `matpcr data ls`: https, datasets, mp-api, ...
    pulled_by: str = ""  # another command that pulls it instead (then `data pull` only points to it)
    notes: str = ""

    @property
    def declared_bytes(self) -> int:
        return sum(f.size or 0 for f in self.files)

    @property
    def origin(self) -> str:
        """``owner/repo@commit`` (short), one per repository when there are several."""
        repos = [r.strip() for r in self.repository.split(",") if r.strip()]
        commits = [c.strip() for c in self.commit.split(",") if c.strip()]
        if repos and len(commits) == len(repos):
            return ", ".join(f"{r}@{c[:10]}" for r, c in zip(repos, commits))
        return self.repository or self.via


def catalog() -> dict[str, DataSet]:
    """Every data set the installed plugins declare, by name (a later plugin wins a name)."""
    from matpcr.plugins import get_manager

    factories: dict[str, tuple[Callable[[], DataSet], str]] = {}

    def register(name: str, factory: Callable[[], DataSet], summary: str = "") -> None:
        factories[name] = (factory, summary)

    manager = get_manager()
    manager.pm.hook.register_data_sets(register=register)
    out: dict[str, DataSet] = {}
    for name, (factory, _) in factories.items():
        try:
            dataset = factory()
        except Exception as exc:  # a broken declaration must not hide the others
            log.warning("data set %s: %s: %s", name, type(exc).__name__, exc)
            continue
        out[name] = dataset
    return out


# -- where things are -----------------------------------------------------------------------------

def resolve_data_dir(data_dir: str | None) -> Path | None:
    """``--data-dir`` or ``$MATPCR_DATA_DIR`` as an existing folder, or None when neither is set."""
    value = data_dir or os.environ.get("MATPCR_DATA_DIR")
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        raise MatpcrError(f"data directory {path} does not exist; pass --data-dir DIR or set MATPCR_DATA_DIR "
                          "(see `matpcr data ls`)")
    return path.resolve()


def user_data_dir() -> Path:
    """Where ``matpcr data pull`` puts data sets when no data directory is configured."""
    value = os.environ.get("MATPCR_DATA_HOME")
    if value:
        return Path(value).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("matpcr")) / "data"


def pull_dir(data_dir: str | None) -> Path:
    """The folder a pull writes to: the configured data directory (created if need be), else the user one."""
    value = data_dir or os.environ.get("MATPCR_DATA_DIR")
    path = Path(value).expanduser() if value else user_data_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


def _complete(folder: Path) -> bool:
    """A folder counts unless a pull into it is unfinished."""
    if not folder.is_dir():
        return False
    marker = folder / MARKER
    if not marker.exists():
        return True
    try:
        return json.loads(marker.read_text()).get("status") == "complete"
    except (OSError, ValueError):
        return False


def find(name: str, data_dir: Path | None = None, datasets: dict[str, DataSet] | None = None) -> tuple[Path, str] | None:
    """(folder, where) for data set ``name``: ``where`` is ``data dir``, ``user`` or ``embedded``; None if absent.

    With a configured data directory only that directory is searched."""
    if data_dir is not None:
        folder = data_dir / name
        return (folder, "data dir") if folder.is_dir() else None
    folder = user_data_dir() / name
    if _complete(folder):
        return folder, "user"
    dataset = (datasets if datasets is not None else catalog()).get(name)
    if dataset is not None and dataset.embedded is not None and Path(dataset.embedded).is_dir():
        folder = Path(dataset.embedded)
        return folder, "embedded" if folder.name == name else f"embedded ({folder.name})"
    return None


# -- downloading ----------------------------------------------------------------------------------

def redirect(url: str, base_url: str | None = None) -> str:
    """``https://HOST/PATH`` → ``BASE/HOST/PATH`` when a base URL (``--base-url``, ``$MATPCR_DATA_BASE_URL``) is set."""
    base = base_url or os.environ.get("MATPCR_DATA_BASE_URL")
    if not base:
        return url
    parts = urlsplit(url)
    return f"{base.rstrip('/')}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def quote_path(path: str) -> str:
    """A repository path as it appears in a URL (spaces, '+' and the like escaped)."""
    return quote(path, safe="/-_.~")


class _Retry(Exception):
    """A failure worth another attempt (connection dropped, 5xx, 429)."""


class Downloader:
    """Resumable, retried, verified downloads with a progress bar per file."""

    def __init__(self, attempts: int = 5, backoff: float = 0.5, max_wait: float = 20.0, timeout: float = 60.0,
                 progress: bool = True):
        import httpx

        self.attempts, self.backoff, self.max_wait = attempts, backoff, max_wait
        self.progress = progress
        self.client = httpx.Client(timeout=timeout, follow_redirects=True,
                                   headers={"User-Agent": "matpcr-data-pull"})

    def close(self) -> None:
        self.client.close()

    def fetch(self, url: str, dest: Path, sha256: str | None, size: int | None = None) -> Path:
        """Download ``url`` to ``dest``: into ``dest.part`` (resumed with a Range request after a dropped
        connection), verified against ``sha256``, then renamed. A file already at ``dest`` with the right
        digest is kept. On failure nothing is left at ``dest`` and a DataError names the URL."""
        if dest.exists() and sha256 and file_sha256(dest) == sha256:
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        self._download(url, part, size, desc=dest.name)
        if sha256:
            got = file_sha256(part)
            if got != sha256:
                part.unlink(missing_ok=True)
                raise DataError(f"checksum mismatch for {url}: expected sha256 {sha256}, got {got}; the file was "
                                "discarded (a changed or corrupted origin; nothing was written)")
        os.replace(part, dest)
        return dest

    def _download(self, url: str, part: Path, size: int | None, desc: str) -> None:
        import httpx
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        retrying = Retrying(stop=stop_after_attempt(self.attempts),
                            wait=wait_exponential(multiplier=self.backoff, max=self.max_wait),
                            retry=retry_if_exception_type((_Retry, httpx.TransportError)),
                            before_sleep=lambda state: log.info("retrying %s (attempt %d): %s", url,
                                                                state.attempt_number + 1, state.outcome.exception()),
                            reraise=True)
        try:
            for attempt in retrying:
                with attempt:
                    self._once(url, part, size, desc)
        except (_Retry, httpx.TransportError) as exc:
            raise DataError(f"download failed: {url}: {type(exc).__name__}: {exc} (after {self.attempts} attempts; "
                            "run `matpcr data pull` again to resume)") from None

    def _once(self, url: str, part: Path, size: int | None, desc: str) -> None:
        from tqdm import tqdm

        have = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        with self.client.stream("GET", url, headers=headers) as reply:
            if reply.status_code == 416 and have:  # the part file is already complete (or longer than the file)
                if size is None or have == size:
                    return
                part.unlink()
                raise _Retry(f"HTTP 416 with a {have}-byte partial file; starting again")
            if reply.status_code in (429, 500, 502, 503, 504):
                raise _Retry(f"HTTP {reply.status_code}")
            if reply.status_code >= 400:
                part.unlink(missing_ok=True)
                raise DataError(f"download failed: {url}: HTTP {reply.status_code} {reply.reason_phrase}")
            if reply.status_code == 206:
                mode = "ab"
            else:  # the server ignored the Range header: start again
                mode, have = "wb", 0
            total = int(reply.headers["content-length"]) + have if "content-length" in reply.headers else size
            with open(part, mode) as handle, tqdm(total=total, initial=have, unit="B", unit_scale=True,
                                                  desc=desc[:40], leave=False, disable=not self.progress) as bar:
                for chunk in reply.iter_bytes(1 << 16):
                    handle.write(chunk)
                    bar.update(len(chunk))
            got = part.stat().st_size
            if total is not None and got < total:
                raise _Retry(f"connection closed after {got} of {total} bytes")

    def fetch_archive(self, url: str, cache: Path) -> Path:
        """An archive (not verified itself; its members are) downloaded once into ``cache``."""
        name = hashlib.sha1(url.encode()).hexdigest()[:16] + "-" + PurePosixPath(urlsplit(url).path).name
        dest = cache / name
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            part = dest.with_name(dest.name + ".part")
            self._download(url, part, None, desc=PurePosixPath(urlsplit(url).path).name)
            os.replace(part, dest)
        return dest


def _extract(archive: Path, remote: RemoteFile, dest: Path, url: str) -> None:
    """One member of a zip archive to ``dest``, through a ``.part`` file, verified before the rename."""
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(archive) as zf, zf.open(remote.member or "") as src, open(part, "wb") as out:
            shutil.copyfileobj(src, out)
    except (KeyError, zipfile.BadZipFile) as exc:
        part.unlink(missing_ok=True)
        raise DataError(f"{url}: cannot extract {remote.member!r} ({exc})") from None
    if remote.sha256:
        got = file_sha256(part)
        if got != remote.sha256:
            part.unlink(missing_ok=True)
            raise DataError(f"checksum mismatch for {remote.member} in {url}: expected sha256 {remote.sha256}, got "
                            f"{got}; the file was discarded")
    os.replace(part, dest)


def _write_marker(folder: Path, status: str, **extra: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (MARKER + ".tmp")
    tmp.write_text(json.dumps({"status": status, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **extra}, indent=1))
    os.replace(tmp, folder / MARKER)


def _update_manifest(root: Path, name: str) -> None:
    """Rewrite ``root/MANIFEST.sha256`` with the current digests of data set ``name`` (others kept)."""
    manifest = root / MANIFEST
    prefix = f"./{name}/"
    lines = [l for l in (manifest.read_text().splitlines() if manifest.exists() else [])
             if l.strip() and not l.split("  ", 1)[-1].startswith(prefix)]
    folder = root / name
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".matpcr")
                       and not p.name.endswith(".part")):
        lines.append(f"{file_sha256(path)}  ./{path.relative_to(root).as_posix()}")
    tmp = manifest.with_name(MANIFEST + ".tmp")
    tmp.write_text("\n".join(sorted(lines, key=lambda l: l.split("  ", 1)[-1])) + "\n")
    os.replace(tmp, manifest)


def pull(names: Iterable[str], data_dir: Path, base_url: str | None = None, progress: bool = True,
         datasets: dict[str, DataSet] | None = None, downloader: Downloader | None = None) -> list[dict[str, Any]]:
    """Pull data sets into ``data_dir``; returns one summary per set. Stops at the first failure (a
    DataError naming the URL); the files verified so far stay, so running it again resumes."""
    from tqdm import tqdm

    known = datasets if datasets is not None else catalog()
    wanted = list(names)
    for name in wanted:
        if name not in known:
            raise UnknownNameError("data set", name, known)
    own = downloader is None
    downloader = downloader or Downloader(progress=progress)
    cache = data_dir / ".cache"
    out = []
    try:
        for name in wanted:
            ds = known[name]
            if ds.pulled_by:
                out.append({"name": name, "status": "skipped", "note": f"pulled with `{ds.pulled_by}`"})
                continue
            folder = data_dir / name
            t0 = time.monotonic()
            _write_marker(folder, "incomplete", origin=ds.origin)
            ctx = PullContext(ds, folder, cache, downloader, base_url)
            if ds.fetch is not None:
                ds.fetch(ctx)
            else:
                archives: dict[str, Path] = {}
                for remote in tqdm(ds.files, desc=name, unit="file", disable=not progress or len(ds.files) < 2):
                    if remote.member is None:
                        ctx.download(remote)
                        continue
                    dest = folder / remote.path
                    if dest.exists() and remote.sha256 and file_sha256(dest) == remote.sha256:
                        continue
                    url = ctx.url(remote.url)
                    if url not in archives:
                        archives[url] = downloader.fetch_archive(url, cache / "archives")
                    _extract(archives[url], remote, dest, url)
            if ds.derive is not None:
                ds.derive(folder)
            _write_marker(folder, "complete", origin=ds.origin, base_url=base_url or os.environ.get("MATPCR_DATA_BASE_URL"))
            _update_manifest(data_dir, name)
            files = [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".matpcr")]
            out.append({"name": name, "status": "pulled", "files": len(files),
                        "bytes": sum(p.stat().st_size for p in files), "seconds": round(time.monotonic() - t0, 1),
                        "folder": str(folder)})
    finally:
        if own:
            downloader.close()
    shutil.rmtree(cache / "archives", ignore_errors=True)
    return out


# -- listing and checking -------------------------------------------------------------------------

def _readers() -> dict[str, list[str]]:
    from matpcr.plugins import get_manager
    from matpcr.protocols import as_loader
    from matpcr.tasks import discover

    registry = get_manager().registry
    readers: dict[str, list[str]] = {}
    for t in discover().values():
        try:
            declared = as_loader(registry.get("tasks", t.loader).factory()).data_sets
        except MatpcrError as exc:  # a task whose loader is missing still lets the others be listed
            log.warning("task %s: %s", t.task, exc)
            declared = ()
        for name in declared:
            readers.setdefault(name, []).append(t.task)
    return readers


def _size(folder: Path) -> tuple[int, int]:
    files = [f for f in folder.rglob("*") if f.is_file() and not f.name.startswith(".matpcr")]
    return len(files), sum(f.stat().st_size for f in files)


def data_sets(data_dir: Path | None) -> list[dict[str, Any]]:
    """Every declared data set (and any other folder of the data directory): origin, licence, where it is
    present, its size and the tasks that read it."""
    readers = _readers()
    known = catalog()
    names = set(known)
    if data_dir is not None:
        names |= {p.name for p in data_dir.iterdir() if p.is_dir() and not p.name.startswith(".")}
    out = []
    for name in sorted(names):
        ds = known.get(name)
        found = find(name, data_dir, known) if not (ds and ds.pulled_by) else None
        files, size = _size(found[0]) if found else (0, 0)
        out.append({"name": name, "origin": ds.origin if ds else "-", "licence": ds.licence if ds else "-",
                    "via": ds.via if ds else "-",
                    "present": found[1] if found else ("see `" + ds.pulled_by + "`" if ds and ds.pulled_by else "no"),
                    "folder": str(found[0]) if found else None, "files": files, "bytes": size,
                    "declared_bytes": ds.declared_bytes if ds else None,
                    "redistributable": ds.redistributable if ds else None,
                    "pulled_by": ds.pulled_by if ds else "", "tasks": sorted(readers.get(name, []))})
    return out


def verify_manifest(data_dir: Path | None) -> dict[str, Any]:
    if data_dir is None:
        raise MatpcrError("no data directory: pass --data-dir DIR or set MATPCR_DATA_DIR")
    manifest = data_dir / MANIFEST
    if not manifest.exists():
        raise MatpcrError(f"{manifest} not found; nothing to verify against")
    ok, missing, changed = 0, [], []
    for line in manifest.read_text().splitlines():
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        path = data_dir / name.strip().lstrip("./")
        if not path.exists():
            missing.append(str(path))
            continue
        if file_sha256(path) != digest.strip():
            changed.append(str(path))
        else:
            ok += 1
    return {"ok": ok, "missing": missing, "changed": changed}
