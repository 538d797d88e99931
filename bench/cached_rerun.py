"""A fully cached re-run of the same config versus the uncached run. Target: >= 50x faster.

    MATPCR_DATA_DIR=../shared/data python bench/cached_rerun.py [--tasks xrd_text,raman_text,sem_text] [--limit 10]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", default="xrd_text,raman_text,sem_text")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    import matpcr

    with tempfile.TemporaryDirectory() as tmp:
        options = dict(limit=args.limit, cache=str(Path(tmp) / "cache.sqlite"), output_dir=tmp, progress=False,
                       generation={"max_new_tokens": args.max_new_tokens})
        t0 = time.perf_counter()
        first = matpcr.evaluate(args.tasks, **options)
        uncached = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = matpcr.evaluate(args.tasks, **options)
        cached = time.perf_counter() - t0
    assert second["timing"]["generated"] == 0
    print(f"records: {first['metrics']['overall']['n_records']}")
    print(f"uncached run (model load included): {uncached:.2f} s")
    print(f"fully cached re-run: {cached:.2f} s  ({second['timing']['cached']} cache hits, 0 generated)")
    print(f"speed-up: {uncached / cached:.1f}x  (target >= 50x)")


if __name__ == "__main__":
    main()
