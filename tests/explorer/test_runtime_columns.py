"""The joined kernel times reach the panes: the kernel list's Time/step column, the Source heat
column and the per-line table read `ModeStats.time_by_ref`, and the Modes table shows saved
activations beside peak memory. Fed a recorded CPU session with one mode's joined times (the
join itself is tested on a real capture in tests/compiler_core/timeline/test_kernel_times.py)."""

from __future__ import annotations

import dataclasses

import pytest

from compiler_core.session import Session, load
from compiler_core.session.model import ModeStats, RuntimeProfile
from compiler_core.session.refs import source_line
from explorer.panes.inductor_pane import TIME_COLUMN, InductorPane
from explorer.panes.line_pipeline_pane import COLUMNS as LINE_COLUMNS
from explorer.panes.line_pipeline_pane import LinePipelinePane
from explorer.panes.source_pane import SourcePane
from explorer.panes.timeline_pane import COLUMNS, TimelinePane
from explorer.state import SessionState
from explorer.state.stage_refs import kernel_ref
from tests.conftest import FIXTURES

LINE = 40  # `x = x + self.attn(self.ln1(x))` in transformer_block.py


@pytest.fixture
def session() -> Session:
    s = load(FIXTURES / "transformer_block.json")
    c = s.compiles[0]
    kernel = c.inductor[0].kernels[0]
    path = next(iter(s.sources))
    times = {kernel_ref(c, kernel).encode(): 1234.5, source_line(path, LINE, c.rank).encode(): 617.25}
    stats = ModeStats("default", samples=20, median_ms=1.5, peak_mem_bytes=300 << 20, saved_bytes=466 << 10,
                      runtime=RuntimeProfile(steps=3, device="cpu", busy_us_per_step=2469.0),
                      time_by_ref=times)
    return dataclasses.replace(s, mode_stats=(stats,))


def _panes(session: Session, qtbot, *classes):  # type: ignore[no-untyped-def]
    state = SessionState()
    selection = state.selection
    panes = [cls(state, selection) for cls in classes]
    for p in panes:
        qtbot.addWidget(p)
    state.set_session(session)
    return panes


def test_kernel_list_source_heat_and_line_table_show_time_per_step(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    inductor, source, lines = _panes(session, qtbot, InductorPane, SourcePane, LinePipelinePane)
    kernel = session.compiles[0].inductor[0].kernels[0]
    items = [inductor.kernels.topLevelItem(i) for i in range(inductor.kernels.topLevelItemCount())]
    timed = {it.text(0): it.text(TIME_COLUMN) for it in items if it is not None and it.text(TIME_COLUMN)}
    assert timed == {kernel.name: "1.23 ms"}
    assert "µs per step: default, 3 profiled steps" in inductor.header.text()
    # one line per graph, then the caption: not one paragraph
    lines_shown = inductor.header.text().splitlines()
    graphs = [o.graph for o in session.compiles[0].inductor]
    assert lines_shown[0] == "Before vs after fusion:" and len(graphs) > 1
    assert [line.split(":")[0].strip(" •") for line in lines_shown[1:1 + len(graphs)]] == graphs
    assert lines_shown[-1].startswith("Time/step and node badges:")
    heat = source.view.heat()
    assert set(heat) == {LINE} and heat[LINE][0] == pytest.approx(0.25) and heat[LINE][1] == "617µs"
    assert source.view.gutter_width() > source.view.heat_width() > 0
    rows = [lines.tree.topLevelItem(i) for i in range(lines.tree.topLevelItemCount())]
    col = LINE_COLUMNS.index("Time/step")
    cells = {r.text(0): r.text(col) for r in rows if r is not None and r.text(col)}
    assert cells == {f"transformer_block.py:{LINE}": "617 µs"}


def test_modes_table_puts_saved_activations_beside_peak_memory(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    pane = TimelinePane()
    qtbot.addWidget(pane)
    pane.set_session(session)
    peak, saved = COLUMNS.index("Peak mem"), COLUMNS.index("Saved act.")
    assert saved == peak + 1
    row = next(r for r in range(pane.table.rowCount()) if pane.table.item(r, 0).text() == "default")
    assert pane.table.item(row, peak).text() == "300.0 MiB"
    assert pane.table.item(row, saved).text() == "466.0 KiB"


def test_no_profile_means_empty_columns_not_zeros(qtbot) -> None:  # type: ignore[no-untyped-def]
    plain = load(FIXTURES / "transformer_block.json")
    (inductor,) = _panes(plain, qtbot, InductorPane)
    items = [inductor.kernels.topLevelItem(i) for i in range(inductor.kernels.topLevelItemCount())]
    assert items and all(it is not None and it.text(TIME_COLUMN) == "" for it in items)


def test_median_cell_says_how_the_median_was_taken(qtbot) -> None:  # type: ignore[no-untyped-def]
    timed = load(FIXTURES / "stages_cpu.json")  # a captured run: samples and per-mode figures
    pane = TimelinePane()
    qtbot.addWidget(pane)
    pane.set_session(timed)
    row = next(r for r in range(pane.table.rowCount()) if pane.table.item(r, 0).text() == "default")
    cell = pane.table.item(row, COLUMNS.index("Median ms"))
    stats = next(m for m in timed.mode_stats if m.mode == "default")
    # no steps stored (a stage capture): the stored figures, not blanks
    assert not timed.timeline and stats.median_ms and cell.text() == f"{stats.median_ms:.3f}"
    text = cell.toolTip()
    assert f"{stats.samples} steps timed" in text and "blocks of 10 steps" in text
    assert "fresh Python data-stack chunk" in text
    # and the plot says why it is empty, instead of drawing axes over nothing
    assert "figures, not its steps" in pane.plot.item.titleLabel.text
