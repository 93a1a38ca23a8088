"""Compiles replayed from Inductor's caches are complete, so they read "ok (cached)", not as a problem."""

from __future__ import annotations

from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.session import Compile
from explorer.main_window import MainWindow
from explorer.panes.compile_time_pane import CompileTimePane
from explorer.state.compile_status import is_problem, status_summary, status_text


def test_status_words() -> None:
    assert status_text("cache_hit") == "ok (cached)" and not is_problem("cache_hit")
    assert is_problem("failed") and status_text("ok") == "ok"
    compiles = [Compile("0/0", status="cache_hit"), Compile("1/0"), Compile("2/0", status="failed")]
    assert status_summary(compiles) == "3 compiles (1 cached, 1 failed)"
    assert status_summary(compiles[1:2]) == "1 compiles"


def test_cache_hits_show_as_ok_cached(window: MainWindow, shared_traces: Path) -> None:
    session = import_trace(shared_traces / "inputs" / "cache_hit_miss.log")
    hits = [c.compile_id for c in session.compiles if c.status == "cache_hit"]
    assert hits, "the shared log holds a cache hit"
    window.set_session(session, "cache_hit_miss.log")
    assert f"{len(hits)} cached" in window.status_label.text()
    assert "failed" not in window.status_label.text()
    pane = window.panes["CompileTimePane"]
    assert isinstance(pane, CompileTimePane)
    items = [pane.cache.topLevelItem(i) for i in range(pane.cache.topLevelItemCount())]
    rows = {item.text(0): item.text(3) for item in items if item is not None}
    assert all(rows[cid] == "ok (cached)" for cid in hits), rows
    assert "cache_hit" not in rows.values()
    # the log holds three runs (0/0 again after 1/0); the compile list shows the run picked, so
    # pick the one holding the hit
    runs = window.navigation.runs
    hit_run = next(c.run for c in session.compiles if c.status == "cache_hit")
    runs.setCurrentIndex(runs.findData(hit_run))
    runs.activated.emit(runs.currentIndex())
    combo = window.navigation.compiles
    labels = [combo.itemText(i) for i in range(combo.count())]
    assert any("(cached)" in label for label in labels) and not any("cache_hit" in t for t in labels)
