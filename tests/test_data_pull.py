"""`matpcr data pull` against a loopback HTTP server that serves the staged files in their origins' layout.

The server answers ``GET /HOST/PATH`` for every URL ``https://HOST/PATH`` the shipped manifest names (with
``--base-url http://127.0.0.1:PORT``): unmodified upstream files from the staged copies, zip archives built
from the staged members, MSQA's upstream JSON from the staged first items. It honours Range requests and
can drop a connection mid-file once, or serve altered bytes, for the fault tests.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

import pytest

from conftest import DATA_DIR, run_cli


class Origin:
    """Routes ``/HOST/PATH`` to bytes; records every request (path, Range header)."""

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[], bytes]] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.drop_once: set[str] = set()
        self.corrupt: set[str] = set()
        self.no_range = False
        self.server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add(self, url: str, content: Callable[[], bytes]) -> str:
        parts = urlsplit(url)
        key = unquote(f"/{parts.netloc}{parts.path}")
        self.routes[key] = content
        return key

    def start(self) -> "Origin":
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                key = unquote(urlsplit(self.path).path)
                origin.requests.append((key, self.headers.get("Range")))
                if key not in origin.routes:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = origin.routes[key]()
                if key in origin.corrupt:
                    body = body[:-1] + bytes([body[-1] ^ 0x01])
                start = 0
                rng = self.headers.get("Range")
                if rng and not origin.no_range:
                    start = int(rng.split("=")[1].split("-")[0])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                if key in origin.drop_once:  # half the file, then the connection drops
                    origin.drop_once.discard(key)
                    self.wfile.write(body[start:start + (len(body) - start) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self.wfile.write(body[start:])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _zip(members: list[tuple[str, Path]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in members:
            zf.write(path, name)
    return buffer.getvalue()


def staged_origin(data_dir: Path) -> Origin:
    """Every origin URL of the shipped manifest, served from the staged data directory."""
    from matpcr.datadir import catalog
    from matpcr_plugins.datasources.catalog import MSQA_URL

    origin = Origin()
    archives: dict[str, list[tuple[str, Path]]] = {}
    for name, ds in catalog().items():
        for remote in ds.files:
            staged = data_dir / name / remote.path
            if remote.member is not None:
                archives.setdefault(remote.url, []).append((remote.member, staged))
            else:
                origin.add(remote.url, lambda p=staged: p.read_bytes())
    cache: dict[str, bytes] = {}
    for url, members in archives.items():
        origin.add(url, lambda url=url, members=members: cache.setdefault(url, _zip(members)))
    # MSQA's upstream JSON is not staged whole: its first six items are (see SOURCES.md)
    origin.add(MSQA_URL, lambda: (data_dir / "msqa" / "MSQA_Dataset.first6.json").read_bytes())
    return origin.start()


@pytest.fixture
def origin(data_dir: Path) -> Any:
    server = staged_origin(data_dir)
    yield server
    server.stop()


@pytest.fixture
def msqa_staged(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the staged copy of MSQA's upstream file is: its first six items, 25,900 characters."""
    from matpcr_plugins.datasources import catalog

    monkeypatch.setitem(catalog.MSQA_EXPECTED, "items", 6)
    monkeypatch.setitem(catalog.MSQA_EXPECTED, "chars", 25900)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- one set through the real CLI -------------------------------------------------------------------

def test_pull_one_set_through_the_cli(origin: Origin, data_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "data"
    proc = run_cli("data", "pull", "xrd_autoxrd_thinfilm", "--data-dir", str(target), "--base-url", origin.base_url,
                   "--no-progress")
    assert proc.returncode == 0, proc.stderr
    staged = sorted(p.relative_to(data_dir) for p in (data_dir / "xrd_autoxrd_thinfilm").rglob("*") if p.is_file())
    pulled = sorted(p.relative_to(target) for p in (target / "xrd_autoxrd_thinfilm").rglob("*")
                    if p.is_file() and not p.name.startswith(".matpcr"))
    assert pulled == staged and len(pulled) == 89
    assert all(_sha(target / p) == _sha(data_dir / p) for p in pulled)
    assert not list(target.rglob("*.part"))
    # the patterns came from their origin paths (PV-Lab/autoXRD at the pinned commit), the index from the mirror
    paths = {p for p, _ in origin.requests}
    assert "/raw.githubusercontent.com/PV-Lab/autoXRD/2fc398059ff16a5cab67b0afcbc69f68748586b8/Datasets/Experimental/" \
           "Fm-3m/CsAgBiBr-LIT_2-Theta_Omega.xy" in paths
    marker = json.loads((target / "xrd_autoxrd_thinfilm" / ".matpcr-pull").read_text())
    assert marker["status"] == "complete"
    check = run_cli("data", "check", "--data-dir", str(target))
    assert check.returncode == 0 and "89 files match, 0 missing, 0 changed" in check.stdout, check.stdout
    # pulling again downloads nothing (every file is there with the right digest)
    before = len(origin.requests)
    proc = run_cli("data", "pull", "xrd_autoxrd_thinfilm", "--data-dir", str(target), "--base-url", origin.base_url,
                   "--no-progress")
    assert proc.returncode == 0 and len(origin.requests) == before, proc.stderr


def test_pull_without_names_lists_them_and_unknown_name_is_named(tmp_path: Path) -> None:
    proc = run_cli("data", "pull")
    assert proc.returncode != 0 and "--all" in proc.stderr and "raman_rruff" in proc.stderr
    proc = run_cli("data", "pull", "no_such_set", "--data-dir", str(tmp_path / "data"))
    assert proc.returncode != 0 and "no_such_set" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "data").exists()


