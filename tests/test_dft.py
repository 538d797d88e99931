"""The DFT reference store and the stability, metallicity and magnetism oracles on the staged data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from matpcr.errors import DataError
from matpcr.records import Claim
from matpcr_plugins.dft.claims import magnetism_claims, metallicity_claims, stability_claims
from matpcr_plugins.dft.oracles import MagnetismOracle, MetallicityOracle, StabilityOracle
from matpcr_plugins.dft.store import Material, ReferenceStore, from_summary_doc, import_staged, import_table

from conftest import run_cli


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> ReferenceStore:
    db = ReferenceStore(tmp_path_factory.mktemp("refs") / "refs.sqlite")
    counts = import_staged(db, data_dir)
    assert counts["mp:mp40"] == 2861 and counts["alexandria:ternary"] == 4120 and counts["mp:thermomagnetic"] == 800
    return db


def test_store_rows_keep_units_and_provenance(store: ReferenceStore) -> None:
    nafeo2 = [m for m in store.iter(["alexandria:ternary"]) if m.reduced_formula == "NaFeO2" and m.nsites == 4]
    assert nafeo2 and abs(nafeo2[0].total_magnetization) == pytest.approx(5.0, abs=0.1)  # µB per cell (1 Fe³⁺)
    mnrh = store.get("mp-417", "mp:thermomagnetic")
    assert mnrh.total_magnetization == pytest.approx(4.188419) and mnrh.nsites == 2
    nacl = store.get("mp-22862")  # rock salt, MP-40 snapshot
    assert nacl.reduced_formula == "NaCl" and nacl.e_above_hull == 0.0 and nacl.band_gap > 4
    assert nacl.structure and "data_" in nacl.structure
    assert mnrh.provenance["repo"] and mnrh.provenance["licence"]
    with pytest.raises(DataError, match="mp-nonexistent"):
        store.get("mp-nonexistent")


@pytest.mark.parametrize("text, value", [
    ("It lies on the convex hull, so it is thermodynamically stable.", "stable"),
    ("The compound is metastable and decomposes into Li2O and CoO.", "metastable"),  # its own class (docs/oracles.md)
    ("Answer: unstable", "unstable"),
    ("It is not stable with respect to its competing phases.", "unstable"),
    ("Answer: stable", "stable"),
])
def test_stability_phrases(text: str, value: str) -> None:
    assert [c.value for c in stability_claims(text)] == [value]


def test_question_echo_is_no_claim() -> None:
    assert magnetism_claims("AlCuSe2 is a spin-polarised metal.") == []  # echoes "spin-polarised calculations"


def test_hedges_are_unparsable() -> None:
    assert stability_claims("It may or may not be stable; hard to say.") == []
    assert metallicity_claims("It might be a metal or possibly a semiconductor.") == []
    assert magnetism_claims("I cannot determine its magnetism.") == []


@pytest.mark.parametrize("text, kind, value", [
    ("It is metallic.", "metallicity", "metallic"),
    ("Graphite is a semimetal.", "metallicity", "metallic"),
    ("It is an insulator.", "metallicity", "gapped"),
    ("It has a band gap of 1.1 eV.", "band_gap", 1.1),
    ("4. Band gap: 1.09 eV\n\nAnswer: Answer: 1.09 eV.", "band_gap", 1.09),  # seen from SmolLM2
])
def test_metallicity_phrases(text: str, kind: str, value: object) -> None:
    # a stated gap with no class word also implies the class (nonzero → gapped): both are claims
    [claim] = [c for c in metallicity_claims(text) if c.kind == kind]
    assert claim.value == value
    if kind == "band_gap":
        assert [c.value for c in metallicity_claims(text) if c.kind == "metallicity"] == ["gapped"]


def test_magnetism_units_are_converted_per_atom() -> None:
    ref = {"material_id": "x", "formula": "Fe2O3", "nsites": 10, "total_magnetization": -20.0}  # 2 µB/atom, sign ignored
    oracle = MagnetismOracle()
    def moment(text: str) -> Claim:  # the class a moment implies is a claim too; these tests are about the moment
        [claim] = [c for c in magnetism_claims(text) if c.kind == "magnetic_moment"]
        return claim

    per_fe = moment("Ferromagnetic with 5 µB per Fe.")       # 5 × 2/5 = 2 µB/atom
    per_fu = moment("total moment 10 µB/f.u.")               # 10 / 5 = 2 µB/atom
    per_cell = moment("The cell carries 20 μ_B.")             # 20 / 10 = 2 µB/atom
    for claim in (per_fe, per_fu, per_cell):
        assert oracle.per_atom(claim.value, claim.unit, ref) == pytest.approx(2.0)
        assert oracle.check(claim, ref).status == "consistent"
    assert oracle.check(moment("about 100 µB per atom"), ref).details["reason"] == "magnitude"
    assert oracle.check(magnetism_claims("It is non-magnetic.")[0], ref).status == "violated"
    assert oracle.check(magnetism_claims("It is antiferromagnetic.")[0],
                        {**ref, "total_magnetization": 0.02}).status == "consistent"


def test_metallicity_abstention_band_and_missing_fields() -> None:
    oracle = MetallicityOracle()
    metal = metallicity_claims("It is a metal.")[0]
    assert oracle.check(metal, {"band_gap": 0.0}).status == "consistent"
    assert oracle.check(metal, {"band_gap": 1.5}).status == "violated"
    assert oracle.check(metal, {"band_gap": 0.1}).status == "abstain"
    assert oracle.check(metal, {"material_id": "mp-1", "band_gap": None}).status == "abstain"
    assert StabilityOracle().check(Claim("stability", "stable"), {"energy_above_hull": None}).details["reason"] == "missing_field"


def test_stability_threshold_and_accuracy() -> None:
    oracle = StabilityOracle()
    stable = Claim("stability", "stable")
    assert oracle.check(stable, {"energy_above_hull": 0.03}).status == "consistent"
    assert oracle.check(stable, {"energy_above_hull": 0.08}).status == "violated"
    assert StabilityOracle(epsilon=0.0).check(stable, {"energy_above_hull": 0.03}).status == "violated"
    assert oracle.accurate(stable, {"energy_above_hull": 0.03, "is_stable": False}) is False
    assert oracle.accurate(stable, {"energy_above_hull": 0.03}) is None


def test_plants_on_every_real_reference(store: ReferenceStore) -> None:
    rng = np.random.default_rng(0)
    counts = {"stability": 0, "metallicity": 0, "magnetism": 0}
    for oracle in (StabilityOracle(), MetallicityOracle(), MagnetismOracle()):
        for m in store.iter():
            ref = m.reference()
            try:
                bad, good = oracle.plant_violation(ref, rng), oracle.plant_consistent(ref, rng)
            except DataError:
                continue  # a missing field or the abstention band
            assert oracle.check(bad, ref).status == "violated", (oracle.name, m.material_id, bad)
            assert oracle.check(good, ref).status == "consistent", (oracle.name, m.material_id, good)
            counts[oracle.name] += 1
    assert counts["stability"] > 10_000 and counts["metallicity"] > 5_000 and counts["magnetism"] > 6_000


def test_summary_doc_conversion_from_staged_structures(data_dir: Path) -> None:
    """The mp-api path: emmet SummaryDocs built from staged MP data convert into store rows.
    (The Materials Project service itself is unreachable here.)"""
    from emmet.core.summary import SummaryDoc
    from pymatgen.core import Lattice, Structure

    entries = json.loads((data_dir / "mp_chemsys_hull_entries" / "Na-Fe-P-O_entries.json").read_text())[:5]
    for e in entries:
        s = Structure(Lattice(e["lattice_matrix_A"]), e["species"], e["frac_coords"])
        doc = SummaryDoc.from_structure(meta_structure=s, material_id=e["material_id"],
                                        energy_above_hull=e["e_above_hull_eV_per_atom"], is_stable=e["is_stable"],
                                        band_gap=None, total_magnetization=None, deprecated=False)
        m = from_summary_doc(doc, "2024.11")
        assert m.material_id == e["material_id"] and m.nsites == e["nsites"] and m.source == "mp:api"
        assert m.e_above_hull == e["e_above_hull_eV_per_atom"] and m.is_stable == e["is_stable"]
        assert Structure.from_str(m.structure, fmt="cif").composition.reduced_formula == s.composition.reduced_formula


def test_pull_needs_a_key_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MP_API_KEY", raising=False)
    proc = run_cli("refs", "pull", "mp", "--ids", "mp-149", "--store", str(tmp_path / "s.sqlite"), env={"MP_API_KEY": ""})
    assert proc.returncode == 2 and "MP_API_KEY" in proc.stderr


def test_import_table_with_mapping(tmp_path: Path) -> None:
    csv_path = tmp_path / "mine.csv"
    csv_path.write_text("id,comp,ehull_meV,gap\nx-1,Fe2O3,0.0,2.1\nx-2,NaCl,0.1,5.0\n")
    db = ReferenceStore(tmp_path / "s.sqlite")
    n = import_table(db, csv_path, "lab:test", {"material_id": "id", "formula": "comp", "e_above_hull": "ehull_meV"})
    assert n == 2 and db.get("x-1").band_gap == 2.1 and db.get("x-2").reduced_formula == "NaCl"
    bad = tmp_path / "bad.csv"
    bad.write_text("name,gap\nfoo,1\n")
    with pytest.raises(DataError, match="row 1 has no material id"):
        import_table(db, bad, "lab:bad")


def test_check_and_stats_commands(store: ReferenceStore, tmp_path: Path) -> None:
    env = {"MATPCR_REFSTORE": str(store.path)}
    proc = run_cli("check", "stability", "--reference", "mp-22862", "--chain", "NaCl lies on the convex hull. Answer: stable",
                   "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "consistent"
    record = tmp_path / "ref.json"
    record.write_text(json.dumps({"material_id": "mp-x", "energy_above_hull": 0.2, "is_stable": False, "band_gap": 0.0,
                                  "total_magnetization": 0.0, "nsites": 4, "formula": "FeO"}))
    proc = run_cli("check", "metallicity", "--reference", str(record), "--chain", "It is an insulator.", "--json")
    assert json.loads(proc.stdout)["status"] == "violated"
    stats = json.loads(run_cli("refs", "stats", "--json", env=env).stdout)
    assert stats["sources"]["mp:thermomagnetic"]["magnetic"] == 800
    assert stats["epsilon_sensitivity"]["0.0"]["disagree"] == 0  # is_stable means E_hull = 0 in these sources
    assert stats["epsilon_sensitivity"]["0.05"]["share"] > stats["epsilon_sensitivity"]["0.025"]["share"]


def test_dft_tasks_run_with_the_default_model(data_dir: Path, tmp_path: Path, smollm2_dir: Path) -> None:
    proc = run_cli("run", "--tasks", "dft", "--limit", "2", "--data-dir", str(data_dir), "--output-dir", str(tmp_path),
                   "--cache", "none", "--generation", "max_new_tokens=32", "--no-progress",
                   env={"MATPCR_REFSTORE": str(tmp_path / "fresh.sqlite")})  # an empty store fills itself
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    records = [json.loads(l) for l in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert {r["constraint"] for r in records} == {"stability", "metallicity", "magnetism"} and len(records) == 6
    items = [json.loads(l) for l in (run_dir / "items.jsonl").read_text().splitlines()]
    for item in items:  # the material id is hidden source metadata
        assert item["reference"]["sidecar"]["material_id"] not in item["text"]
