"""Registers the Raman spectrum oracle and its task loader (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.raman.oracle import RamanOracle

    return RamanOracle(**params)


def _spectra() -> Any:
    from matpcr_plugins.raman.spectra import SpectrumLoader

    return SpectrumLoader()


@hookimpl
def register_oracles(register: Any) -> None:
    register("raman", _oracle, "spectra: a genuine local maximum with prominence within 5 cm⁻¹ of each claimed band")


@hookimpl
def register_tasks(register: Any) -> None:
    register("raman.spectra", _spectra, "RRUFF Raman spectra of minerals (plot or max-pooled table)")
