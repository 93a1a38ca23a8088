"""Graphs a person can read, in the real window on real H200 logs (bench/data).

ResNet-50 with graph breaks and the 32-layer HF Llama training step: the window opens on the
compile that matters, the selector and navigator say what is on screen, the first view of each
graph pane is a few hundred items with 9 pt labels, break labels do not overlap, and expanding
or collapsing a group keeps it where it was clicked.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QTabBar
from pytestqt.qtbot import QtBot

from compiler_core.session import Session
from explorer.canvas import GraphCanvas
from explorer.canvas.canvas_view import LABEL_MIN_PX, LABEL_PT
from explorer.main_window import MainWindow
from tests.bench_logs import bench_session


@pytest.fixture(scope="module")
def resnet() -> Session:
    return bench_session("tv_resnet_breaks")


@pytest.fixture(scope="module")
def llama() -> Session:
    return bench_session("hf_llama_train")


def _settle(window: MainWindow, timeout: float = 120.0) -> None:
    """Spin until every graph pane and worker has been idle for 0.5 s: panes spread their
    updates over later event-loop turns, so "nothing busy" right after a switch proves nothing."""
    end = time.monotonic() + timeout
    idle_since: float | None = None
    while time.monotonic() < end:
        QApplication.processEvents()
        workers = [getattr(p, "_joint_refs", None) for p in window.panes.values()]
        busy = any(_canvas(window, k).busy for k in ("DynamoPane", "AotPane", "InductorPane")) or \
            any(w is not None and w.busy() for w in workers)  # fmt: skip
        now = time.monotonic()
        idle_since = None if busy else (idle_since or now)
        if idle_since is not None and now - idle_since >= 0.5:
            return
        time.sleep(0.02)
    raise AssertionError("layout did not finish")


def _canvas(window: MainWindow, key: str) -> GraphCanvas:
    return window.panes[key].graphs.canvas  # type: ignore[attr-defined, no-any-return]


def _legible_first_view(canvas: GraphCanvas) -> None:
    res = canvas.result
    assert res is not None
    shown = int(res.scene.visible.sum())
    assert 0 < shown <= 300, shown
    assert canvas.view.scale * 30.0 >= LABEL_MIN_PX  # node labels are drawn
    assert canvas.view._font.pointSizeF() >= LABEL_PT >= 9.0
    on = canvas.view._on_screen(canvas.view.state) & res.scene.visible  # type: ignore[arg-type]
    assert on.sum() >= 3, "the first view shows items, not empty space"


def test_resnet_window_selector_navigator_and_break_labels(
    qtbot: QtBot, window: MainWindow, resnet: Session
) -> None:
    window.set_session(resnet, "resnet.log")
    _settle(window)
    assert window.state.current is not None and window.state.current.compile_id == "0/0"
    assert window.navigation.compiles.currentText().startswith("[0/0]")
    # choosing another compile: the combo reads what is on screen
    i = next(k for k in range(window.navigation.compiles.count())
             if window.navigation.compiles.itemText(k).startswith("[1/0]"))  # fmt: skip
    window.navigation.compiles.setCurrentIndex(i)
    window.navigation.compiles.activated.emit(i)
    _settle(window)
    assert window.state.current.compile_id == "1/0"
    assert window.navigation.compiles.currentText().startswith("[1/0]")
    window.state.set_compile(("0/0", None))
    _settle(window)
    assert window.navigation.compiles.currentText().startswith("[0/0]")
    # the navigator raises each stage's main pane, not a detail tab behind it
    # (a trace log: its timeline workspace holds the compile-time chart alone, having no steps)
    for stage, front in (("aot", "AotPane"), ("inductor", "KernelCodePane"), ("timeline", "CompileTimePane"),
                         ("kernels", "KernelCodePane")):  # fmt: skip
        window.navigation.stage_actions[stage].trigger()
        QApplication.processEvents()
        assert not window.panes[front].visibleRegion().isEmpty(), (stage, front)
        fronts = {b.tabText(b.currentIndex()) for b in window.findChildren(QTabBar) if b.isVisible()}
        assert not fronts & {"Decompositions", "CUDA graphs", "Modes", "Autotuning"}, (stage, fronts)
    window.navigation.stage_actions["dynamo"].trigger()
    # the frame's graphs stack with break separators whose labels do not overlap
    dyn = _canvas(window, "DynamoPane")
    _legible_first_view(dyn)
    assert len(dyn.result.scene.sections) >= 2  # type: ignore[union-attr]
    scene = dyn.result.scene  # type: ignore[union-attr]
    dyn.view.scale = (dyn.view.height() - 40) / scene.height  # zoomed out, separators crowd together
    dyn.view.ty = 20.0
    dyn.view.repaint()
    ys = [y for y, _ in dyn.view.section_labels]
    assert ys and all(b - a >= 12 for a, b in itertools.pairwise(ys))
    for key in ("AotPane", "InductorPane"):
        _legible_first_view(_canvas(window, key))


def test_llama_first_views_fold_and_expand_in_place(
    qtbot: QtBot, settings: QSettings, llama: Session
) -> None:
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.set_session(llama, "llama.log")
    assert window.workspace is not None, "a session opens in a workspace, not fifteen docks"
    _settle(window)
    for stage, key in (("dynamo", "DynamoPane"), ("aot", "AotPane"), ("inductor", "InductorPane")):
        window.navigation.stage_actions[stage].trigger()
        _settle(window)
        canvas = _canvas(window, key)
        assert canvas.width() > 550, "the workspace gives the stage's graph most of the window"
        _legible_first_view(canvas)
        assert canvas.result is not None and canvas.result.tree.fold, f"{key}: layers folded"
    window.navigation.stage_actions["dynamo"].trigger()
    canvas = _canvas(window, "DynamoPane")
    res = canvas.result
    assert res is not None
    tree, n = res.tree, res.arrays.n
    assert [tree.label[f] for f in tree.fold] == ["layers.0–31 × 32"]
    fold = tree.fold[0]
    canvas.center_on(res.arrays.ids[tree.subtree_nodes(fold)[0]])  # expands the fold and a layer
    _settle(window)
    res = canvas.result
    assert res is not None and fold in res.expanded
    layer = tree.children[fold][0]
    before = canvas.view._screen_rect(res.scene, n + layer).topLeft()
    canvas._clicked(n + layer)  # collapse the layer the user looks at
    _settle(window)
    after_res = canvas.result
    assert after_res is not None and layer not in after_res.expanded
    after = canvas.view._screen_rect(after_res.scene, n + layer).topLeft()
    rect = canvas.view._screen_rect(after_res.scene, n + layer).toRect()
    assert canvas.view.rect().intersects(rect), "the collapsed group stays in view"
    if canvas.view.rect().contains(before.toPoint()):  # it was in view: it did not move at all
        assert abs(after.x() - before.x()) < 1 and abs(after.y() - before.y()) < 1
    on = canvas.view._on_screen(canvas.view.state) & after_res.scene.visible  # type: ignore[arg-type]
    assert np.count_nonzero(on) >= 3, "collapsing leaves a view with content"
    window.set_all_panes(True)
    assert window.workspace is None and window.navigation.all_panes_action.isChecked()
    window.files.worker.cancel()
