"""How fast the claim reader is on degenerate output (issue #12: a 1 MB chain of numbers in under a second).

    python bench/claims_speed.py

Three shapes of a 1 MB chain a stalled model might write: one endless list ("Answer: 2θ = 12.34, 56.78, ...",
every value distinct, so every one is a claim), numbers each with a unit ("12.3 cm⁻¹ 45.6 cm⁻¹ ..."), and a
repeated sentence with three numbers and their cues; and for the stability reader a 1 MB markdown table under one
header, 1 MB of JSON objects (each row's block and header are looked up once per chain, not per number), and one-line
chains of many separate lists (energies, site moments), where a lookup bounded by the sentence would be quadratic;
and padding (runs of thousands of spaces after a value; an Answer line offering the classes 10⁵ times). Prints the best of three reads (the machine may be shared),
how the time grows with length (it should double when the chain doubles), each oracle's reader on the list,
each oracle on a list of its own quantity, and what the length cap does to a 4 MB chain. A benchmark, not a timed test.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Any


def chains(size: int) -> dict[str, str]:
    rng = random.Random(0)
    parts: dict[str, list[str]] = {"list": ["Answer: 2θ = "], "units": [], "prose": []}
    lengths = {k: sum(map(len, v)) for k, v in parts.items()}
    while min(lengths.values()) < size:
        x = rng.uniform(5, 3000)
        for key, piece in (("list", f"{x:.2f}, "), ("units", f"{x:.1f} cm⁻¹ "),
                           ("prose", f"The peak at {x:.2f}° (d = {x / 10:.3f} Å, 25 °C) is strong. ")):
            if lengths[key] < size:
                parts[key].append(piece)
                lengths[key] += len(piece)
    return {k: "".join(v)[:size] for k, v in parts.items()}


def own_lists(size: int) -> dict[str, str]:
    """A list of each oracle's own quantity, with its unit after every value ("Answer: bands at 12.34 cm⁻¹, 56.78 cm⁻¹, ...")."""
    rng = random.Random(0)
    units = {"raman": ("bands at", "cm⁻¹"), "sem": ("sizes", "nm"), "stability": ("E_hull =", "meV/atom"),
             "metallicity": ("band gaps", "eV"), "magnetism": ("moments", "µB/f.u.")}
    out = {}
    for name, (label, unit) in units.items():
        parts = [f"Answer: {label} "]
        length = len(parts[0])
        while length < size:
            piece = f"{rng.uniform(1, 3000):.2f} {unit}, "
            parts.append(piece)
            length += len(piece)
        out[name] = "".join(parts)[:size]
    return out


def timed(oracle: Any, chain: str, repeats: int = 3) -> tuple[float, float, Any]:
    times, extraction = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        extraction = oracle.read(chain)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), extraction


