"""`matpcr view` and the audit workbench, driven in a real browser (Playwright with Debian's chromium).

The runs are real: the embedded model answers a few items of each family (diffraction, spectra,
microscopy, DFT stability), and a replayed run of the same items holds chosen chains (a near miss per
family, so every family has oracle-fired cases, and a chain carrying `<script>` / `<img onerror>`).

`MATPCR_WRITE_SCREENSHOTS=1` rewrites docs/screenshots/*.png from these pages.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from conftest import REPO, run_cli

TASKS = "xrd_text,raman_text,sem_text,stability_text"
FAMILIES = {"xrd_text": "diffraction", "raman_text": "spectra", "sem_text": "microscopy", "stability_text": "stability"}
XSS = ('<script>window.__matpcr_pwned = 1;</script><img src="x" onerror="window.__matpcr_pwned = 2; alert(1)">'
       '<svg onload="window.__matpcr_pwned = 3"></svg> ')
SCREENSHOTS = REPO / "docs" / "screenshots"


# -- chains a reviewer would want to see -------------------------------------------------------------

def _near_miss(peaks: np.ndarray, offset: float, tol: float, lo: float, hi: float) -> float:
    """A position ``offset`` from a genuine reference feature and more than ``tol`` from every one: a
    violation that lies within the paper's tolerance-analysis window."""
    for p in peaks:
        for cand in (p + offset, p - offset):
            if lo <= cand <= hi and np.min(np.abs(peaks - cand)) > tol:
                return float(cand)
    return float(hi + 3 * tol)


def designed_chain(constraint: str, reference: dict[str, Any], n: int) -> str:
    """Item ``n`` of a family: 0 a near-miss violation, 1 the same with a script-injection payload in front,
    2 a consistent answer (a revision, for intervention rounds)."""
    if constraint == "diffraction":
        from matpcr_plugins.xrd.oracle import XRDOracle

        ref = XRDOracle().prepare(reference)
        x = float(ref.peaks[0]) if n == 2 else _near_miss(ref.peaks, 0.8, 0.5, ref.window[0], ref.window[1])
        chain = f"Using Bragg's law with Cu Kα, the strongest reflection is at 2θ = {x:.2f}°.\nAnswer: 2θ = {x:.2f}°"
    elif constraint == "spectra":
        from matpcr_plugins.raman.oracle import RamanOracle

        ref = RamanOracle().prepare(reference)
        x = float(ref.peaks[0]) if n == 2 else _near_miss(ref.peaks, 7.5, 5.0, ref.lo, ref.hi)
        chain = f"The strongest band is the symmetric stretch near {x:.1f} cm-1.\nAnswer: {x:.1f} cm-1"
    elif constraint == "microscopy":
        size = float(reference["fov_nm"]) * (0.01 if n == 2 else 4)
        chain = f"Comparing with the scale bar, a typical particle is {size:.0f} nm across.\nAnswer: {size:.0f} nm"
    else:
        near = float(reference.get("energy_above_hull") or 0.0) <= 0.05
        word = ("stable" if near else "unstable") if n == 2 else ("unstable" if near else "stable")
        chain = f"Considering the competing phases, the compound is {word}.\nAnswer: {word}"
    return (XSS + chain) if n == 1 else chain


