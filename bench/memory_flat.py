"""Memory stays flat with run size: peak RSS of ``matpcr rescore`` and of a ``replay:`` run as the stored
chains grow.

A real run directory (tests/data/runs/v0.1: config, items) is padded to N records with long chains
(each a real chain plus ~4 kB of reasoning text), then re-scored in a child process; a replay file of
the same size drives ``matpcr run --model replay:FILE``. Peak RSS comes from the child's rusage.

    python bench/memory_flat.py                 # N = 5,000 and 40,000 records (about 25 MB and 200 MB)
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
SOURCE = REPO / "tests" / "data" / "runs" / "v0.1"
PADDING = ("Let me reason step by step about the reflections and the lattice. " * 64)[:4096]


def padded_run(folder: Path, n: int) -> Path:
    shutil.copytree(SOURCE, folder)
    records = [json.loads(l) for l in (SOURCE / "samples.jsonl").read_text().splitlines()]
    with open(folder / "samples.jsonl", "w", encoding="utf-8") as out:
        for k in range(n):
            r = dict(records[k % len(records)])
            r["seed"] = k // len(records)
            r["key"] = f"{r['task']}/{r['item_id']}/s{r['seed']}/r0/n0"
            r["chain"] = PADDING + "\n" + r["chain"]
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return folder


def child_peak_mb(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "matpcr.cli", *args], capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(proc.stderr[-800:])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(peak, before) / 1024, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="5000,40000")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    # each measurement in its own process tree, so ru_maxrss of children is that measurement's peak
    if os.environ.get("_MATPCR_BENCH_ONE"):
        n, mode = int(os.environ["_MATPCR_BENCH_ONE"]), os.environ["_MATPCR_BENCH_MODE"]
        with tempfile.TemporaryDirectory() as tmp:
            run = padded_run(Path(tmp) / "run", n)
            size = (run / "samples.jsonl").stat().st_size / 1e6
            if mode == "rescore":
                peak, wall = child_peak_mb(["rescore", str(run), "--output-dir", str(Path(tmp) / "out")])
            else:
                peak, wall = child_peak_mb(["run", "--tasks", "xrd_text,sem_text,msqa_binary", "--limit", "2",
                                            "--model", f"replay:{run / 'samples.jsonl'}", "--cache", "none",
                                            "--data-dir", os.environ.get("MATPCR_DATA_DIR", str(REPO.parent / "shared" / "data")),
                                            "--output-dir", str(Path(tmp) / "replayed"), "--no-progress"])
            print(json.dumps({"mode": mode, "records": n, "file_mb": size, "peak_rss_mb": peak, "wall_s": wall}))
        return
    print(f"{'mode':<8} {'records':>8} {'file MB':>8} {'peak RSS MB':>12} {'wall s':>7}")
    for mode in ("rescore", "replay"):
        for n in sizes:
            out = subprocess.run([sys.executable, __file__], env={**os.environ, "_MATPCR_BENCH_ONE": str(n),
                                                                  "_MATPCR_BENCH_MODE": mode},
                                 capture_output=True, text=True, check=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            print(f"{mode:<8} {n:>8} {row['file_mb']:>8.1f} {row['peak_rss_mb']:>12.0f} {row['wall_s']:>7.1f}")


if __name__ == "__main__":
    main()
