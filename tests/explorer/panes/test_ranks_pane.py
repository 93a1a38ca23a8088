"""The Ranks pane on recorded two-rank runs (real `run --nproc 2` sessions of gloo scripts on CPU,
tests/data/ranks) and on tlparse's four-rank log: the table and the picture say what the core's
`rank_divergence` says, the skew view shows the straggler. No torch: sessions and logs only."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from compiler_core.analysis import import_trace
from compiler_core.ranks.rank_divergence import rank_divergence
from compiler_core.session import Ref, Session, load
from explorer.panes.ranks_pane import COLUMNS, REFERENCE, STRAGGLER, RanksPane
from explorer.state import SessionState
from tests.compiler_core.ranks.rank_data import fan_out, load_run
from tests.conftest import FIXTURES

SHOTS = os.environ.get("COMPILESCOPE_SHOTS")  # set to a folder to keep the screenshots


def _pane(qtbot, session: Session) -> RanksPane:  # type: ignore[no-untyped-def]
    state = SessionState()
    pane = RanksPane(state, state.selection)
    qtbot.addWidget(pane)
    pane.resize(1200, 800)
    pane.show()
    state.set_session(session)
    return pane


def _rows(pane: RanksPane) -> list[list[str]]:
    items = [pane.table.topLevelItem(i) for i in range(pane.table.topLevelItemCount())]
    return [[item.text(c) for c in range(len(COLUMNS))] for item in items if item is not None]


def _rank_of(pane: RanksPane, spot) -> int:  # type: ignore[no-untyped-def]
    """The rank of a cell of the picture: its row."""
    return pane.ranks[round(spot.pos().y())]


def _shot(pane: RanksPane, name: str) -> None:
    if SHOTS:
        QApplication.processEvents()  # the summary's new lines laid out
        pane.grab().save(str(Path(SHOTS) / f"{name}.png"))


def test_diverging_ranks_table_picture_and_click(qtbot) -> None:  # type: ignore[no-untyped-def]
    session = load_run("diverge")
    pane = _pane(qtbot, session)
    _shot(pane, "ranks_diverge")
    diffs = rank_divergence(session)
    rows = _rows(pane)
    assert [(r[0], r[1], r[2]) for r in rows] == [(d.compile_id, d.aspect, "1") for d in diffs]
    graph = next(r for r in rows if r[:2] == ["1/0", "graph"])
    assert "`mul`" in graph[4] and "all_reduce" in graph[4]
    assert pane.summary.text().startswith("rank 0 as reference; rank 1 differs in graph 1/0")
    # per compile id, only those both ranks compiled
    assert re.search(r"widest on one compile: (0/0|1/0), rank [01] \+\d", pane.summary.text())
    # the picture: a cell per (difference, rank); rank 1's cells coloured, rank 0's grey
    spots = pane.cells.points()
    assert len(spots) == 2 * len(diffs)
    for spot in spots:
        rank = _rank_of(pane, spot)
        grey = spot.brush().color() == REFERENCE
        assert grey == (rank == 0)
    # a row selects its compile on the rank that differs
    item = pane.table.topLevelItem(next(i for i, r in enumerate(rows) if r[:2] == ["0/1", "compiles"]))
    assert item is not None
    pane.table.itemClicked.emit(item, 0)
    assert pane.selection.selected == frozenset({Ref.compile("0/1", 1)})


def test_straggler_named_and_drawn(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = _pane(qtbot, load_run("slow_rank"))
    _shot(pane, "ranks_slow")
    text = pane.summary.text()
    assert text.startswith("ranks 0-1 identical: every compile")
    assert "rank 1 is the straggler on step" in text
    assert pane.table.topLevelItemCount() == 0 and not pane.cells.points().size
    lags = dict(pane.skew_bars)
    assert lags[1] > 30.0 and lags[0] == pytest.approx(-lags[1])
    (bars,) = [i for i in pane.skew.getPlotItem().items if hasattr(i, "opts") and "brushes" in i.opts]
    colours = [b.color() for b in bars.opts["brushes"]]
    assert colours[1] == STRAGGLER and colours[0] != STRAGGLER
    assert pane.has_content()


def test_sixteen_ranks_one_odd_one_slow(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Recorded runs fanned out to 16 ranks: rank 7 took the other branch (diverge), rank 13
    sleeps in every step (slow_rank)."""
    pane = _pane(qtbot, fan_out(load_run("diverge"), 16, {7: 1}))
    _shot(pane, "ranks_sixteen")
    assert pane.summary.text().startswith("ranks 0-6, 8-15 identical; rank 7 differs in graph 1/0")
    coloured = {_rank_of(pane, s) for s in pane.cells.points() if s.brush().color() != REFERENCE}
    assert coloured == {7}
    assert len(pane.cells.points()) == 16 * pane.table.topLevelItemCount()
    slow = _pane(qtbot, fan_out(load_run("slow_rank"), 16, {13: 1}))
    assert "rank 13 is the straggler on step" in slow.summary.text()
    lags = dict(slow.skew_bars)
    assert len(lags) == 16 and max(lags, key=lambda r: lags[r]) == 13
    assert all(abs(v) < lags[13] / 4 for r, v in lags.items() if r != 13)


def test_four_ranks_of_a_real_log_grouped(qtbot, shared_traces: Path) -> None:  # type: ignore[no-untyped-def]
    session = import_trace(shared_traces / "inputs" / "multi_rank_logs")
    pane = _pane(qtbot, session)
    assert pane.summary.text().startswith("ranks 0, 2 identical; rank 1 differs in status 0/0")
    assert pane.table.topLevelItemCount() == len(rank_divergence(session))
    assert "no step times per rank" in pane.skew.getPlotItem().titleLabel.text
    assert "no step times per rank in this input" in pane.summary.text()
    # the difference picture stays, the empty step-time one is left out
    assert pane.matrix.isVisibleTo(pane) and not pane.skew_box.isVisibleTo(pane)


def test_one_rank_says_there_is_nothing_to_compare(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = _pane(qtbot, load(FIXTURES / "mlp_graph_break.json"))
    assert pane.summary.text().startswith("One rank: nothing to compare")
    assert pane.table.topLevelItemCount() == 0
    assert pane.table.headerItem().text(0) == "Compile"
    assert pane.summary.textFormat() == Qt.TextFormat.PlainText
