"""Focus mode (the default below 850 px of window height) must leave every pane of a stage
reachable: at 1366x768 the Graph breaks pane (stage dynamo), Per-line pipeline (source) and
Compile time (timeline) were hidden with no way back but the View menu, on a ResNet log whose
graph breaks are the first thing to fix."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QTabBar

from explorer.main_window import MAIN_PANE, MainWindow
from explorer.pane_registry import PANES
from tests.bench_logs import bench_session


def _reachable(window: MainWindow, key: str) -> bool:
    """Shown, or a tab of a tab bar on screen."""
    dock = window.docks[key]
    if dock.isVisible() and not dock.visibleRegion().isEmpty():
        return True
    return any(bar.isVisible() and not bar.visibleRegion().isEmpty()
               and dock.windowTitle() in {bar.tabText(i) for i in range(bar.count())}
               for bar in window.findChildren(QTabBar))  # fmt: skip


def test_focus_mode_keeps_every_pane_of_the_stage_reachable(window: MainWindow) -> None:
    window.resize(1366, 768)
    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    assert window.focused
    for stage in ("source", "dynamo", "aot", "inductor", "kernels", "timeline"):
        window.show_stage(stage)
        for _ in range(5):  # Qt lays the new tab bars out over the next turns
            QApplication.processEvents()
        for spec in PANES:  # a detail pane (Autotuning) is a tab of its anchor (Kernel code)
            if (spec.stage == stage and not spec.tab_with) or spec.tab_with == MAIN_PANE[stage]:
                assert _reachable(window, spec.key), f"{stage}: {spec.title} unreachable"
    window.show_stage("dynamo")
    assert window.panes["DynamoPane"].width() > 1000, "the stage's main pane still has the window"
    window.set_focus_mode(False)
    assert window.docks["BreakSummaryPane"].isVisible() and window.docks["SourcePane"].isVisible()
