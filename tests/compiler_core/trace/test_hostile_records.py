"""One real record damaged (a wrong-typed field, deep nesting) is skipped with a
warning naming its line, and the rest of the log imports; fuzzing of real records finds no crash.

Each case takes tlparse's simple.log (bundled) or a shared tlparse input, damages ONE record the
way a hostile or broken log would, and checks what survives against the undamaged import.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from compiler_core.analysis import import_trace
from compiler_core.analysis.session_builder import INTERNAL_SKIP
from compiler_core.queries.summary import summarize
from compiler_core.session import Session, dumps, loads
from compiler_core.trace.json_payload import MAX_DEPTH, JsonPayloadError, parse_json
from tests import fuzz_records as fr
from tests.conftest import FIXTURES

SIMPLE = FIXTURES / "traces" / "tlparse_simple.log.gz"


def _stage_event(r: fr.LogRecord) -> bool:
    data = fr.payload_json(r)
    return isinstance(data, dict) and data.get("name") == "inductor_compile"


# (what, log, record kind, record test, where, path, new value)
CASES: list[tuple[str, Any, str, Any, str, tuple[Any, ...], Any]] = [
    ("attempt a string", SIMPLE, "dynamo_start", None, "meta", ("attempt",), "x"),
    ("frame_id a dict", SIMPLE, "dynamo_output_graph", None, "meta", ("frame_id",), {"a": 1}),
    ("stack an int", SIMPLE, "dynamo_start", None, "meta", ("dynamo_start", "stack"), 7),
    ("envelope stack a string", SIMPLE, "dynamo_start", None, "meta", ("stack",), "x"),
    ("metrics a list", SIMPLE, "compilation_metrics", None, "meta", ("compilation_metrics",), [1, 2]),
    ("co_firstlineno a string", SIMPLE, "compilation_metrics", None, "meta",
     ("compilation_metrics", "co_firstlineno"), "abc"),
    ("fail_type a list", SIMPLE, "compilation_metrics", None, "meta",
     ("compilation_metrics", "fail_type"), ["x"]),
    ("artifact name a list", SIMPLE, "artifact", None, "meta", ("artifact", "name"), [1]),
    # JSON ints have no size; a session holding an int past 64 bits would not reopen, so it is never saved
    ("frame_id beyond 64 bits", SIMPLE, "compilation_metrics", None, "meta", ("frame_id",), 10**49),
    ("compile time beyond 64 bits", SIMPLE, "compilation_metrics", None, "meta",
     ("compilation_metrics", "entire_frame_compile_time_s"), -(10**30)),
    ("chromium ts a string", SIMPLE, "chromium_event", _stage_event, "payload", ("ts",), "soon"),
    ("chromium tid a list", SIMPLE, "chromium_event", _stage_event, "payload", ("tid",), [1, 2]),
    ("chromium args a string", SIMPLE, "chromium_event", _stage_event, "payload", ("args",), "x"),
    ("interned string not a pair", SIMPLE, "str", None, "meta", ("str",), {"a": 1}),
    ("deep payload (100k)", SIMPLE, "chromium_event", _stage_event, "payload", ("args",),
     fr.DeepMarker(100_000, "[")),
    ("deep payload (just over the bound)", SIMPLE, "chromium_event", _stage_event, "payload",
     ("args",), fr.DeepMarker(MAX_DEPTH + 5, "{")),
    ("deep header (5000)", SIMPLE, "compilation_metrics", None, "meta",
     ("compilation_metrics", "restart_reasons"), fr.DeepMarker(5_000, "[")),
]


def _load(source: Path) -> tuple[list[bytes], list[fr.LogRecord]]:
    return fr.split_records(fr.real_log(str(source)))


def _import(tmp_path: Path, data: bytes) -> Session:
    path = tmp_path / "damaged.log"
    path.write_bytes(data)
    session = import_trace(path)
    summarize(session)
    loads(dumps(session))  # what was kept still saves and loads
    assert not [d for d in session.diagnostics if INTERNAL_SKIP in d.message]
    return session


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_one_damaged_record_is_skipped_with_its_line(tmp_path: Path, case: tuple[Any, ...]) -> None:
    _, source, kind, test, where, path, value = case
    lead, records = _load(source)
    before = import_trace(source)
    index = fr.first_record(records, kind, test)
    data = fr.apply(lead, records, fr.Mutation(index, where, path, value))
    after = _import(tmp_path, data)
    lines = range(records[index].line, records[index].line + 1 + len(records[index].payload))
    warned = [d for d in after.diagnostics if d.line in lines and d.severity == "warning"]
    assert warned, [(d.line, d.message) for d in after.diagnostics]
    # the rest of the log still imports: same compiles, same graphs
    assert [c.compile_id for c in after.compiles] == [c.compile_id for c in before.compiles]
    if kind not in ("dynamo_output_graph",):
        assert [len(c.dynamo_graph.nodes) if c.dynamo_graph else 0 for c in after.compiles] == [
            len(c.dynamo_graph.nodes) if c.dynamo_graph else 0 for c in before.compiles
        ]
    assert sum(len(o.kernels) for c in after.compiles for o in c.inductor) == sum(
        len(o.kernels) for c in before.compiles for o in c.inductor
    )


def test_provenance_map_with_wrong_types(tmp_path: Path, shared_traces: Path) -> None:
    source = shared_traces / "inputs" / "inductor_provenance_jit_log.txt"
    lead, records = _load(source)
    index = fr.first_record(records, "inductor_provenance_tracking_node_mappings")
    key = next(iter(fr.payload_json(records[index])["preToPost"]))
    data = fr.apply(lead, records, fr.Mutation(index, "payload", ("preToPost", key), 7))
    after = _import(tmp_path, data)
    assert any(d.line == records[index].line and "provenance" in d.message for d in after.diagnostics)
    assert len(after.compiles) == len(import_trace(source).compiles)


def test_parse_json_bounds_depth_without_recursion_error() -> None:
    assert parse_json("[" * 10 + "]" * 10) == [[[[[[[[[[]]]]]]]]]]
    for text in (fr.deep(MAX_DEPTH + 1), fr.deep(900, "{"), fr.deep(1_000_000)):
        with pytest.raises(JsonPayloadError, match="nested too deeply"):
            parse_json(text)
    with pytest.raises(JsonPayloadError) as bad:
        parse_json('{"a":\n1,\n}')
    assert bad.value.lineno == 3
    # a wide but shallow payload (many brackets) passes
    wide = json.dumps({str(i): [i, [i]] for i in range(5000)})
    assert len(parse_json(wide)) == 5000


_SIMPLE_LEAD, _SIMPLE_RECORDS = fr.split_records(fr.real_log(str(SIMPLE)))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(m=fr.mutations(_SIMPLE_RECORDS))
def test_fuzzed_real_records_import(tmp_path_factory: pytest.TempPathFactory, m: fr.Mutation) -> None:
    """Bounded in CI; bench/fuzz_logs.py runs the same strategy over many more inputs."""
    _import(tmp_path_factory.mktemp("fuzz"), fr.apply(_SIMPLE_LEAD, _SIMPLE_RECORDS, m))
