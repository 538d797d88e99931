"""Property-based: arbitrary Unicode (lone surrogates included), numbers (NaN, ±Infinity, huge ints) and JSON
thrown at the run directory's writer and reader and at the replay reader. No exception escapes but a
MatpcrError, and everything written is strict JSON in strict UTF-8 that reads back as what was meant."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matpcr.errors import MatpcrError
from matpcr.records import Message, Request, Sampling, text_part
from matpcr.rundir import RunDir, clean_text, sanitize

# every code point, with lone UTF-16 surrogates (category Cs) drawn often on purpose
TEXT = st.lists(st.one_of(st.characters(codec=None, exclude_categories=()), st.integers(0xD800, 0xDFFF).map(chr)),
                max_size=40).map("".join)
NUMBERS = st.one_of(st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.floats(allow_nan=True, allow_infinity=True))
JSON_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), NUMBERS, TEXT),
                           lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
                           max_leaves=20)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name}")


def _strict(line: bytes) -> object:
    return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _record(key: str, chain: str, meta: object) -> dict:
    return {"key": key, "task": "t", "item_id": key, "source_id": key, "constraint": "c", "modality": "text",
            "seed": 0, "round": 0, "sample": 0, "model": "m", "prompt": [], "chain": chain, "meta": {"x": meta}}


@SETTINGS
@given(rows=st.lists(st.tuples(TEXT, TEXT, JSON_VALUES), min_size=1, max_size=5))
def test_run_directory_round_trips_anything_as_strict_json(rows: list) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run = RunDir(folder)
        records = [_record(f"k{n}:{key}", chain, meta) for n, (key, chain, meta) in enumerate(rows)]
        with run.writer() as writer:
            writer.write_many(records)
        run.write_results({"rows": [r["meta"] for r in records]})
        lines = run.samples_path.read_bytes().splitlines()
        assert len(lines) == len(records)
        for line, record in zip(lines, records):
            assert _same(_strict(line), sanitize(record))  # strict JSON holding exactly the sanitised record
        read = run.records()
        assert [r.chain for r in read] == [clean_text(r["chain"]) for r in records]
        assert [r.key for r in read] == [clean_text(r["key"]) for r in records]
        _strict(run.results_path.read_bytes())
        run.release()


@SETTINGS
@given(lines=st.lists(st.one_of(
    st.binary(max_size=60),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    st.tuples(TEXT, st.one_of(TEXT, JSON_VALUES)).map(lambda kv: json.dumps({"key": kv[0], "chain": kv[1]}).encode()),
), min_size=1, max_size=6))
def test_replay_reader_never_lets_an_exception_escape(lines: list[bytes]) -> None:
    from matpcr_plugins.backend_replay import ReplayBackend

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chains.jsonl"
        path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
        try:
            backend = ReplayBackend(str(path))
        except MatpcrError:
            return
        keys = list(backend.offsets) + ["absent"]
        requests = [Request([Message("user", [text_part("q")])], Sampling(), key=k) for k in keys]
        for response in backend.generate(requests):
            assert isinstance(response.text, str)
            response.text.encode("utf-8")  # clean text, ready for a strict UTF-8 file
            assert (response.error is None) or (response.text == "" and isinstance(response.error, str))
