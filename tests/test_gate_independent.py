"""Gate rates against independently computed ones, on real staged references.

The gate's controls are built by the oracles' control modules; here the *expected* verdict of each control
chain is recomputed without the oracle (pymatgen's XRDCalculator straight from the structure file, the
recorded SEM pixel size, the DFT criteria written out), and the gate's rate per control must match it
up to the chains the reader left unparsed."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from matpcr.plugins import get_manager
from matpcr.validate import references_for, run_controls, summarize


def _oracle(name: str):
    return get_manager().registry.get("oracles", name).factory()


def _check_rates(outcomes, expected_violated, names, min_agree=0.95):
    table = summarize(outcomes, names)
    by: dict[str, list] = {}
    for o, exp in zip(outcomes, expected_violated):
        by.setdefault(o.control, []).append((o, exp))
    checked = 0
    for control, rows in by.items():
        parsed = [(o, e) for o, e in rows if o.status in ("consistent", "violated")]
        if not parsed:
            continue
        agree = np.mean([(o.status == "violated") == e for o, e in parsed])
        assert agree >= min_agree, (control, agree)
        independent = sum(e for _, e in rows) / len(rows)
        unparsed = table[control]["unparsed"] / table[control]["n"]
        assert abs(table[control]["rate"] - independent) <= unparsed + (1 - min_agree) + 1e-9, \
            (control, table[control]["rate"], independent)
        checked += 1
    return checked


def test_xrd_controls_match_xrdcalculator(data_dir: Path) -> None:
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    from matpcr_plugins.xrd.patterns import load_structure

    oracle = _oracle("xrd")
    items = [i for i in references_for("xrd", data_dir, 8, 3) if i.reference.get("kind") == "computed"]
    assert len(items) >= 5
    outcomes, _ = run_controls("xrd", oracle, items, 1, 3, template_names=["answer_line"])
    tol, floor = oracle.params["tolerance_deg"], oracle.params["min_rel_intensity"]
    lines = {}
    for item in items:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pattern = XRDCalculator("CuKa").get_pattern(load_structure(item.reference["file"]),
                                                        two_theta_range=tuple(item.reference["window"]))
        x, y = np.asarray(pattern.x), np.asarray(pattern.y)
        lines[item.id] = (x[y >= floor * y.max() / 100], tuple(item.reference["window"]))
    expected = []
    for o in outcomes:
        peaks, (lo, hi) = lines[o.reference]
        expected.append(any(not lo <= v <= hi or np.min(np.abs(peaks - v)) > tol for v in o.values))
    assert _check_rates(outcomes, expected, dict(oracle.control_names)) >= 6


def test_sem_controls_match_recorded_calibration(data_dir: Path) -> None:
    oracle = _oracle("sem")
    items = references_for("sem", data_dir, 20, 0)
    outcomes, _ = run_controls("sem", oracle, items, 2, 0)
    fov = {i.id: float(i.reference["fov_nm"]) for i in items}
    to_nm = {"nm": 1.0, "µm": 1000.0}
    expected = [o.values[0] * to_nm[o.unit] > fov[o.reference] for o in outcomes]
    assert _check_rates(outcomes, expected, dict(oracle.control_names), min_agree=0.9) == 4


def test_dft_class_controls_match_criteria(data_dir: Path) -> None:
    oracle = _oracle("stability")
    items = references_for("stability", data_dir, 40, 1)
    outcomes, _ = run_controls("stability", oracle, items, 2, 1)
    eps = oracle.params["epsilon"]
    ehull = {i.id: float(i.reference["energy_above_hull"]) for i in items}
    stable_words = {"thermodynamically stable", "stable", "on the convex hull", "near the hull"}
    classes = [o for o in outcomes if o.control in ("class_flip", "class_true", "metastable_wrong")]
    expected = []
    for o in classes:
        e, word = ehull[o.reference], o.values[0]
        if word == "metastable":
            expected.append(not (1e-6 < e <= eps))
        else:
            expected.append((word in stable_words) != (e <= eps))
    assert _check_rates(classes, expected, dict(oracle.control_names), min_agree=0.9) == 3


def test_stated_ehull_sets_no_class() -> None:
    """A gate finding (ehull_within flagged ~50% while a stated E_hull was also read as class 'unstable'):
    the reader's contract is that E_hull never sets the class."""
    oracle = _oracle("stability")
    claims = oracle.read("Its energy above the convex hull is 0.017 eV/atom.").claims
    assert [c.kind for c in claims] == ["e_above_hull"]


def test_raman_controls_match_scipy_prominence(data_dir: Path) -> None:
    from scipy.signal import find_peaks

    oracle = _oracle("raman")
    items = references_for("raman", data_dir, 15, 2)
    outcomes, _ = run_controls("raman", oracle, items, 2, 2)
    tol, frac = oracle.params["tolerance_cm1"], oracle.params["prominence_fraction"]
    peaks = {}
    for item in items:
        x = np.asarray(item.reference["shift"], float)
        y = np.asarray(item.reference["intensity"], float)
        idx, _ = find_peaks(y, prominence=frac * (y.max() - y.min()))
        peaks[item.id] = (x[idx], x[0], x[-1])
    expected = []
    for o in outcomes:
        p, lo, hi = peaks[o.reference]
        expected.append(any(not lo - tol <= v <= hi + tol or p.size == 0 or np.min(np.abs(p - v)) > tol
                            for v in o.values))
    assert _check_rates(outcomes, expected, dict(oracle.control_names), min_agree=0.9) >= 6
