"""`matpcr compare` and `matpcr.comparison.compare_runs`: model against model on shared items.

Real runs without a model: the replay backend answers with chains written here item by item, so that
each record's verdict (and so b, c and p of every paired test) is known before the runs are made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from matpcr.comparison import NO_SHARED, SECTION_TITLE, compare_runs
from matpcr.errors import MatpcrError

from conftest import run_cli

TASKS = ["sem_text", "raman_text"]
LIMIT = 6
# per task, the first answer of model A and of model B for each planned record, in plan order (seed 0 items,
# then seed 1 items): C consistent, V violated, U unparsable, - no stored chain (a failed generation)
DESIGN = {
    "sem_text": ("CCCCCVCCVCUC", "VVVVVCCCVUV-"),    # b=5 (0-4), c=1 (5), shared 9; A leaves 1, B 2 uncheckable
    "raman_text": ("VVVVCCCVVUCU", "CCCCCCCVVC-U"),  # b=0, c=4 (0-3), shared 9; A leaves 2, B 2 uncheckable
}
EXPECTED = {"microscopy": {"task": "sem_text", "n_shared": 9, "b": 5, "c": 1, "pcr_a": 7 / 9, "pcr_b": 3 / 9,
                           "a_uncheckable": 1, "b_uncheckable": 2},
            "spectra": {"task": "raman_text", "n_shared": 9, "b": 0, "c": 4, "pcr_a": 3 / 9, "pcr_b": 7 / 9,
                        "a_uncheckable": 2, "b_uncheckable": 2}}


def _replay(path: Path, data_dir: Path, tasks: list[str], seeds: int,
            chain_of: Callable[[str, int, object], str | None], keys: dict[str, list[str]] | None = None) -> Path:
    """A replay file with one chain per planned record (``chain_of(task, index, item)``; None leaves the
    record without a chain, which the engine records as a failed generation). ``keys`` collects each
    task's record keys in plan order."""
    from matpcr.planning import plan_items, record_key
    from matpcr.plugins import get_manager
    from matpcr.tasks import resolve

    plan = plan_items(resolve(tasks), get_manager().registry, data_dir, seeds, LIMIT)
    index: dict[str, int] = {}
    lines = []
    for task, seed, item in plan.entries:
        i = index[task.task] = index.get(task.task, -1) + 1
        key = record_key(task.task, item.id, seed, 0, 0)
        if keys is not None:
            keys.setdefault(task.task, []).append(key)
        chain = chain_of(task.task, i, item)
        if chain is not None:
            lines.append(json.dumps({"key": key, "chain": chain}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _chain(task: str, verdict: str, item: object) -> str | None:
    """A chain the task's oracle will judge ``verdict`` (C, V, U), or None for no chain (-)."""
    from matpcr.plugins import get_manager

    if verdict == "-":
        return None
    if verdict == "U":
        return "I cannot tell this from the information given."
    reference = item.reference  # type: ignore[attr-defined]
    if task == "sem_text":
        size_um = 40.0 / 1000 if verdict == "C" else 10 * float(reference["fov_nm"]) / 1000  # ten fields of view
        return f"The particles are about {size_um:g} µm across.\nAnswer: {size_um:g} µm"
    oracle = get_manager().registry.get("oracles", "raman").factory()
    spectrum = oracle.prepare(reference)
    if verdict == "C":
        shift = float(spectrum.peaks[int(np.argmax(spectrum.prominences))])
    else:
        shift = float(oracle.plant_violation(spectrum, np.random.default_rng(0)).value)
    return f"The strongest band lies at {shift:.1f} cm⁻¹.\nAnswer: {shift:.1f} cm⁻¹"


def _run(out: Path, data_dir: Path, replay: Path, tasks: list[str], seeds: int) -> Path:
    proc = run_cli("run", "--tasks", ",".join(tasks), "--limit", str(LIMIT), "--seeds", str(seeds),
                   "--model", f"replay:{replay}", "--data-dir", str(data_dir), "--output-dir", str(out),
                   "--cache", "none", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


def _statuses(run: Path) -> dict[str, str]:
    return {r["key"]: r["status"] for r in map(json.loads, (run / "samples.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Path]:
    """A and B: the designed answers (plus a scored task no oracle judges); C: every answer consistent, one
    seed only (so half of A's items are unshared); D: nothing checkable at all."""
    tmp = tmp_path_factory.mktemp("compare")
    out = {}
    keys: dict[str, list[str]] = {}
    for name, side in (("A", 0), ("B", 1)):
        keys.clear()
        replay = _replay(tmp / f"{name}.jsonl", data_dir, [*TASKS, "msqa_binary"], 2,
                         lambda task, i, item, side=side: "YES" if task == "msqa_binary"
                         else _chain(task, DESIGN[task][side][i], item), keys)
        out[name] = _run(tmp / name, data_dir, replay, [*TASKS, "msqa_binary"], 2)
    out["C"] = _run(tmp / "C", data_dir, _replay(tmp / "C.jsonl", data_dir, TASKS, 1,
                                                 lambda task, i, item: _chain(task, "C", item)), TASKS, 1)
    out["D"] = _run(tmp / "D", data_dir, _replay(tmp / "D.jsonl", data_dir, TASKS, 2,
                                                 lambda task, i, item: _chain(task, "U", item)), TASKS, 2)
    # the design holds: each record got the verdict it was written for
    want = {"C": "consistent", "V": "violated", "U": "unparsable", "-": "unparsable"}
    for name, side in (("A", 0), ("B", 1)):
        got = _statuses(out[name])
        for task in TASKS:
            statuses = [got[k] for k in keys[task]]
            assert statuses == [want[v] for v in DESIGN[task][side]], (name, task, statuses)
    assert set(_statuses(out["C"]).values()) == {"consistent"} and len(_statuses(out["C"])) == 12
    assert set(_statuses(out["D"]).values()) == {"unparsable"}
    return out


def test_paired_counts_and_exact_p_on_shared_items(runs: dict[str, Path]) -> None:
    result = compare_runs([runs["A"], runs["B"]])
    assert result["by"] == "constraint" and result["groups"] == ["microscopy", "spectra"]  # msqa: no PCR, left out
    [comp] = result["comparisons"]
    for group, want in EXPECTED.items():
        cell = comp["groups"][group]
        for key in ("n_shared", "b", "c", "a_uncheckable", "b_uncheckable"):
            assert cell[key] == want[key], (group, key, cell)
        assert cell["matched"] == 12 and cell["only_a"] == cell["only_b"] == 0
        assert cell["p"] == pytest.approx(binomtest(min(want["b"], want["c"]), want["b"] + want["c"], 0.5).pvalue)
        assert cell["pcr_a"] == pytest.approx(want["pcr_a"]) and cell["pcr_b"] == pytest.approx(want["pcr_b"])
        assert cell["delta_pcr"] == pytest.approx((want["c"] - want["b"]) / want["n_shared"])
        assert cell["delta_pcr"] == pytest.approx(cell["pcr_b"] - cell["pcr_a"])
        assert cell["note"] is None
    assert comp["groups"]["microscopy"]["p"] == pytest.approx(0.21875)
    assert comp["groups"]["spectra"]["p"] == pytest.approx(0.125)
    # one family per model pair: Holm and BH across the constraints, as statsmodels computes them
    pvalues = [comp["groups"][g]["p"] for g in comp["family"]]
    assert comp["family"] == ["microscopy", "spectra"]
    for method, key in (("holm", "p_holm"), ("fdr_bh", "p_bh")):
        adjusted = multipletests(pvalues, method=method)[1]
        assert [comp["groups"][g][key] for g in comp["family"]] == pytest.approx(list(adjusted))
    overall = comp["overall"]
    assert (overall["n_shared"], overall["b"], overall["c"], overall["p"]) == (18, 5, 5, 1.0)
    assert overall["p_holm"] is None and overall["a_uncheckable"] == 3 and overall["b_uncheckable"] == 4
    assert comp["config_differs"] == []


def test_each_models_pcr_is_the_one_its_results_json_reports(runs: dict[str, Path]) -> None:
    result = compare_runs([runs["A"], runs["B"]])
    for run, path in zip(result["runs"], (runs["A"], runs["B"])):
        metrics = json.loads((path / "results.json").read_text())["metrics"]
        for group in result["groups"]:
            cell, m = run["groups"][group], metrics["constraints"][group]
            assert cell["pcr"] == m["pcr"]
            for status in ("consistent", "violated", "abstain", "unparsable", "error"):
                assert cell[status] == m["status_counts"][status], (group, status)
            assert cell["no_answer"] == m["generation_errors"]
        assert run["overall"]["pcr"] == metrics["overall"]["pcr"]
    b = result["runs"][1]["groups"]
    assert (b["microscopy"]["unparsable"], b["microscopy"]["no_answer"]) == (2, 1)


def test_by_task(runs: dict[str, Path]) -> None:
    result = compare_runs([runs["A"], runs["B"]], by="task")
    assert result["groups"] == ["raman_text", "sem_text"]
    [comp] = result["comparisons"]
    for want in EXPECTED.values():
        cell = comp["groups"][want["task"]]
        assert (cell["n_shared"], cell["b"], cell["c"]) == (want["n_shared"], want["b"], want["c"])
    assert result["runs"][0]["groups"]["sem_text"]["pcr"] == \
        json.loads((runs["A"] / "results.json").read_text())["metrics"]["tasks"]["sem_text"]["pcr"]


def test_unshared_items_are_left_out_and_counted(runs: dict[str, Path]) -> None:
    # C ran one seed: A's seed-1 records have no partner; on seed 0 C is consistent throughout
    [comp] = compare_runs([runs["A"], runs["C"]])["comparisons"]
    sem, raman = comp["groups"]["microscopy"], comp["groups"]["spectra"]
    assert (sem["matched"], sem["only_a"], sem["only_b"], sem["n_shared"], sem["b"], sem["c"]) == (6, 6, 0, 6, 0, 1)
    assert (raman["matched"], raman["only_a"], raman["n_shared"], raman["b"], raman["c"]) == (6, 6, 6, 0, 4)
    assert raman["p"] == pytest.approx(binomtest(0, 4, 0.5).pvalue)
    assert set(comp["config_differs"]) == {"tasks", "seeds"}


def test_all_pairs_or_first_against_the_others(runs: dict[str, Path]) -> None:
    three = [runs["A"], runs["B"], runs["C"]]
    labels = [r["label"] for r in compare_runs(three)["runs"]]
    assert [(c["a"], c["b"]) for c in compare_runs(three)["comparisons"]] == \
        [(labels[0], labels[1]), (labels[0], labels[2]), (labels[1], labels[2])]
    assert [(c["a"], c["b"]) for c in compare_runs(three, pairs="first")["comparisons"]] == \
        [(labels[0], labels[1]), (labels[0], labels[2])]


def test_no_shared_checkable_items_is_a_result_not_a_crash(runs: dict[str, Path]) -> None:
    [comp] = compare_runs([runs["A"], runs["D"]])["comparisons"]
    for group in ("microscopy", "spectra"):
        cell = comp["groups"][group]
        assert cell["n_shared"] == 0 and cell["matched"] == 12 and cell["b_uncheckable"] == 12
        assert cell["note"] == NO_SHARED and cell["p"] is None and cell["p_holm"] is None
    assert comp["family"] == [] and comp["note"] == NO_SHARED
    proc = run_cli("compare", str(runs["A"]), str(runs["D"]))
    assert proc.returncode == 0, proc.stderr
    assert NO_SHARED in proc.stdout and "Traceback" not in proc.stderr


def test_cli_table_json_and_markdown(runs: dict[str, Path]) -> None:
    a, b = str(runs["A"]), str(runs["B"])
    proc = run_cli("compare", a, b)
    assert proc.returncode == 0, proc.stderr
    assert "PCR per model and constraint" in proc.stdout and SECTION_TITLE in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if " microscopy " in line and "0.219" in line)
    assert row.split()[3:7] == ["9", "5", "1", "0.778"]  # n shared, b, c, PCR A (after the labels and group)
    assert "-0.444" in row

    proc = run_cli("compare", a, b, "--json", "--by", "task")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data == json.loads(json.dumps(compare_runs([a, b], by="task")))
    assert data["comparisons"][0]["groups"]["sem_text"]["b"] == 5

    proc = run_cli("compare", a, b, "--markdown")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "### PCR per model and constraint" and f"### {SECTION_TITLE}" in lines
    assert any(line.startswith("|---|") for line in lines)
    md_row = next(line for line in lines if "| spectra |" in line and "| 0.125 |" in line)
    assert "| 9 | 0 | 4 |" in md_row

    one = run_cli("compare", a)
    assert one.returncode == 2 and "at least two" in one.stderr
    both = run_cli("compare", a, b, "--json", "--markdown")
    assert both.returncode == 2 and "pick one" in both.stderr


def test_report_has_the_comparison_section(runs: dict[str, Path], tmp_path: Path) -> None:
    proc = run_cli("report", str(runs["A"]), str(runs["B"]), "--output-dir", str(tmp_path / "rep"))
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SECTION_TITLE}" in md
    section = md.split(f"## {SECTION_TITLE}")[1].split("\n## ")[0]
    assert any("| microscopy | 9 | 5 | 1 |" in line for line in section.splitlines())
    assert SECTION_TITLE in (tmp_path / "rep" / "report.html").read_text()
    single = run_cli("report", str(runs["A"]), "--output-dir", str(tmp_path / "one"))
    assert single.returncode == 0 and SECTION_TITLE not in (tmp_path / "one" / "report.md").read_text()


def test_runs_of_one_model_over_disjoint_tasks_join_with_plus(runs: dict[str, Path], data_dir: Path,
                                                               tmp_path: Path) -> None:
    """A model whose tasks ran in two runs compares as one ("RUN1+RUN2"): the same cells as the single run,
    with constraint and overall figures aggregated over both parts."""
    replay = next((runs["B"].parent.parent).glob("B.jsonl"))
    parts = [_run(tmp_path / task, data_dir, replay, [task], 2) for task in TASKS]
    joined = compare_runs([runs["A"], "+".join(map(str, parts))])
    single = compare_runs([runs["A"], runs["B"]])
    for group in single["groups"]:
        for key in ("n_shared", "b", "c", "p"):
            assert joined["comparisons"][0]["groups"][group][key] == single["comparisons"][0]["groups"][group][key]
        assert joined["runs"][1]["groups"][group]["pcr"]["value"] == single["runs"][1]["groups"][group]["pcr"]["value"]
    with pytest.raises(MatpcrError, match="more than one joined run"):
        compare_runs([runs["A"], f"{parts[0]}+{parts[0]}"])
