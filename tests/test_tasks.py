"""Task YAML: the shipped tasks parse, and broken files get errors naming the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from matpcr.errors import UnknownNameError
from matpcr.tasks import TaskConfigError, discover, groups, parse_task_yaml, resolve

from conftest import run_cli


def test_shipped_tasks_and_groups() -> None:
    tasks = discover()
    assert {"xrd_text", "xrd_image", "raman_text", "sem_text", "stability_text", "msqa_binary", "msqa_long"} <= set(tasks)
    g = groups(tasks)
    assert set(g["geometric_text"]) == {"xrd_text", "xrd_pattern_text", "raman_text", "sem_text"}
    assert set(g["dft"]) == {"stability_text", "metallicity_text", "magnetism_text"}
    assert [t.task for t in resolve(["xrd_text", "geometric_text"])][0] == "xrd_text"  # order kept, no repeats
    assert len(resolve(["xrd_text", "geometric_text"])) == 4


@pytest.mark.parametrize("text, line, fragment", [
    ("task: t\nloader: x\nconstraint: c\nprompt: [unclosed\n", 4, "invalid YAML"),
    ("task: t\nloader: x\nconstraint: c\npromt: hi\n", 4, "did you mean 'prompt'"),
    ("task: t\nconstraint: c\n", 1, "missing required key 'loader'"),
    ("task: t\nloader: x\nconstraint: c\nmodality: video\n", 4, "modality must be"),
    ("task: t\nloader: x\nconstraint: c\ngeneration:\n  max_tokens: 5\n", 4, "bad generation settings"),
    ("- just\n- a list\n", 1, "must be a mapping"),
])
def test_bad_yaml_names_file_and_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(TaskConfigError) as info:
        parse_task_yaml(text, "tasks/broken.yaml")
    assert str(info.value).startswith(f"tasks/broken.yaml:{line}:") and fragment in str(info.value)


def test_bad_yaml_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("task: bad\nloader: xrd.structures\nconstraint: diffraction\noracel: xrd\n")
    proc = run_cli("ls", "tasks", "--include-path", str(tmp_path))
    assert proc.returncode == 2 and f"{tmp_path / 'bad.yaml'}:4: unknown key 'oracel'; did you mean 'oracle'?" in proc.stderr


def test_unknown_task_lists_close_matches() -> None:
    with pytest.raises(UnknownNameError) as info:
        resolve(["raman_txt"])
    assert "raman_text" in info.value.close


def test_include_path_overrides_a_shipped_task(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("task: xrd_text\nloader: xrd.structures\nconstraint: diffraction\noracle: xrd\n"
                                        "prompt: 'Custom: {text}'\n")
    [task] = resolve(["xrd_text"], [str(tmp_path)])
    assert task.prompt == "Custom: {text}" and task.path.endswith("mine.yaml")
