"""Oracle power: how easy each oracle is to pass by chance, and how often it catches realistic mistakes.

    python bench/oracle_power.py [--max-refs 60] [--families xrd,raman,...] [--data-dir DIR] [--json OUT]

Per family: the distribution over staged references of p_chance (the probability that a uniformly random
claim over the instrument window / spectrum range / plausible range is judged consistent; Oracle.chance),
and the negative-control recall of the validity gate (matpcr/validate.py). For diffraction it also reports
the recall on `random` and `other_phase` beside the chance-corrected PCR those controls would score as
"answers": κ = (PCR − p̄)/(1 − p̄) with p̄ the mean per-item chance-pass probability (docs/statistics.md).
A benchmark that prints figures; never a timed test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-refs", type=int, default=60)
    parser.add_argument("--families", default=None)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    from matpcr import stats
    from matpcr.datadir import resolve_data_dir
    from matpcr.validate import validate

    families = args.families.split(",") if args.families else None
    report = validate(families, data_dir=resolve_data_dir(args.data_dir), max_refs=args.max_refs or None,
                      seed=args.seed, per_reference=2, sensitivity=False)
    out = {}
    print(f"{'family':<12} {'refs':>5} {'p_chance q10':>12} {'q50':>6} {'q90':>6} {'>0.3':>6} {'recall d':>9} "
          f"{'false alarm f':>14}")
    for name, fam in report["families"].items():
        d = fam["power"]["distribution"]
        q = (lambda k: f"{d[k]:.3f}" if d else "-")
        print(f"{name:<12} {fam['n_references']:>5} {q('q10'):>12} {q('q50'):>6} {q('q90'):>6} "
              f"{q('share_over_0.3'):>6} {fam['recall'] or 0:>9.3f} {fam['false_alarm'] or 0:>14.3f}")
        out[name] = {"power": d, "recall": fam["recall"], "false_alarm": fam["false_alarm"],
                     "negative_controls": {c: v["rate"] for c, v in fam["controls"].items() if v["kind"] == "negative"}}
    xrd = report["families"].get("xrd")
    if xrd:
        per_ref = xrd["power"]["per_reference"]
        print("\ndiffraction: the controls read as answers (a model that wrote them)")
        print(f"{'control':<14} {'n':>5} {'recall':>7} {'PCR':>6} {'p̄':>6} {'κ (chance-corrected)':>22}")
        from matpcr.validate import references_for, run_controls
        from matpcr.plugins import get_manager

        oracle = get_manager().registry.get("oracles", "xrd").factory()
        items = references_for("xrd", resolve_data_dir(args.data_dir), args.max_refs or None, args.seed)
        outcomes, _ = run_controls("xrd", oracle, items, 2, args.seed)
        for control in ("random", "other_phase", "near_miss", "lattice_strain", "wrong_wavelength", "true_jitter"):
            rows = [o for o in outcomes if o.control == control and o.status in ("consistent", "violated")
                    and per_ref.get(o.reference) is not None]
            if not rows:
                continue
            passed = [float(o.status == "consistent") for o in rows]
            # π_i: each of the item's k claims replaced by a uniform random 2θ, all pass: p^k
            chance = [per_ref[o.reference] ** len(o.values) for o in rows]
            kappa = stats.chance_corrected_pcr(passed, chance, [o.source for o in rows], n_boot=2000)
            recall = 1 - float(np.mean(passed))
            print(f"{control:<14} {len(rows):>5} {recall:>7.3f} {np.mean(passed):>6.3f} {np.mean(chance):>6.3f} "
                  f"{kappa.value:>8.3f} [{kappa.ci_low:.3f}, {kappa.ci_high:.3f}]")
            out.setdefault("xrd_as_answers", {})[control] = {"n": len(rows), "recall": recall, "pcr": float(np.mean(passed)),
                                                             "p_bar": float(np.mean(chance)),
                                                             "kappa": kappa.to_dict()}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
