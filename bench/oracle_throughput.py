"""Claims checked per second by each geometric oracle with references prepared (target >= 20,000/s for
diffraction and spectra), and scale-bar calibration time per micrograph.

    MATPCR_DATA_DIR=../shared/data python bench/oracle_throughput.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from matpcr.records import Claim


def rate(oracle, refs, claims_per_ref: int, rng) -> tuple[float, int]:
    work = []
    for ref in refs:
        lo, hi = (ref.window if hasattr(ref, "window") else (ref.lo, ref.hi))
        kind = "two_theta" if hasattr(ref, "window") else "raman_shift"
        work += [(Claim(kind, float(v)), ref) for v in rng.uniform(lo, hi, claims_per_ref)]
    t0 = time.perf_counter()
    for claim, ref in work:
        oracle.check(claim, ref)
    return len(work) / (time.perf_counter() - t0), len(work)


def main() -> None:
    data = Path(os.environ.get("MATPCR_DATA_DIR", "../shared/data"))
    rng = np.random.default_rng(0)
    from matpcr_plugins.raman.oracle import RamanOracle
    from matpcr_plugins.raman.spectra import read_spectrum
    from matpcr_plugins.sem.calibration import calibrate
    from matpcr_plugins.sem.oracle import SEMOracle
    from matpcr_plugins.xrd.oracle import XRDOracle

    from matpcr.errors import DataError

    xrd = XRDOracle()
    xrd_refs = []
    for p in sorted((data / "cif_reference_phases/amcsd_minerals").glob("*.cif")):
        try:
            xrd_refs.append(xrd.prepare(xrd.read_reference(str(p))))
        except DataError:  # a few staged CIFs are malformed
            continue
        if len(xrd_refs) == 10:
            break
    per_s, n = rate(xrd, xrd_refs, 5000, rng)
    print(f"xrd: {per_s:,.0f} claims/s over {n:,} claims on {len(xrd_refs)} computed patterns (target >= 20,000/s)")

    raman = RamanOracle()
    raman_refs = [raman.prepare(read_spectrum(p)) for p in sorted((data / "raman_rruff/spectra").glob("*.txt"))[:20]]
    per_s, n = rate(raman, raman_refs, 2500, rng)
    print(f"raman: {per_s:,.0f} claims/s over {n:,} claims on {len(raman_refs)} spectra (target >= 20,000/s)")

    sem = SEMOracle()
    images = sorted((data / "sem_bam_tio2/images").glob("*.tif"))
    t0 = time.perf_counter()
    refs = [calibrate(p).to_dict() for p in images]
    per_image = (time.perf_counter() - t0) / len(images)
    claims = [(Claim("feature_size", float(v)), r) for r in refs for v in rng.uniform(1, 20000, 2000)]
    t0 = time.perf_counter()
    for claim, ref in claims:
        sem.check(claim, ref)
    print(f"sem: {len(claims) / (time.perf_counter() - t0):,.0f} claims/s; scale-bar calibration (detection + OCR) "
          f"{per_image * 1000:.0f} ms per micrograph over {len(images)} images")


if __name__ == "__main__":
    main()
