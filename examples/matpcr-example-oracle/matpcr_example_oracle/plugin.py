"""The plugin module named by the entry point: an oracle, a scorer with its own metric, a report
section, a task loader and a task folder — all without touching matpcr's core.

The oracle checks a claimed cubic lattice parameter ``a`` against the value in a reference CIF
index (within 2 % by default). It shows every part a third-party oracle needs: named tolerances,
claim extraction, a check whose message does not reveal the answer, accuracy, planted claims for the
validity gate, and ``read_reference`` for ``matpcr check``. The scorer grades the same question as an
accuracy task (``within_1pct``: the stated ``a`` is within 1 % of the reference), and the report section
prints that metric per run.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from matpcr import hookimpl
from matpcr.errors import DataError
from matpcr.protocols import Metric, Oracle, ReportSection, Scorer
from matpcr.records import Claim, Item, Score, Verdict

_A = re.compile(r"\ba\s*(?:=|≈|is|of)?\s*(\d+(?:\.\d+)?)\s*(?:Å|Angstrom|\\AA|A\b)", re.I)


class LatticeOracle(Oracle):
    name = "lattice"
    constraint = "lattice"
    defaults = {"relative_tolerance": 0.02, "accuracy_relative": 0.005}

    def read_reference(self, spec: str) -> dict[str, Any]:
        try:
            return json.loads(Path(spec).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise DataError(f"{spec}: expected a JSON reference with a field 'a' ({exc})") from None

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        return [Claim("lattice_a", float(m.group(1)), "angstrom", m.span(), m.group(0)) for m in _A.finditer(chain or "")]

    def check(self, claim: Claim, reference: dict[str, Any]) -> Verdict:
        a = float(reference["a"])
        if claim.value <= 0:
            return Verdict("violated", "A lattice parameter must be a positive length.")
        if abs(claim.value - a) / a <= self.params["relative_tolerance"]:
            return Verdict("consistent", "the lattice parameter agrees with the reference cell.")
        return Verdict("violated", "The stated lattice parameter is incompatible with the reference unit cell of "
                       "this phase; recompute it from the cell volume or a measured d-spacing.")

    def accurate(self, claim: Claim, reference: dict[str, Any]) -> bool | None:
        return abs(claim.value - float(reference["a"])) / float(reference["a"]) <= self.params["accuracy_relative"]

    def plant_violation(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        factor = rng.choice([-1, 1]) * rng.uniform(0.1, 0.5)
        return Claim("lattice_a", round(float(reference["a"]) * (1 + factor), 4), "angstrom")

    def plant_consistent(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        factor = rng.uniform(-0.5, 0.5) * self.params["relative_tolerance"]
        return Claim("lattice_a", round(float(reference["a"]) * (1 + factor), 4), "angstrom")


class LatticeScorer(Scorer):
    """Accuracy-style grading: is the last stated ``a`` within 1 % of the reference?"""

    name = "lattice_digits"
    constraint = "lattice"
    primary = "within_1pct"
    metrics = (Metric("within_1pct", description="stated a within 1% of the reference cell"),
               Metric("stated_a", description="share of answers that state a value of a"))

    def score(self, chain: str, item: Item, context: dict[str, Any]) -> dict[str, Score]:
        found = _A.findall(chain or "")
        if not found:
            return {"within_1pct": Score(0.0, None, "no lattice parameter stated"), "stated_a": Score(0.0)}
        a, ref = float(found[-1]), float(item.reference["a"])
        return {"within_1pct": Score(float(abs(a - ref) / ref <= 0.01), found[-1]), "stated_a": Score(1.0, found[-1])}


def lattice_section(runs: list[dict[str, Any]], labels: list[str]) -> list[ReportSection]:
    rows = []
    for label, run in zip(labels, runs):
        for task, metrics in run["metrics"]["tasks"].items():
            rate = (metrics.get("scores") or {}).get("within_1pct")
            if rate and rate.get("value") is not None:
                rows.append([label, task, f"{rate['value']:.3f} [{rate['ci_low']:.3f}, {rate['ci_high']:.3f}]",
                             str(rate["n"])])
    return [ReportSection("Lattice parameter within 1 % (example plugin)", ["model", "task", "rate", "n"], rows)] if rows else []


class CubicCellLoader:
    """Cubic phases from the reference CIF index files in the data directory."""

    def load(self, config: Any, data_dir: Path | None) -> list[Item]:
        if data_dir is None:
            raise DataError("the lattice task needs --data-dir with cif_reference_phases/")
        items = []
        for sub in ("dans_diffraction", "amcsd_minerals"):
            index = data_dir / "cif_reference_phases" / sub / "index.csv"
            if not index.exists():
                continue
            for row in csv.DictReader(open(index, encoding="utf-8")):
                try:
                    a, b, c = (float(row[k]) for k in ("a", "b", "c"))
                except (KeyError, ValueError):
                    continue
                if a == b == c and row.get("alpha") == row.get("beta") == row.get("gamma") == "90" \
                        and row.get("generic_test_cell") != "True":
                    formula = row.get("formula_sum") or row["file"]
                    items.append(Item(id=f"{sub}:{row['file']}", task=config.task, constraint="lattice",
                                      modality="text", text=f"What is the cubic lattice parameter a of {formula} "
                                      f"(space group {row.get('space_group_HM', '?')})?", reference={"a": a},
                                      meta={"dataset": f"cif_reference_phases/{sub}"}))
        return items


@hookimpl
def register_oracles(register: Any) -> None:
    register("lattice", LatticeOracle, "example: cubic lattice parameter within 2% of the reference cell")


@hookimpl
def register_scorers(register: Any) -> None:
    register("lattice_digits", LatticeScorer, "example: stated a within 1% of the reference (accuracy)")


@hookimpl
def register_report_sections(register: Any) -> None:
    register("lattice", lattice_section, "example: the within-1% rate per run")


@hookimpl
def register_tasks(register: Any) -> None:
    register("lattice.cubic", CubicCellLoader, "example: cubic phases from the reference CIF indexes")
    register.include_path(Path(__file__).parent / "tasks")
