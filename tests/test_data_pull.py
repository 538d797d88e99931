"""`matpcr data pull` against a loopback HTTP server that serves the staged files in their origins' layout.

The server answers ``GET /HOST/PATH`` for every URL ``https://HOST/PATH`` the shipped manifest names (with
``--base-url http://127.0.0.1:PORT``): unmodified upstream files from the staged copies, zip archives built
from the staged members, MSQA's upstream JSON from the staged first items, and the upstream inputs that only
feed a local build (not staged) from ``tests/data/upstream/``. Of DARA's 40 XRDML scans three are real copies there;
the other 37 are written from a real one of the same scan length with the staged values of that scan put in (its
counts and instrument fields), so the pull's download → convert → checksum path runs on every file, while the
conversion's faithfulness to real XRDML is checked on the three real files. It honours Range requests and can drop a
connection mid-file once, or serve altered bytes, for the fault tests.
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

UPSTREAM = Path(__file__).parent / "data" / "upstream"


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


def xrdml_like(data_dir: Path, upstream_name: str) -> bytes:
    """An XRDML document for one DARA scan that is not among the real copies: a real copy of the same scan
    length with this scan's staged counts, time stamp, counting time and instrument fields put in."""
    import csv
    import xml.etree.ElementTree as ET

    folder = data_dir / "xrd_dara_precursor_mixtures"
    with open(folder / "index.csv", newline="", encoding="utf-8") as handle:
        row = next(r for r in csv.DictReader(handle) if r["original_file"].endswith("/" + upstream_name))
    counts = [line.split()[1] for line in (folder / row["file"]).read_text().splitlines() if not line.startswith("#")]
    template = next(p for p in sorted(UPSTREAM.glob("*.xrdml")) if row["scan"] in p.name)
    root = ET.fromstring(template.read_bytes())
    ns = root.tag[1:].split("}")[0]
    ET.register_namespace("", ns)

    def set_text(path: str, value: str) -> None:
        node = root.find("/".join(f"{{{ns}}}{part}" for part in path.split("/")))
        assert node is not None, path
        node.text = value

    m = "xrdMeasurement"
    for tag, field in (("kAlpha1", "kalpha1_A"), ("kAlpha2", "kalpha2_A"), ("kBeta", "kbeta_A"),
                       ("ratioKAlpha2KAlpha1", "ratio_ka2_ka1")):
        set_text(f"{m}/usedWavelength/{tag}", row[field])
    set_text(f"{m}/incidentBeamPath/xRayTube/tension", row["tension_kV"])
    set_text(f"{m}/incidentBeamPath/xRayTube/current", row["current_mA"])
    set_text(f"{m}/scan/header/startTimeStamp", row["start_time"])
    set_text(f"{m}/scan/dataPoints/commonCountingTime", row["counting_time_s"])
    set_text(f"{m}/scan/dataPoints/counts", " ".join(counts))
    tube = root.find(f"{{{ns}}}{m}/{{{ns}}}incidentBeamPath/{{{ns}}}xRayTube")
    tube.set("name", row["tube"])
    root.find(f"{{{ns}}}{m}/{{{ns}}}scan").set("mode", row["scan_mode"])
    return ET.tostring(root, xml_declaration=True, encoding="utf-8")


_MATTERVIZ_LIKE: dict[str, Path] = {}


def _matterviz_like(name: str, path: str) -> bytes:
    """matterviz's ``.json.gz`` files, written once per set from the staged files (``test_data_matterviz``)."""
    import tempfile

    from test_data_matterviz import write_alexandria_upstream, write_mp_upstream

    if name not in _MATTERVIZ_LIKE:
        folder = Path(tempfile.mkdtemp(prefix=f"matterviz-{name}-"))
        (write_alexandria_upstream if name == "alexandria_ternary_hull" else write_mp_upstream)(folder)
        _MATTERVIZ_LIKE[name] = folder
    return (_MATTERVIZ_LIKE[name] / path).read_bytes()


