"""The claim reader every oracle uses: normalised text with an offset map (``text``), numbers with units,
lists and ranges (``numbers``), the cues that reject a number (``context``), the shared pass (``reader``)
and one module per geometric family (``diffraction``, ``spectra``, ``microscopy``). The DFT classes are read
by ``matpcr_plugins.dft.claims`` on the same layer."""

from __future__ import annotations

from matpcr_plugins.claims.reader import MAX_REJECTED, REASONS, QuantityReader
from matpcr_plugins.claims.text import MAX_CHARS, Text, normalize

__all__ = ["MAX_CHARS", "MAX_REJECTED", "REASONS", "QuantityReader", "Text", "normalize"]
