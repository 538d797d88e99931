"""The data sets matpcr's tasks read: public origin, licence, citation, files, and the embedded slices.

The per-file part (URL, sha256, size) is ``manifest.json`` beside this module, built from the staged data
directory by ``python -m matpcr_plugins.datasources.build``. Files that are the unmodified upstream files
come from their origin at a pinned commit; index tables, summaries and conversions that the downloaded files
determine are rebuilt locally (``derive``), so no set depends on a copy hosted by matpcr; MSQA comes whole from
its origin and is read with the ``datasets`` JSON loader.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from matpcr.datadir import DataSet, PullContext, RemoteFile
from matpcr.errors import DataError

log = logging.getLogger("matpcr.data")

RAW = "https://raw.githubusercontent.com"
EMBEDDED = Path(__file__).resolve().parent.parent / "embedded_data"

MSQA_URL = f"{RAW}/jerry3027/MSQA/e02ae318f42c115f41a516766b66c5a8810d2bd9/data/MSQA_Dataset.json"
#: what is known of the upstream MSQA file without a copy of it: its first 25,897 characters are the staged
#: ``MSQA_Dataset.first6.json`` (less its closing bracket), and it holds 1,757 items in 6,660,446 characters.
MSQA_EXPECTED: dict[str, Any] = {
    "prefix_chars": 25897,
    "prefix_sha256": "5df582670f4791b15b822832cb111a320c143fc5e10c338a1b9b9896ad9d5681",
    "items": 1757,
    "chars": 6660446,
}
MSQA_FIELDS = ("question", "answer", "topic", "source", "source_section", "question_type", "true_false_question",
               "true_false_question_answer")

MP_CC_BY = "MP data CC-BY-4.0"  # Materials Project data
SETS: dict[str, dict[str, Any]] = {
    "raman_rruff": dict(
        title="RRUFF excellent_unoriented processed Raman spectra, one per mineral (400)",
        repository="charlesll/RaMin", commit="11c5314f703d8b3af301b0412571baf53d86bbdc",
        licence="RRUFF terms (research/education, cite)",
        citation="Lafuente B., Downs R.T., Yang H., Stone N. (2015) The power of databases: the RRUFF project. "
                 "In: Highlights in Mineralogical Crystallography, pp. 1-30",
        redistributable=False, embedded="raman_rruff",
        notes="spectra from the origin; index.csv rebuilt locally from their headers"),
    "sem_bam_tio2": dict(
        title="Zeiss SEM micrographs of TiO2 particles with info bar and scale bar (20)",
        repository="BAMresearch/automatic-sem-image-segmentation", commit="8c88052e2320062d6de4d20cf7d67a1cdd20a9e7",
        licence="CC BY-NC-ND 4.0", citation="Ruehle, Krumrey, Hodoroaba, Sci. Rep. 11, 4942 (2021), "
                                            "doi:10.1038/s41598-021-84287-6; data doi:10.5281/zenodo.4563942",
        redistributable=False, embedded="sem_synthetic",
        notes="images from the origin; metadata.csv rebuilt locally (TIFF tags, measured bar, transcribed "
              "labels); the embedded stand-in is a synthetic micrograph rendered by matpcr"),
    "xrd_autoxrd_thinfilm": dict(
        title="Experimental thin-film XRD patterns labelled with space group (88)",
        repository="PV-Lab/autoXRD", commit="2fc398059ff16a5cab67b0afcbc69f68748586b8", licence="Apache-2.0",
        citation="Oviedo et al., npj Comput. Mater. 5, 60 (2019)", redistributable=True,
        embedded="xrd_autoxrd_thinfilm"),
    "xrd_dara_precursor_mixtures": dict(
        title="Lab powder XRD (Cu Ka) of weighed mixtures of known precursors (40)",
        repository="jrneilson/dara", commit="a90c43fe6d97050e76a13d89926bef2bd6dbecc7", licence="MIT",
        citation="DARA automated Rietveld analysis (jrneilson/dara)", redistributable=True,
        embedded="xrd_dara_precursor_mixtures",
        notes="upstream XRDML scans, converted locally to two-column XY and an index"),
    "xrd_autoanalyzer_limntiof": dict(
        title="Lab powder XRD of Li-Mn-Ti-O-F phases with 56 reference CIFs",
        repository="njszym/XRD-AutoAnalyzer", commit="bf32082521e45c0fcf5cf9ae9bd1321e76bf9012", licence="MIT",
        citation="Szymanski et al., Chem. Mater. 33, 4204 (2021), doi:10.1021/acs.chemmater.1c01071",
        redistributable=True, embedded="xrd_autoanalyzer_limntiof"),
    "xrd_rruff_powder_refinement": dict(
        title="RRUFF powder XRD cell-refinement inputs and outputs (1,177 samples)",
        repository="sp8rks/MaterialsInformatics", commit="f61eb24e6355545df25625e47599562d14391136",
        licence="RRUFF terms; MIT repository",
        citation="Lafuente et al. (2015), the RRUFF project", redistributable=False,
        notes="members of two upstream zip archives; the staged index.csv is not rebuilt"),
    "cif_reference_phases": dict(
        title="Experimental CIFs of common minerals and elements (AMCSD-derived) (103)",
        repository="jappoker/mineral-lib-jekyll, DanPorter/Dans_Diffraction",
        commit="52071ba3d30b4ea7490f5c27c63f654909c1a0d1, 092b63ed70fe7bb49e37b04fb56352103beae5e2",
        licence="AMCSD attribution; Apache-2.0",
        citation="Downs & Hall-Wallace, Am. Mineral. 88, 247 (2003) (AMCSD); the article cited in each CIF",
        redistributable=True, embedded="cif_reference_phases"),
    "computed_materials_devsets": dict(
        title="Alexandria PBE (98) and OQMD (200) devsets, 11 MP entries",
        repository="IntelLabs/matsciml, sparks-baird/mp-time-split", licence="CC-BY-4.0; MIT repositories",
        citation="Schmidt et al., Adv. Mater. 2023 (Alexandria); Saal et al., JOM 2013 (OQMD)", redistributable=True,
        notes="decoded locally from the matsciml LMDB pickles"),
    "mp_piezo_features": dict(
        title="MP entries with gap, hull energy and magnetization (1,705)",
        repository="jeffreyhusc/PiezoelectricML", commit="1c4987c1acfc478eaba2f488ba6d012c3f067912",
        licence=f"MIT repository; {MP_CC_BY}", citation="Jain et al., APL Mater. 1, 011002 (2013) (Materials Project)",
        redistributable=True, embedded="mp_piezo_features"),
    "mp_thermomagnetic_fm": dict(
        title="MP ferromagnets with per-site moments and hull energy (800)",
        repository="amakagyemang/Database_of_Thermomagnetic_materials",
        commit="e7268b0bf0a3028dfbba0c125f346f6920610001",
        licence="none upstream; MP data CC-BY-4.0", citation="Jain et al. (2013) (Materials Project)",
        redistributable=False, notes="summary rebuilt locally from the upstream CSV"),
    "mp40_chemeleon": dict(
        title="MP (2024) entries with CIF, hull energy and band gap (2,861)",
        repository="hspark1212/chemeleon", licence=f"MIT repository; {MP_CC_BY}",
        citation="Park et al., Chemeleon (2024); Jain et al. (2013) (Materials Project)", redistributable=True,
        embedded="mp40_chemeleon", notes="union of four upstream CSVs, rebuilt locally"),
    "mp_multifidelity_gaps": dict(
        title="Band gaps by MP id (PBE, HSE, GLLB-SC, SCAN) and experimental gaps",
        repository="materialsvirtuallab/megnet", commit="6b7ad60acae97daa005ddaaf425c8d9089694c55",
        licence=f"BSD-3-Clause; {MP_CC_BY}", citation="Chen, Zuo, Ye, Li, Ong, Nat. Comput. Sci. 1, 46 (2021)",
        redistributable=True),
    "mp_chemsys_hull_entries": dict(
        title="Complete MP hulls of Li-Co-Ni-O and Na-Fe-P-O with structures (1,332)",
        repository="janosh/matterviz", commit="e45d1bad399d4d518a19d4f2e91c812873ae9eed",
        licence=f"MIT repository; {MP_CC_BY}", citation="Jain et al. (2013) (Materials Project)", redistributable=True),
    "alexandria_ternary_hull": dict(
        title="Alexandria PBE entries of 12 ternary systems with gap, magnetization, hull energy (4,120)",
        repository="janosh/matterviz", commit="e45d1bad399d4d518a19d4f2e91c812873ae9eed",
        licence="CC-BY-4.0; MIT repository", citation="Schmidt et al., Adv. Mater. 2023 (10.1002/adma.202210788)",
        redistributable=True),
    "msqa": dict(
        title="MSQA materials-science QA benchmark, all 1,757 items with answers",
        repository="jerry3027/MSQA", commit="e02ae318f42c115f41a516766b66c5a8810d2bd9",
        licence="none declared (research use)", citation="MSQA, arXiv:2505.23982",
        redistributable=False, via="datasets", notes="the upstream JSON, read with the datasets JSON loader"),
    "materials_project": dict(
        title="Materials Project summary documents into the DFT reference store",
        repository="materialsproject.org (mp-api)", licence="CC-BY-4.0",
        citation="Jain et al., APL Mater. 1, 011002 (2013)", redistributable=True, via="mp-api",
        pulled_by="matpcr refs pull mp", notes="needs MP_API_KEY; fills the reference store, not the data directory"),
}


@lru_cache(maxsize=1)
def manifest() -> dict[str, list[dict[str, Any]]]:
    from matpcr_plugins.datasources.build import expand

    return expand(json.loads(Path(__file__).with_name("manifest.json").read_text(encoding="utf-8")))


def dataset(name: str) -> DataSet:
    meta = dict(SETS[name])
    files = manifest().get(name, [])
    remote = [RemoteFile(f["path"], f["url"], f["sha256"], f["size"], f.get("member"))
              for f in files if "url" in f]
    derived = {f["path"]: f["sha256"] for f in files if f.get("derive")}
    origin = {f["path"]: f["url"] for f in files if "url" in f}
    embedded = meta.pop("embedded", None)
    ds = DataSet(name=name, files=remote, embedded=EMBEDDED / embedded if embedded else None, **meta)
    if derived:
        ds.derive = lambda folder: _derive(name, folder, derived, origin)
    if name == "msqa":
        ds.fetch = fetch_msqa
    return ds


def _derive(name: str, folder: Path, derived: dict[str, str], origin: dict[str, str]) -> None:
    from matpcr_plugins.datasources.derive import builder, write_verified

    for path, sha256 in derived.items():
        build = builder(name, path)
        if build is None:  # the manifest and this version's builders disagree
            raise DataError(f"{name}/{path}: the manifest marks it as built locally, but nothing builds it; "
                            "reinstall matpcr")
        write_verified(folder, path, build(folder, origin), sha256)


# -- MSQA through `datasets` -----------------------------------------------------------------------

def check_msqa(path: Path, url: str, expected: dict[str, Any] | None = None) -> int:
    """The upstream MSQA file, checked against what is known of it (see ``MSQA_EXPECTED``); its item count."""
    expected = expected or MSQA_EXPECTED
    text = path.read_text(encoding="utf-8")
    prefix = text[:expected["prefix_chars"]]
    digest = hashlib.sha256(prefix.encode("utf-8")).hexdigest()
    if expected.get("prefix_sha256") and digest != expected["prefix_sha256"]:
        raise DataError(f"checksum mismatch for {url}: its first {expected['prefix_chars']:,} characters have sha256 "
                        f"{digest}, expected {expected['prefix_sha256']} (not the MSQA file at the pinned commit)")
    try:
        items = len(json.loads(text))
    except json.JSONDecodeError as exc:
        raise DataError(f"{url}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if expected.get("items") and items != expected["items"]:
        raise DataError(f"{url}: holds {items:,} items, expected {expected['items']:,} (a truncated or different file)")
    if expected.get("chars") and len(text) != expected["chars"]:
        raise DataError(f"{url}: is {len(text):,} characters long, expected {expected['chars']:,}")
    return items


def load_msqa_json(path: str | Path, cache_dir: Path) -> list[dict[str, Any]]:
    """MSQA rows through the ``datasets`` JSON loader (and its Arrow cache), in file order."""
    try:
        from datasets import load_dataset
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise DataError("pulling MSQA needs the `datasets` package") from exc
    import datasets

    datasets.disable_progress_bars()
    table = load_dataset("json", data_files=str(path), split="train", cache_dir=str(cache_dir))
    missing = [f for f in MSQA_FIELDS if f not in table.column_names]
    if missing:
        raise DataError(f"{path}: MSQA items lack the fields {', '.join(missing)}")
    return [{f: row[f] for f in MSQA_FIELDS} for row in table]


def fetch_msqa(ctx: PullContext) -> None:
    """Download the upstream JSON (resumable, retried), check it, read it with ``datasets``, and write the
    items as ``msqa/MSQA_Dataset.json`` (upstream field order, ASCII escapes, as upstream)."""
    url = ctx.url(MSQA_URL)
    raw = ctx.downloader.fetch(url, ctx.cache_dir / "msqa" / "MSQA_Dataset.json", None)
    try:
        check_msqa(raw, url)
    except DataError:
        raw.unlink(missing_ok=True)
        raise
    rows = load_msqa_json(raw, ctx.cache_dir / "datasets")
    ctx.folder.mkdir(parents=True, exist_ok=True)
    dest = ctx.folder / "MSQA_Dataset.json"
    tmp = dest.with_name(dest.name + ".part")
    tmp.write_text(json.dumps(rows, indent=4, ensure_ascii=True), encoding="utf-8")
    os.replace(tmp, dest)
    others = sorted(p.name for p in ctx.folder.glob("*.json") if p != dest)
    if others:  # a folder is read as the union of its JSON files
        log.warning("%s also holds %s; the MSQA loader reads every JSON file of the folder", ctx.folder,
                    ", ".join(others))
