"""Graph navigation a person expects, on a real recorded graph: Fit frames the whole drawing, the
first view starts legibly at the entry with nothing cut off at the left, and the keys pan,
jump, fit and zoom to the selection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QRectF, Qt
from pytestqt.qtbot import QtBot

from compiler_core.session import Graph, load
from explorer.canvas import GraphCanvas

ROOT = Path(__file__).resolve().parents[3]


def _longest_graph() -> Graph:
    """The recorded example's largest graph (a joint forward/backward graph: long and thin)."""
    session = load(ROOT / "resources" / "sessions" / "transformer_block.json")
    graphs = [g for c in session.compiles
              for g in (c.dynamo_graph, *((c.aot.joint, c.aot.forward, c.aot.backward) if c.aot else ()))
              if g is not None]
    return max(graphs, key=lambda g: len(g.nodes))


@pytest.fixture
def canvas(qtbot: QtBot) -> GraphCanvas:
    c = GraphCanvas(sync_limit=100_000)
    qtbot.addWidget(c)
    c.resize(700, 500)
    c.show()
    qtbot.waitExposed(c)
    c.set_graph(_longest_graph())
    c.expand_all()
    assert c.result is not None
    return c


def _scene_on_screen(c: GraphCanvas) -> QRectF:
    s = c.result.scene  # type: ignore[union-attr]
    k, v = c.view.scale, c.view
    return QRectF(v.tx, v.ty, s.width * k, s.height * k)


def test_fit_frames_the_whole_drawing(canvas: GraphCanvas) -> None:
    canvas.view.zoom_at(3.0, canvas.view.rect().center().toPointF())
    canvas.fit_to_view()
    drawn, view = _scene_on_screen(canvas), QRectF(canvas.view.rect())
    assert view.adjusted(-1, -1, 1, 1).contains(drawn), (drawn, view)
    # and it uses the room: one dimension fills the view up to its margins
    assert drawn.width() >= view.width() - 42 or drawn.height() >= view.height() - 42


def test_first_view_is_legible_at_the_entry_and_not_cut_off_at_the_left(canvas: GraphCanvas) -> None:
    canvas.view.show_top()
    v, s = canvas.view, canvas.result.scene  # type: ignore[union-attr]
    assert v.scale * 30.0 >= 16.0, "labels readable"
    assert v.ty == pytest.approx(20.0), "starts at the graph's entry"
    left = v._entry_left(s) * v.scale + v.tx
    assert 0.0 <= left <= 40.0, f"the entry's left edge at {left:.0f} px"


def test_keys_pan_jump_fit_and_zoom_to_the_selection(canvas: GraphCanvas, qtbot: QtBot) -> None:
    v = canvas.view
    v.show_top()
    v.setFocus()
    ty = v.ty
    qtbot.keyClick(v, Qt.Key.Key_PageDown)
    assert v.ty == pytest.approx(ty - 0.9 * v.height())
    qtbot.keyClick(v, Qt.Key.Key_Down)
    assert v.ty < ty - 0.9 * v.height()
    tx = v.tx
    qtbot.keyClick(v, Qt.Key.Key_Right)
    assert v.tx < tx
    qtbot.keyClick(v, Qt.Key.Key_Left)
    assert v.tx == pytest.approx(tx)
    qtbot.keyClick(v, Qt.Key.Key_End)
    drawn = _scene_on_screen(canvas)
    assert drawn.bottom() == pytest.approx(v.height() - 20.0), "the graph's exit at the bottom"
    qtbot.keyClick(v, Qt.Key.Key_Home)
    assert v.ty == pytest.approx(20.0)
    qtbot.keyClick(v, Qt.Key.Key_F)
    assert QRectF(v.rect()).adjusted(-1, -1, 1, 1).contains(_scene_on_screen(canvas))
    scale = v.scale
    qtbot.keyClick(v, Qt.Key.Key_Plus)
    assert v.scale == pytest.approx(scale * 1.25)
    qtbot.keyClick(v, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert v.scale == pytest.approx(scale)
    names = [n.name for n in _longest_graph().nodes]
    target = names[len(names) // 2]
    canvas.set_highlight({target}, primary=target)
    qtbot.keyClick(v, Qt.Key.Key_Z)
    rect = canvas.node_rect(target)
    assert rect is not None and QRectF(v.rect()).contains(rect.center())
    assert rect.height() >= 16.0, "zoomed in to a legible size"


def test_a_node_shown_at_the_top_is_legible_near_the_top_and_its_row_starts_on_screen(
        canvas: GraphCanvas) -> None:
    """How a compile's section is brought into view: centring its first node put a wide graph's
    left half and the group boxes around it off screen."""
    names = [n.name for n in _longest_graph().nodes]
    target = names[len(names) // 3]
    canvas.show_at_top(target)
    rect = canvas.node_rect(target)
    v = canvas.view
    assert rect is not None and 0 <= rect.top() <= 80, rect
    assert v.scale * 30.0 >= 16.0
    assert rect.left() >= 0 and rect.right() <= v.width(), "the node itself whole on screen"
    s = canvas.result.scene  # type: ignore[union-attr]
    it = canvas._index[target]
    lefts = [v._entry_left(s, None, float(s.y[it])), v._entry_left(s, np.array([it]))]
    assert any(0.0 <= x * v.scale + v.tx <= 40.0 for x in lefts) or s.width * v.scale <= v.width()
