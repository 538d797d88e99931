"""Errors that tell the user what went wrong and what to do about it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class MatpcrError(Exception):
    """A user-facing error; the CLI prints its message without a traceback."""


class UnknownNameError(MatpcrError, KeyError):
    """A name that is not registered; the message lists the close matches."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        listing = ", ".join(known) if known else "(none registered)"
        super().__init__(f"unknown {kind} {name!r}.{hint} Known {kind}s: {listing}.")
        self.kind, self.name, self.close = kind, name, close

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class DataError(MatpcrError):
    """Bad or missing input data (a file, a spectrum, an image)."""
