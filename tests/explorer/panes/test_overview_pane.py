"""The Overview pane on real logs and recorded sessions (pytest-qt, offscreen, no torch): the
verdict banner, the sections, a mouse click on a line selecting that line's refs, a selection made
elsewhere marking the line, and hostile names shown as text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor

from compiler_core.overview import build_overview
from compiler_core.session import Session, load
from compiler_core.session.refs import RefKind
from explorer.panes.overview_pane import OverviewPane
from explorer.state import SessionState
from tests.compiler_core.overview.overview_logs import corpus_session
from tests.conftest import ROOT
from tests.security.hostile_sessions import PAYLOAD, poisoned

SHOTS = os.environ.get("COMPILESCOPE_SHOTS")  # set to a folder to keep the screenshots


def _pane(qtbot, session: Session) -> tuple[OverviewPane, SessionState]:  # type: ignore[no-untyped-def]
    state = SessionState()
    pane = OverviewPane(state, state.selection)
    qtbot.addWidget(pane)
    pane.resize(1366, 768)
    pane.show()
    state.set_session(session)
    qtbot.waitUntil(pane.has_content)
    return pane, state


def _click_line(qtbot, pane: OverviewPane, text: str) -> None:  # type: ignore[no-untyped-def]
    """A real left click in the middle of the first place `text` is shown."""
    found = pane.view.document().find(text)
    assert not found.isNull(), text
    middle = QTextCursor(found)
    middle.setPosition((found.selectionStart() + found.selectionEnd()) // 2)
    pane.view.ensureCursorVisible()
    pane.view.setTextCursor(middle)
    pane.view.ensureCursorVisible()
    rect = pane.view.cursorRect(middle)
    point = QPoint(rect.center().x(), rect.center().y())
    qtbot.mouseClick(pane.view.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_verdict_on_top_then_every_section(qtbot) -> None:  # type: ignore[no-untyped-def]
    session = corpus_session("trouble_hf_generate_breaks")
    pane, _ = _pane(qtbot, session)
    overview = build_overview(session)
    assert pane.banner.text() == overview.verdict
    assert pane.banner.textFormat() == Qt.TextFormat.PlainText
    assert pane.banner.geometry().bottom() < pane.view.geometry().top()
    shown = pane.view.toPlainText()
    for section in overview.sections:
        assert section.title in shown and section.headline in shown
        assert all(f.text in shown for f in section.facts)
    assert pane.source.text().startswith("trouble_hf_generate_breaks.log · torch 2.11")
    if SHOTS:
        pane.grab().save(str(Path(SHOTS) / "overview_hf_generate_1366x768.png"))


def test_clicking_a_line_selects_its_refs_and_marks_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    session = corpus_session("trouble_hf_generate_breaks")
    pane, state = _pane(qtbot, session)
    first_break = pane.facts[0]
    assert {r.kind for r in first_break.refs} == {RefKind.GRAPH_BREAK, RefKind.SOURCE_LINE}
    with (qtbot.waitSignal(pane.stageRequested, timeout=2000) as asked,
          qtbot.waitSignal(state.selection.selectionChanged, timeout=2000)):
        _click_line(qtbot, pane, first_break.text)
    assert asked.args == ["dynamo"]  # the window brings the breaks' workspace forward
    assert state.selection.selected == frozenset(first_break.refs)
    qtbot.waitUntil(lambda: pane.marked() == frozenset({0}))
    # a recompile line selects its compiles and the guard that failed
    index = next(i for i, f in enumerate(pane.facts) if f.text.startswith("Recompiled"))
    with qtbot.waitSignal(state.selection.selectionChanged, timeout=2000):
        _click_line(qtbot, pane, pane.facts[index].text)
    assert state.selection.selected == frozenset(pane.facts[index].refs)
    assert RefKind.GUARD in {r.kind for r in state.selection.selected}
    qtbot.waitUntil(lambda: index in pane.marked())
    # marked: the lines that share a selected ref (two causes recompiled the same frame)
    assert pane.marked() == {i for i, f in enumerate(pane.facts) if set(f.refs) & state.selection.selected}
    assert 0 not in pane.marked()


def test_a_selection_made_elsewhere_marks_the_lines_that_hold_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    session = load(ROOT / "resources" / "sessions" / "transformer_block.json")
    pane, state = _pane(qtbot, session)
    saver = next(i for i, f in enumerate(pane.facts) if " saved by transformer_block.py:41 (fc1)" in f.text)
    tensor = next(r for r in pane.facts[saver].refs if r.kind is RefKind.SAVED_TENSOR)
    state.selection.select({tensor})  # as the AOT pane does when a saved tensor is clicked
    qtbot.waitUntil(lambda: saver in pane.marked())
    assert "default 1.38× faster than eager" in pane.banner.text()
    # a step-time line has no refs: it keeps the selection and asks for the Timeline workspace
    step = next(f for f in pane.facts if f.text.startswith("default: "))
    with qtbot.waitSignal(pane.stageRequested, timeout=2000) as asked:
        _click_line(qtbot, pane, step.text)
    assert asked.args == ["timeline"] and state.selection.selected == frozenset({tensor})
    if SHOTS:
        pane.grab().save(str(Path(SHOTS) / "overview_transformer_block_1366x768.png"))


@pytest.mark.parametrize("source", ["breaks_log", "timed_session"])
def test_hostile_names_show_as_text(qtbot, source: str) -> None:  # type: ignore[no-untyped-def]
    base = (corpus_session("trouble_hf_generate_breaks") if source == "breaks_log"
            else load(ROOT / "resources" / "sessions" / "transformer_block.json"))  # fmt: skip
    pane, _ = _pane(qtbot, poisoned(base))
    assert PAYLOAD in pane.view.toPlainText()
    assert "<img" not in pane.view.toHtml()  # the payload's tags are text (&lt;img), never an image


def test_in_the_window_the_overview_is_built_off_the_gui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    """With the window's update queue spreading work (`updates.spread`), the session's Overview is
    built on a worker and shown when it arrives; a second session replaces the first."""
    state = SessionState()
    state.updates.spread = True
    pane = OverviewPane(state, state.selection)
    qtbot.addWidget(pane)
    pane.resize(1366, 768)
    pane.show()
    first = corpus_session("trouble_hf_generate_breaks")
    second = load(ROOT / "resources" / "sessions" / "transformer_block.json")
    state.set_session(first)
    state.set_session(second)
    assert state.updates.flush(wait_s=30)
    qtbot.waitUntil(lambda: pane.banner.text() == build_overview(second).verdict)
    assert pane.source.text().startswith("transformer_block.py")
