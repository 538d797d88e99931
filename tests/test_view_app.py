"""`matpcr view` without a browser: pages, filters, figures, rounds, live runs and the app's safeguards,
over a real replayed run (chosen chains, real items and oracles) through Starlette's test client."""

from __future__ import annotations

import ast
import json
import re
import shutil
import tomllib
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_cli
from test_view import designed_chain

TASKS = ["xrd_text", "raman_text", "sem_text", "stability_text", "sem_image"]


@pytest.fixture(scope="module")
def cgsv_run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """Two items per task; round 0 a near miss (one with a script payload), round 1 (CGSV) a consistent answer."""
    from matpcr.engine import sample_items
    from matpcr.planning import record_key
    from matpcr.plugins import get_manager
    from matpcr.tasks import resolve

    tmp = tmp_path_factory.mktemp("viewapp")
    rows = []
    for task in resolve(TASKS):
        loader = get_manager().registry.get("tasks", task.loader).factory()
        for n, item in enumerate(sample_items(loader.load(task, data_dir), task.task, 0, 2)):
            item = loader.complete(item)
            rows.append({"key": record_key(task.task, item.id, 0, 0, 0), "chain": designed_chain(task.constraint, item.reference, n)})
            rows.append({"key": record_key(task.task, item.id, 0, 1, 0), "chain": designed_chain(task.constraint, item.reference, 2)})
    chains = tmp / "chains.jsonl"
    chains.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_cli("run", "--tasks", ",".join(TASKS), "--limit", "2", "--model", f"replay:{chains}", "--data-dir",
                   str(data_dir), "--intervention", "cgsv", "--intervention-args", "rounds=1,constraints=all",
                   "--cache", "none", "--output-dir", str(tmp / "runs"), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1])


def _client(*runs: Path, **kwargs: Any) -> Any:
    from starlette.testclient import TestClient

    from matpcr.view.app import create_app

    return TestClient(create_app(list(runs), **kwargs), base_url="http://127.0.0.1")


def _records(run: Path) -> list[Any]:
    from matpcr.rundir import RunDir

    return RunDir(run).records()


def _q(key: str) -> str:
    return urllib.parse.quote(key, safe="")


def test_pages_render_escaped_with_a_strict_content_policy(cgsv_run: Path) -> None:
    client = _client(cgsv_run)
    home = client.get("/")
    assert home.status_code == 200
    csp = home.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and home.headers["x-frame-options"] == "DENY"
    for task in TASKS:
        assert f">{task}<" in home.text
    assert "pcr" in home.text and "[0.000, 0.000]" in home.text  # first answers all violated, with intervals
    assert "cgsv" in home.text  # the intervention's own summary
    payloads = 0
    for record in _records(cgsv_run):
        page = client.get(f"/runs/0/sample?key={_q(record.key)}")
        assert page.status_code == 200, record.key
        if "<script>" in record.chain:
            payloads += 1
            assert "&lt;script&gt;window.__matpcr_pwned" in page.text and "onerror=&#34;" in page.text
        assert "<script>window" not in page.text and "<img src=\"x\"" not in page.text and "<svg" not in page.text
    assert payloads == len(TASKS)
    table = client.get("/runs/0/samples")
    assert "&lt;script&gt;" in table.text and "<script>window" not in table.text


def test_sample_table_filters_and_sorts_by_distance(cgsv_run: Path) -> None:
    client = _client(cgsv_run)
    keys = lambda html: re.findall(r'sample\?key=([^"&]+)', html)  # noqa: E731
    everything = keys(client.get("/runs/0/samples").text)
    assert len(everything) == len(_records(cgsv_run)) == 2 * 2 * len(TASKS)
    first = keys(client.get("/runs/0/samples?round=0&status=violated").text)
    assert len(first) == 2 * len(TASKS) and all("%2Fr0%2F" in k for k in first)
    assert all("xrd_text" in urllib.parse.unquote(k) for k in keys(client.get("/runs/0/samples?task=xrd_text").text))
    assert all("raman_text" in urllib.parse.unquote(k) for k in keys(client.get("/runs/0/samples?kind=raman_shift").text))
    by_key = {r.key: r for r in _records(cgsv_run)}
    from matpcr.view.data import record_distance

    for order in ("distance", "-distance"):
        listed = [urllib.parse.unquote(k) for k in keys(client.get(f"/runs/0/samples?sort={order}").text)]
        d = [record_distance(by_key[k]) for k in listed]
        known = [x for x in d if x is not None]
        assert len(known) >= 8 and known == sorted(known, reverse=order.startswith("-"))
        assert all(x is None for x in d[len(known):])  # records without a distance last


def test_every_family_has_its_figure_and_the_image_shown(cgsv_run: Path) -> None:
    from PIL import Image
    import io

    client = _client(cgsv_run)
    drawn = set()
    for record in _records(cgsv_run):
        if record.round != 0:
            continue
        fig = client.get(f"/runs/0/figure?key={_q(record.key)}&claim=0")
        assert fig.status_code == 200 and fig.headers["content-type"] == "image/png", (record.key, fig.text[:300])
        with Image.open(io.BytesIO(fig.content)) as image:
            assert image.width >= 500 and image.height >= 200
        drawn.add(record.constraint)
        assert client.get(f"/runs/0/figure?key={_q(record.key)}&claim=9").status_code == 404
    assert drawn == {"diffraction", "spectra", "microscopy", "stability"}
    image_record = next(r for r in _records(cgsv_run) if r.task == "sem_image")
    page = client.get(f"/runs/0/sample?key={_q(image_record.key)}")
    src = re.search(r'src="(/runs/0/image\?[^"]+)"', page.text).group(1).replace("&amp;", "&")
    shown = client.get(src)
    assert shown.status_code == 200
    with Image.open(io.BytesIO(shown.content)) as image:  # a TIFF micrograph, served as PNG
        assert image.format == "PNG" and image.width >= 500
    assert client.get(f"/runs/0/image?key={_q(image_record.key)}&m=0&p=7").status_code == 404


