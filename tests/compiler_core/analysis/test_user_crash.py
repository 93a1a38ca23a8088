"""One cause, one row; a crash shown as a crash. Real CPU logs (tests/fixtures/trace_scripts).

- unresumable_break.py: a break inside a generator, which Dynamo cannot resume after. torch logs
  the break, then the same break again wrapped in "Failed to handle graph break gracefully":
  two rows before, the second with 0 ops cut.
- user_crash.py: the model's forward reads an attribute that does not exist while Dynamo traces
  it. torch logs that as a graph break (GB0088, "Observed exception") in a failed compile; the
  process dies with the AttributeError.
"""

from __future__ import annotations

from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.queries.summary import summarize
from tests.cpu_logs import cpu_log


def test_a_wrapped_break_joins_the_break_it_wraps() -> None:
    log = cpu_log("unresumable_break.py")
    assert log.path.read_text().count("Failed to handle graph break gracefully") >= 1  # the wrapper is logged
    session = import_trace(log.path)
    rows = distinct_breaks(session)
    assert len(rows) == 1, [r.reason for r in rows]
    (row,) = rows
    assert row.reason == "Call to `torch._dynamo.graph_break()`" and row.gb_code == "GB0025"
    assert (row.count, row.graphs_split) == (1, 1)
    assert row.location is not None and row.location.function == "steps"
    assert not row.first.resumable  # Dynamo skipped the function: the wrapper's news, kept
    assert summarize(session)["graph_breaks"] == 1


def test_a_crash_in_user_code_is_a_crash_not_a_break() -> None:
    log = cpu_log("user_crash.py")
    assert log.returncode != 0  # the run died
    session = import_trace(log.path)
    (c,) = session.compiles
    assert c.graph_breaks == ()  # not counted, not ranked as a break
    assert c.status == "failed"
    assert c.failure.startswith("AttributeError: 'Net' object has no attribute 'missing_layer'")
    (crash,) = [d for d in session.diagnostics if d.stage == "crash"]
    assert crash.severity == "error"
    assert crash.path.endswith("user_crash.py") and crash.line == 13
    first = crash.message.splitlines()[0]
    assert "[0/0] raised AttributeError: 'Net' object has no attribute 'missing_layer'" in first
    assert "user_crash.py:13 in forward" in first
    assert "return self.missing_layer(x)" in crash.message
    summary = summarize(session)
    assert summary["graph_breaks"] == 0 and summary["distinct_breaks"] == []
    assert summary["crashes"] and "AttributeError" in summary["crashes"][0]


def test_a_backend_that_raised_is_an_error_not_a_crash_of_user_code(shared_traces: Path) -> None:
    """tlparse's comp_failure.log: the backend raised (BackendCompilerFailed). Not the user's
    exception, but the run stopped there all the same: an error diagnostic says so."""
    session = import_trace(shared_traces / "inputs" / "comp_failure.log")
    errors = [d for d in session.diagnostics if d.severity == "error"]
    assert len(errors) == 1 and "failed in the compiler: BackendCompilerFailed" in errors[0].message
    assert "crash in user code" not in errors[0].message
