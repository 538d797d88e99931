"""Diffraction task loaders: structures (CIF files and pymatgen's bundled structures) whose reference
pattern is computed, and measured patterns whose reference peaks are found in the data."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

from matpcr.protocols import TaskLoader
from matpcr.errors import DataError
from matpcr.records import Item, file_sha256
from matpcr.tasks import TaskConfig
from matpcr_plugins.datafiles import confine, downsample_table, plot_xy, read_csv, read_xy
from matpcr_plugins.datasources.locate import dataset_dir, optional_dir
from matpcr_plugins.xrd.radiation import CU_KA, CU_KA1, CU_KA_NAME

QUESTION = (f"Under Cu Kα radiation (λ = {CU_KA:.4f} Å), at which 2θ angles (in degrees) do the three strongest "
            "X-ray powder diffraction reflections of {phase} appear?")
PATTERN_QUESTION = "At which 2θ angles (in degrees) are the three strongest reflections of this pattern?"


def _pymatgen_structures() -> list[Path]:
    spec = importlib.util.find_spec("pymatgen")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(list(spec.submodule_search_locations)[0]) / "util" / "structures"
    return sorted(folder.glob("*.json"))


def structure_text(structure: Any, max_sites: int = 12) -> str:
    """Lattice, space group and symmetry-distinct sites: what a chemist would write down."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    lat = structure.lattice
    lines = [f"Formula: {structure.composition.reduced_formula}"]
    try:
        sga = SpacegroupAnalyzer(structure, symprec=0.1)
        sym = sga.get_symmetrized_structure()
        lines.append(f"Space group: {sga.get_space_group_symbol()} (No. {sga.get_space_group_number()})")
        sites = [(s[0].species_string, w, s[0].frac_coords) for s, w in zip(sym.equivalent_sites, sym.wyckoff_symbols)]
    except Exception:
        sites = [(s.species_string, "", s.frac_coords) for s in structure]
    lines.append(f"Lattice: a = {lat.a:.4f} Å, b = {lat.b:.4f} Å, c = {lat.c:.4f} Å, "
                 f"α = {lat.alpha:.2f}°, β = {lat.beta:.2f}°, γ = {lat.gamma:.2f}°")
    lines.append("Sites (fractional coordinates):")
    for species, wyckoff, xyz in sites[:max_sites]:
        lines.append(f"  {species} {wyckoff} ({xyz[0]:.4f}, {xyz[1]:.4f}, {xyz[2]:.4f})")
    if len(sites) > max_sites:
        lines.append(f"  ... and {len(sites) - max_sites} more sites")
    return "\n".join(lines)


def cif_sidecar(path: Path) -> dict[str, str]:
    """Database codes kept in a CIF; never shown to the model (the contamination check looks for them)."""
    import re

    if path.suffix != ".cif":
        return {}
    text = path.read_text(errors="replace")
    out = {}
    for key in ("_database_code_amcsd", "_database_code_ICSD", "_cod_database_code"):
        match = re.search(rf"^{key}\s+'?([\w-]+)'?", text, re.M)
        if match:
            out[key.lstrip("_")] = match.group(1)
    return out


