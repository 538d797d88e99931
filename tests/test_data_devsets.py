"""``mp_multifidelity_gaps`` and the Alexandria/OQMD devset files rebuilt from their upstream formats.

The upstream files themselves (megnet's ``data_no_structs.json.gz``, matsciml's devset LMDB files) are binary and not
here. Each test writes them from the staged files in the format upstream's code documents and writes (see the
docstring of ``matpcr_plugins.datasources.devsets``), runs the builder and compares with the staged bytes. That checks
the conversion (columns, ordering, rounding, formatting), not the upstream bytes: what the real files hold beyond
what the staging kept is not known here. ``megnet_like`` and ``write_devset_lmdb`` serve the pull tests as well.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import pickle
import pickletools
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import DATA_DIR
from matpcr.errors import DataError
from matpcr_plugins.datasources import devsets


def staged_set(name: str) -> Path:
    """The staged set's folder (``$MATPCR_DATA_DIR`` or ``../shared/data``); the test skips without it."""
    folder = DATA_DIR / name
    if not folder.is_dir():
        pytest.skip(f"the staged {name}/ is missing at {DATA_DIR}; set MATPCR_DATA_DIR to the shared/data folder")
    return folder


# --- megnet -------------------------------------------------------------------------------------------------------

def megnet_like(data_dir: Path, bare_icsd: bool = False) -> bytes:
    """megnet's ``data_no_structs.json.gz`` written from the two staged CSVs: ``{fidelity: {id: gap}}`` with the
    JSON number text kept (``0`` vs ``0.0``), ids inserted in reverse so that the builder's ordering is exercised."""
    folder = data_dir / devsets.GAPS_SET
    with open(folder / "computed_gaps_by_mpid.csv", newline="", encoding="utf-8") as handle:
        computed = list(csv.DictReader(handle))
    with open(folder / "experimental_gaps_by_icsd.csv", newline="", encoding="utf-8") as handle:
        experimental = list(csv.DictReader(handle))
    data: dict[str, dict[str, Any]] = {}
    for key in ["scan", "ordered_exp", "pbe", "disordered_exp", "hse", "gllb-sc"]:
        data[key] = {}
    for row in reversed(computed):
        for column, key in devsets.COMPUTED_COLUMNS.items():
            if row[column] != "":
                data[key][row["material_id"]] = json.loads(row[column])
    for row in reversed(experimental):
        key = "ordered_exp" if row["ordered"] == "true" else "disordered_exp"
        ident = row["icsd_id"].removeprefix("icsd-") if bare_icsd else row["icsd_id"]
        data[key][ident] = json.loads(row["exp_gap_eV"])
    return gzip.compress(json.dumps(data).encode("utf-8"))


def _write_megnet(folder: Path, content: bytes) -> None:
    target = folder / devsets.MEGNET_JSON
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)


@pytest.mark.parametrize("bare_icsd", [False, True])
def test_megnet_gaps_rebuild_byte_for_byte(tmp_path: Path, bare_icsd: bool) -> None:
    folder = staged_set(devsets.GAPS_SET)
    _write_megnet(tmp_path, megnet_like(folder.parent, bare_icsd))
    for (name, file), build in devsets.OUTPUTS.items():
        if name == devsets.GAPS_SET:
            assert build(tmp_path, {}) == (folder / file).read_bytes(), file


def test_megnet_counts_match_sources(tmp_path: Path) -> None:
    """The counts SOURCES.md §9 states (52,348 PBE, 6,030 HSE, 2,290 GLLB-SC, 472 SCAN; 2,703 + 278 experimental)."""
    folder = staged_set(devsets.GAPS_SET)
    data = json.loads(gzip.decompress(megnet_like(folder.parent)))
    assert {k: len(v) for k, v in data.items()} == {"pbe": 52348, "hse": 6030, "gllb-sc": 2290, "scan": 472,
                                                   "ordered_exp": 2703, "disordered_exp": 278}