def upstream_input(data_dir: Path, name: str, path: str) -> bytes:
    """An upstream file that only feeds a local build: the real copy in tests/data/upstream, else one written
    in the upstream format from the staged files (DARA: :func:`xrdml_like`; MP-40: ``chemeleon_like``; megnet and matsciml: ``megnet_like``, ``devset_lmdb_bytes``; matterviz: ``_matterviz_like``)."""
    leaf = path.rsplit("/", 1)[-1]
    if (UPSTREAM / leaf).exists():
        return (UPSTREAM / leaf).read_bytes()
    if name == "mp_multifidelity_gaps":
        from test_data_devsets import megnet_like

        return megnet_like(data_dir)
    if name == "computed_materials_devsets":
        from test_data_devsets import devset_lmdb_bytes

        return devset_lmdb_bytes(data_dir, path)
    if name in ("alexandria_ternary_hull", "mp_chemsys_hull_entries"):
        return _matterviz_like(name, path)
    if name == "mp40_chemeleon":
        from test_data_mp40 import chemeleon_like

        return chemeleon_like(data_dir, leaf.removesuffix(".csv"))
    assert name == "xrd_dara_precursor_mixtures", path
    return xrdml_like(data_dir, leaf)


def staged_origin(data_dir: Path) -> Origin:
    """Every origin URL of the shipped manifest, served from the staged data directory."""
    from matpcr.datadir import catalog
    from matpcr_plugins.datasources.catalog import MSQA_URL

    origin = Origin()
    archives: dict[str, list[tuple[str, Path]]] = {}
    for name, ds in catalog().items():
        for remote in ds.files:
            staged = data_dir / name / remote.path
            if remote.sha256 is None:  # an unstaged upstream input of a local build
                origin.add(remote.url, lambda n=name, p=remote.path: upstream_input(data_dir, n, p))
            elif remote.member is not None:
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
    # the patterns came from their origin paths (PV-Lab/autoXRD at the pinned commit); the index was built locally
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

    name = "xrd_autoanalyzer_limntiof"
    bad = catalog()[name].files[3]
    parts = urlsplit(bad.url)
    origin.corrupt.add(unquote(f"/{parts.netloc}{parts.path}"))
    target = tmp_path / "data"
    proc = run_cli("data", "pull", name, "--data-dir", str(target), "--base-url", origin.base_url, "--no-progress")
    assert proc.returncode != 0
    assert "checksum mismatch" in proc.stderr and parts.path.rsplit("/", 1)[-1] in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (target / name / bad.path).exists()
    assert not list(target.rglob("*.part"))
    marker = json.loads((target / name / ".matpcr-pull").read_text())
    assert marker["status"] == "incomplete"  # so the set does not count as present
    from matpcr.datadir import _complete

    assert not _complete(target / name)


def test_a_corrupt_upstream_input_fails_its_build_by_name(origin: Origin, tmp_path: Path) -> None:
    """An XRDML scan is pinned by its commit, not a digest: a garbled one fails the conversion, named, and
    the set stays incomplete; pulling again fetches it anew."""
    from matpcr.datadir import _complete, catalog

    name = "xrd_dara_precursor_mixtures"
    bad = next(f for f in catalog()[name].files if f.path.endswith("MnCO3_0p5000--2min.xrdml"))
    parts = urlsplit(bad.url)
    key = unquote(f"/{parts.netloc}{parts.path}")
    content = origin.routes[key]
    origin.routes[key] = lambda: content()[:4000]
    target = tmp_path / "data"
    proc = run_cli("data", "pull", name, "--data-dir", str(target), "--base-url", origin.base_url, "--no-progress")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "not valid XRDML" in proc.stderr and "In2O3_0p5002-MnCO3_0p5000--2min.xrdml" in proc.stderr, proc.stderr
    assert not _complete(target / name)
    origin.routes[key] = content
    again = run_cli("data", "pull", name, "--data-dir", str(target), "--base-url", origin.base_url, "--no-progress")
    assert again.returncode == 0, again.stderr
    assert _complete(target / name)
    assert (target / name / "index.csv").read_bytes() == (DATA_DIR / name / "index.csv").read_bytes()


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

