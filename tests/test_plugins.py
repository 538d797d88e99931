"""The plugin system: every hook documented and tested, loading order, failures, third-party plugins."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import matpcr
from matpcr import hookspecs
from matpcr.plugins import get_manager
from matpcr.records import Claim, Item, Record, Request, Response, Verdict

from conftest import REPO, run_cli

HOOKS = sorted(name for name, f in inspect.getmembers(hookspecs, inspect.isfunction)
               if hasattr(f, "matpcr_spec"))
EXAMPLE = REPO / "examples" / "matpcr-example-oracle"


def test_hooks_are_documented_with_exact_signatures() -> None:
    doc = (REPO / "docs" / "plugins.md").read_text()
    assert HOOKS == ["register_backends", "register_checkers", "register_commands", "register_data_sets",
                     "register_interventions", "register_oracles", "register_report_sections", "register_scorers",
                     "register_tasks"]
    for name in HOOKS:
        params = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
        assert f"### {name}({params})" in doc, f"docs/plugins.md lacks the heading '### {name}({params})'"


def test_every_hook_has_a_test() -> None:
    source = "\n".join(p.read_text() for p in (REPO / "tests").glob("test_*.py"))
    for name in HOOKS:
        assert re.search(rf"^def test_hook_{name}\(", source, re.M), f"no test_hook_{name}"


# -- one test per hook, each through a plugin registered at run time -------------------------------

class EchoBackend:
    identity = {"backend": "echo"}

    def __init__(self) -> None:
        from matpcr.protocols import Capabilities

        self.capabilities = Capabilities(images=False)

    def generate(self, requests: list[Request]) -> list[Response]:
        return [Response(f"Answer: {r.messages[-1].text[:8]}") for r in requests]


def test_hook_register_backends() -> None:
    class Plugin:
        @matpcr.hookimpl
        def register_backends(self, register: Any) -> None:
            register("echo", lambda model, revision=None, **kw: EchoBackend(), "test backend")

    matpcr.register(Plugin(), name="echo-plugin")
    entry = get_manager().registry.get("backends", "echo")
    assert entry.plugin == "echo-plugin" and entry.summary == "test backend"
    backend = entry.factory("", None)
    request = Request([matpcr.records.Message("user", [matpcr.records.text_part("2θ = 28.4°")])])
    assert [r.text for r in backend.generate([request])] == ["Answer: 2θ = 28."]
    assert "register_backends" in get_manager().hooks_of("echo-plugin")
    matpcr.unregister("echo-plugin")
    with pytest.raises(KeyError, match="unknown backend 'echo'. Known backends: gemma3, hf, openai"):
        get_manager().registry.get("backends", "echo")


def test_hook_register_tasks(tmp_path: Path) -> None:
    class Loader:
        def load(self, config: Any, data_dir: Any) -> list[Item]:
            return [Item(id=f"i{i}", task=config.task, constraint="toy", modality="text", text=str(i)) for i in range(4)]

    (tmp_path / "toy.yaml").write_text("task: toy_task\nloader: toy.loader\nconstraint: toy\n")

    class Plugin:
        @matpcr.hookimpl
        def register_tasks(self, register: Any) -> None:
            register("toy.loader", Loader)
            register.include_path(tmp_path)

    matpcr.register(Plugin(), name="toy-tasks")
    from matpcr.tasks import resolve

    [task] = resolve(["toy_task"])
    items = get_manager().registry.get("tasks", task.loader).factory().load(task, None)
    assert [i.text for i in items] == ["0", "1", "2", "3"]


def test_hook_register_oracles() -> None:
    from matpcr.protocols import Oracle

    class Positive(Oracle):
        name, constraint, defaults = "positive", "toy", {"floor": 0.0}

        def extract(self, chain: str, item: Any = None) -> list[Claim]:
            return [Claim("x", float(t)) for t in re.findall(r"-?\d+", chain)]

        def check(self, claim: Claim, reference: Any) -> Verdict:
            ok = claim.value > self.params["floor"]
            return Verdict("consistent" if ok else "violated", "values must be positive")

    class Plugin:
        @matpcr.hookimpl
        def register_oracles(self, register: Any) -> None:
            register("positive", Positive)

    matpcr.register(Plugin(), name="positive-oracle")
    oracle = get_manager().registry.get("oracles", "positive").factory(floor=2)
    from matpcr import scoring

    record = Record("k", "t", "i", "i", "toy", "text", 0, 0, 0, "m", [], "values 3 and 1")
    scoring.score_record(record, oracle, Item(id="i", task="t", constraint="toy", modality="text", text=""))
    assert record.status == "violated" and [v["status"] for v in record.verdicts] == ["consistent", "violated"]
    with pytest.raises(KeyError, match="floor"):
        get_manager().registry.get("oracles", "positive").factory(flor=2)


def test_hook_register_scorers() -> None:
    from matpcr.protocols import Metric, Scorer
    from matpcr.records import Score

    class Length(Scorer):
        name, primary = "length", "short"
        metrics = (Metric("short"),)

        def score(self, chain: str, item: Any, context: dict[str, Any]) -> dict[str, Score]:
            return {"short": Score(float(len(chain) < 10), chain)}

    class Plugin:
        @matpcr.hookimpl
        def register_scorers(self, register: Any) -> None:
            register("length", Length)

    matpcr.register(Plugin(), name="length-scorer")
    registry = get_manager().registry
    assert "length" in registry.names("scorers") and "length" not in registry.names("oracles")
    from matpcr import scoring

    item = Item(id="i", task="t", constraint="toy", modality="text", text="")
    short = scoring.score_record(Record("k", "t", "i", "i", "toy", "text", 0, 0, 0, "m", [], "yes"),
                                 registry.get("scorers", "length").factory(), item)
    long = scoring.score_record(Record("k", "t", "i", "i", "toy", "text", 0, 0, 0, "m", [], "a long answer"),
                                registry.get("scorers", "length").factory(), item)
    assert (short.status, short.accurate, short.scores["short"].value) == ("scored", True, 1.0)
    assert (long.status, long.accurate) == ("scored", False) and long.verdicts == []


def test_hook_register_checkers() -> None:
    from matpcr.protocols import Checker, Metric
    from matpcr.records import Score

    class Pessimist(Checker):
        name = "pessimist"
        metrics = (Metric("pessimist.predicted_violation", higher_is_better=False),)

        def __init__(self, arg: str) -> None:
            self.params = {"arg": arg}

        def predict(self, records: list[Record], items: list[Item]) -> list[dict[str, Score]]:
            return [{"pessimist.predicted_violation": Score(1.0, "violated")} for _ in records]

    class Plugin:
        @matpcr.hookimpl
        def register_checkers(self, register: Any) -> None:
            register("pessimist", Pessimist)

    matpcr.register(Plugin(), name="pessimist-checker")
    from matpcr import scoring

    checker = scoring.build_checker("pessimist:always", get_manager().registry)
    assert checker.params == {"arg": "always"}
    records = [Record("k", "t", "i", "i", "toy", "text", 0, 0, 0, "m", [], "an answer", status="consistent")]
    scoring.apply_checker(checker, records, [Item(id="i", task="t", constraint="toy", modality="text", text="")])
    assert records[0].status == "consistent" and records[0].scores["pessimist.predicted_violation"].value == 1.0
    with pytest.raises(KeyError, match="unknown checker 'nope'"):
        scoring.build_checker("nope:x", get_manager().registry)


def test_hook_register_report_sections(tmp_path: Path) -> None:
    from matpcr.protocols import ReportSection

    class Plugin:
        @matpcr.hookimpl
        def register_report_sections(self, register: Any) -> None:
            register("runs", lambda runs, labels: [ReportSection("Run count <b>", ["runs"], [[str(len(runs))]])])

    matpcr.register(Plugin(), name="count-section")
    from matpcr.report import plugin_sections

    assert ("Run count <b>", ["runs"], [["2"]]) in plugin_sections([{}, {}], ["a", "b"])


def test_hook_register_interventions() -> None:
    registry = get_manager().registry
    assert {"cgsv", "self_refine", "reprompt", "best_of_n"} <= set(registry.names("interventions"))
    cgsv = registry.get("interventions", "cgsv").factory()
    assert cgsv.rounds == 2 and cgsv.applies("diffraction") and not cgsv.applies("microscopy")
    request = Request([matpcr.records.Message("user", [matpcr.records.text_part("Q?")])])
    record = Record("k", "t", "i", "i", "diffraction", "text", 0, 0, 0, "m", [], "Answer: 2θ = 35°")
    assert cgsv.follow_up(record, request, [Verdict("consistent", "ok")]) is None
    follow = cgsv.follow_up(record, request, [Verdict("violated", "No reflection lies within ±0.5°.")])
    roles = [m.role for m in follow.request.messages]
    assert roles == ["user", "assistant", "user"] and "No reflection" in follow.request.messages[-1].text
    assert registry.get("interventions", "best_of_n").factory().samples == 3


def test_hook_register_commands() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0 and "sem-calibration" in proc.stdout  # added by the sem plugin's hook


# -- loading --------------------------------------------------------------------------------------

def test_later_plugin_wins_a_name_conflict_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    from matpcr.protocols import Oracle

    class Shadow(Oracle):
        name, constraint = "xrd", "diffraction"

    class Plugin:
        @matpcr.hookimpl
        def register_oracles(self, register: Any) -> None:
            register("xrd", Shadow, "a replacement diffraction oracle")

    matpcr.register(Plugin(), name="shadow-xrd")
    with caplog.at_level("WARNING", logger="matpcr.plugins"):
        entry = get_manager().registry.get("oracles", "xrd")
    assert entry.plugin == "shadow-xrd" and entry.factory is Shadow
    assert any("'xrd'" in m and "'shadow-xrd'" in m and "plugin 'xrd'" in m for m in caplog.messages), caplog.messages


def test_registry_catalog_matches_entry_points_and_registrations() -> None:
    import importlib.metadata
    import tomllib

    catalog = tomllib.loads((REPO / "registry.toml").read_text())["plugin"]
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="matpcr")
           if ep.dist is not None and ep.dist.metadata["Name"] == "matpcr"}
    assert {c["name"]: c["module"] for c in catalog} == eps
    manager = get_manager()
    registry = manager.registry
    for plugin in catalog:
        provided = {f"{e.kind}:{e.name}" for kind in registry.entries.values() for e in kind.values()
                    if e.plugin == plugin["name"]}
        if "register_commands" in manager.hooks_of(plugin["name"]):
            provided |= {p for p in plugin["provides"] if p.startswith("commands:")}
        assert provided == set(plugin["provides"]), plugin["name"]
        assert manager.info[plugin["name"]].source == "builtin"
    import matpcr_plugins

    shipped = Path(matpcr_plugins.__file__).parent / "registry.toml"
    assert shipped.read_text() == (REPO / "registry.toml").read_text()  # the wheel carries the catalog


def test_p_plugin_can_add_commands(tmp_path: Path) -> None:
    (tmp_path / "extra_cmd_plugin.py").write_text(
        "import matpcr\n"
        "@matpcr.hookimpl\n"
        "def register_commands(cli):\n"
        "    @cli.command('hello-extra')\n"
        "    def hello():\n"
        "        print('hello from a -p plugin')\n")
    env = {"PYTHONPATH": str(tmp_path)}
    proc = run_cli("-p", "extra_cmd_plugin", "hello-extra", env=env)
    assert proc.returncode == 0 and "hello from a -p plugin" in proc.stdout, proc.stderr
    proc = run_cli("hello-extra", env={**env, "MATPCR_PLUGINS": "extra_cmd_plugin"})
    assert proc.returncode == 0 and "hello from a -p plugin" in proc.stdout, proc.stderr


def _core_imports() -> dict[str, set[str]]:
    import ast

    out = {}
    for path in sorted((REPO / "matpcr").glob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        out[path.name] = names
    return out


def test_core_imports_no_plugin() -> None:
    for module, names in _core_imports().items():
        assert not [n for n in names if n.split(".")[0] == "matpcr_plugins"], module


def test_core_names_no_plugin_and_probes_no_plugin_object() -> None:
    import ast
    import tomllib

    names = {p["name"] for p in tomllib.loads((REPO / "registry.toml").read_text())["plugin"]}
    for path in sorted((REPO / "matpcr").glob("*.py")):
        tree = ast.parse(path.read_text())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == "hasattr"]
        assert not calls, f"{path.name}: hasattr() on line {calls[0].lineno}"
        strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        named = sorted((names - {"hf", "openai", "replay"}) & strings)  # backend spec words appear in help texts
        assert not named, f"{path.name} names plugin(s) {named}"


def test_plugins_listing_has_versions_and_hooks() -> None:
    proc = run_cli("plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by_name = {p["name"]: p for p in data["plugins"]}
    for name in ("hf", "openai", "vllm", "replay", "xrd", "raman", "sem", "cgsv", "self_refine", "reprompt", "best_of_n"):
        assert by_name[name]["source"] == "builtin" and by_name[name]["version"] == matpcr.__version__
    assert by_name["xrd"]["hooks"] == ["register_oracles", "register_tasks"]


def test_broken_plugin_is_named_and_others_keep_working() -> None:
    proc = run_cli("-p", "matpcr_no_such_module", "ls", "oracles", env={"MATPCR_PLUGINS": "json.no_such"})
    assert proc.returncode == 0
    assert "matpcr_no_such_module" in proc.stderr and "ModuleNotFoundError" in proc.stderr
    assert "json.no_such" in proc.stderr
    assert "xrd" in proc.stdout and "raman" in proc.stdout


def test_listing_imports_no_heavy_library() -> None:
    code = ("import sys; from matpcr.cli import main\n"
            "for kind in ('tasks','backends','oracles','interventions'):\n"
            "    sys.argv=['matpcr','ls',kind]\n"
            "    try: main()\n"
            "    except SystemExit: pass\n"
            "sys.argv=['matpcr','plugins']\n"
            "try: main()\n"
            "except SystemExit: pass\n"
            "heavy=[m for m in ('torch','transformers','pymatgen','scipy','skimage','matplotlib') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert "HEAVY []" in proc.stdout, proc.stdout[-500:] + proc.stderr[-500:]


@pytest.fixture(scope="module")
def installed_example() -> Any:
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", str(EXAMPLE)]
    proc = subprocess.run(pip, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    yield
    subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "--quiet", "matpcr-example-oracle"],
                   capture_output=True)


def test_third_party_plugin_installs_lists_and_runs(installed_example: Any, data_dir: Path, tmp_path: Path,
                                                      smollm2_dir: Path) -> None:
    listing = json.loads(run_cli("plugins", "--json").stdout)
    lattice = {p["name"]: p for p in listing["plugins"]}["lattice"]
    assert lattice["source"] == "entrypoint" and lattice["version"] == "0.2.0"
    assert "lattice_text" in run_cli("ls", "tasks").stdout
    off = run_cli("plugins", "--json", env={"MATPCR_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert "lattice" not in {p["name"] for p in json.loads(off.stdout)["plugins"]}
    again = run_cli("-p", "matpcr_example_oracle.plugin", "ls", "oracles", env={"MATPCR_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert "lattice" in again.stdout
    proc = run_cli("run", "--tasks", "lattice_text,lattice_digits", "--limit", "2", "--data-dir", str(data_dir),
                   "--output-dir", str(tmp_path), "--cache", "none", "--generation", "max_new_tokens=32", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    records = [json.loads(l) for l in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["constraint"] == "lattice" and r["chain"] for r in records)
    results = json.loads((run_dir / "results.json").read_text())
    # the oracle, the scorer with its own metric, and the report section — no change to matpcr/
    assert results["judged_by"]["lattice_text"]["kind"] == "oracle"
    assert results["judged_by"]["lattice_digits"]["kind"] == "scorer"
    assert "pcr" in results["metrics"]["tasks"]["lattice_text"]
    within = results["metrics"]["tasks"]["lattice_digits"]["scores"]["within_1pct"]
    assert within["n"] == 2 and within["ci_low"] <= within["value"] <= within["ci_high"]
    assert {r["status"] for r in records if r["task"] == "lattice_digits"} == {"scored"}
    report = run_cli("report", str(run_dir))
    assert report.returncode == 0, report.stderr
    assert "Lattice parameter within 1 % (example plugin)" in (run_dir / "report.md").read_text()
    check = run_cli("check", "lattice", "--reference", str(tmp_path / "si.json"), "--chain", "a = 5.43 Å")
    assert check.returncode == 2 and "si.json" in check.stderr  # missing reference file is named
    (tmp_path / "si.json").write_text('{"a": 5.431}')
    check = run_cli("check", "lattice", "--reference", str(tmp_path / "si.json"), "--chain", "a = 5.43 Å", "--json")
    assert json.loads(check.stdout)["status"] == "consistent"


def test_custom_backend_example(data_dir: Path, tmp_path: Path, smollm2_dir: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "custom_backend.py"), "--data-dir", str(data_dir),
                           "--limit", "1", "--output-dir", str(tmp_path), "--cache", "none"],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "persona backend: PCR" in proc.stdout
    results = json.loads(next(tmp_path.glob("*/results.json")).read_text())
    assert results["model"]["backend"] == "persona" and results["model"]["inner"]["backend"] == "hf"
