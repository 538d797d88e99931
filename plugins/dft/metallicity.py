"""Registers the metallicity oracle (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.dft.oracles import MetallicityOracle

    return MetallicityOracle(**params)


@hookimpl
def register_oracles(register: Any) -> None:
    register("metallicity", _oracle, "zero (<=0.05 eV) versus non-zero (>=0.20 eV) gap class; abstains in between")
