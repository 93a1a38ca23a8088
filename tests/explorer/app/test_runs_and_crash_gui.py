"""A log of several runs, and a log of a run that crashed in user code, in the real window.

The logs are real CPU runs (tests/fixtures/trace_scripts, made in a subprocess: this process
never imports torch), read by the torch-free importer as File ▸ Open reads them.
"""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from explorer.actions.loading import load_prepared
from explorer.main_window import MainWindow
from explorer.panes.break_summary_pane import BreakSummaryPane
from explorer.panes.dynamo_pane import DynamoPane, frame_sequence
from tests.cpu_logs import cpu_log


def _show(qtbot: QtBot, window: MainWindow, script: str) -> None:
    path = cpu_log(script).path
    session, links = load_prepared(path)
    window.set_session(session, str(path), links)
    window.ensure_panes()
    window.state.updates.flush()


def test_runs_are_picked_like_ranks_and_never_mixed(qtbot: QtBot, window: MainWindow) -> None:
    _show(qtbot, window, "two_runs.py")
    assert not window.banner.isVisible(), window.banner.label.text()  # several runs are no damage
    nav = window.navigation
    assert nav.runs_action.isVisible() and nav.runs.count() == 3
    current = window.state.current
    assert current is not None
    assert {c.run for c in nav.compile_model.all} == {current.run}  # one run's compiles listed
    nav._run_picked(nav.runs.findData(1))
    window.state.updates.flush()
    current = window.state.current
    assert current is not None and current.run == 1
    assert [c.compile_id for c in nav.compile_model.all] == ["0/0#2", "1/0#2"]
    # the frame's graphs: this run's graph before the break and its resume function, once each
    sequence = frame_sequence(window.state.session, current)
    assert [c.compile_id for c in sequence] == ["0/0#2", "1/0#2"]
    dynamo = window.panes["DynamoPane"]
    assert isinstance(dynamo, DynamoPane)
    sections = dynamo._sections(current)
    assert [bool(s.break_before) for s in sections] == [False, True]  # one break, inside the run
    breaks = window.panes["BreakSummaryPane"]
    assert isinstance(breaks, BreakSummaryPane)
    (row,) = [r for r in breaks.rows if hasattr(r, "graphs_split")]
    assert (row.count, row.graphs_split, row.compile_ids) == (1, 1, ["0/0#2"])


def test_a_crash_is_a_crash_banner_and_an_error_row(qtbot: QtBot, window: MainWindow) -> None:
    _show(qtbot, window, "user_crash.py")
    assert window.banner.isVisible()
    text = window.banner.label.text()
    assert text.startswith("✖ The run crashed in user code: [0/0] raised AttributeError"), text
    assert "user_crash.py:13 in forward" in text and "damaged" not in text
    diagnostics = window.panes["DiagnosticsPane"]
    summary = diagnostics.summary.text()  # type: ignore[attr-defined]
    assert "No problems" not in summary and "1 error" in summary, summary
    current = window.state.current
    assert current is not None and current.status == "failed" and current.dynamo_graph is None
    dynamo = window.panes["DynamoPane"]
    assert isinstance(dynamo, DynamoPane)
    assert dynamo._sections(current) == []  # no other graph shown as if it were its own
    reasons = dynamo.reasons.toPlainText()
    assert "failed before Dynamo captured a graph: AttributeError" in reasons, reasons
    assert "frame's others" not in reasons
    breaks = window.panes["BreakSummaryPane"]
    assert isinstance(breaks, BreakSummaryPane) and breaks.rows == []