def test_truncated_gzip_is_a_data_error_naming_the_file(tmp_path: Path) -> None:
    folder = staged_set(devsets.GAPS_SET)
    content = megnet_like(folder.parent)
    _write_megnet(tmp_path, content[: len(content) // 2])
    with pytest.raises(DataError, match=r"data_no_structs\.json\.gz.*pull mp_multifidelity_gaps"):
        devsets.computed_gaps_csv(tmp_path, {})


def test_missing_fidelity_is_a_data_error(tmp_path: Path) -> None:
    _write_megnet(tmp_path, gzip.compress(json.dumps({"pbe": {"mp-1": 0.0}}).encode()))
    with pytest.raises(DataError, match=r"data_no_structs\.json\.gz: no 'hse' table"):
        devsets.experimental_gaps_csv(tmp_path, {})


def test_missing_download_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"missing; run `matpcr data pull mp_multifidelity_gaps`"):
        devsets.computed_gaps_csv(tmp_path, {})


# --- matsciml devset LMDB files -----------------------------------------------------------------------------------

def _numpy1_names(blob: bytes) -> bytes:
    """A protocol-5 pickle as numpy 1.x writes it: ``numpy.core`` in place of ``numpy._core`` (module names are
    SHORT_BINUNICODE: opcode 0x8c, then a one-byte length)."""
    for module in (b"numpy._core.numeric", b"numpy._core.multiarray"):
        old = b"\x8c" + bytes([len(module)]) + module
        new_name = module.replace(b"._core.", b".core.")
        blob = blob.replace(old, b"\x8c" + bytes([len(new_name)]) + new_name)
    return pickletools.optimize(blob)  # re-frames: the FRAME lengths no longer fit after the renaming


def write_devset_lmdb(path: Path, entries: list[tuple[str, Any]], protocol: int = pickle.HIGHEST_PROTOCOL,
                      numpy1: bool = False, metadata: bool = True) -> None:
    """A matsciml devset file: one LMDB environment opened with ``subdir=False``, ASCII decimal keys, pickled
    values (``matsciml.datasets.utils.write_lmdb_data``), optionally a ``metadata`` entry beside them."""
    lmdb = pytest.importorskip("lmdb")
    path.parent.mkdir(parents=True, exist_ok=True)
    env = lmdb.open(str(path), subdir=False, map_size=1 << 28, meminit=False, map_async=True)
    try:
        with env.begin(write=True) as txn:
            for key, entry in entries:
                blob = pickle.dumps(entry, protocol=protocol)
                txn.put(key.encode("ascii"), _numpy1_names(blob) if numpy1 else blob)
            if metadata:
                txn.put(b"metadata", pickle.dumps({"comment": "devset"}, protocol=protocol))
    finally:
        env.close()


def alexandria_entries(data_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """The Alexandria devset entries as matsciml's ``AlexandriaRequest.get_data_dict`` builds them; the two
    single-atom entries upstream skipped are absent from the staged file and from here alike (keys 2 and 4)."""
    records = json.loads((data_dir / devsets.DEVSETS_SET / "alexandria_pbe_devset.json").read_text(encoding="utf-8"))
    return [(r["lmdb_key"], {"structure": r["structure"], "force": np.array(r["forces"]), "entry_id": r["entry_id"],
                             "natoms": r["natoms"], "magmoms": np.array(r["magmoms"]),
                             "targets": {"regression": r["targets"], "classification": {}}})
            for r in records]


def oqmd_entries(data_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """The OQMD devset entries: the REST fields with ``cart_coords`` (the name matsciml gives the fractional
    coordinates) and ``cell``, in a shuffled key order so that the builder's field order is exercised."""
    records = json.loads((data_dir / devsets.DEVSETS_SET / "oqmd_devset.json").read_text(encoding="utf-8"))
    out = []
    for r in records:
        fields = {("cart_coords" if k == "frac_coords" else k): v for k, v in r.items() if k != "lmdb_key"}
        out.append((r["lmdb_key"], dict(reversed(list(fields.items())))))
    return out


def devset_lmdb_bytes(data_dir: Path, rel: str) -> bytes:
    """The bytes of one devset LMDB file (``rel`` as in ``devsets.INPUTS``), for a server that plays the origin."""
    entries = {devsets.ALEXANDRIA_LMDB: alexandria_entries, devsets.OQMD_LMDB: oqmd_entries}[rel](data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "data.lmdb"
        write_devset_lmdb(target, entries)
        return target.read_bytes()


def _write_devsets(folder: Path, data_dir: Path, **kwargs: Any) -> None:
    write_devset_lmdb(folder / devsets.ALEXANDRIA_LMDB, alexandria_entries(data_dir), **kwargs)
    write_devset_lmdb(folder / devsets.OQMD_LMDB, oqmd_entries(data_dir), **kwargs)


@pytest.mark.parametrize("flavour", [{}, {"numpy1": True}, {"protocol": 4, "metadata": False}],
                         ids=["protocol5", "protocol5-numpy1-names", "protocol4"])
def test_devsets_rebuild_byte_for_byte(tmp_path: Path, flavour: dict[str, Any]) -> None:
    folder = staged_set(devsets.DEVSETS_SET)
    _write_devsets(tmp_path, folder.parent, **flavour)
    built = [file for (name, file) in devsets.OUTPUTS if name == devsets.DEVSETS_SET]
    assert sorted(built) == ["alexandria_pbe_devset.csv", "alexandria_pbe_devset.json", "oqmd_devset.csv",
                             "oqmd_devset.json"]
    for file in built:
        assert devsets.OUTPUTS[(devsets.DEVSETS_SET, file)](tmp_path, {}) == (folder / file).read_bytes(), file


def test_truncated_lmdb_is_a_data_error_not_a_crash(tmp_path: Path) -> None:
    """A cut download must fail with a message, not kill the process with SIGBUS through LMDB's memory map."""
    folder = staged_set(devsets.DEVSETS_SET)
    whole = tmp_path / "whole.lmdb"
    write_devset_lmdb(whole, oqmd_entries(folder.parent))
    target = tmp_path / devsets.OQMD_LMDB
    target.parent.mkdir(parents=True)
    data = whole.read_bytes()
    for cut in (len(data) - 4096, len(data) // 2, 100):
        target.write_bytes(data[:cut])
        with pytest.raises(DataError, match=r"oqmd/data\.lmdb: .*pull computed_materials_devsets"):
            devsets.oqmd_json(tmp_path, {})


def test_pickle_naming_another_global_is_refused(tmp_path: Path) -> None:
    """The unpickler builds numpy arrays only: a value that names any other callable is refused, not run."""

    class Exploit:
        def __reduce__(self) -> tuple[Any, tuple[str]]:
            return (os.system, ("touch " + str(tmp_path / "ran"),))

    write_devset_lmdb(tmp_path / devsets.OQMD_LMDB, [("0", {"name": Exploit()})])
    with pytest.raises(DataError, match=r"entry 0 is not a readable devset pickle .*refusing to load"):
        devsets.oqmd_json(tmp_path, {})
    assert not (tmp_path / "ran").exists()


def test_entry_without_a_field_is_a_data_error(tmp_path: Path) -> None:
    folder = staged_set(devsets.DEVSETS_SET)
    key, entry = oqmd_entries(folder.parent)[0]
    del entry["cart_coords"]
    write_devset_lmdb(tmp_path / devsets.OQMD_LMDB, [(key, entry)])
    with pytest.raises(DataError, match=r"entry 0 has no 'cart_coords'"):
        devsets.oqmd_csv(tmp_path, {})


def test_not_an_lmdb_file_is_a_data_error(tmp_path: Path) -> None:
    target = tmp_path / devsets.ALEXANDRIA_LMDB
    target.parent.mkdir(parents=True)
    target.write_bytes(b"<html>rate limited</html>" * 400)
    with pytest.raises(DataError, match=r"data_000\.lmdb: not an LMDB data file"):
        devsets.alexandria_csv(tmp_path, {})
    # a Git LFS pointer served in place of the object says so
    target.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 1048576\n")
    with pytest.raises(DataError, match=r"data_000\.lmdb: a Git LFS pointer, not the LMDB file"):
        devsets.alexandria_csv(tmp_path, {})


def test_served_lmdb_bytes_build_the_staged_files(tmp_path: Path) -> None:
    """``devset_lmdb_bytes`` (what a loopback origin would serve) yields files the builders accept."""
    folder = staged_set(devsets.DEVSETS_SET)
    for rel, _ in devsets.INPUTS[devsets.DEVSETS_SET]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(devset_lmdb_bytes(folder.parent, rel))
    assert devsets.oqmd_csv(tmp_path, {}) == (folder / "oqmd_devset.csv").read_bytes()
    assert devsets.alexandria_csv(tmp_path, {}) == (folder / "alexandria_pbe_devset.csv").read_bytes()


def test_inputs_are_pinned_raw_urls() -> None:
    for name, files in devsets.INPUTS.items():
        assert {n for n, _ in devsets.OUTPUTS} >= {name}
        for rel, url in files:
            assert rel.startswith("upstream/")
            owner_repo_commit = url.removeprefix("https://raw.githubusercontent.com/").split("/")
            assert len(owner_repo_commit[2]) == 40 and url.endswith(rel.rsplit("/", 1)[1])
