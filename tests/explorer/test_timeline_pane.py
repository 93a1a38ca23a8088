"""Timeline pane on a recorded CPU run (no torch): figures, markers, toggles, live feeding, exports."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from pytestqt.qtbot import QtBot

from compiler_core.analysis import import_trace
from compiler_core.queries.step_stats import all_mode_stats, speedups, untrustworthy
from compiler_core.session import Session, load
from compiler_core.timeline.records import to_record
from explorer.panes.timeline_pane import COLUMNS, PLOT_INTERVAL_MS, TimelinePane
from tests.conftest import FIXTURES, SHARED_TRACES

FIXTURE = FIXTURES / "timeline" / "transformer_cpu_timeline.json"


@pytest.fixture(scope="module")
def session() -> Session:
    return load(FIXTURE)


@pytest.fixture
def pane(qtbot: QtBot) -> TimelinePane:
    widget = TimelinePane()
    qtbot.addWidget(widget)
    widget.resize(1200, 500)
    widget.show()
    return widget


def _cell(pane: TimelinePane, row: int, column: str) -> str:
    item = pane.table.item(row, COLUMNS.index(column))
    return item.text() if item is not None else ""


def test_table_shows_the_same_figures_as_the_core_stats(pane: TimelinePane, session: Session) -> None:
    pane.set_session(session)
    stats = all_mode_stats(session.timeline, session.timeline_events)
    speed = speedups(stats)
    assert pane.table.rowCount() == 3
    for row, st in enumerate(stats):
        assert _cell(pane, row, "Mode") == st.mode
        assert _cell(pane, row, "Median ms") == f"{st.median_ms:.3f}"
        assert _cell(pane, row, "p99 ms") == f"{st.p99_ms:.3f}"
        assert _cell(pane, row, "Total s") == f"{st.total_ms / 1000:.2f}"  # type: ignore[operator]
        noisy = " (noisy)" if untrustworthy(st, speed[st.mode]) else ""
        assert _cell(pane, row, "Speedup") == f"{speed[st.mode]:.2f}×{noisy}"
        assert _cell(pane, row, "Recomp.") == str(st.recompiles)
    assert _cell(pane, 0, "Compile s") == ""  # eager compiles nothing
    assert float(_cell(pane, 1, "Compile s")) > 0


def test_curves_warmup_rings_and_markers_follow_the_samples(pane: TimelinePane, session: Session) -> None:
    pane.set_session(session)
    layer = pane.plot.layers["default"]
    x, y = layer.curve.getData()
    assert list(x) == list(range(200))
    samples = [s for s in session.timeline if s.mode == "default"]
    assert y[5] == pytest.approx(math.log10(samples[5].ms))  # log axis by default
    assert len(layer.warm.data) == sum(s.warmup for s in samples) >= 2
    tips = [str(p.data()) for p in layer.marks.points()]
    assert any("recompile" in t and "size mismatch" in t for t in tips)
    assert any(t.startswith("default · step 120 · shape_change") for t in tips)
    assert any("recompile" in label.toPlainText() for label in layer.labels)
    pane.controls.log_y.setChecked(False)
    assert pane.plot.layers["default"].curve.getData()[1][5] == pytest.approx(samples[5].ms)


def test_mode_toggle_in_table_hides_its_curve(pane: TimelinePane, session: Session) -> None:
    pane.set_session(session)
    item = pane.table.item(1, 0)
    assert item.text() == "default" and item.checkState() == Qt.CheckState.Checked
    item.setCheckState(Qt.CheckState.Unchecked)
    assert not pane.plot.layers["default"].curve.isVisible()
    assert pane.plot.layers["eager"].curve.isVisible()
    pane.set_session(session)  # a reload keeps the user's choice
    assert not pane.plot.layers["default"].curve.isVisible()
    assert pane.table.item(1, 0).checkState() == Qt.CheckState.Unchecked


def test_run_button_emits_the_requested_run(pane: TimelinePane, qtbot: QtBot) -> None:
    c = pane.controls
    c.steps.setValue(50)
    c.mode_boxes["max-autotune"].setChecked(True)
    c.mode_boxes["reduce-overhead"].setChecked(False)
    c.shape_change.setChecked(True)
    c.shape_step.setValue(30)
    with qtbot.waitSignal(pane.runRequested, timeout=1000) as blocker:
        qtbot.mouseClick(c.run_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [{"steps": 50, "modes": ["eager", "default", "max-autotune"],
                             "shape_change_step": 30}]


def test_exports_hold_every_sample(pane: TimelinePane, session: Session, tmp_path: Path) -> None:
    pane.set_session(session)
    pane.export_csv(tmp_path / "t.csv")
    pane.export_chrome_trace(tmp_path / "t.json")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))
    assert len(rows) == len(session.timeline) == 600
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    timed = sum(e.duration_s is not None for e in session.timeline_events)  # compiles: complete events
    assert sum(e["ph"] == "X" and e["cat"] in ("step", "warmup") for e in trace) == 600
    assert sum(e["ph"] == "X" for e in trace) == 600 + timed
    assert sum(e["ph"] == "i" for e in trace) == len(session.timeline_events) - timed


def _records(session: Session, copies: int) -> list[dict[str, Any]]:
    """The fixture's records as the worker streams them, repeated with shifted steps."""
    out: list[dict[str, Any]] = []
    for mode in ("eager", "default", "reduce-overhead"):
        out.append({"event": "mode_start", "mode": mode, "steps": 200 * copies})
        for k in range(copies):
            for s in session.timeline:
                if s.mode == mode:
                    out.append({**to_record(s), "step": s.step + 200 * k})
            out += [{**to_record(e), "step": e.step + 200 * k}
                    for e in session.timeline_events if e.mode == mode]
    return out


