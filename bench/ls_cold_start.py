"""`matpcr ls tasks` cold start in a fresh process (median of 7). Target: < 1 s.

    python bench/ls_cold_start.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def main() -> None:
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "matpcr.cli", "ls", "tasks"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    print(f"matpcr ls tasks: median {statistics.median(times):.3f} s, min {min(times):.3f} s, max {max(times):.3f} s "
          "(target < 1 s)")


if __name__ == "__main__":
    main()