def test_rounds_of_an_intervention_one_under_another_with_the_feedback(cgsv_run: Path) -> None:
    client = _client(cgsv_run)
    record = next(r for r in _records(cgsv_run) if r.task == "raman_text" and r.round == 0 and "<script>" not in r.chain)
    page = client.get(f"/runs/0/sample?key={_q(record.key)}").text
    rounds = page[page.index("Rounds of this item"):]
    assert rounds.count('<article class="round') == 2
    assert "feedback given before this round" in rounds and "no genuine peak" in rounds
    assert rounds.index("round 0") < rounds.index("round 1")


def test_a_run_being_written_shows_new_records_on_refresh(cgsv_run: Path, tmp_path: Path) -> None:
    live = tmp_path / "live"
    shutil.copytree(cgsv_run, live)
    (live / "results.json").unlink()
    lines = (live / "samples.jsonl").read_text().splitlines(keepends=True)
    (live / "samples.jsonl").write_text("".join(lines[:5]) + lines[5][:40])  # a torn line, mid-write
    client = _client(live)
    assert client.get("/runs/0/samples").text.count("sample?key=") == 5
    home = client.get("/").text
    assert "live figures" in home and "in progress" in home
    (live / "samples.jsonl").write_text("".join(lines))
    assert client.get("/runs/0/samples").text.count("sample?key=") == len(lines)


def test_errors_are_pages_and_foreign_hosts_and_origins_are_refused(cgsv_run: Path, tmp_path: Path) -> None:
    client = _client(cgsv_run)
    assert client.get("/runs/3/samples").status_code == 404
    missing = client.get("/runs/0/sample?key=nope")
    assert missing.status_code == 404 and "Nothing here" in missing.text
    assert client.get("/audit").status_code == 404  # no sheet given
    assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    proc = run_cli("view", str(tmp_path))
    assert proc.returncode == 2 and "not a run directory" in proc.stderr
    assert run_cli("view").returncode == 2
    # the workbench refuses labels posted from another origin
    out = tmp_path / "audit"
    assert run_cli("audit", "sample", str(cgsv_run), "--per-family", "2", "--output-dir", str(out)).returncode == 0
    bench = _client(cgsv_run, audit_sheet=out / "audit.csv", reviewer="carol")
    case = bench.get("/audit", follow_redirects=False).headers["location"].rsplit("/", 1)[1]
    refused = bench.post(f"/audit/case/{case}", content="judgement=real",
                         headers={"origin": "http://evil.example", "content-type": "application/x-www-form-urlencoded"})
    assert refused.status_code == 403 and not (out / "labels-carol.csv").exists()
    bad = bench.post(f"/audit/case/{case}", content="judgement=maybe",
                     headers={"content-type": "application/x-www-form-urlencoded"})
    assert bad.status_code == 400 and not (out / "labels-carol.csv").exists()
    ok = bench.post(f"/audit/case/{case}", content="judgement=real&notes=clear+miss",
                    headers={"content-type": "application/x-www-form-urlencoded"}, follow_redirects=False)
    assert ok.status_code == 303 and f"saved={case}" in ok.headers["location"]
    assert "clear miss" in (out / "labels-carol.csv").read_text()


def test_audit_workbench_pages(cgsv_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit"
    assert run_cli("audit", "sample", str(cgsv_run), "--per-family", "3", "--output-dir", str(out)).returncode == 0
    shutil.rmtree(out / "cases")  # without the stored drawings the oracle draws each case again
    client = _client(audit_sheet=out, reviewer="dana")
    home = client.get("/", follow_redirects=False)
    assert home.status_code == 303 and home.headers["location"] == "/audit"
    case = client.get("/audit")
    assert case.status_code == 200 and "real violation" in case.text and 'id="label-form"' in case.text
    case_id = re.search(r'/audit/figure/([^"]+)"', case.text).group(1)
    assert client.get(f"/audit/figure/{case_id}").headers["content-type"] == "image/png"
    summary = client.get("/audit/summary").text
    assert "labels-dana.csv" in summary and "microscopy" in summary
    assert client.get("/audit/case/no-such-case").status_code == 404


# -- the core stays free of physics and plugins ----------------------------------------------------------

def test_viewer_core_imports_no_plugin_and_probes_no_plugin_object() -> None:
    names = {p["name"] for p in tomllib.loads((REPO / "registry.toml").read_text())["plugin"]}
    for path in sorted((REPO / "matpcr" / "view").rglob("*.py")):
        tree = ast.parse(path.read_text())
        imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imports |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not [n for n in imports if n.split(".")[0] == "matpcr_plugins"], path.name
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id in ("hasattr", "getattr")]
        assert not calls, f"{path.name}: {calls[0].func.id}() on line {calls[0].lineno}"
        strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        named = sorted((names - {"hf", "openai", "replay"}) & strings)
        assert not named, f"{path.name} names plugin(s) {named}"
    for path in sorted((REPO / "matpcr" / "view").rglob("*.html")):
        text = path.read_text()
        found = sorted(n for n in names - {"hf", "openai", "replay"} if re.search(rf"\b{n}\b", text))
        assert not found, f"{path.name} names plugin(s) {found}"