# -- the downloader: resume, checksum, errors -------------------------------------------------------

def test_resume_after_a_dropped_connection(origin: Origin, data_dir: Path, tmp_path: Path) -> None:
    from matpcr.datadir import Downloader

    staged = data_dir / "sem_bam_tio2" / "images" / "1908248.tif"
    url = "https://example.org/sem/1908248.tif"
    key = origin.add(url, staged.read_bytes)
    origin.drop_once.add(key)
    dest = tmp_path / "out" / "1908248.tif"
    downloader = Downloader(backoff=0.01, progress=False)
    try:
        downloader.fetch(f"{origin.base_url}/example.org/sem/1908248.tif", dest, _sha(staged), staged.stat().st_size)
    finally:
        downloader.close()
    assert dest.read_bytes() == staged.read_bytes() and not dest.with_name(dest.name + ".part").exists()
    mine = [rng for path, rng in origin.requests if path == key]
    assert len(mine) == 2 and mine[0] is None, mine
    resumed_at = int(mine[1].removeprefix("bytes=").rstrip("-"))  # what had arrived before the drop
    assert 0 < resumed_at <= staged.stat().st_size // 2, mine


def test_restart_when_the_server_ignores_range(origin: Origin, data_dir: Path, tmp_path: Path) -> None:
    from matpcr.datadir import Downloader

    staged = data_dir / "raman_rruff" / "index.csv"
    key = origin.add("https://example.org/index.csv", staged.read_bytes)
    origin.drop_once.add(key)
    origin.no_range = True
    dest = tmp_path / "index.csv"
    downloader = Downloader(backoff=0.01, progress=False)
    try:
        downloader.fetch(f"{origin.base_url}/example.org/index.csv", dest, _sha(staged))
    finally:
        downloader.close()
    assert dest.read_bytes() == staged.read_bytes()


def test_bad_checksum_is_a_clear_error_and_leaves_nothing(origin: Origin, data_dir: Path, tmp_path: Path) -> None:
    from matpcr.datadir import catalog

    ds = catalog()["xrd_dara_precursor_mixtures"]
    bad = ds.files[3]
    parts = urlsplit(bad.url)
    origin.corrupt.add(unquote(f"/{parts.netloc}{parts.path}"))
    target = tmp_path / "data"
    proc = run_cli("data", "pull", "xrd_dara_precursor_mixtures", "--data-dir", str(target), "--base-url",
                   origin.base_url, "--no-progress")
    assert proc.returncode != 0
    assert "checksum mismatch" in proc.stderr and parts.path.rsplit("/", 1)[-1] in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (target / "xrd_dara_precursor_mixtures" / bad.path).exists()
    assert not list(target.rglob("*.part"))
    marker = json.loads((target / "xrd_dara_precursor_mixtures" / ".matpcr-pull").read_text())
    assert marker["status"] == "incomplete"  # so the set does not count as present
    from matpcr.datadir import _complete

    assert not _complete(target / "xrd_dara_precursor_mixtures")


def test_missing_file_names_the_url(origin: Origin, tmp_path: Path) -> None:
    from matpcr.datadir import Downloader
    from matpcr.errors import DataError

    downloader = Downloader(backoff=0.01, progress=False)
    url = f"{origin.base_url}/example.org/nothing-here.csv"
    with pytest.raises(DataError, match="nothing-here.csv: HTTP 404"):
        downloader.fetch(url, tmp_path / "x.csv", "0" * 64)
    downloader.close()
    assert not list(tmp_path.iterdir())


def test_unreachable_origin_is_retried_then_named(tmp_path: Path) -> None:
    import socket

    from matpcr.datadir import Downloader
    from matpcr.errors import DataError

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there
    downloader = Downloader(attempts=3, backoff=0.01, progress=False)
    with pytest.raises(DataError, match=rf"127.0.0.1:{port}/x.csv.*after 3 attempts"):
        downloader.fetch(f"http://127.0.0.1:{port}/x.csv", tmp_path / "x.csv", None)
    downloader.close()