def test_live_feed_keeps_the_event_loop_responsive(pane: TimelinePane, session: Session,
                                                   qtbot: QtBot) -> None:
    """6,000 samples fed as fast as a worker pipe would deliver them: the plot repaints on its
    timer while the feed runs (coalesced: far fewer repaints than records, yet it keeps up), and
    the event loop never stalls. Bounds are 10x looser than the idle figures of
    bench/timeline_pane.py, which holds the targets (≥ 30/s, ≤ 100 ms): a wall-clock floor at the
    target would fail on a busy small box."""
    records = _records(session, copies=10)
    chunk = 40
    feed = iter(range(0, len(records), chunk))
    gaps: list[float] = []
    last = [time.perf_counter()]
    done = [False]

    def probe() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    def push() -> None:
        start = next(feed, None)
        if start is None:
            done[0] = True
            return
        for r in records[start:start + chunk]:
            pane.add_record(r)

    probe_timer, feed_timer = QTimer(), QTimer()
    probe_timer.timeout.connect(probe)
    feed_timer.timeout.connect(push)
    probe_timer.start(2)
    feed_timer.start(1)
    t0, repaints0 = time.perf_counter(), pane.repaints
    qtbot.waitUntil(lambda: done[0], timeout=30_000)
    elapsed = time.perf_counter() - t0
    qtbot.wait(3 * PLOT_INTERVAL_MS)
    probe_timer.stop()
    feed_timer.stop()
    rate = (pane.repaints - repaints0) / elapsed
    print(f"fed {len(records)} records in {elapsed:.2f}s; {rate:.0f} repaints/s; "
          f"max gap {max(gaps) * 1000:.0f} ms")
    repaints = pane.repaints - repaints0
    assert repaints >= 2, "the plot must repaint while records arrive, not only at the end"
    assert repaints <= len(records) // chunk + 3, "one repaint per timer tick, never per record"
    assert rate >= 4 or elapsed < 0.5  # 10x below bench/timeline_pane.py's idle rate
    assert max(gaps) < 0.4  # 10x bench/timeline_pane.py's idle gap
    assert len(pane.plot.layers["reduce-overhead"].curve.getData()[0]) == 2000
    qtbot.waitUntil(lambda: _cell(pane, 2, "Steps") == "2000", timeout=2000)  # table at ~5 Hz


def test_mode_start_restarts_only_that_mode(pane: TimelinePane, session: Session) -> None:
    pane.set_session(session)
    pane.add_record({"event": "mode_start", "mode": "default", "steps": 5})
    pane.add_sample({"event": "sample", "mode": "default", "step": 0, "ms": 2.0, "warmup": True})
    pane.add_event({"event": "timeline_event", "mode": "default", "step": 0, "kind": "compile",
                    "reason": "compile 0/0", "duration_s": 0.002})
    pane.flush()
    assert len(pane.plot.layers["default"].curve.getData()[0]) == 1
    assert len(pane.plot.layers["eager"].curve.getData()[0]) == 200
    assert [str(p.data()).split("\n")[0] for p in pane.plot.layers["default"].marks.points()] == [
        "default · step 0 · compile (0.00 s)"]


