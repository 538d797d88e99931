"""The precision-audit workbench: one oracle-fired case of an audit sheet at a time, labelled in the browser.

The sheet is what ``matpcr audit sample`` wrote (``audit.csv``, with ``cases/CASE.png`` beside it); each
reviewer's labels go to their own ``labels-NAME.csv`` beside the sheet, saved atomically after every
case by :func:`matpcr.audit.save_label`. ``matpcr audit score`` reads them back (precision, Cohen's κ,
the tolerance analysis).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matpcr import audit
from matpcr.errors import MatpcrError
from matpcr.records import Record
from matpcr.view.data import Library, RunView, _stamp
from matpcr.view.figures import FigureCache


def sheet_path(sheet: str | Path) -> Path:
    path = Path(sheet)
    if path.is_dir():
        path = path / "audit.csv"
    if not path.is_file():
        raise MatpcrError(f"{path}: audit sheet not found (write one with `matpcr audit sample RUN ...`)")
    return path.resolve()


class Workbench:
    def __init__(self, sheet: str | Path, reviewer: str, library: Library, figures: FigureCache):
        self.sheet = sheet_path(sheet)
        self.reviewer = audit.check_reviewer(reviewer)
        self.labels_file = audit.labels_path(self.sheet, self.reviewer)
        self.library = library
        self.figures = figures
        self._rows: tuple[Any, list[dict[str, str]]] = (None, [])
        audit.read_labels(self.labels_file)  # a broken labels file is an error now, not mid-review
        if not self.cases():
            raise MatpcrError(f"{self.sheet}: the sheet has no cases (the runs had no oracle-fired claim)")

    def cases(self) -> list[dict[str, str]]:
        stamp = _stamp(self.sheet)
        if self._rows[0] != stamp:
            self._rows = (stamp, audit.read_sheet(self.sheet))
        return self._rows[1]

    def labels(self) -> dict[str, dict[str, str]]:
        return audit.read_labels(self.labels_file)

    def row(self, case_id: str) -> tuple[int, dict[str, str]]:
        for i, row in enumerate(self.cases()):
            if row["case_id"] == case_id:
                return i, row
        raise KeyError(case_id)

    def next_unlabelled(self, after: str | None = None) -> str | None:
        """The first case without a label after ``after`` (wrapping round), or None when all are labelled."""
        rows, labels = self.cases(), self.labels()
        start = 0
        if after is not None:
            start = next((i + 1 for i, r in enumerate(rows) if r["case_id"] == after), 0)
        for row in rows[start:] + rows[:start]:
            if not (labels.get(row["case_id"]) or {}).get("judgement"):
                return row["case_id"]
        return None

    def neighbours(self, case_id: str) -> tuple[str | None, str | None]:
        i, _ = self.row(case_id)
        rows = self.cases()
        return (rows[i - 1]["case_id"] if i > 0 else None, rows[i + 1]["case_id"] if i + 1 < len(rows) else None)

    def run_of(self, row: dict[str, str]) -> RunView | None:
        raw = Path(row.get("run_dir") or "")
        for candidate in (raw, self.sheet.parent / raw):
            if (candidate / "config.json").is_file():
                return self.library.add(candidate)
        return None

    def locate(self, row: dict[str, str]) -> tuple[RunView | None, Record | None, int | None]:
        """The run, record and claim index behind a sheet row (the claim by its index, else by its text)."""
        run = self.run_of(row)
        if run is None:
            return None, None, None
        record = run.records_by_key().get(row["record_key"])
        if record is None:
            return run, None, None
        index = None
        try:
            index = int(row.get("claim_index") or "")
        except ValueError:
            for k, c in enumerate(record.claims):
                verdict = record.verdicts[k] if k < len(record.verdicts) else {}
                if verdict.get("status") == "violated" and f"{c.get('kind')} = {c.get('value')} {c.get('unit')}" == row.get("claim"):
                    index = k
                    break
        if index is not None and not 0 <= index < len(record.claims):
            index = None
        return run, record, index

    def case(self, case_id: str) -> dict[str, Any]:
        i, row = self.row(case_id)
        run, record, k = self.locate(row)
        labels = self.labels()
        done = sum(1 for r in self.cases() if (labels.get(r["case_id"]) or {}).get("judgement"))
        previous, following = self.neighbours(case_id)
        return {"row": row, "position": i + 1, "total": len(self.cases()), "labelled": done, "run": run,
                "record": record, "claim_index": k, "label": labels.get(case_id),
                "item": run.item_of(record) if run is not None and record is not None else None,
                "previous": previous, "next": following}

    def save(self, case_id: str, judgement: str, notes: str) -> dict[str, str]:
        _, row = self.row(case_id)
        return audit.save_label(self.labels_file, row, judgement, notes, self.reviewer)

    def figure(self, case_id: str) -> tuple[Path | None, str]:
        """The drawing ``audit sample`` made for the case (``cases/CASE.png``), else the oracle draws it now."""
        _, row = self.row(case_id)
        stored = self.sheet.parent / "cases" / f"{case_id}.png"
        if stored.is_file():
            return stored, ""
        run, record, k = self.locate(row)
        if run is None or record is None or k is None:
            return None, "the run or record behind this case is not available"
        return self.figures.claim_figure(run, record, k)

    def summary(self) -> list[dict[str, Any]]:
        labels = self.labels()
        families: dict[str, dict[str, Any]] = {}
        for row in self.cases():
            fam = families.setdefault(row["constraint"], {"family": row["constraint"], "cases": 0, "real": 0,
                                                           "false positive": 0, "unsure": 0, "unlabelled": 0})
            fam["cases"] += 1
            judgement = (labels.get(row["case_id"]) or {}).get("judgement") or "unlabelled"
            fam[judgement] = fam.get(judgement, 0) + 1
        return list(families.values())