def test_redirect_maps_origins_to_the_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    from matpcr.datadir import redirect

    url = "https://raw.githubusercontent.com/o/r/abc/a%20b.txt"
    assert redirect(url) == url
    assert redirect(url, "http://127.0.0.1:9/") == "http://127.0.0.1:9/raw.githubusercontent.com/o/r/abc/a%20b.txt"
    monkeypatch.setenv("MATPCR_DATA_BASE_URL", "http://mirror.example")
    assert redirect(url).startswith("http://mirror.example/raw.githubusercontent.com/")


# -- MSQA through `datasets` ------------------------------------------------------------------------

def test_msqa_datasets_path_reads_the_staged_json(origin: Origin, data_dir: Path, tmp_path: Path,
                                                  msqa_staged: None) -> None:
    """The pull downloads MSQA's upstream file (here: the staged first items at its origin path), checks
    it, reads it with the `datasets` JSON loader and writes the loader's layout."""
    from matpcr.datadir import pull
    from matpcr.tasks import resolve
    from matpcr_plugins.datasources.catalog import load_msqa_json
    from matpcr_plugins.msqa.data import MSQALoader

    target = tmp_path / "data"
    result = pull(["msqa"], target, base_url=origin.base_url, progress=False)
    assert result[0]["status"] == "pulled"
    written = json.loads((target / "msqa" / "MSQA_Dataset.json").read_text())
    staged = json.loads((data_dir / "msqa" / "MSQA_Dataset.first6.json").read_text())
    assert written == staged  # same items, same fields, upstream order
    assert (target / "msqa" / "MSQA_Dataset.json").read_text() == \
        (data_dir / "msqa" / "MSQA_Dataset.first6.json").read_text().rstrip("\n")  # upstream formatting kept
    items = MSQALoader().load(resolve(["msqa_binary"])[0], target)
    assert len(items) == 6
    # the same loader reads a local file: the staged subset (items 6-135, some fields left out upstream)
    rows = load_msqa_json(data_dir / "msqa" / "MSQA_Dataset.first6.json", tmp_path / "cache")
    assert rows == staged


def test_msqa_wrong_file_is_refused(origin: Origin, data_dir: Path, tmp_path: Path) -> None:
    from matpcr.datadir import pull
    from matpcr.errors import DataError
    from matpcr_plugins.datasources.catalog import MSQA_URL

    origin.add(MSQA_URL, lambda: (data_dir / "msqa" / "MSQA_Dataset.subset.json").read_bytes())
    with pytest.raises(DataError, match="checksum mismatch for .*MSQA_Dataset.json"):
        pull(["msqa"], tmp_path, base_url=origin.base_url, progress=False)
    assert not (tmp_path / "msqa" / "MSQA_Dataset.json").exists()
    # the real expectation: the staged first items are not the whole upstream file
    origin.add(MSQA_URL, lambda: (data_dir / "msqa" / "MSQA_Dataset.first6.json").read_bytes())
    with pytest.raises(DataError, match="holds 6 items, expected 1,757"):
        pull(["msqa"], tmp_path, base_url=origin.base_url, progress=False)


# -- locally rebuilt files --------------------------------------------------------------------------

def test_locally_built_files_match_the_manifest(data_dir: Path) -> None:
    from matpcr_plugins.datasources.catalog import manifest
    from matpcr_plugins.datasources.derive import BUILDERS

    derived = {(name, f["path"]): f["sha256"] for name, files in manifest().items() for f in files if f.get("derive")}
    assert set(derived) == set(BUILDERS)
    for (name, path), sha in derived.items():
        assert hashlib.sha256(BUILDERS[(name, path)](data_dir / name)).hexdigest() == sha, path


def test_manifest_agrees_with_the_staged_manifest(data_dir: Path) -> None:
    from matpcr_plugins.datasources.catalog import manifest

    staged = {}
    for line in (data_dir / "MANIFEST.sha256").read_text().splitlines():
        digest, _, rel = line.partition("  ")
        staged[rel.strip().removeprefix("./")] = digest
    shipped = {f"{name}/{f['path']}": f["sha256"] for name, files in manifest().items() for f in files}
    assert shipped.items() <= staged.items()
    left_out = set(staged) - set(shipped)  # MSQA comes whole from its origin; RRUFF's refinement index is not rebuilt
    assert {p.split("/")[0] for p in left_out} == {"msqa", "xrd_rruff_powder_refinement"}, left_out
    assert left_out - {p for p in left_out if p.startswith("msqa/")} == {"xrd_rruff_powder_refinement/index.csv"}


# -- every set, then every task's loader ------------------------------------------------------------

