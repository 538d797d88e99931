"""Percentile bootstrap with B = 10,000 over 4,472 records in 1,500 sources, as one call. Target: <= 1 s.

    python bench/bootstrap.py
"""

from __future__ import annotations

import time

import numpy as np

from matpcr import stats


def main() -> None:
    rng = np.random.default_rng(0)
    sources = rng.integers(0, 1500, 4472)
    sources[:1500] = np.arange(1500)  # every source present
    statuses = np.where(rng.random(4472) < 0.65, "consistent", "violated")
    t0 = time.perf_counter()
    rate = stats.pcr(list(statuses), list(sources), n_boot=10_000, seed=0)
    elapsed = time.perf_counter() - t0
    print(f"PCR {rate.value:.3f} [{rate.ci_low:.3f}, {rate.ci_high:.3f}] n={rate.n} sources={rate.n_sources}: "
          f"{elapsed:.3f} s for B=10,000 (target <= 1 s)")


if __name__ == "__main__":
    main()
