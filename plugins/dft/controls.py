"""Validity-gate controls for the DFT-grounded oracles, built from the raw reference values (energy above
the hull, band gap, total magnetization) and the oracle's thresholds, with the wording models use.

stability (ε = epsilon, t = ehull_tolerance):
- negative ``class_flip``: "stable"/"on the convex hull" for E_hull > ε, "unstable"/"decomposes" for E_hull ≤ ε;
- negative ``metastable_wrong``: "metastable" for a structure on the hull or above ε;
- negative ``ehull_across``: the E_hull value moved just across the agreement tolerance (t + 0.005–0.03);
- negative ``per_fu_as_atom``: the energy per formula unit written as eV/atom (only where that is > t off);
- positive ``class_true``: the right class, in one of its wordings ("near the hull", "metastable" for 0 < E ≤ ε);
- positive ``ehull_within``: E_hull moved by 0–0.95 t (at, but inside, the tolerance);
- positive ``per_fu``: the energy per formula unit, labelled eV/f.u.
metallicity (zero gap ≤ z, gapped ≥ g; references in the abstention band are skipped):
- negative ``class_flip``; ``gap_across`` (a metal given a gap of g + 0.01–0.3 eV, an insulator one of
  0–z eV); ``semimetal_gapped`` ("semimetal" for a gapped reference);
- positive ``class_true``; ``gap_jitter`` (the gap ×0.8–1.2, 0 for metals); ``semimetal_metal``.
magnetism (zero moment m0 per atom, magnitude factor F):
- negative ``class_flip``; ``moment_across`` (a moment per atom of 0.2–0.9 m0 for a magnet, 1.2–4 m0 for a
  non-magnet); ``magnitude`` (a magnet's moment ×1.5–3 F);
- positive ``class_true``; ``moment_jitter`` (×0.7–1.3 per atom); ``moment_per_fu`` (per formula unit).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from matpcr.protocols import Control
from matpcr.records import Item

NAMES = {
    "stability": {"class_flip": "negative", "metastable_wrong": "negative", "ehull_across": "negative",
                  "per_fu_as_atom": "negative", "class_true": "positive", "ehull_within": "positive", "per_fu": "positive"},
    "metallicity": {"class_flip": "negative", "gap_across": "negative", "semimetal_gapped": "negative",
                    "class_true": "positive", "gap_jitter": "positive", "semimetal_metal": "positive"},
    "magnetism": {"class_flip": "negative", "moment_across": "negative", "magnitude": "negative",
                  "class_true": "positive", "moment_jitter": "positive", "moment_per_fu": "positive"},
}
STABLE = ("thermodynamically stable", "stable", "on the convex hull")
UNSTABLE = ("unstable", "thermodynamically unstable", "unstable and decomposes into competing phases")
NEAR = ("near the hull", "metastable", "stable")
METAL = ("metallic", "a metal")
GAPPED = ("an insulator", "a semiconductor", "non-metallic")
MAGNETIC = ("ferromagnetic", "magnetic", "spin-polarised with a net moment")
NONMAGNETIC = ("non-magnetic", "nonmagnetic", "diamagnetic with no net moment")


def _atoms_per_fu(ref: dict[str, Any]) -> float:
    from pymatgen.core import Composition

    return float(Composition(ref.get("formula") or ref.get("formula_cell")).num_atoms)


def _pick(rng: np.random.Generator, words: tuple[str, ...]) -> str:
    return str(words[int(rng.integers(len(words)))])


def stability(oracle: Any, item: Item, rng: np.random.Generator) -> list[Control]:
    ref = item.reference
    e = ref.get("energy_above_hull")
    if e is None:
        return []
    e = float(e)
    eps, tol = float(oracle.params["epsilon"]), float(oracle.params["ehull_tolerance"])
    near = e <= eps
    on_hull = e <= 1e-6
    out = [Control("class_flip", "negative", [_pick(rng, UNSTABLE if near else STABLE)])]
    if on_hull or not near:
        out.append(Control("metastable_wrong", "negative", ["metastable"]))
    delta = tol + float(rng.uniform(0.005, 0.03))
    value = e + delta if (rng.random() < 0.5 or e - delta < 0) else e - delta
    out.append(Control("ehull_across", "negative", [round(value, 3)], "eV/atom"))
    n = _atoms_per_fu(ref)
    if e * n - e > tol + 1e-9:
        out.append(Control("per_fu_as_atom", "negative", [round(e * n, 3)], "eV/atom", {"atoms_per_fu": n}))
    if on_hull:
        word = _pick(rng, STABLE)
    elif near:
        word = _pick(rng, NEAR)
    else:
        word = _pick(rng, UNSTABLE)
    out.append(Control("class_true", "positive", [word]))
    jitter = float(rng.uniform(0, 0.95)) * tol * float(rng.choice([-1, 1]))
    out.append(Control("ehull_within", "positive", [round(max(0.0, e + jitter), 3)], "eV/atom"))
    out.append(Control("per_fu", "positive", [round(e * n, 3)], "eV/f.u.", {"atoms_per_fu": n}))
    return out


def metallicity(oracle: Any, item: Item, rng: np.random.Generator) -> list[Control]:
    gap = item.reference.get("band_gap")
    if gap is None:
        return []
    gap = float(gap)
    z, g = float(oracle.params["zero_gap_eV"]), float(oracle.params["nonzero_gap_eV"])
    if z < gap < g:
        return []  # the abstention band: no class to control
    metal = gap <= z
    out = [Control("class_flip", "negative", [_pick(rng, GAPPED if metal else METAL)])]
    across = g + float(rng.uniform(0.01, 0.3)) if metal else float(rng.uniform(0.0, z))
    out.append(Control("gap_across", "negative", [round(across, 2)], "eV"))
    if not metal:
        out.append(Control("semimetal_gapped", "negative", ["a semimetal"]))
    out.append(Control("class_true", "positive", [_pick(rng, METAL if metal else GAPPED)]))
    out.append(Control("gap_jitter", "positive", [0.0 if metal else round(gap * float(rng.uniform(0.8, 1.2)), 2)], "eV"))
    if metal:
        out.append(Control("semimetal_metal", "positive", ["a semimetal"]))
    return out


def magnetism(oracle: Any, item: Item, rng: np.random.Generator) -> list[Control]:
    ref = item.reference
    total, nsites = ref.get("total_magnetization"), ref.get("nsites")
    if total is None or not nsites:
        return []
    m = abs(float(total)) / float(nsites)
    m0, factor = float(oracle.params["zero_moment_muB_per_atom"]), float(oracle.params["magnitude_factor"])
    magnetic = m >= m0
    out = [Control("class_flip", "negative", [_pick(rng, NONMAGNETIC if magnetic else MAGNETIC)])]
    across = m0 * float(rng.uniform(0.2, 0.9)) if magnetic else m0 * float(rng.uniform(1.2, 4.0))
    out.append(Control("moment_across", "negative", [round(across, 3)], "µB/atom"))
    if magnetic:
        out.append(Control("magnitude", "negative", [round(m * factor * float(rng.uniform(1.5, 3.0)), 3)], "µB/atom"))
    out.append(Control("class_true", "positive", [_pick(rng, MAGNETIC if magnetic else NONMAGNETIC)]))
    out.append(Control("moment_jitter", "positive", [round(m * float(rng.uniform(0.7, 1.3)), 3)], "µB/atom"))
    try:
        n = _atoms_per_fu(ref)
        out.append(Control("moment_per_fu", "positive", [round(m * n, 3)], "µB/f.u.", {"atoms_per_fu": n}))
    except Exception:
        pass
    return out


_WORDS = {"stability": ("stability", "The compound is"), "metallicity": ("electronic character", "The compound is"),
          "magnetism": ("magnetic state", "The compound is")}
_NUMBERS = {"eV/atom": ("energy above the hull", "Its energy above the convex hull is"),
            "eV/f.u.": ("energy above the hull", "Its energy above the convex hull is"),
            "eV": ("band gap", "The band gap is"),
            "µB/atom": ("net magnetic moment", "The net magnetic moment is"),
            "µB/f.u.": ("net magnetic moment", "The net magnetic moment is")}
_REASONING = ("Considering the chemistry, the oxidation states and the structure type of this compound.",
              "From the composition and what is known for related compounds in this structure type.",
              "Weighing the competing phases in this chemical system and the electronic configuration.")
_DISTRACTORS = ("The calculation used PBE with a plane-wave cutoff of 520 eV and a 6 × 6 × 6 k-point mesh.",
                "The formation energy is −1.23 eV/atom and the cell contains 12 atoms.",
                "The relaxation ran at 0 K with forces converged below 0.01 eV/Å.",
                "A Hubbard U of 3.0 eV was applied to the transition-metal d states.")


def phrasing(family: str) -> Any:
    from matpcr_plugins.templates import Phrasing

    def choose(values: list[Any], unit: str) -> Phrasing:
        words = bool(values) and isinstance(values[0], str)
        label, intro = _WORDS[family] if words else _NUMBERS.get(unit, ("value", "The value is"))
        return Phrasing(label=label, intro=intro, noun="value", decimals=3, words=words,
                        header=f"{label} ({unit})" if unit else label, reasoning=_REASONING, distractors=_DISTRACTORS)

    return choose
