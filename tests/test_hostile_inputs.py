"""Hostile and mistaken inputs end in one clear error naming the thing, never a hang, a blow-up or a
traceback: task YAML (alias bombs, wrong types, bad bytes, template tricks), command-line values, replay
files, oversized crystal cells, decompression-bomb images and index files that point outside their data set."""

from __future__ import annotations

import json
import struct
import time
import zlib
from pathlib import Path

import pytest

from matpcr.errors import DataError, MatpcrError
from matpcr.records import Item, Message, Request, Sampling, text_part
from matpcr.tasks import TaskConfigError, parse_task_file, parse_task_yaml, render_template

from conftest import run_cli

BASE = "task: t\nloader: raman.spectra\nconstraint: spectra\noracle: raman\n"


# -- task YAML --------------------------------------------------------------------------------------

def _bomb_line(i: int) -> str:
    inner = ", ".join([f"*l{i - 1}"] * 9) if i else '"lol"'
    return f"  l{i}: &l{i} [{inner}]\n"


BOMB = BASE + "loader_args:\n" + "".join(_bomb_line(i) for i in range(10))  # the billion laughs


def test_yaml_alias_bomb_is_rejected_quickly() -> None:
    t0 = time.perf_counter()
    with pytest.raises(TaskConfigError, match=r"expands to more than .* \(an alias bomb\?\)"):
        parse_task_yaml(BOMB, "bomb.yaml")
    assert time.perf_counter() - t0 < 2.0  # 9**9 strings if anything expanded it


def test_yaml_alias_bomb_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMB)
    proc = run_cli("ls", "tasks", "--include-path", str(tmp_path), timeout=120)
    assert proc.returncode == 2 and "bomb.yaml" in proc.stderr and "alias bomb" in proc.stderr


def test_recursive_alias_and_oversized_files_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TaskConfigError, match="refers to itself"):
        parse_task_yaml(BASE + "loader_args: &a {x: *a}\n", "loop.yaml")
    monkeypatch.setenv("MATPCR_MAX_YAML_BYTES", "100")
    with pytest.raises(TaskConfigError, match=r"more than the limit of 100"):
        parse_task_yaml(BASE + "description: " + "x" * 200 + "\n", "big.yaml")


@pytest.mark.parametrize("text, fragment", [
    ("task: [a, b]\nloader: x\nconstraint: c\n", "'task' must be text, not a list"),
    ("task: a b\nloader: x\nconstraint: c\n", "may not contain spaces"),
    (BASE + "group: [geometric, [nested]]\n", "no nested lists"),
    (BASE + "group: {a: 1}\n", "'group' must be a list"),
    (BASE + "prompt: [1, 2]\n", "'prompt' must be text"),
    (BASE + "version: one\n", "'version' must be a whole number"),
    (BASE + "generation: {max_new_tokens: lots}\n", "bad generation settings"),
    (BASE + "generation: {temperature: -1}\n", "must be ≥ 0"),
    (BASE + "prompt: '{text.__class__.__mro__}'\n", "bad placeholder '{text.__class__.__mro__}'"),
    (BASE + "prompt: '{0}'\n", "bad placeholder '{0}'"),
    (BASE + "prompt: '{text!r}'\n", "bad placeholder"),
    (BASE + "prompt: '{text:>99999999}'\n", "bad placeholder"),
    (BASE + "prompt: 'a { b'\n", "a lone '{'"),
    (BASE + "prompt: 'a } b'\n", "a lone '}'"),
])
def test_wrong_types_and_template_tricks_name_the_file(text: str, fragment: str) -> None:
    with pytest.raises(TaskConfigError) as info:
        parse_task_yaml(text, "tasks/bad.yaml")
    assert str(info.value).startswith("tasks/bad.yaml:") and fragment in str(info.value)


def test_non_utf8_task_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(BASE.encode() + b"description: caf\xe9\n")
    with pytest.raises(TaskConfigError, match=rf"{path}:5: not UTF-8 text \(byte 0xe9"):
        parse_task_file(path)


def test_templates_substitute_plain_fields_only() -> None:
    config = parse_task_yaml(BASE + "prompt: 'Q: {text} ({dataset}) {{literal}}'\n", "ok.yaml")
    item = Item("i", "t", "spectra", "text", "What?", meta={"dataset": "RRUFF", "nested": {"x": 1}})
    assert config.render_prompt(item) == "Q: What? (RRUFF) {literal}"
    assert render_template("{a}", {"a": "{text.__class__}"}) == "{text.__class__}"  # values are never re-read
    with pytest.raises(TaskConfigError, match=r"placeholder \{missing\} is not a field of item i"):
        parse_task_yaml(BASE + "prompt: '{missing}'\n", "ok.yaml").render_prompt(item)