def test_pull_all_lays_out_what_every_loader_reads(origin: Origin, data_dir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, msqa_staged: None) -> None:
    from click.testing import CliRunner

    from matpcr.cli import cli
    from matpcr.plugins import get_manager
    from matpcr.protocols import as_loader
    from matpcr.tasks import discover

    target = tmp_path / "data"
    monkeypatch.setenv("MATPCR_REFSTORE", str(tmp_path / "refs.sqlite"))
    result = CliRunner().invoke(cli, ["data", "pull", "--all", "--data-dir", str(target), "--base-url", origin.base_url,
                                      "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "materials_project" in result.output and "matpcr refs pull mp" in result.output
    # every file the manifest names, byte for byte as staged
    from matpcr_plugins.datasources.catalog import manifest

    for name, files in manifest().items():
        for f in files:
            assert _sha(target / name / f["path"]) == f["sha256"], f"{name}/{f['path']}"
    assert not list(target.rglob("*.part")) and not (target / ".cache" / "archives").exists()
    registry = get_manager().registry
    for task in discover().values():
        loader = as_loader(registry.get("tasks", task.loader).factory())
        items = loader.load(task, target)
        assert items, task.task
    check = CliRunner().invoke(cli, ["data", "check", "--data-dir", str(target)])
    assert check.exit_code == 0 and " 0 missing, 0 changed" in check.output, check.output


# -- where data sets are looked for -----------------------------------------------------------------

def test_lookup_order_user_then_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    import shutil

    from matpcr.datadir import MARKER, find
    from matpcr_plugins.datasources.locate import dataset_dir

    monkeypatch.setenv("MATPCR_DATA_HOME", str(tmp_path / "user"))
    folder, where = find("raman_rruff")
    assert where == "embedded" and folder.name == "raman_rruff"
    assert find("sem_bam_tio2")[1] == "embedded (sem_synthetic)"
    assert find("msqa") is None
    with pytest.raises(Exception, match=r"matpcr data pull msqa"):
        dataset_dir(None, "msqa", "task msqa_binary")
    shutil.copytree(data_dir / "raman_rruff", tmp_path / "user" / "raman_rruff")
    assert find("raman_rruff") == (tmp_path / "user" / "raman_rruff", "user")
    (tmp_path / "user" / "raman_rruff" / MARKER).write_text('{"status": "incomplete"}')
    assert find("raman_rruff")[1] == "embedded"  # an unfinished pull does not count
    # a configured data directory is the only place looked at
    assert find("raman_rruff", data_dir) == (data_dir / "raman_rruff", "data dir")
    assert find("raman_rruff", tmp_path) is None


def test_data_ls_shows_origin_licence_presence_and_tasks(tmp_path: Path) -> None:
    proc = run_cli("data", "ls", env={"MATPCR_DATA_HOME": str(tmp_path), "MATPCR_DATA_DIR": ""})
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()[2:] if line.strip()}
    assert "charlesll/RaMin@11c5314f70" in lines["raman_rruff"] and "embedded" in lines["raman_rruff"]
    assert "raman_text" in lines["raman_rruff"]
    assert "CC BY-NC-ND 4.0" in lines["sem_bam_tio2"] and "embedded (sem_synthetic)" in lines["sem_bam_tio2"]
    assert " no " in lines["msqa"] and "msqa_binary" in lines["msqa"]
    assert "matpcr refs pull mp" in lines["materials_project"]
    header = proc.stdout.splitlines()[0].split()
    assert header[:2] == ["data", "set"] and "origin" in header and "licence" in header and "present" in header


def test_hook_register_data_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin declares a data set with an embedded slice; `data ls` lists it and lookup finds it."""
    import matpcr
    from matpcr.datadir import DataSet, RemoteFile, catalog, data_sets, find

    (tmp_path / "slice").mkdir()
    (tmp_path / "slice" / "a.csv").write_text("x\n1\n")
    monkeypatch.setenv("MATPCR_DATA_HOME", str(tmp_path / "user"))

    class LatticeData:
        @matpcr.hookimpl
        def register_data_sets(self, register: Any) -> None:
            register("lattice_refs", lambda: DataSet(
                "lattice_refs", title="toy", repository="someone/lattice", commit="0123456789abcdef",
                licence="CC0-1.0", files=[RemoteFile("a.csv", "https://example.org/a.csv", "0" * 64, 4)],
                redistributable=True, embedded=tmp_path / "slice"), "toy lattice references")

    matpcr.register(LatticeData(), name="lattice-data")
    assert catalog()["lattice_refs"].origin == "someone/lattice@0123456789"
    assert find("lattice_refs") == (tmp_path / "slice", "embedded (slice)")
    row = next(d for d in data_sets(None) if d["name"] == "lattice_refs")
    assert row["licence"] == "CC0-1.0" and row["present"] == "embedded (slice)" and row["files"] == 1
