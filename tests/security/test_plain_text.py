"""Data is shown as text, never rendered as markup.

A session whose every string carries `<img src="/dev/zero">`, a `file://` link and `<h1>` goes
into the real main window; every pane is built and raised, and then every label, tooltip, list
and plot legend is checked: a QLabel is PlainText (or holds our markup with data escaped), and no
tooltip or legend holds the raw markup. Before the fix Qt rendered such a label as HTML and the
GUI thread read /dev/zero until memory ran out, so finishing at all is part of the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QGraphicsView,
    QLabel,
    QListWidget,
    QTableWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)
from pytestqt.qtbot import QtBot

from compiler_core.session import Ref
from explorer.main_window import MainWindow
from explorer.plain_text import clip, tip
from explorer.toolbar import STAGES
from tests.security.hostile_sessions import PAYLOAD, poisoned, rich_session

RAW = ('<img src="/dev/zero">', "<a href=file:", "<h1>")


def _raw(text: str) -> bool:
    return any(r in text for r in RAW)


def _tree_items(tree: QTreeWidget) -> Iterator[QTreeWidgetItem]:
    stack = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    while stack:
        item = stack.pop()
        yield item
        stack.extend(item.child(i) for i in range(item.childCount()))


def _tooltips(root: QWidget) -> Iterator[tuple[str, str]]:
    """(where, tooltip) for every widget, tree/table/list/combo item and plot item under `root`."""
    for w in [root, *root.findChildren(QWidget)]:
        name = f"{type(w).__name__}:{w.objectName()}"
        yield name, w.toolTip()
        if isinstance(w, QTreeWidget):
            for item in _tree_items(w):
                for col in range(w.columnCount()):
                    yield f"{name} item", item.toolTip(col)
        if isinstance(w, QTableWidget):
            for r in range(w.rowCount()):
                for col in range(w.columnCount()):
                    cell = w.item(r, col)
                    yield f"{name} cell", cell.toolTip() if cell is not None else ""
        if isinstance(w, QListWidget):
            for r in range(w.count()):
                yield f"{name} row", w.item(r).toolTip()
        if isinstance(w, QComboBox):
            for r in range(w.count()):
                yield f"{name} entry", str(w.itemData(r, Qt.ItemDataRole.ToolTipRole) or "")
        if isinstance(w, QGraphicsView) and w.scene() is not None:
            for g in w.scene().items():
                yield f"{name} {type(g).__name__}", g.toolTip()
                text = getattr(g, "text", None)  # pyqtgraph LabelItem (legends): HTML
                if isinstance(text, str):
                    yield f"{name} {type(g).__name__} text", text


def _open_everything(qtbot: QtBot, window: MainWindow) -> None:
    window.ensure_panes()
    for key, _ in STAGES:
        window.navigation.stage_actions[key].trigger()
        QApplication.processEvents()
    for dock in window.docks.values():
        dock.show()
        dock.raise_()
        QApplication.processEvents()
    autotune = window.panes["AutotunePane"]
    for row in range(autotune.ops.count()):  # type: ignore[attr-defined]
        autotune.ops.setCurrentRow(row)  # type: ignore[attr-defined]
    current = window.state.current
    assert current is not None
    refs = []  # select data-named things so the detail labels fill with hostile names
    if current.aot is not None:
        for graph in ("forward", "backward"):
            g = getattr(current.aot, graph)
            refs += [Ref.aot_node(current.compile_id, graph, n.name, current.rank)
                     for n in (g.nodes[:3] if g is not None else ())]
    for part in current.inductor:
        refs += [Ref.kernel(current.compile_id, k.graph, k.name, current.rank)
                 for k in part.kernels[:2]]
    for ref in refs:
        window.selection.select({ref})
        QApplication.processEvents()
    kernels = window.panes["KernelCodePane"]
    for i in range(kernels.picker.count()):  # type: ignore[attr-defined]
        kernels.picker.setCurrentIndex(i)  # type: ignore[attr-defined]
        QApplication.processEvents()
    qtbot.wait(50)


@pytest.mark.timeout(300)
def test_hostile_strings_are_never_rendered_as_markup(qtbot: QtBot, window: MainWindow) -> None:
    session = poisoned(rich_session())
    assert session.meta.device.endswith(PAYLOAD) and session.compiles[0].compile_id.endswith(PAYLOAD)
    window.set_session(session, "hostile.json")
    _open_everything(qtbot, window)
    labels = window.findChildren(QLabel)
    shown = [lbl for lbl in labels if PAYLOAD in lbl.text() or "&lt;img" in lbl.text()]
    assert len(shown) >= 5, [lbl.text()[:80] for lbl in labels]  # data reached the labels ...
    for lbl in labels:  # ... and none of them renders it
        ours = lbl.property("escapedRichText") is True
        assert lbl.textFormat() == Qt.TextFormat.PlainText or (ours and not _raw(lbl.text())), lbl.text()
    tips = list(_tooltips(window))
    assert sum("&lt;img" in t for _, t in tips) >= 3, "data should reach some tooltips, escaped"
    bad = [(where, t[:120]) for where, t in tips if _raw(t)]
    assert not bad, bad
    assert window.statusBar().findChildren(QLabel)[0].textFormat() == Qt.TextFormat.PlainText


def test_tooltips_keep_text_verbatim_and_messages_are_clipped() -> None:
    html = tip("a < b\n  <img src=x>")
    assert "<img" not in html and "&lt;img src=x&gt;" in html and "<br>" in html
    assert tip("") == ""
    long = clip("x" * 10_000_000)
    assert len(long) < 2100 and "more characters not shown" in long

    class UnprintableError(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert "unprintable" in clip(UnprintableError())


def test_the_explorer_makes_labels_and_data_tooltips_only_through_plain_text() -> None:
    """The structural half: no bare QLabel, no tooltip or message box fed data directly. A new
    widget that needs an exception says why on its line with `# markup: ours`."""
    root = Path(__file__).resolve().parents[2] / "explorer"
    rules = {
        "bare QLabel (use plain_label/rich_label)": re.compile(r"\bQLabel\("),
        "tooltip not through tip()": re.compile(
            r"^(?!.*(\btip\(|node_tooltip|group_tooltip))"  # escaped by us, or ...
            r".*(setToolTip|showText)\((\d+, )?(?!\")"),  # ... a literal of ours
        "tooltip role not through tip()": re.compile(r"^(?!.*\btip\().*setItemData\(.*,\s*3\)"),
        "QMessageBox helper (guesses rich text)": re.compile(r"QMessageBox\.(warning|critical|question)\("),
        "setHtml": re.compile(r"\.setHtml\("),
    }
    found = []
    for path in root.rglob("*.py"):
        if path.name == "plain_text.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "# markup: ours" in line:
                continue
            found += [f"{path.relative_to(root)}:{n}: {why}" for why, rx in rules.items() if rx.search(line)]
    assert not found, found