def test_shipped_prompts_still_render() -> None:
    from matpcr.tasks import discover

    item = Item("i", "t", "spectra", "text", "What?", meta={"context_text": "ctx"})
    for task in discover().values():
        assert "What?" in task.render_prompt(item), task.task


# -- command-line values ----------------------------------------------------------------------------

@pytest.mark.parametrize("call, fragment", [
    (lambda s: s.parse_oracle_args("xrd.tolerance_deg=abc"), "--oracle-args xrd.tolerance_deg: 'abc' is not a number"),
    (lambda s: s.parse_oracle_args("raman.tolerance_cm1=-5"), "must be ≥ 0"),
    (lambda s: s.parse_oracle_args("tolerance=5"), "must be ORACLE.param=value"),
    (lambda s: s.parse_kv("max_new_tokens=abc", "--generation"), "--generation max_new_tokens: 'abc' is not a whole"),
    (lambda s: s.parse_kv("temperature=nan", "--generation"), "not a finite number"),
    (lambda s: s.parse_kv("top_p=2", "--generation"), "must be ≤ 1"),
    (lambda s: s.parse_kv("max_tokens=5", "--generation"), "unknown setting 'max_tokens'"),
    (lambda s: s.parse_kv("=5", "--model-args"), "has no key"),
    (lambda s: s.coerce_params("--oracle-args xrd", {"tolerance_deg": 0.5}, {"tolerance_deg": "abc"}), "'abc' is not a number"),
    (lambda s: s.coerce_params("--oracle-args xrd", {"tolerance_deg": 0.5}, {"tolerance_deg": -1.0}), "must be ≥ 0"),
])
def test_command_line_values_are_checked_where_they_are_parsed(call, fragment: str) -> None:
    import matpcr.spec as spec

    with pytest.raises(MatpcrError) as info:
        call(spec)
    assert fragment in str(info.value)


def test_intervention_args_are_typed_against_the_intervention() -> None:
    from matpcr.spec import coerce_call_args
    from matpcr_plugins.interventions.base import RoundsIntervention

    assert coerce_call_args("--intervention-args", RoundsIntervention.__init__, {"rounds": 3}) == {"rounds": 3}
    with pytest.raises(MatpcrError, match="--intervention-args rounds: 'abc' is not a whole number"):
        coerce_call_args("--intervention-args", RoundsIntervention.__init__, {"rounds": "abc"})
    with pytest.raises(MatpcrError, match="unknown setting 'rouns'; did you mean 'rounds'"):
        coerce_call_args("--intervention-args", RoundsIntervention.__init__, {"rouns": 3})


def test_generation_mistakes_through_the_cli(tmp_path: Path, data_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "raman_text", "--limit", "1", "--model", f"replay:{tmp_path}",
                   "--generation", "max_new_tokens=abc", "--data-dir", str(data_dir),
                   "--output-dir", str(tmp_path), "--no-progress")
    assert proc.returncode == 2 and "max_new_tokens: 'abc' is not a whole number" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- replay files -----------------------------------------------------------------------------------

def _replay(path: Path, **args):
    from matpcr_plugins.backend_replay import make_replay

    return make_replay(str(path), **args)


def _ask(*keys: str) -> list[Request]:
    return [Request([Message("user", [text_part("q")])], Sampling(), key=k) for k in keys]


@pytest.mark.parametrize("line, fragment", [
    (b"[1, 2, 3]", "line 2: an array, not an object"),
    (b'"just a string"', "line 2: a string, not an object"),
    (b"\xff\xfe\x00binary", "line 2: not UTF-8 text"),
    (b"{not json", "line 2: not JSON"),
    (b'{"chain": "no key"}', "line 2: no \"key\""),
    (b'{"key": 7, "chain": "x"}', "line 2: \"key\" is a number, not text"),
])
def test_unusable_replay_lines_are_named(tmp_path: Path, line: bytes, fragment: str) -> None:
    path = tmp_path / "chains.jsonl"
    path.write_bytes(b'{"key": "a", "chain": "fine"}\n' + line + b"\n")
    with pytest.raises(MatpcrError) as info:
        _replay(path)
    assert str(path) in str(info.value) and fragment in str(info.value)