class StructureLoader(TaskLoader):
    """Items from crystal structures; the reference pattern is computed only for sampled items."""

    data_sets = ("cif_reference_phases", "xrd_autoanalyzer_limntiof", "mp40_chemeleon")

    SOURCES = {
        "amcsd": ("cif_reference_phases/amcsd_minerals", "*.cif", "AMCSD minerals (jappoker/mineral-lib-jekyll)", "AMCSD attribution"),
        "dans": ("cif_reference_phases/dans_diffraction", "*.cif", "Dans_Diffraction structures", "Apache-2.0"),
        "autoanalyzer": ("xrd_autoanalyzer_limntiof/reference_cifs", "*.cif", "XRD-AutoAnalyzer reference CIFs", "MIT"),
    }

    def load(self, config: TaskConfig, data_dir: Path | None) -> list[Item]:
        sources = config.loader_args.get("sources", ["pymatgen", "amcsd", "dans", "autoanalyzer"])
        items: list[Item] = []
        for source in sources:
            if source == "pymatgen":
                for path in _pymatgen_structures():
                    items.append(self._item(config, "pymatgen", path, path.stem, "pymatgen bundled structures", "MIT"))
                continue
            if source == "mp40":  # DFT-relaxed MP structures (CIF text inside the staged CSV)
                folder = optional_dir(data_dir, "mp40_chemeleon", f"task {config.task}")
                if folder is None:
                    continue
                from pymatgen.core import Composition

                for row in read_csv(folder / "mp40_union.csv"):
                    formula = Composition(row["formula_reduced_alphabetical"]).reduced_formula
                    item = self._item(config, "mp40", folder / "mp40_union.csv",
                                      f"{formula} ({row['space_group_symbol']})", "MP-40 (hspark1212/chemeleon)",
                                      "MP data CC-BY-4.0")
                    item.meta["sidecar"] = {"material_id": row["material_id"]}
                    item.id = item.source_id = f"mp40:{row['material_id']}"
                    item.reference["cif_text"] = row["cif"]
                    items.append(item)
                continue
            if source not in self.SOURCES:
                raise DataError(f"task {config.task}: unknown structure source {source!r} "
                                f"(known: pymatgen, mp40, {', '.join(self.SOURCES)})")
            sub, pattern, dataset, licence = self.SOURCES[source]
            folder = optional_dir(data_dir, sub, f"task {config.task}")
            if folder is None:
                continue  # no data directory: the user's (`matpcr data pull`), else the embedded set, may lack it
            skip = set()
            index = folder / "index.csv"
            if index.exists():
                skip = {r["file"] for r in read_csv(index) if r.get("generic_test_cell") == "True"}
            for path in sorted(folder.glob(pattern)):
                if path.name not in skip:
                    items.append(self._item(config, source, path, self._phase_name(source, path), dataset, licence))
        return items

    @staticmethod
    def _phase_name(source: str, path: Path) -> str:
        if source == "autoanalyzer" and "_" in path.stem:  # files are named <formula>_<space group number>
            formula, number = path.stem.rsplit("_", 1)
            return f"{formula} (space group No. {number})"
        return path.stem.replace("_", " ")

    def _item(self, config: TaskConfig, source: str, path: Path, phase: str, dataset: str, licence: str) -> Item:
        window = config.loader_args.get("window", [5.0, 90.0])
        return Item(id=f"{source}:{path.stem}", task=config.task, constraint=config.constraint, modality=config.modality,
                    text="", reference={"phase": phase, "file": str(path), "window": window},
                    source_id=f"{source}:{path.stem}", meta={"dataset": dataset, "licence": licence, "file": str(path),
                                                             "phase": phase})

    def cache_key(self, item: Item) -> str | None:
        """The computed pattern depends on the structure's bytes and the window (and this code's version)."""
        source = item.reference.get("cif_text")
        digest = hashlib.sha256(source.encode()).hexdigest() if source else file_sha256(item.reference["file"])
        return f"xrd-structure-v1:{digest}:{item.reference['window']}"

    def complete(self, item: Item) -> Item:
        """Parse the structure, describe it and compute its Cu Kα pattern (only for sampled items)."""
        from matpcr_plugins.xrd.patterns import computed_pattern, load_structure

        if "cif_text" in item.reference:
            from pymatgen.core import Structure

            structure = Structure.from_str(item.reference.pop("cif_text"), fmt="cif")
        else:
            structure = load_structure(item.reference["file"])
        phase = item.reference["phase"]
        source = item.reference["file"] + (f" [{item.id}]" if item.id.startswith("mp40:") else "")
        pattern = computed_pattern(structure, CU_KA_NAME, tuple(item.reference["window"]), source=source)
        sidecar = item.meta.get("sidecar") or cif_sidecar(Path(item.reference["file"]))
        item.reference = {**item.reference, **pattern, "formula": structure.composition.reduced_formula,
                          "sidecar": sidecar}
        item.text = f"Crystal structure of {phase}:\n{structure_text(structure)}\n\n" + QUESTION.format(phase=phase)
        if item.modality == "image":
            path = plot_xy(pattern["two_theta"], pattern["intensity"], xlabel="2θ (degrees, Cu Kα)",
                           ylabel="Relative intensity", title=f"Computed powder pattern: {phase}",
                           key=f"xrd-{item.id.replace(':', '_')}", sticks=True)
            item.images = [str(path)]
            item.text = f"The image shows the computed X-ray powder pattern of {phase} (Cu Kα). {PATTERN_QUESTION}"
        return item


