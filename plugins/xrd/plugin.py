"""Registers the diffraction oracle and its task loaders (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.xrd.oracle import XRDOracle

    return XRDOracle(**params)


def _structures() -> Any:
    from matpcr_plugins.xrd.loaders import StructureLoader

    return StructureLoader()


def _patterns() -> Any:
    from matpcr_plugins.xrd.loaders import PatternLoader

    return PatternLoader()


@hookimpl
def register_oracles(register: Any) -> None:
    register("xrd", _oracle, "diffraction: Bragg realizability and reference reflections within 0.5° (2θ, d)")


@hookimpl
def register_tasks(register: Any) -> None:
    register("xrd.structures", _structures, "crystal structures (CIF, pymatgen) with computed Cu Kα patterns")
    register("xrd.patterns", _patterns, "measured powder patterns (DARA, XRD-AutoAnalyzer, autoXRD thin films)")
