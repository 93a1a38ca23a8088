"""A log that holds several runs: each run is found, stored and counted on its own, never damage.

Real CPU logs: `torch.compile`, `torch._dynamo.reset()`, compile again, then
`torch._dynamo.explain()` (tests/fixtures/trace_scripts/two_runs.py) in one process; and two
processes' logs of one script appended into one file, the second run hitting the first's
Inductor cache (tiny_model.py).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize
from compiler_core.session import SessionFormatError, dumps, load, loads, save
from tests.bench_scripts import bench_module
from tests.cpu_logs import cpu_log
from tests.session_rows import as_packed_of, get_at


def _explain_counts() -> dict[str, int]:
    log = cpu_log("two_runs.py")
    assert log.returncode == 0
    counts: dict[str, int] = json.loads(log.stdout.strip().splitlines()[-1])
    return counts


def test_each_run_counts_what_explain_counts_for_one_run() -> None:
    explained = _explain_counts()
    assert explained == {"graphs": 2, "graph_breaks": 1}  # the script's one print splits one graph
    session = import_trace(cpu_log("two_runs.py").path)
    assert sorted({c.run for c in session.compiles}) == [0, 1, 2]  # compile, compile again, explain
    summary = summarize(session)
    for run in summary["runs"]:
        assert (run["graphs"], run["graph_breaks"], run["distinct_breaks"]) == (
            explained["graphs"], explained["graph_breaks"], 1), run
    # ids restart per run and stay unique in the session; a run is never interleaved with another
    assert summary["compile_ids"] == ["0/0", "1/0", "0/0#2", "1/0#2", "0/0#3", "1/0#3"]
    assert [c.run for c in session.compiles] == [0, 0, 1, 1, 2, 2]


def test_a_second_run_is_said_but_is_no_damage() -> None:
    session = import_trace(cpu_log("two_runs.py").path)
    assert [d for d in session.diagnostics if d.severity != "info"] == []  # no banner, no "damaged input"
    starts = [d for d in session.diagnostics if "run 2 of this log starts here" in d.message]
    assert len(starts) == 1 and starts[0].line is not None
    assert "0/0 starts again" in starts[0].message


def test_another_process_appending_to_the_log_starts_a_run(tmp_path: Path) -> None:
    """A script run twice into one file: the second process's torch version and string table
    come again. Its second run also hits the first's FX-graph cache, whose provenance artifacts
    have no payload at all: that is not a malformed JSON payload."""
    first = cpu_log("tiny_model.py", cache="shared", attempt=0)
    second = cpu_log("tiny_model.py", cache="shared", attempt=1)
    alone = import_trace(second.path)
    assert any(c.status == "cache_hit" for c in alone.compiles)
    assert [d.message for d in alone.diagnostics if d.severity != "info"] == []
    both = tmp_path / "dedicated_log_torch_trace_twice.log"
    both.write_bytes(first.path.read_bytes() + second.path.read_bytes())
    session = import_trace(both)
    assert [d.message for d in session.diagnostics if d.severity != "info"] == []
    runs = summarize(session)["runs"]
    assert [r["compiles"] for r in runs] == [len(import_trace(first.path).compiles), len(alone.compiles)]
    assert any("new process" in d.message for d in session.diagnostics)


def test_runs_survive_a_save_and_a_converted_older_session_gets_them_from_its_ids(tmp_path: Path) -> None:
    session = import_trace(cpu_log("two_runs.py").path)
    path = tmp_path / "runs.json"
    save(session, path)
    assert [c.run for c in load(path).compiles] == [0, 0, 1, 1, 2, 2]
    # the same session as schema 2 wrote it: no `run` field, the runs only in the ids' `#N`
    packed = as_packed_of(2, json.loads(dumps(replace(session, compiles=tuple(
        replace(c, run=0) for c in session.compiles)))))  # fmt: skip
    fields = packed["fields"]["Compile"]
    at = fields.index("run")
    del fields[at]
    for row in get_at(packed, "compiles"):
        if len(row) > at:
            del row[at]
    with pytest.raises(SessionFormatError, match="convert_sessions"):
        loads(json.dumps(packed))
    old = bench_module("legacy_sessions").legacy_session(packed)  # what the converter reads
    assert [c.run for c in old.compiles] == [0, 0, 1, 1, 2, 2]


def test_a_wrapper_logged_in_its_own_compile_joins_the_break_it_wraps() -> None:
    """The corpus's HF T5 training log (H100, torch 2.11): GB0179 `copy.deepcopy()` broke in 1/0
    and Dynamo re-logged it as "Failed to handle graph break gracefully" in 2/0 and 4/0. One
    cause: the wrappers join the earlier break (now not resumable) and are not counted again,
    so the count equals the log's own break artifacts that are not wrappers (5)."""
    from pathlib import Path

    from compiler_core.analysis import import_trace

    log = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs" / "hf_t5_train.log.xz"
    session = import_trace(log)
    breaks = [b for c in session.compiles for b in c.graph_breaks]
    assert len(breaks) == 5
    assert not any(b.header.startswith("Failed to handle graph break gracefully") for b in breaks)
    assert {b.gb_code for b in breaks} == {"GB0179"}
    assert any(not b.resumable for b in breaks)
