"""``xrd_dara_precursor_mixtures`` (``patterns/*.xy`` and ``index.csv``) from the upstream PANalytical XRDML files.

The set's files are not the upstream bytes: each XRDML scan of ``jrneilson/dara`` ``dataset/precursor_mixture/``
was converted to a two-column ``.xy`` text and summarised in one ``index.csv`` row. This module redoes that
conversion, so a pull downloads the XRDML files from the pinned commit (into the set's ``xrdml/`` folder) and
writes the converted files locally, byte for byte as the shipped manifest pins them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from matpcr.errors import DataError
from matpcr_plugins.datasources.indexes import csv_bytes, upstream_path

REPOSITORY = "jrneilson/dara"
COMMIT = "a90c43fe6d97050e76a13d89926bef2bd6dbecc7"
UPSTREAM_DIR = "dataset/precursor_mixture"

INDEX_FIELDS = ["file", "phases", "weight_fractions", "scan", "kalpha1_A", "kalpha2_A", "kbeta_A",
                "ratio_ka2_ka1", "tube", "tension_kV", "current_mA", "two_theta_start_deg",
                "two_theta_end_deg", "n_points", "step_deg", "counting_time_s", "scan_mode", "start_time",
                "max_counts", "original_file"]


@dataclass(frozen=True)
class Scan:
    """The parts of one XRDML measurement that the ``.xy`` and ``index.csv`` use (numbers kept as
    their XRDML text where the staged files copy that text verbatim)."""

    kalpha1: str
    kalpha2: str
    kbeta: str
    ratio: str
    tube: str
    tension_kv: str
    current_ma: str
    filter_material: str
    scan_mode: str
    start_time: str
    two_theta_start: float
    two_theta_end: float
    counting_time: str
    counts: list[int]

    @property
    def n_points(self) -> int:
        return len(self.counts)

    @property
    def step(self) -> float:
        return (self.two_theta_end - self.two_theta_start) / (self.n_points - 1)

    def two_theta(self) -> list[float]:
        """2θ = start + i·step: XRDML gives only the end points of an evenly spaced continuous scan."""
        return [self.two_theta_start + i * self.step for i in range(self.n_points)]


def parse_xrdml(text: str | bytes) -> Scan:
    """Read the single 2Theta scan of a PANalytical XRDML document (any ``XRDMeasurement/x.y`` namespace;
    bytes are decoded by the XML parser, so a BOM or CRLF line ends in the download do not matter)."""
    try:
        root = ET.fromstring(text.encode("utf-8") if isinstance(text, str) else text)
    except ET.ParseError as exc:
        raise DataError(f"not valid XRDML ({exc})") from None
    ns = root.tag[1:].split("}")[0] if root.tag.startswith("{") else ""
    q = (lambda tag: f"{{{ns}}}{tag}") if ns else (lambda tag: tag)

    def find(node: ET.Element, path: str) -> ET.Element:
        found = node.find("/".join(q(part) for part in path.split("/")))
        if found is None:
            raise DataError(f"XRDML: no <{path}>")
        return found

    def text_of(node: ET.Element, path: str) -> str:
        return (find(node, path).text or "").strip()

    measurement = find(root, "xrdMeasurement")
    scans = measurement.findall(q("scan"))
    if len(scans) != 1:
        raise DataError(f"XRDML: expected one <scan>, found {len(scans)}")
    scan = scans[0]
    points = find(scan, "dataPoints")
    gonio = [p for p in points.findall(q("positions")) if p.get("axis") == "2Theta"]
    if len(gonio) != 1 or gonio[0].find(q("listPositions")) is not None:
        raise DataError("XRDML: expected one 2Theta <positions> given by start and end")
    intensities = points.find(q("counts"))
    if intensities is None:
        intensities = find(points, "intensities")
    counts = [int(value) for value in (intensities.text or "").split()]
    tube = find(measurement, "incidentBeamPath/xRayTube")
    filters = measurement.findall(f"{q('diffractedBeamPath')}/{q('filter')}")
    return Scan(kalpha1=text_of(measurement, "usedWavelength/kAlpha1"),
                kalpha2=text_of(measurement, "usedWavelength/kAlpha2"),
                kbeta=text_of(measurement, "usedWavelength/kBeta"),
                ratio=text_of(measurement, "usedWavelength/ratioKAlpha2KAlpha1"),
                tube=tube.get("name", ""), tension_kv=text_of(tube, "tension"),
                current_ma=text_of(tube, "current"),
                filter_material=text_of(filters[0], "material") if filters else "",
                scan_mode=scan.get("mode", ""), start_time=text_of(scan, "header/startTimeStamp"),
                two_theta_start=float(text_of(gonio[0], "startPosition")),
                two_theta_end=float(text_of(gonio[0], "endPosition")),
                counting_time=text_of(points, "commonCountingTime"), counts=counts)


def staged_name(original_path: str) -> str:
    """``dataset/precursor_mixture/NiO_0p1031-La(OH)3_0p2025-TiO2_0p7014--8min.xrdml`` ->
    ``patterns/NiO_0p1031-La_OH_3_0p2025-TiO2_0p7014--8min.xy`` (each parenthesis becomes ``_``)."""
    stem = PurePosixPath(original_path).stem
    return f"patterns/{re.sub(r'[()]', '_', stem)}.xy"


def _composition(original_path: str) -> tuple[list[str], list[str], str]:
    """Phases, weighed fractions (``p`` = decimal point) and scan label from ``A_0pXXXX-B_0pYYYY--2min``."""
    mixture, _, scan = PurePosixPath(original_path).stem.partition("--")
    phases, fractions = [], []
    for part in mixture.split("-"):
        phase, _, fraction = part.rpartition("_")
        phases.append(phase)
        fractions.append(fraction.replace("p", "."))
    return phases, fractions, scan


def xrdml_to_xy(text: str | bytes, original_path: str) -> bytes:
    """The staged ``patterns/*.xy``: two ``#`` header lines, then ``2θ counts`` with 2θ to 5 decimals."""
    scan = parse_xrdml(text)
    lines = [f"# source: {REPOSITORY} {COMMIT} {original_path}",
             f"# columns: two_theta_deg counts ; Cu K-alpha (K-alpha1 {scan.kalpha1} A, "
             f"K-alpha2 {scan.kalpha2} A, ratio {scan.ratio}); {scan.filter_material} beta filter"]
    lines += [f"{x:.5f} {y}" for x, y in zip(scan.two_theta(), scan.counts)]
    return ("\n".join(lines) + "\n").encode()


def index_row(local_path: str, original_path: str, text: str | bytes) -> dict[str, str]:
    """One ``index.csv`` row: name-derived composition plus the XRDML instrument and scan fields."""
    scan = parse_xrdml(text)
    phases, fractions, label = _composition(original_path)
    return {"file": local_path, "phases": ";".join(phases), "weight_fractions": ";".join(fractions),
            "scan": label, "kalpha1_A": scan.kalpha1, "kalpha2_A": scan.kalpha2, "kbeta_A": scan.kbeta,
            "ratio_ka2_ka1": scan.ratio, "tube": scan.tube, "tension_kV": scan.tension_kv,
            "current_mA": scan.current_ma, "two_theta_start_deg": f"{scan.two_theta_start:.5f}",
            "two_theta_end_deg": f"{scan.two_theta_end:.5f}", "n_points": str(scan.n_points),
            "step_deg": f"{scan.step:.6f}", "counting_time_s": scan.counting_time,
            "scan_mode": scan.scan_mode, "start_time": scan.start_time,
            "max_counts": repr(float(max(scan.counts))), "original_file": original_path}


def dara_index(scans: list[tuple[str, str, str | bytes]]) -> bytes:
    """The staged ``index.csv`` from (local ``patterns/X.xy`` path, upstream path, XRDML text) per pattern,
    sorted by local path."""
    return _index_csv([index_row(*scan) for scan in sorted(scans, key=lambda s: s[0])])


def _index_csv(rows: list[dict[str, str]]) -> bytes:
    return csv_bytes(rows, fields=INDEX_FIELDS)


#: where the pull puts the downloaded XRDML files, inside the set's folder
XRDML_FOLDER = "xrdml"


def _downloaded(origin: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Local ``patterns/X.xy`` -> (downloaded ``xrdml/…`` path, upstream path), for every XRDML of ``origin``."""
    out = {}
    for rel, url in origin.items():
        if rel.startswith(XRDML_FOLDER + "/") and rel.endswith(".xrdml"):
            original = upstream_path(url)
            out[staged_name(original)] = (rel, original)
    return out


def _read(folder: Path, rel: str) -> bytes:
    path = folder / rel
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: the downloaded XRDML file cannot be read ({exc.strerror}); pull the set again") from None


def pattern_xy(folder: Path, origin: dict[str, str], path: str) -> bytes:
    """Builder: ``patterns/X.xy`` from its downloaded XRDML."""
    found = _downloaded(origin).get(path)
    if found is None:
        raise DataError(f"{folder.name}/{path}: no XRDML file among the downloads converts to it")
    rel, original = found
    try:
        return xrdml_to_xy(_read(folder, rel), original)
    except DataError as exc:
        raise DataError(f"{folder / rel}: {exc}; delete it and pull the set again") from None


def index_csv(folder: Path, origin: dict[str, str]) -> bytes:
    """Builder: ``index.csv`` over every downloaded XRDML."""
    rows = []
    for local, (rel, original) in sorted(_downloaded(origin).items()):
        try:
            rows.append(index_row(local, original, _read(folder, rel)))
        except DataError as exc:
            raise DataError(f"{folder / rel}: {exc}; delete it and pull the set again") from None
    if not rows:
        raise DataError(f"{folder}: no XRDML files among the downloads")
    return _index_csv(rows)
