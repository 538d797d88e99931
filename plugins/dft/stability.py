"""Registers the stability oracle (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.dft.oracles import StabilityOracle

    return StabilityOracle(**params)


@hookimpl
def register_oracles(register: Any) -> None:
    register("stability", _oracle, "a stable/unstable claim must agree with E_hull <= 0.05 eV/atom")
