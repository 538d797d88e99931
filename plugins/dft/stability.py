"""Registers the stability oracle (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.dft.oracles import StabilityOracle

    return StabilityOracle(**params)


@hookimpl
def register_oracles(register: Any) -> None:
    from matpcr_plugins.dft.thresholds import NEAR_HULL_EV

    register("stability", _oracle, f"a stable/unstable claim must agree with E_hull <= {NEAR_HULL_EV:g} eV/atom")
