"""X-ray wavelengths, written once (Å). ``CU_KA`` is pymatgen's "CuKa" (the Kα1/Kα2 weighted mean) that
computed reference patterns use; ``CU_KA1`` is the Kα1 line the measured data sets were recorded with."""

from __future__ import annotations

#: pymatgen's name for the weighted Cu Kα doublet (``XRDCalculator(wavelength=CU_KA_NAME)``)
CU_KA_NAME = "CuKa"
CU_KA = 1.54184
CU_KA1_NAME = "CuKa1"
CU_KA1 = 1.54056
#: anode lines a chain may name (lower-case element symbol → λ in Å)
ANODES = {"mo": 0.71073, "co": 1.78897, "cr": 2.29100, "fe": 1.93604, "ag": 0.560885, "cu": CU_KA, "w": 0.2106}
