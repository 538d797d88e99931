"""Registers the metallicity oracle (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.dft.oracles import MetallicityOracle

    return MetallicityOracle(**params)


@hookimpl
def register_oracles(register: Any) -> None:
    from matpcr_plugins.dft.thresholds import NONZERO_GAP_EV, ZERO_GAP_EV

    register("metallicity", _oracle, f"zero (<={ZERO_GAP_EV:g} eV) versus non-zero (>={NONZERO_GAP_EV:g} eV) gap class; "
             "abstains in between")
