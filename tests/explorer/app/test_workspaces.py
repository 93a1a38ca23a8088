"""Workspaces: a session opens on one stage's panes laid out for its task, at 1366x768 and
1920x1080; every pane of a workspace is reachable (shown or a tab on screen) and none is cut to
a sliver; the all-panes view is one toggle away; each arrangement the user makes is kept, when
switching and across runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QDockWidget, QTabBar

from explorer.main_window import TIMELINE_DOCKS, MainWindow
from explorer.workspaces import WORKSPACES
from tests.bench_logs import bench_session

SIZES = ((1366, 768), (1920, 1080))


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def _reachable(window: MainWindow, key: str) -> bool:
    """Shown with room to read, or a tab of a tab bar on screen."""
    dock = window.docks[key]
    if dock.isVisible() and not dock.visibleRegion().isEmpty():
        return dock.width() >= 200 and dock.height() >= 150
    return any(bar.isVisible() and not bar.visibleRegion().isEmpty()
               and dock.windowTitle() in {bar.tabText(i) for i in range(bar.count())}
               for bar in window.findChildren(QTabBar))  # fmt: skip


def _shown(window: MainWindow) -> set[str]:
    return {k for k, d in window.docks.items() if d.isVisible()}


@pytest.mark.parametrize("size", SIZES)
def test_each_workspace_shows_its_panes_and_only_them(window: MainWindow, size: tuple[int, int]) -> None:
    window.resize(*size)
    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    _settle()
    assert window.workspace is not None, "a session opens in a workspace"
    for ws in WORKSPACES:
        if ws.main not in window.docks:
            continue
        window.show_stage(ws.key)
        _settle()
        assert window.workspace == ws.key
        # a one-rank log: no steps to plot, no ranks to compare
        mine = {k for k in ws.docks() if k in window.docks} - {*TIMELINE_DOCKS, "RanksPane"}
        assert _shown(window) <= mine, f"{ws.key}: {_shown(window) - mine} shown too"
        for key in mine:
            assert _reachable(window, key), f"{ws.key} at {size}: {key} unreachable or a sliver"
        main = window.docks[ws.main]
        assert main.width() * main.height() >= 0.25 * window.width() * window.height(), ws.key


def test_stages_open_their_workspace_with_their_pane_on_top(window: MainWindow) -> None:
    window.resize(1366, 768)
    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    window.show_stage("kernels")
    _settle()
    assert window.workspace == "inductor" and window.panes["KernelCodePane"].isVisible()
    window.show_stage("source")
    _settle()
    assert window.workspace == "dynamo" and window.panes["SourcePane"].isVisible()


def test_all_panes_is_one_toggle_away_and_each_arrangement_is_kept(window: MainWindow) -> None:
    window.resize(1366, 768)
    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    window.show_stage("inductor")
    _settle()
    window.navigation.all_panes_action.trigger()
    _settle()
    assert window.workspace is None and _shown(window) == set(window.docks) - {*TIMELINE_DOCKS, "RanksPane"}
    window.docks["SourcePane"].hide()  # the user's own arrangement of the all-panes view
    window.navigation.all_panes_action.trigger()
    _settle()
    assert window.workspace == "inductor"
    window.docks["AutotunePane"].hide()  # and of a workspace
    window.show_stage("aot")
    window.show_stage("inductor")
    _settle()
    assert not window.docks["AutotunePane"].isVisible(), "the workspace as the user left it"
    window.navigation.all_panes_action.trigger()
    _settle()
    assert not window.docks["SourcePane"].isVisible() and window.docks["DynamoPane"].isVisible()


def test_arrangements_are_kept_across_runs(qtbot: object, tmp_path: Path) -> None:
    ini = str(tmp_path / "layout.ini")
    first = MainWindow(QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(first)  # type: ignore[attr-defined]
    first.show()
    first.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    first.show_stage("inductor")
    _settle()
    first.docks["CudaGraphPane"].hide()
    first.show_stage("timeline")
    _settle()
    first.close()
    again = MainWindow(QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(again)  # type: ignore[attr-defined]
    again.show()
    _settle()
    assert again.workspace == "timeline", "the run reopens where the user left it"
    again.show_stage("inductor")
    _settle()
    assert not again.docks["CudaGraphPane"].isVisible()
    assert again.docks["KernelCodePane"].isVisible()
    again.reset_layout()
    _settle()
    assert again.docks["CudaGraphPane"].isVisible() or _reachable(again, "CudaGraphPane")
    docks: list[QDockWidget] = list(again.docks.values())
    assert docks


def test_a_trace_log_shows_no_timeline_area_until_a_session_has_step_times(window: MainWindow) -> None:
    """A log cannot be run: its timeline plot and Modes table stay empty, so they are not shown
    (compile time takes the room); a session with step times gets them back, in the workspace
    and in the all-panes view."""
    from compiler_core.session import load
    from explorer.app import SESSIONS_DIR

    window.resize(1366, 768)
    log = bench_session("tv_resnet_breaks")
    assert log.meta.origin == "trace" and not log.timeline
    window.set_session(log, "tv_resnet_breaks.log")
    for arrangement in ("timeline", "all"):
        if arrangement == "all":
            window.set_all_panes(True)
        else:
            window.show_stage("timeline")
        _settle()
        assert not window.docks["TimelinePane"].isVisible()
        assert not window.docks["ModeComparePane"].isVisible()
        assert window.docks["CompileTimePane"].isVisible() or arrangement == "all"
    window.set_all_panes(False)
    _settle()
    compile_time = window.docks["CompileTimePane"]
    assert compile_time.height() >= 0.6 * window.height(), "the chart takes the timeline's room"
    timed = load(SESSIONS_DIR / "small_cnn.json")
    window.set_session(timed, "small_cnn.json")
    window.show_stage("timeline")
    _settle()
    assert window.docks["TimelinePane"].isVisible() and window.docks["ModeComparePane"].isVisible()
    window.set_all_panes(True)
    _settle()
    assert window.docks["TimelinePane"].isVisible()


def test_an_overview_line_opens_the_workspace_that_shows_it(window: MainWindow) -> None:
    """Each Overview line links into the pane that shows it: a break opens Source + Dynamo with
    the break selected there."""
    window.resize(1366, 768)
    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    _settle()
    assert window.workspace == "overview"
    pane = window.panes["OverviewPane"]
    overview = pane.overview  # type: ignore[attr-defined]
    breaks = overview.section("breaks")
    assert breaks is not None and breaks.facts
    index = pane.facts.index(breaks.facts[0])  # type: ignore[attr-defined]
    pane.activate(index)  # type: ignore[attr-defined]
    _settle()
    assert window.workspace == "dynamo"
    assert set(breaks.facts[0].refs) <= window.selection.selected


def test_a_multi_rank_session_shows_its_ranks_and_exports_one_trace_for_all(
        window: MainWindow, tmp_path: Path) -> None:
    """The Ranks pane joins the Overview only where there are ranks to compare, and the
    timeline's Chrome trace export writes every rank as its own process."""
    import json

    from tests.compiler_core.ranks.rank_data import load_run

    window.resize(1366, 768)
    window.set_session(bench_session("tv_resnet_breaks"), "one_rank.log")
    _settle()
    assert window.workspace == "overview" and not window.docks["RanksPane"].isVisible()
    two = load_run("slow_rank")
    window.set_session(two, "slow_rank.json")
    _settle()
    assert window.docks["RanksPane"].isVisible() and _reachable(window, "RanksPane")
    out = tmp_path / "trace.json"
    window.panes["TimelinePane"].export_chrome_trace(out)  # type: ignore[attr-defined]
    events = json.loads(out.read_text())["traceEvents"]
    assert len({e["pid"] for e in events if e.get("ph") == "X"}) == 2
