"""The DFT-grounded oracles (MatPCR Methods, "DFT-grounded" paragraphs).

References are standardized computational values (Materials Project, Alexandria, OQMD), never called
experimental truth. A reference lacking the needed field makes the claim abstain with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from matpcr.errors import DataError
from matpcr.protocols import Oracle
from matpcr.records import Claim, Item, Verdict
from matpcr_plugins.dft import claims as parse


class _DFTOracle(Oracle):
    """Shared: references are store ids or JSON records with Materials Project field names."""

    field = ""

    def read_reference(self, spec: str) -> dict[str, Any]:
        path = Path(spec)
        if path.suffix == ".json" or path.exists():
            return self.read_json_reference(path)
        from matpcr_plugins.dft.store import ReferenceStore

        return ReferenceStore().get(spec).reference()

    def _value(self, reference: dict[str, Any]) -> float | None:
        value = reference.get(self.field)
        return None if value is None else float(value)

    def _missing(self, reference: dict[str, Any]) -> Verdict:
        return Verdict("abstain", f"the reference for {reference.get('material_id', 'this material')} has no "
                       f"{self.field.replace('_', ' ')}, so the claim cannot be checked", {"reason": "missing_field"})


class StabilityOracle(_DFTOracle):
    name = "stability"
    constraint = "stability"
    field = "energy_above_hull"
    tolerance_param = "epsilon"
    sensitivity_values = (0.0, 0.025, 0.05, 0.10)
    defaults = {"epsilon": 0.05}  # eV/atom, the paper's near-hull threshold

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        return parse.stability_claims(chain)

    def render_claim(self, claim: Claim) -> str:
        word = "thermodynamically stable (on or near the convex hull)" if claim.value == "stable" else "unstable; it decomposes"
        return f"Considering competing phases, the compound is {word}.\nAnswer: {claim.value}"

    def check(self, claim: Claim, reference: dict[str, Any]) -> Verdict:
        ehull = self._value(reference)
        if ehull is None:
            return self._missing(reference)
        eps = self.params["epsilon"]
        near = ehull <= eps + 1e-12
        if (claim.value == "stable") == near:
            return Verdict("consistent", f"the stability claim agrees with the computed energy above the hull at ε = {eps:g} eV/atom.")
        return Verdict("violated", f"The stability claim contradicts the computed energy above the convex hull at the "
                       f"ε = {eps:g} eV/atom near-hull threshold.", {"reason": "class_mismatch"})

    def accurate(self, claim: Claim, reference: dict[str, Any]) -> bool | None:
        label = reference.get("is_stable")
        return None if label is None else (claim.value == "stable") == bool(label)

    def plant_violation(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        ehull = self._value(reference)
        if ehull is None:
            raise DataError("no hull energy")
        return Claim("stability", "unstable" if ehull <= self.params["epsilon"] else "stable")

    def plant_consistent(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        ehull = self._value(reference)
        if ehull is None:
            raise DataError("no hull energy")
        return Claim("stability", "stable" if ehull <= self.params["epsilon"] else "unstable")


class MetallicityOracle(_DFTOracle):
    name = "metallicity"
    constraint = "metallicity"
    field = "band_gap"
    tolerance_param = "zero_gap_eV"
    defaults = {"zero_gap_eV": 0.05, "nonzero_gap_eV": 0.20}  # between the two: abstain, excluded from PCR

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        return parse.metallicity_claims(chain)

    def render_claim(self, claim: Claim) -> str:
        if claim.kind == "band_gap":
            return f"From its electronic structure the band gap is about {claim.value:g} eV.\nAnswer: band gap of {claim.value:g} eV"
        word = "metallic" if claim.value == "metallic" else "an insulator"
        return f"The compound is {word}.\nAnswer: {word}"

    def _class(self, gap: float) -> str | None:
        if gap <= self.params["zero_gap_eV"]:
            return "metallic"
        if gap >= self.params["nonzero_gap_eV"]:
            return "gapped"
        return None

    def check(self, claim: Claim, reference: dict[str, Any]) -> Verdict:
        gap = self._value(reference)
        if gap is None:
            return self._missing(reference)
        ref_class = self._class(gap)
        if ref_class is None:
            return Verdict("abstain", "the computed gap lies in the abstention band between the zero and non-zero "
                           "classes, so the item is excluded", {"reason": "abstention_band"})
        claimed = claim.value if claim.kind == "metallicity" else self._class(float(claim.value))
        if claimed is None:
            return Verdict("abstain", "the claimed gap lies in the abstention band", {"reason": "claim_in_band"})
        if claimed == ref_class:
            return Verdict("consistent", "the claimed gap class agrees with the computed band gap.")
        return Verdict("violated", "The claimed electronic class (zero versus non-zero band gap) contradicts the "
                       "computed band structure.", {"reason": "class_mismatch"})

    def _ref_class(self, reference: dict[str, Any]) -> str:
        gap = self._value(reference)
        cls = None if gap is None else self._class(gap)
        if cls is None:
            raise DataError("gap missing or in the abstention band")
        return cls

    def plant_violation(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        cls = self._ref_class(reference)
        if rng.random() < 0.5:
            return Claim("metallicity", "gapped" if cls == "metallic" else "metallic")
        return Claim("band_gap", round(float(rng.uniform(0.5, 5.0)), 2) if cls == "metallic" else 0.0, "eV")

    def plant_consistent(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        return Claim("metallicity", self._ref_class(reference))


class MagnetismOracle(_DFTOracle):
    name = "magnetism"
    constraint = "magnetism"
    field = "total_magnetization"
    tolerance_param = "zero_moment_muB_per_atom"
    defaults = {"zero_moment_muB_per_atom": 0.05, "magnitude_factor": 10.0}

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        return parse.magnetism_claims(chain)

    def render_claim(self, claim: Claim) -> str:
        if claim.kind == "magnetic_moment":
            basis = claim.unit.split("/", 1)[1]
            basis = {"fu": "f.u.", "atom": "atom", "cell": "cell"}.get(basis, basis.replace("element:", ""))
            return f"The spin-polarised ground state carries a moment.\nAnswer: {claim.value:g} µB per {basis}"
        word = "ferromagnetic" if claim.value == "magnetic" else "non-magnetic"
        return f"The compound is {word}.\nAnswer: {word}"

    @staticmethod
    def per_atom(value: float, unit: str, reference: dict[str, Any]) -> float:
        """Convert a claimed moment to µB per atom of the reference cell (per f.u., per cell, per element)."""
        from pymatgen.core import Composition

        basis = unit.split("/", 1)[1] if "/" in unit else "cell"
        nsites = float(reference["nsites"])
        if basis == "atom":
            return value
        if basis == "cell":
            return value / nsites
        reduced = Composition(reference.get("formula") or reference.get("formula_cell"))
        if basis == "fu":
            return value / reduced.num_atoms
        element = basis.split(":", 1)[1]
        fraction = reduced.get_atomic_fraction(element)
        if fraction == 0:
            raise DataError(f"the claim is per {element}, which is not in {reduced.reduced_formula}")
        return value * fraction  # moment per element atom times that element's share of atoms

    def check(self, claim: Claim, reference: dict[str, Any]) -> Verdict:
        total = self._value(reference)
        if total is None or not reference.get("nsites"):
            return self._missing(reference)
        ref = abs(total) / float(reference["nsites"])  # magnitude only: the sign of M is never compared
        zero = self.params["zero_moment_muB_per_atom"]
        ref_magnetic = ref >= zero
        if claim.kind == "magnetism":
            if (claim.value == "magnetic") == ref_magnetic:
                return Verdict("consistent", "the magnetic class agrees with the computed net magnetization.")
            return Verdict("violated", "The claimed magnetic class (near-zero versus finite net moment) contradicts the "
                           "computed total magnetization.", {"reason": "class_mismatch"})
        try:
            claimed = abs(self.per_atom(float(claim.value), claim.unit, reference))
        except (DataError, ValueError, KeyError) as exc:
            return Verdict("abstain", f"the claimed moment cannot be converted per atom ({exc})", {"reason": "unit"})
        if (claimed >= zero) != ref_magnetic:
            return Verdict("violated", "The claimed moment falls in the wrong class (near-zero versus finite net moment) "
                           "for the computed total magnetization.", {"reason": "class_mismatch"})
        if ref_magnetic:
            ratio = claimed / ref
            factor = self.params["magnitude_factor"]
            if not 1 / factor <= ratio <= factor:
                return Verdict("violated", "The claimed moment differs from the computed net magnetization by more than "
                               "an order of magnitude once converted per atom.", {"reason": "magnitude"})
        return Verdict("consistent", "the claimed moment agrees with the computed magnetization within an order of magnitude.")

    def _ref(self, reference: dict[str, Any]) -> float:
        total = self._value(reference)
        if total is None or not reference.get("nsites"):
            raise DataError("no magnetization")
        return abs(total) / float(reference["nsites"])

    def plant_violation(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        ref = self._ref(reference)
        magnetic = ref >= self.params["zero_moment_muB_per_atom"]
        if not magnetic or rng.random() < 0.5:
            return Claim("magnetism", "nonmagnetic" if magnetic else "magnetic")
        factor = self.params["magnitude_factor"] * rng.uniform(2.0, 5.0)
        return Claim("magnetic_moment", round(ref * factor, 4), "muB/atom")

    def plant_consistent(self, reference: dict[str, Any], rng: np.random.Generator) -> Claim:
        ref = self._ref(reference)
        magnetic = ref >= self.params["zero_moment_muB_per_atom"]
        if magnetic and rng.random() < 0.5:
            # at or above the reference moment, so a borderline material stays in its class
            return Claim("magnetic_moment", round(abs(float(reference["total_magnetization"])) * rng.uniform(1.0, 1.5), 4),
                         "muB/cell")
        return Claim("magnetism", "magnetic" if magnetic else "nonmagnetic")
