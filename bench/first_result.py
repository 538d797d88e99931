"""Time to the first record and peak memory of `matpcr run` with the embedded model.

Starts ``matpcr run --limit N`` (default tasks, default model ``smollm2`` on CPU) as a child process,
watches the run directory for the first line of ``samples.jsonl`` (the first result a user sees), and reads
the child's peak resident memory from ``resource.getrusage(RUSAGE_CHILDREN)`` once it exits. By default it
runs on the embedded default set (no ``MATPCR_DATA_DIR``, an empty user data directory) with an empty
response cache, pinned to ``--cores`` CPUs with ``taskset`` when available.

    python bench/first_result.py                               # embedded set, --limit 3, 2 cores
    python bench/first_result.py --data-dir ../shared/data --limit 10   # the README's main command
    python bench/first_result.py --generation max_new_tokens=96         # with shorter generations
    python bench/first_result.py --data-dir ../shared/data --limit 10 --stop-after-first  # first record only

Targets (issue 18): first record in under 180 s on 2 cores; peak RSS under 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--tasks", default=None, help="default: matpcr run's default (geometric_text)")
    parser.add_argument("--data-dir", default=None, help="default: none (the embedded set)")
    parser.add_argument("--generation", default=None, help="k=v,... passed to --generation")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--run-args", default="", help="extra `matpcr run` arguments, e.g. '--batch-size 4'")
    parser.add_argument("--stop-after-first", action="store_true",
                        help="end the run once the first record is written (peak RSS is then up to that point)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="matpcr-first-result-"))
    env = {k: v for k, v in os.environ.items() if k not in ("MATPCR_DATA_DIR", "MATPCR_DATA_HOME", "MATPCR_REFSTORE")}
    env.update(XDG_DATA_HOME=str(work / "xdg"), MATPCR_RENDER_DIR=str(work / "renders"),
               OMP_NUM_THREADS=str(args.cores), MKL_NUM_THREADS=str(args.cores))
    cmd = [sys.executable, "-m", "matpcr.cli", "run", "--limit", str(args.limit), "--output-dir", str(work / "runs"),
           "--cache", str(work / "responses.sqlite"), "--no-progress"]
    if args.tasks:
        cmd += ["--tasks", args.tasks]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    if args.generation:
        cmd += ["--generation", args.generation]
    cmd += args.run_args.split()
    if args.cores and shutil.which("taskset") and (os.cpu_count() or 1) >= args.cores:
        cmd = ["taskset", "-c", ",".join(str(c) for c in range(args.cores))] + cmd

    t0 = time.monotonic()
    child = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = None
    while child.poll() is None:
        if first is None:
            for samples in (work / "runs").glob("*/samples.jsonl"):
                if samples.stat().st_size and samples.read_text().strip():
                    first = time.monotonic() - t0
                    if args.stop_after_first:
                        child.terminate()
        time.sleep(0.2)
    total = time.monotonic() - t0
    out, err = child.communicate()
    if first is None:
        samples = list((work / "runs").glob("*/samples.jsonl"))
        first = total if samples and samples[0].read_text().strip() else None
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    records = sum(len(p.read_text().splitlines()) for p in (work / "runs").glob("*/samples.jsonl"))
    report = {"command": " ".join(cmd[cmd.index("-m") + 2:] if "-m" in cmd else cmd), "cores": args.cores,
              "data": args.data_dir or "embedded default set", "exit_code": child.returncode,
              "first_record_s": None if first is None else round(first, 1), "total_s": round(total, 1),
              "records": records, "peak_rss_mb": round(peak_kib / 1024, 0)}
    if args.stop_after_first:
        report["stopped_after_first_record"] = True
    elif child.returncode != 0:
        report["stderr_tail"] = err[-2000:]
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for key, value in report.items():
        print(f"{key:16} {value}")
    ok = (report["first_record_s"] or 1e9) < 180 and report["peak_rss_mb"] < 1536
    print(f"{'target':16} first record < 180 s and peak RSS < 1.5 GB: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