# -- fixtures -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config, data_dir: Path) -> dict[str, Path]:
    """A real run of the embedded model (two items per family) and a replayed run of the same items.
    The model's answers go through the engine's response cache, kept in pytest's cache folder, so a
    second session does not generate them again (a fresh checkout, like CI, runs the model)."""
    tmp = tmp_path_factory.mktemp("viewruns")
    cache = pytestconfig.cache.mkdir("matpcr_view_responses") / "responses.sqlite" if pytestconfig.cache else tmp / "r.sqlite"
    common = ["--tasks", TASKS, "--limit", "2", "--data-dir", str(data_dir), "--no-progress"]
    proc = run_cli("run", *common, "--generation", "max_new_tokens=64", "--cache", str(cache),
                   "--output-dir", str(tmp / "model"), timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    model = Path(proc.stdout.strip().splitlines()[-1])
    from matpcr.rundir import RunDir

    run = RunDir(model)
    items = run.items()
    rows, seen = [], {}
    for record in sorted(run.records(), key=lambda r: r.key):
        n = seen.setdefault(record.task, 0)
        seen[record.task] += 1
        item = items[f"{record.task}/{record.item_id}"]
        rows.append({"key": record.key, "chain": designed_chain(item.constraint, item.reference, n)})
    chains = tmp / "chains.jsonl"
    chains.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_cli("run", *common, "--model", f"replay:{chains}", "--cache", "none", "--output-dir", str(tmp / "replay"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    replay = Path(proc.stdout.strip().splitlines()[-1])
    return {"model": model, "replay": replay}


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install 'matpcr[test]'); the browser tests need it")
    chromium = _chromium()
    if chromium is None:
        pytest.skip("Debian chromium is not installed (apt-get install chromium); the browser tests need it")
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium, headless=True,
                                      args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield instance
        instance.close()


class Server:
    """`matpcr view ...` / `matpcr audit serve ...` in a subprocess on a free port."""

    def __init__(self, *args: str):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "matpcr.cli", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if "http://127.0.0.1:" not in line:
            self.proc.kill()
            raise AssertionError(f"no address printed: {line!r} {self.proc.stderr.read()[-3000:]}")  # type: ignore[union-attr]
        url = line[line.index("http://"):].split()[0]
        self.base = url[:url.index("/", len("http://"))]
        import httpx

        for _ in range(200):
            try:
                if httpx.get(self.base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            self.kill()
            raise AssertionError("the server never answered")

    def kill(self) -> None:
        """SIGKILL: nothing gets a chance to flush; saved labels must already be on disk."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    yield pg
    context.close()


def _figure_drawn(pg: Any, selector: str = "img.figure") -> bool:
    pg.wait_for_function(f"() => [...document.querySelectorAll('{selector}')].every(i => i.complete)", timeout=60_000)
    return bool(pg.evaluate(f"() => {{ const i = document.querySelector('{selector}'); "
                            "return !!i && i.naturalWidth > 200 && i.naturalHeight > 100; }"))


def _screenshot(pg: Any, name: str) -> None:
    if os.environ.get("MATPCR_WRITE_SCREENSHOTS") != "1":
        return
    from PIL import Image

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    raw = SCREENSHOTS / f"{name}.raw.png"
    pg.screenshot(path=str(raw), full_page=False)
    with Image.open(raw) as image:  # a small palette PNG keeps the repository light
        image.convert("RGB").quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(SCREENSHOTS / f"{name}.png", optimize=True)
    raw.unlink()


# -- the viewer -----------------------------------------------------------------------------------------

def test_runs_side_by_side_and_a_drawn_sample_of_each_family(page: Any, runs: dict[str, Path]) -> None:
    server = Server("view", str(runs["model"]), str(runs["replay"]))
    try:
        page.goto(server.base + "/")
        heads = page.locator("th.run-head").all_inner_texts()
        assert len(heads) == 2 and runs["model"].name in heads[0] and "replay:" in heads[1]
        tasks = page.locator("th.task").all_inner_texts()
        assert set(FAMILIES) <= set(tasks)
        assert page.locator("td.cell dt", has_text="pcr").count() >= 4  # PCR with its interval per task
        # the replayed run fires the oracle on every family: its sample table, violated only, by distance
        page.goto(f"{server.base}/runs/1/samples?status=violated&sort=distance")
        rows = page.locator("table#samples tbody tr")
        assert rows.count() == 8
        distances = [d for d in page.locator("td.num").all_inner_texts() if d != "–"]
        assert distances == sorted(distances, key=float) and len(distances) >= 4  # xrd and raman near misses
        for task, family in FAMILIES.items():
            page.goto(f"{server.base}/runs/1/samples?task={task}")
            page.locator("table#samples tbody tr", has_not_text="<script>").locator("a.key").first.click()
            page.wait_for_load_state()
            assert page.locator("h1").inner_text().startswith(task)
            assert page.locator("pre.chain mark.claim.st-violated").count() >= 1  # highlighted where read
            assert "violated" in page.locator("article.verdict").first.inner_text()
            assert page.locator("p.reason").first.inner_text().strip()
            assert _figure_drawn(page), f"{family}: the figure was not drawn"
            _screenshot(page, f"sample-{family}")
        # a record of the real model run opens too (whatever the model said)
        page.goto(f"{server.base}/runs/0/samples")
        page.locator("a.key").first.click()
        page.wait_for_load_state()
        assert page.locator("pre.chain").count() == 1 and page.locator("section.prompt-section pre.prompt").count() >= 1
        if page.locator("img.figure").count():
            assert _figure_drawn(page)
        page.goto(server.base + "/")
        _screenshot(page, "runs")
    finally:
        server.kill()


def test_untrusted_chain_is_shown_as_text_and_never_runs(page: Any, runs: dict[str, Path]) -> None:
    from matpcr.rundir import RunDir

    keys = [r.key for r in RunDir(runs["replay"]).records() if "<script>" in r.chain]
    assert len(keys) == len(FAMILIES)
    server = Server("view", str(runs["replay"]))
    try:
        import urllib.parse

        for key in keys:
            page.goto(f"{server.base}/runs/0/sample?key={urllib.parse.quote(key, safe='')}")
            page.wait_for_load_state("networkidle")
            assert page.evaluate("() => window.__matpcr_pwned") is None
            assert page.dialogs == []
            text = page.locator("section.chain-section pre.chain").inner_text()
            assert "<script>window.__matpcr_pwned = 1;</script>" in text and "onerror=" in text
            assert page.locator("main script, main img[onerror], main svg").count() == 0
        # the sample table shows the snippet as text too
        page.goto(f"{server.base}/runs/0/samples")
        page.wait_for_load_state("networkidle")
        assert page.evaluate("() => window.__matpcr_pwned") is None and page.dialogs == []
        assert "<script>" in page.locator("table#samples").inner_text()
    finally:
        server.kill()


# -- the audit workbench --------------------------------------------------------------------------------

def _case_of(url: str) -> str:
    import urllib.parse

    return urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[1])


def _labels(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return {r["case_id"]: r for r in csv.DictReader(handle)}


def test_audit_workbench_labels_survive_a_killed_server(page: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "audit"
    proc = run_cli("audit", "sample", str(runs["replay"]), str(runs["model"]), "--per-family", "10",
                   "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    sheet = out / "audit.csv"
    with open(sheet, newline="", encoding="utf-8") as handle:
        cases = list(csv.DictReader(handle))
    assert {c["constraint"] for c in cases} >= set(FAMILIES.values())
    server = Server("audit", "serve", str(sheet), "--reviewer", "alice")
    labelled: dict[str, tuple[str, str]] = {}
    try:
        page.goto(server.base + "/audit")
        page.wait_for_url("**/audit/case/*")
        assert _figure_drawn(page, "#case-figure")
        _screenshot(page, "audit")
        # case 1: the key "1" (real violation)
        first = _case_of(page.url)
        page.keyboard.press("1")
        page.wait_for_url(lambda u: _case_of(u) != first)
        assert page.locator("#saved").inner_text() == f"saved {first}"
        labelled[first] = ("real", "")
        # case 2: a note, then the button
        second = _case_of(page.url)
        page.fill("#notes", "within a degree of a real reflection")
        page.click("button[value='false positive']")
        page.wait_for_url(lambda u: _case_of(u) != second)
        labelled[second] = ("false positive", "within a degree of a real reflection")
        # case 3: the key "u" (unsure)
        third = _case_of(page.url)
        page.keyboard.press("u")
        page.wait_for_url(lambda u: _case_of(u) != third)
        labelled[third] = ("unsure", "")
    finally:
        server.kill()  # no clean shutdown: whatever is saved was saved at once
    saved = _labels(out / "labels-alice.csv")
    assert {k: (v["judgement"], v["notes"]) for k, v in saved.items()} == labelled
    assert not list(out.glob(".labels-*.tmp"))
    server = Server("view", "--audit", str(sheet), "--reviewer", "alice", str(runs["replay"]))
    try:
        page.goto(server.base + "/audit/summary")
        table = page.locator("table.samples").inner_text()
        for case_id, (judgement, _) in labelled.items():
            assert f"{case_id}\t" in table and judgement in table
        page.goto(f"{server.base}/audit/case/{second}")
        assert page.locator("#current-label").inner_text() == "false positive"
        assert page.locator("#notes").input_value() == "within a degree of a real reflection"
        page.goto(server.base + "/audit")  # resumes at the first unlabelled case
        assert _case_of(page.url) not in labelled
    finally:
        server.kill()
    # a second reviewer labels the same sheet into their own file; `audit score` reports κ and precision
    from matpcr.audit import save_label

    for row in cases:
        mine = labelled.get(row["case_id"], ("real", ""))[0]
        save_label(out / "labels-bob.csv", row, "false positive" if row["case_id"] == first else mine, "", "bob")
    proc = run_cli("audit", "score", str(sheet), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    pairs = [a for r in result.values() for a in r["agreement"]]
    assert pairs and all(a["reviewers"] == ["alice", "bob"] for a in pairs)
    assert sum(a["n"] for a in pairs) == 3
    table = run_cli("audit", "score", str(sheet)).stdout
    assert "Cohen's κ" in table and "alice vs bob" in table and "precision" in table