def main() -> int:
    from matpcr.plugins import get_manager

    registry = get_manager().registry
    oracles = {name: registry.get("oracles", name).factory()
               for name in ("xrd", "raman", "sem", "stability", "metallicity", "magnetism")}
    print(f"{'oracle':<12} {'shape':<6} {'MB':>5} {'best s':>7} {'median s':>8} {'claims':>7} {'rejected':>8}")
    one_mb = chains(1_000_000)
    for shape, chain in one_mb.items():
        best, median, extraction = timed(oracles["xrd"], chain)
        print(f"{'xrd':<12} {shape:<6} {len(chain.encode()) / 1e6:>5.2f} {best:>7.3f} {median:>8.3f} "
              f"{len(extraction.claims):>7} {len(extraction.rejected):>8}")
    for size in (250_000, 500_000):
        chain = chains(size)["list"]
        best, median, extraction = timed(oracles["xrd"], chain)
        print(f"{'xrd':<12} {'list':<6} {len(chain.encode()) / 1e6:>5.2f} {best:>7.3f} {median:>8.3f} "
              f"{len(extraction.claims):>7} {len(extraction.rejected):>8}")
    for name, oracle in oracles.items():
        if name == "xrd":
            continue
        best, median, extraction = timed(oracle, one_mb["list"], repeats=1)
        print(f"{name:<12} {'list':<6} {len(one_mb['list'].encode()) / 1e6:>5.2f} {best:>7.3f} {median:>8.3f} "
              f"{len(extraction.claims):>7} {len(extraction.rejected):>8}")
    # each oracle on a 1 MB list of its own quantity, every value distinct: every number is a claim
    for name, chain in own_lists(1_000_000).items():
        best, median, extraction = timed(oracles[name], chain, repeats=1)
        print(f"{name:<12} {'own':<6} {len(chain.encode()) / 1e6:>5.2f} {best:>7.3f} {median:>8.3f} "
              f"{len(extraction.claims):>7} {len(extraction.rejected):>8}")
    # machine-written and tabulated answers to the DFT questions: every row or key is looked up in its block
    table = "| database | E_hull |\n|---|---|\n" + "".join(f"| db{i} | {i % 97} meV/atom |\n" for i in range(44_000))
    keyed = "".join(f'{{"stable": {"true" if i % 2 else "false"}, "e_above_hull": 0.0{i % 9}}}, ' for i in range(25_000))
    # one-line chains of many separate numbers (one "sentence" of 10⁵ lists): no lookup may scan the whole sentence
    runs = "".join(f"some energy {i % 97} meV/atom and a direct transition {i % 13}.{i % 7} eV, " for i in range(20_000))
    sites = "".join(f"Fe and Co carry {i % 5}.{i % 9}, {i % 3}.5 µB; " for i in range(30_000))
    # a stalled model's padding: long runs of spaces after each value (cue patterns backtrack over a run), and an
    # Answer line that offers the classes forever ("metallic or insulating or ..."), each sentence read once
    spaces = "".join(f"The Fe moment is {i % 5}.{i % 9} µB" + " " * 5000 + "which we do not reproduce. " for i in range(200))
    marks = "".join(f"The Fe moment is {i % 5}.{i % 9} µB " + "*~{" * 1500 + " which we do not reproduce. " for i in range(200))
    options = "Answer: " + " or ".join(["metallic", "insulating"] * 60_000) + " - can't tell."
    for name, shape, chain in (("magnetism", "spaces", spaces[:1_000_000]), ("magnetism", "marks", marks[:1_000_000]),
                               ("metallicity", "offers", options[:1_000_000]),("stability", "table", table[:1_000_000]), ("stability", "json", keyed[:1_000_000]),
                               ("stability", "runs", runs[:1_000_000]), ("metallicity", "runs", runs[:1_000_000]),
                               ("magnetism", "sites", sites[:1_000_000])):
        best, median, extraction = timed(oracles[name], chain, repeats=1)
        print(f"{name:<12} {shape:<6} {len(chain.encode()) / 1e6:>5.2f} {best:>7.3f} {median:>8.3f} "
              f"{len(extraction.claims):>7} {len(extraction.rejected):>8}")
    # the slowest shape found by fuzzing 31 repeated pieces x 6 readers (all linear): every number opens a bracket,
    # so none takes the fast lane of plain lists and each gets the full context look (about 40 s per MB)
    paren = "".join(f"({i % 90 + 5}.{i % 7}° " for i in range(30_000))[:200_000]
    best, median, extraction = timed(oracles["xrd"], paren, repeats=1)
    print(f"{'xrd':<12} {'paren':<6} {len(paren.encode()) / 1e6:>5.2f} {best:>7.3f} {median:>8.3f} "
          f"{len(extraction.claims):>7} {len(extraction.rejected):>8}")
    big = chains(4_000_000)["list"]
    best, _, extraction = timed(oracles["xrd"], big, repeats=1)
    print(f"a 4 MB list with the xrd reader: {best:.3f} s; notes: {extraction.notes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