def test_non_string_chains_are_per_record_errors_and_strict_stops(tmp_path: Path) -> None:
    path = tmp_path / "chains.jsonl"
    path.write_text('{"key": "a", "chain": "Answer: 1 nm"}\n{"key": "b", "chain": {"x": 1}}\n'
                    '{"key": "c", "chain": "", "error": "HTTP 500"}\n{"key": "d", "chain": "x\\ud800"}\n')
    a, b, c, d, e = _replay(path).generate(_ask("a", "b", "c", "d", "e"))
    assert a.text == "Answer: 1 nm" and a.error is None
    assert 'chains.jsonl:2: "chain" is an object, not text' in b.error and b.text == ""
    assert "stored record had an error: HTTP 500" in c.error  # a failed generation is not an empty answer
    assert d.text == "x\ufffd"
    assert "no stored chain for e" in e.error
    strict = _replay(path, strict=True)
    assert strict.generate(_ask("a"))[0].text == "Answer: 1 nm"
    with pytest.raises(MatpcrError, match="strict=true stops the run"):
        strict.generate(_ask("a", "b"))
    with pytest.raises(MatpcrError, match="no stored chain for e"):
        strict.generate(_ask("e"))


def test_replay_strict_stops_the_run(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "chains.jsonl"
    path.write_text('{"key": "nothing/here", "chain": "x"}\n')
    proc = run_cli("run", "--tasks", "raman_text", "--limit", "1", "--model", f"replay:{path}", "--model-args",
                   "strict=true", "--data-dir", str(data_dir), "--output-dir", str(tmp_path / "runs"),
                   "--cache", "none", "--no-progress")
    assert proc.returncode == 2 and "strict=true stops the run" in proc.stderr


def test_missing_replay_file_is_reported_at_construction(tmp_path: Path) -> None:
    with pytest.raises(MatpcrError, match=r"replay: .*missing.jsonl not found"):
        _replay(tmp_path / "missing.jsonl")
    with pytest.raises(MatpcrError, match="unknown setting 'strct'"):
        _replay(tmp_path, strct=True)


def test_missing_replay_file_leaves_no_run_directory(tmp_path: Path, data_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "raman_text", "--limit", "1", "--model", f"replay:{tmp_path / 'missing.jsonl'}",
                   "--data-dir", str(data_dir), "--output-dir", str(tmp_path / "runs"), "--cache", "none",
                   "--no-progress")
    assert proc.returncode == 2 and "missing.jsonl not found" in proc.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_replay_streams_instead_of_loading_the_file(tmp_path: Path) -> None:
    import tracemalloc

    path = tmp_path / "big.jsonl"
    chain = "Answer: 464 cm-1. " + "y" * 20_000
    with open(path, "w") as handle:
        for i in range(2_000):  # 40 MB of chains
            handle.write(json.dumps({"key": f"k{i}", "chain": chain}) + "\n")
    tracemalloc.start()
    backend = _replay(path)
    answers = backend.generate(_ask("k0", "k1999"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [a.text for a in answers] == [chain, chain]
    assert peak < 5_000_000, peak  # the key index and a line or two, not 40 MB of chains


# -- data files -------------------------------------------------------------------------------------

def test_cif_with_a_huge_cell_is_refused_before_computing(tmp_path: Path) -> None:
    """The #14 probe: a 332-byte CIF with a 150 Å cell grew to 6 GB."""
    from matpcr_plugins.xrd.patterns import computed_pattern, load_structure

    cif = tmp_path / "huge.cif"
    cif.write_text("data_huge\n_cell_length_a 150\n_cell_length_b 150\n_cell_length_c 150\n_cell_angle_alpha 90\n"
                   "_cell_angle_beta 90\n_cell_angle_gamma 90\n_symmetry_space_group_name_H-M 'P 1'\nloop_\n"
                   "_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n"
                   "_atom_site_fract_z\nSi1 Si 0 0 0\nO1 O 0.5 0.5 0.5\n")
    t0 = time.perf_counter()
    with pytest.raises(DataError, match=rf"{cif}: cell 150.0 × 150.0 × 150.0 Å .* reflections"):
        computed_pattern(load_structure(cif), "CuKa", (5.0, 90.0), source=str(cif))
    assert time.perf_counter() - t0 < 10
    proc = run_cli("check", "xrd", "--reference", str(cif), "--chain", "Answer: 2θ = 30°", timeout=120)
    assert proc.returncode == 2 and "huge.cif" in proc.stderr and "MATPCR_MAX_REFLECTIONS" in proc.stderr


def _png_header_only(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


def test_png_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    from matpcr_plugins.sem.micrographs import MicrographLoader, as_png, check_image

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(_png_header_only(60_000, 60_000))  # 3.6 G pixels declared in ~100 bytes
    with pytest.raises(DataError, match=rf"{bomb}: .*(over the limit|not a readable image)"):
        check_image(bomb)
    with pytest.raises(DataError, match="bomb.png"):
        as_png(bomb)
    item = Item("bomb", "sem_text", "microscopy", "text", "", reference={"file": str(bomb)},
                meta={"sample": "TiO2", "sidecar": {}})
    with pytest.raises(DataError, match="bomb.png"):
        MicrographLoader().complete(item)
    ok = tmp_path / "small.png"
    ok.write_bytes(_png_header_only(8, 8))
    assert check_image(ok) == (8, 8)


@pytest.mark.parametrize("name", ["../../../etc/passwd", "/etc/passwd", "sub/../../x.xy", "C:\\Windows\\win.ini", ""])
def test_index_paths_are_confined_to_the_data_set(tmp_path: Path, name: str) -> None:
    from matpcr.tasks import resolve
    from matpcr_plugins.xrd.loaders import PatternLoader

    folder = tmp_path / "xrd_dara_precursor_mixtures"
    folder.mkdir()
    (folder / "index.csv").write_text(f"file,phases,kalpha1_A\nok.xy,Si,1.5406\n\"{name}\",Si,1.5406\n")
    [task] = resolve(["xrd_pattern_text"])
    task.loader_args = {"sources": ["dara"]}
    with pytest.raises(DataError, match=r"index.csv, row 3: .*(outside the data set folder|empty or invalid)"):
        PatternLoader().load(task, tmp_path)


def test_confine_keeps_ordinary_names() -> None:
    from matpcr_plugins.datafiles import confine

    assert confine(Path("/d"), "sub/a.xy", "index.csv", 2) == Path("/d/sub/a.xy")


# -- nothing executes input -------------------------------------------------------------------------

def test_no_pickle_eval_shell_or_unsafe_yaml_in_the_sources() -> None:
    """docs/security.md promises that no input is ever executed: checked on the syntax tree of every module."""
    import ast

    from conftest import REPO

    banned_calls = {"eval", "exec", "compile", "__import__"}
    banned_attrs = {("yaml", "load"), ("yaml", "unsafe_load"), ("yaml", "full_load"), ("os", "system"),
                    ("os", "popen"), ("pickle", "load"), ("pickle", "loads"), ("marshal", "loads")}
    def restricted_unpickler(tree: ast.Module) -> bool:
        """The one allowed use of pickle: a ``pickle.Unpickler`` subclass whose ``find_class`` decides every
        global (docs/security.md); the module may not call pickle's own loaders."""
        return any(isinstance(c, ast.ClassDef) and any(ast.unparse(b) == "pickle.Unpickler" for b in c.bases)
                   and any(isinstance(f, ast.FunctionDef) and f.name == "find_class" for f in c.body)
                   for c in tree.body)

    problems = []
    unpicklers = []
    for path in sorted([*(REPO / "matpcr").rglob("*.py"), *(REPO / "plugins").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed = {"pickle"} if restricted_unpickler(tree) else set()
        if allowed:
            unpicklers.append(path.relative_to(REPO).as_posix())
        for node in ast.walk(tree):
            where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
                if any(n in ("pickle", "cPickle", "dill", "marshal", "shelve") and n not in allowed
                       for n in names if n):
                    problems.append(f"{where}: imports {names}")
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in banned_calls:
                problems.append(f"{where}: calls {func.id}()")
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    (func.value.id, func.attr) in banned_attrs:
                problems.append(f"{where}: calls {func.value.id}.{func.attr}()")
            for kw in node.keywords:
                if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    problems.append(f"{where}: shell=...")
            if isinstance(func, ast.Attribute) and func.attr == "load" and isinstance(func.value, ast.Name) and \
                    func.value.id == "torch" and not any(kw.arg == "weights_only" for kw in node.keywords):
                problems.append(f"{where}: torch.load without weights_only=True")
    assert problems == []
    assert unpicklers == ["plugins/datasources/devsets.py"]  # the matsciml LMDB values; numpy arrays only
