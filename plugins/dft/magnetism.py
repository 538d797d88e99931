"""Registers the magnetism oracle (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


def _oracle(**params: Any) -> Any:
    from matpcr_plugins.dft.oracles import MagnetismOracle

    return MagnetismOracle(**params)


@hookimpl
def register_oracles(register: Any) -> None:
    register("magnetism", _oracle, "near-zero versus finite |M| per atom, and magnitude within 10x")