def test_locally_built_files_match_the_manifest(data_dir: Path, tmp_path: Path) -> None:
    """Every file the manifest marks as built locally is rebuilt byte for byte from what the pull downloads."""
    from matpcr_plugins.datasources.catalog import manifest
    from matpcr_plugins.datasources.derive import builder

    built = 0
    for name, files in manifest().items():
        derived = [f for f in files if f.get("derive")]
        if not derived:
            continue
        folder = tmp_path / name  # what the pull leaves before building: the downloads only
        for f in files:
            if "url" in f:
                dest = folder / f["path"]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(upstream_input(data_dir, name, f["path"]) if f["sha256"] is None
                                 else (data_dir / name / f["path"]).read_bytes())
        origin = {f["path"]: f["url"] for f in files if "url" in f}
        for f in derived:
            build = builder(name, f["path"])
            assert build is not None, f"{name}/{f['path']}"
            assert hashlib.sha256(build(folder, origin)).hexdigest() == f["sha256"], f"{name}/{f['path']}"
            built += 1
    assert built >= 50


def test_xrdml_conversion_of_the_real_upstream_scans(data_dir: Path) -> None:
    """The three real DARA XRDML files convert to the staged .xy and index rows byte for byte."""
    from matpcr_plugins.datasources.xrdml import dara_index, staged_name, xrdml_to_xy

    folder = data_dir / "xrd_dara_precursor_mixtures"
    real = sorted(UPSTREAM.glob("*.xrdml"))
    assert len(real) == 3
    scans = []
    for path in real:
        original = f"dataset/precursor_mixture/{path.name}"
        local = staged_name(original)
        assert xrdml_to_xy(path.read_bytes(), original) == (folder / local).read_bytes(), path.name
        scans.append((local, original, path.read_bytes()))
    staged = (folder / "index.csv").read_text(encoding="utf-8").splitlines()
    built = dara_index(scans).decode().splitlines()
    assert built[0] == staged[0] and len(built) == 4
    assert set(built[1:]) <= set(staged[1:])


def test_a_broken_download_is_named_when_building(data_dir: Path, tmp_path: Path) -> None:
    from matpcr.errors import DataError
    from matpcr_plugins.datasources.xrdml import pattern_xy

    name = "NiO_0p1031-La(OH)3_0p2025-TiO2_0p7014--8min.xrdml"
    (tmp_path / "xrdml").mkdir()
    (tmp_path / "xrdml" / name).write_bytes((UPSTREAM / name).read_bytes()[:5000])  # cut off mid-document
    origin = {f"xrdml/{name}": f"https://raw.githubusercontent.com/jrneilson/dara/C/dataset/precursor_mixture/{name}"}
    with pytest.raises(DataError, match=r"xrdml/NiO_0p1031.*not valid XRDML.*pull the set again"):
        pattern_xy(tmp_path, origin, "patterns/NiO_0p1031-La_OH_3_0p2025-TiO2_0p7014--8min.xy")
    with pytest.raises(DataError, match="no XRDML file among the downloads"):
        pattern_xy(tmp_path, origin, "patterns/other.xy")


def test_manifest_agrees_with_the_staged_manifest(data_dir: Path) -> None:
    from matpcr_plugins.datasources.catalog import manifest

    staged = {}
    for line in (data_dir / "MANIFEST.sha256").read_text().splitlines():
        digest, _, rel = line.partition("  ")
        staged[rel.strip().removeprefix("./")] = digest
    shipped = {f"{name}/{f['path']}": f["sha256"] for name, files in manifest().items() for f in files
               if f["sha256"] is not None}  # (the unstaged upstream inputs of local builds carry none)
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
            assert (target / name / f["path"]).is_file(), f"{name}/{f['path']}"
            if f["sha256"] is not None:
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