def test_a_speedup_inside_its_own_noise_is_marked_and_the_quiet_ones_are_not(qtbot: QtBot) -> None:
    """A short run recorded on a busy 2-core box (steps from 1.2 to 600 ms, one steady block): the
    speedup is shown beside the paired eager median it divides and marked noisy; on a quieter
    run only the speedup whose effect stands out of its blocks' spread is a plain figure."""
    busy = load(FIXTURES / "timeline" / "transformer_cpu_profiled.json")
    stats = {s.mode: s for s in all_mode_stats(busy.timeline, busy.timeline_events)}
    speed = speedups(list(stats.values()))
    assert untrustworthy(stats["default"], speed["default"]).startswith("not trustworthy")
    pane = TimelinePane()
    qtbot.addWidget(pane)
    pane.set_session(busy)
    row = next(r for r in range(pane.table.rowCount()) if _cell(pane, r, "Mode") == "default")
    assert _cell(pane, row, "Speedup").endswith("(noisy)")
    assert _cell(pane, row, "Paired eager ms") == f"{stats['default'].baseline_ms:.3f}"
    assert _cell(pane, row, "Spread") == ""  # one steady block: no spread to show, so no trust either
    assert "one steady block" in untrustworthy(stats["default"], speed["default"])
    # the quieter run: reduce-overhead's 1.08x stands out of its ±4 % blocks, default's 1.05x
    # does not stand out of its ±8 %
    quiet = load(FIXTURE)
    quiet_stats = {s.mode: s for s in all_mode_stats(quiet.timeline, quiet.timeline_events)}
    quiet_speed = speedups(list(quiet_stats.values()))
    assert not untrustworthy(quiet_stats["reduce-overhead"], quiet_speed["reduce-overhead"])
    assert untrustworthy(quiet_stats["default"], quiet_speed["default"])


def test_the_modes_table_and_summary_show_the_same_medians_for_a_session_saved_by_an_older_build(
        qtbot: QtBot) -> None:
    """The bundled transformer session stores an eager median taken over steps, where its samples
    give another over blocks: the table and `summary` must print the same one."""
    from compiler_core.queries.summary import summarize
    from tests.conftest import ROOT

    session = load(ROOT / "resources" / "sessions" / "transformer_block.json")
    pane = TimelinePane()
    qtbot.addWidget(pane)
    pane.set_session(session)
    printed = summarize(session)["timeline"]
    for row in range(pane.table.rowCount()):
        mode = _cell(pane, row, "Mode")
        assert _cell(pane, row, "Median ms") == f"{printed[mode]['median_ms']:.3f}"


def test_chrome_export_keeps_the_steps_real_start_times(pane: TimelinePane, session: Session,
                                                        tmp_path: Path) -> None:
    """Samples that carry their start time reach the pane's export on that time, not laid end to
    end: the pane's store keeps `start_ms` for the mode's own and its paired eager steps."""
    starts, t = [], 5000.0
    for s in session.timeline:  # in run order, one after another, 1 ms apart
        starts.append(t)
        t += s.ms + 1.0
    timed = dataclasses.replace(session, timeline=tuple(
        dataclasses.replace(s, start_ms=at) for s, at in zip(session.timeline, starts, strict=True)))
    pane.set_session(timed)
    pane.export_chrome_trace(tmp_path / "t.json")
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    starts = sorted(e["ts"] for e in trace if e["ph"] == "X" and e["cat"] in ("step", "warmup"))
    assert starts == pytest.approx(sorted(s.start_ms * 1000.0 for s in timed.timeline), abs=0.01)  # type: ignore[operator]


def test_an_empty_plot_says_what_to_do_with_what_is_open(pane: TimelinePane, session: Session) -> None:
    """A trace log cannot be run: its empty plot said "open a model file and press Run" while the
    log stayed open; each session now gets its own message, and a session with steps none."""
    from explorer.panes.timeline_plot import CAPTURE_TITLE, EMPTY_TITLE, TRACE_TITLE

    def title() -> str:
        label = pane.plot.item.titleLabel
        return str(label.text) if label.isVisible() else ""

    traced = import_trace(SHARED_TRACES / "inputs" / "comp_metrics.log")
    assert traced.meta.origin == "trace" and not traced.timeline
    pane.state.set_session(traced)
    pane.flush()
    assert "trace log records compiles" in title() and title() != EMPTY_TITLE
    pane.set_session(session)
    assert session.timeline and TRACE_TITLE not in title() and "No step times" not in title()
    # a capture without --steps: its own Run (above the plot) times it, no file to open
    untimed = dataclasses.replace(session, timeline=(), timeline_events=(), mode_stats=())
    assert untimed.meta.origin == "capture"
    pane.state.set_session(untimed)
    pane.flush()
    assert title() == CAPTURE_TITLE and "open a model file" not in title()


def test_the_modes_pane_shows_the_timelines_figures_for_a_session_saved_by_an_older_build(
        qtbot: QtBot) -> None:
    """The Modes table must not read the stored figures beside a Timeline table that shows other
    ones for the same steps: one screen, two speedups."""
    from compiler_core.queries.summary import summarize
    from explorer.panes.mode_compare_pane import ModeComparePane
    from explorer.state import SessionState
    from tests.conftest import ROOT

    session = load(ROOT / "resources" / "sessions" / "transformer_block.json")
    printed = summarize(session)["timeline"]
    state = SessionState()
    modes = ModeComparePane(state, state.selection)
    qtbot.addWidget(modes)
    state.set_session(session)
    assert modes.rows
    for row in modes.rows:
        figures = printed[row.mode]
        assert row.step_ms == pytest.approx(figures["median_ms"]), row.mode
        if figures["speedup"] is not None:
            assert row.speedup == pytest.approx(figures["speedup"]), row.mode
