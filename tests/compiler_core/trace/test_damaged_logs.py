"""The reader never crashes: fuzzed lines, truncation, garbage, odd encodings, huge lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize
from compiler_core.trace import RecordReader
from tests.conftest import FIXTURES

# tlparse's simple.log (BSD, tests/fixtures/traces/LICENSE-tlparse), bundled so these essential
# tests never depend on where ../shared is.
SIMPLE_GZ = FIXTURES / "traces" / "tlparse_simple.log.gz"
SIMPLE_TEXT = gzip.decompress(SIMPLE_GZ.read_bytes())
REAL_LINES = SIMPLE_TEXT.splitlines(keepends=True)[:400]


def _read(path: Path) -> int:
    reader = RecordReader(str(path))
    return sum(1 for _ in reader) + len(reader.diagnostics)


@st.composite
def damaged_log(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.sampled_from(REAL_LINES), min_size=0, max_size=30))
    out = []
    for line in lines:
        op = draw(st.integers(0, 5))
        if op == 1:
            cut = draw(st.integers(0, len(line)))
            line = line[:cut]
        elif op == 2:
            line = draw(st.binary(max_size=40)) + line
        elif op == 3:
            line = line.decode("utf-8", "replace").encode(
                draw(st.sampled_from(["utf-16", "latin-1"])), "replace"
            )
        elif op == 4:
            pos = draw(st.integers(0, len(line)))
            line = line[:pos] + draw(st.binary(max_size=8)) + line[pos:]
        out.append(line)
    return b"".join(out)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=damaged_log())
def test_fuzzed_logs_never_crash(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz.log"
    path.write_bytes(data)
    _read(path)


def test_fuzzed_logs_build_sessions(tmp_path: Path) -> None:
    """The builder on damaged input: every prefix of a real log still imports."""
    data = SIMPLE_TEXT
    for cut in range(0, len(data), max(1, len(data) // 60)):
        path = tmp_path / "t.log"
        path.write_bytes(data[:cut])
        summarize(import_trace(path))


def test_truncated_file_keeps_earlier_records(tmp_path: Path) -> None:
    data = SIMPLE_TEXT
    path = tmp_path / "trunc.log"
    path.write_bytes(data[: data.index(b'"inductor_output_code"') + 200])
    session = import_trace(path)
    assert session.compiles[0].dynamo_graph is not None


def test_empty_directory_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no TORCH_TRACE log"):  # not an empty session
        import_trace(tmp_path)
    (tmp_path / "dedicated_log_torch_trace_rank_0.log").write_bytes(b"")
    assert import_trace(tmp_path).compiles == ()


def test_unknown_kinds_and_stray_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    path.write_bytes(
        b'V1206 15:18:20.599000 1 a.py:1] {"brand_new_kind": {}, "frame_id": 0, "frame_compile_id": 0}\n'
        b"this is not a trace line\n"
        b'V1206 15:18:20.599000 1 a.py:1] {"other_new": {}, "has_payload": "x"}\n\tpayload\n'
    )
    reader = RecordReader(str(path))
    assert [r.kind for r in reader] == ["brand_new_kind", "other_new"]
    assert [d.line for d in reader.diagnostics] == [2]


def test_duplicated_compile_ids_stay_apart(tmp_path: Path) -> None:
    """A log appended to itself holds two runs: kept apart, each counted, and not damage."""
    path = tmp_path / "twice.log"
    path.write_bytes(SIMPLE_TEXT * 2)
    session = import_trace(path)
    assert [(c.compile_id, c.run) for c in session.compiles] == [("0/0", 0), ("0/0#2", 1)]
    assert summarize(session)["graphs"] == 2
    assert [r["graphs"] for r in summarize(session)["runs"]] == [1, 1]
    assert [d.severity for d in session.diagnostics if "run 2" in d.message] == ["info"]


@pytest.mark.slow
def test_hundred_megabyte_line(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with open(path, "wb") as fh:
        fh.write(b'V1206 15:18:20.599000 1 a.py:1] {"artifact": {"name": "x", "encoding": "string"}, ')
        fh.write(b'"has_payload": "0"}\n\t')
        fh.write(b"a" * (100 << 20))
        fh.write(b"\n" + b"b" * (10 << 20) + b"\n")
    reader = RecordReader(str(path), payload_kinds=frozenset())
    assert [r.kind for r in reader] == ["artifact"]
    assert [d.line for d in reader.diagnostics] == [3]
