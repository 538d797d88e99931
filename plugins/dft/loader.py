"""Task items from the reference store: a formula with its space group (and structure where the source
has one), and a question about stability, metallicity or magnetism. Image-free."""

from __future__ import annotations

import logging

from pathlib import Path
from typing import Any

from matpcr.protocols import TaskLoader
from matpcr.errors import DataError
from matpcr.records import Item
from matpcr.tasks import TaskConfig
from matpcr_plugins.datasources.locate import data_root
from matpcr_plugins.dft.store import Material, ReferenceStore, import_staged
from matpcr_plugins.dft.thresholds import NEAR_HULL_EV

log = logging.getLogger("matpcr.dft")

QUESTIONS = {
    "stability": ("According to density-functional (PBE/GGA) calculations, is {formula} thermodynamically stable, "
                  f"i.e. on or within {NEAR_HULL_EV:g} eV/atom of the convex hull? Answer 'stable' or 'unstable'."),
    "metallicity": ("According to density-functional (PBE/GGA) calculations, is {formula} metallic (zero band gap) or "
                    "does it have a band gap? If it has one, give its size in eV."),
    "magnetism": ("According to spin-polarised density-functional calculations, is {formula} magnetic? If it is, "
                  "estimate its net magnetic moment in µB per formula unit; otherwise say it is non-magnetic."),
}
FIELD = {"stability": "e_above_hull", "metallicity": "band_gap", "magnetism": "total_magnetization"}


class MaterialsLoader(TaskLoader):
    data_sets = ("mp_piezo_features", "mp_thermomagnetic_fm", "mp40_chemeleon", "mp_chemsys_hull_entries",
                 "alexandria_ternary_hull", "computed_materials_devsets")

    def load(self, config: TaskConfig, data_dir: Path | None) -> list[Item]:
        args = config.loader_args
        prop = args.get("property")
        if prop not in QUESTIONS:
            raise DataError(f"task {config.task}: loader_args.property must be one of {', '.join(QUESTIONS)}")
        store = ReferenceStore(args.get("store"))
        try:
            root = data_root(data_dir, self.data_sets)  # no data directory: the user's, else the embedded set
            # each data root is imported once, and again when its sets change (a later `matpcr data pull`)
            if root is not None and args.get("auto_import", True) and not store.imported(root):
                import_staged(store, root)
                store.mark_imported(root)
            if not store.sources():
                raise DataError(f"the reference store {store.path} is empty: run `matpcr refs import --data-dir DIR` "
                                "or pass --data-dir so the staged sets are imported")
            items = []
            for m in store.iter(args.get("sources"), where=f"{FIELD[prop]} IS NOT NULL"):
                items.append(self._item(config, m, prop))
        finally:
            store.close()
        return items

    def _item(self, config: TaskConfig, m: Material, prop: str) -> Item:
        ref = {**m.reference(), "sidecar": {"material_id": m.material_id}, "cif": m.structure}
        formula = m.reduced_formula or m.formula
        return Item(id=f"{m.source}:{m.material_id}", task=config.task, constraint=config.constraint, modality="text",
                    text="", reference=ref, source_id=m.material_id,
                    meta={"dataset": m.source, "licence": m.provenance.get("licence", ""), "formula": formula,
                          "property": prop})

    def complete(self, item: Item) -> Item:
        ref = item.reference
        formula = item.meta["formula"]
        lines = [f"Material: {formula}" + (f", space group {ref['space_group']}" if ref.get("space_group") else "")
                 + (f", {ref['nsites']} atoms in the computational cell" if ref.get("nsites") else "") + "."]
        cif = ref.pop("cif", None)
        if cif and (ref.get("nsites") or 0) <= 24:
            try:
                from pymatgen.core import Structure

                from matpcr_plugins.xrd.loaders import structure_text

                lines.append(structure_text(Structure.from_str(cif, fmt="cif"), max_sites=8))
            except Exception as exc:  # the question still stands on its formula; the gap is recorded
                item.meta["structure_text_error"] = f"{type(exc).__name__}: {exc}"
                log.info("%s: structure not shown (%s: %s)", item.id, type(exc).__name__, exc)
        item.text = "\n".join(lines) + "\n\n" + QUESTIONS[item.meta["property"]].format(formula=formula)
        return item