class PatternLoader(TaskLoader):
    """Items from measured powder patterns (lab XRD, Cu Kα)."""

    data_sets = ("xrd_dara_precursor_mixtures", "xrd_autoanalyzer_limntiof", "xrd_autoxrd_thinfilm")

    def load(self, config: TaskConfig, data_dir: Path | None) -> list[Item]:
        sources = config.loader_args.get("sources", ["dara", "autoanalyzer", "thinfilm"])
        items: list[Item] = []
        for source in sources:
            if source == "dara":
                folder = dataset_dir(data_dir, "xrd_dara_precursor_mixtures", f"task {config.task}")
                for n, row in enumerate(read_csv(folder / "index.csv"), 2):
                    phases = row["phases"].split(";")
                    path = confine(folder, row["file"], folder / "index.csv", n)
                    items.append(self._item(config, "dara", path, self._mixture(phases),
                                            float(row["kalpha1_A"]), "DARA precursor mixtures (jrneilson/dara)", "MIT",
                                            source_id="dara:" + row["file"].split("--")[0]))
            elif source == "autoanalyzer":
                folder = dataset_dir(data_dir, "xrd_autoanalyzer_limntiof", f"task {config.task}")
                for n, row in enumerate(read_csv(folder / "spectra_index.csv"), 2):
                    phases = row["labelled_phases"].split(";")
                    path = confine(folder, row["file"], folder / "spectra_index.csv", n)
                    items.append(self._item(config, "autoanalyzer", path, self._mixture(phases), CU_KA1,
                                            "XRD-AutoAnalyzer example spectra", "MIT"))
            elif source == "thinfilm":
                folder = dataset_dir(data_dir, "xrd_autoxrd_thinfilm", f"task {config.task}")
                for n, row in enumerate(read_csv(folder / "index.csv"), 2):
                    path = confine(folder / "patterns", row["file"], folder / "index.csv", n)
                    if float(row["two_theta_max_deg"]) - float(row["two_theta_min_deg"]) < 10:
                        continue  # single-peak scans
                    name = row["file"].split("__", 1)[1].rsplit(".", 1)[0]
                    compound = name.split("_")[0]
                    label = (f"a thin film of {compound} (space group {row['space_group_label']})"
                             if compound and not compound[0].isdigit() else
                             f"a halide-perovskite thin film (space group {row['space_group_label']})")
                    items.append(self._item(config, "thinfilm", path, label, CU_KA1,
                                            "autoXRD thin films (PV-Lab/autoXRD)", "Apache-2.0"))
            else:
                raise DataError(f"task {config.task}: unknown pattern source {source!r} (known: dara, autoanalyzer, thinfilm)")
        return items

    @staticmethod
    def _mixture(phases: list[str]) -> str:
        phases = [p for p in phases if p]
        if len(phases) == 1:
            return phases[0]
        return "a mixture of " + ", ".join(phases[:-1]) + " and " + phases[-1]

    def _item(self, config: TaskConfig, source: str, path: Path, phase: str, wavelength: float, dataset: str,
              licence: str, source_id: str | None = None) -> Item:
        return Item(id=f"{source}:{path.stem}", task=config.task, constraint=config.constraint, modality=config.modality,
                    text="", reference={"phase": phase, "file": str(path), "wavelength": wavelength},
                    source_id=source_id or f"{source}:{path.stem}",
                    meta={"dataset": dataset, "licence": licence, "file": str(path), "phase": phase})

    def cache_key(self, item: Item) -> str | None:
        ref = item.reference
        return f"xrd-pattern-v1:{file_sha256(ref['file'])}:{ref['wavelength']}:{ref.get('prominence', 0.02)}"

    def complete(self, item: Item) -> Item:
        from matpcr_plugins.xrd.patterns import measured_reference

        args = item.reference
        prominence = float(args.get("prominence", 0.02))
        ref = measured_reference(Path(args["file"]), args["phase"], float(args["wavelength"]), prominence)
        item.reference = ref
        lam = f"Cu Kα, λ = {ref['wavelength']:.4f} Å"
        if item.modality == "image":
            x, y = read_xy(args["file"])
            item.images = [str(plot_xy(x, y, xlabel="2θ (degrees)", ylabel="Intensity (counts)",
                                       title=f"Measured XRD pattern ({lam})", key=f"xrdm-{item.id.replace(':', '_')}"))]
            item.text = f"The image shows a measured powder X-ray diffraction pattern of {args['phase']} ({lam}). {PATTERN_QUESTION}"
        else:
            x, y = read_xy(args["file"])
            rows = downsample_table(x, y, bin_width=0.25, floor_fraction=0.05)
            table = "\n".join(f"{a:.2f} {b:.0f}" for a, b in rows)
            item.text = (f"Measured powder X-ray diffraction pattern of {args['phase']} ({lam}). Columns: 2θ (degrees) "
                         "and intensity (counts); the scan was max-pooled into 0.25° bins (each row gives the 2θ of the "
                         f"bin's highest point) and rows below 5% of the maximum were omitted:\n{table}\n\n{PATTERN_QUESTION}")
        return item
