"""The DFT thresholds of the MatPCR paper, written once: the oracles' defaults, the questions, the store
statistics and the listings all read them from here."""

from __future__ import annotations

#: eV/atom above the convex hull at or below which a structure counts as stable ("near the hull")
NEAR_HULL_EV = 0.05
#: eV: band gaps at or below this are metallic (zero-gap class)
ZERO_GAP_EV = 0.05
#: eV: band gaps at or above this are gapped; between the two the metallicity oracle abstains
NONZERO_GAP_EV = 0.20
#: µB per atom: net magnetization at or above this is magnetic
ZERO_MOMENT_MUB_PER_ATOM = 0.05
#: the ε values of the stability sensitivity grid (validity gate, `matpcr refs stats`)
EPSILON_GRID = (0.0, 0.025, 0.05, 0.10)
