"""The graph view the Dynamo/AOT/Inductor panes draw into, addressed by Refs.

Panes hand over `GraphSection`s (one graph each, in execution order, optionally preceded by a
break marker) and highlight/colour by `Ref`; this module maps refs to whatever the widget needs.
`make_graph_view` returns the canvas (`explorer.canvas.GraphCanvas`) when it is installed and a
node list otherwise, so the panes do not depend on which one is present.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPixmap
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from compiler_core.session import Graph, Node, Ref
from explorer.state.palette import BACKWARD_BAND, BROKE, FORWARD_BAND, SELECT_COLOR_HEX


@dataclass(frozen=True)
class GraphSection:
    title: str
    graph: Graph
    make_ref: Callable[[str], Ref]
    break_before: str = ""  # graph-break reason drawn as a separator before this graph
    band: str = ""  # forward | backward: drawn as a band
    notes: dict[str, str] | None = None  # node name -> extra text (e.g. "recomputed", "saves 2 KiB")


def node_label(node: Node) -> str:
    target = node.target
    if target.startswith("aten.") and target.count(".") == 2:
        target = target.rsplit(".", 1)[0]  # drop the overload: aten.relu.default -> aten.relu
    shape = ""
    if node.outputs and node.outputs[0].shape:
        shape = "[" + ", ".join(str(d) for d in node.outputs[0].shape) + "]"
    return f"{node.name} = {target}  {shape}".rstrip()


class NodeListView(QTreeWidget):
    """Stand-in graph view: sections as top-level rows, nodes as children.

    Signals: `nodeClicked(Ref)`.
    """

    nodeClicked = Signal(object)  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["Node", "Op", "Note"])
        self.setUniformRowHeights(True)
        self.itemClicked.connect(self._clicked)
        self._items: dict[Ref, QTreeWidgetItem] = {}
        self._overlay: dict[Ref, QColor] = {}

    def set_sections(self, sections: list[GraphSection]) -> None:
        self.clear()
        self._items.clear()
        for section in sections:
            if section.break_before:
                marker = QTreeWidgetItem([f"✂ graph break: {section.break_before.splitlines()[0]}"])
                marker.setForeground(0, BROKE)
                marker.setToolTip(0, section.break_before)
                self.addTopLevelItem(marker)
            self.addTopLevelItem(self._section_item(section))
        self.expandAll()
        self.resizeColumnToContents(0)

    def _section_item(self, section: GraphSection) -> QTreeWidgetItem:
        top = QTreeWidgetItem([f"{section.title} ({len(section.graph.nodes)} nodes)"])
        font = QFont(top.font(0))
        font.setBold(True)
        top.setFont(0, font)
        band = {"forward": FORWARD_BAND, "backward": BACKWARD_BAND}.get(section.band)
        for node in section.graph.nodes:
            ref = section.make_ref(node.name)
            note = (section.notes or {}).get(node.name, "")
            item = QTreeWidgetItem([node_label(node), node.op, note])
            item.setData(0, Qt.ItemDataRole.UserRole, ref)
            if node.source is not None:
                item.setToolTip(0, f"{node.source.file}:{node.source.line}\n{node.source.code}")
            if band is not None:
                for col in range(3):
                    item.setBackground(col, band)
            top.addChild(item)
            self._items[ref] = item
        return top

    def refs(self) -> list[Ref]:
        return list(self._items)

    def set_overlay(self, colors: dict[Ref, QColor]) -> None:
        """Colour nodes (e.g. one colour per kernel): a swatch on the node's name."""
        for ref, item in self._items.items():
            color = colors.get(ref)
            item.setForeground(1, QBrush(color.darker(140)) if color else QBrush())
            item.setIcon(0, color_icon(color) if color else color_icon(None))
        self._overlay = dict(colors)

    def set_highlight(self, refs: set[Ref], primary: set[Ref]) -> None:
        first = None
        for ref, item in self._items.items():
            on = ref in refs or ref in primary
            font = item.font(0)
            font.setBold(ref in primary)
            item.setFont(0, font)
            item.setBackground(0, QColor(SELECT_COLOR_HEX) if on else QBrush())
            if on and first is None:
                first = item
        if first is not None:
            self.scrollToItem(first)

    def highlighted(self) -> set[Ref]:
        return {r for r, item in self._items.items() if item.background(0).style() != Qt.BrushStyle.NoBrush}

    def _clicked(self, item: QTreeWidgetItem) -> None:
        ref = item.data(0, Qt.ItemDataRole.UserRole)
        if ref is not None:
            self.nodeClicked.emit(ref)


def color_icon(color: QColor | None) -> QIcon:
    """A small square swatch (transparent for None) for list rows."""
    pix = QPixmap(10, 10)
    pix.fill(color if color is not None else QColor(0, 0, 0, 0))
    return QIcon(pix)


def make_graph_view(parent: QWidget | None = None) -> NodeListView:
    return NodeListView(parent)
