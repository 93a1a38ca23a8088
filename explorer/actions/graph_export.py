"""Export ▸ Graph as DOT/SVG/PNG. DOT comes from the session; SVG and PNG render the pane's view."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from compiler_core.session import Graph
from compiler_core.session.codec import atomic_write_text


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graph_to_dot(graph: Graph, title: str = "") -> str:
    """Graphviz text: one node per FX node (label = name and target), edges from inputs."""
    names = {n.name for n in graph.nodes}
    lines = [f"digraph {_quote(title or graph.kind)} {{", "  node [shape=box, fontname=monospace];"]
    for n in graph.nodes:
        label = f"{n.name}\\n{n.target}" if n.target and n.target != n.name else n.name
        lines.append(f"  {_quote(n.name)} [label={_quote(label)}];")
    for n in graph.nodes:
        for src in n.inputs:
            if src in names:
                lines.append(f"  {_quote(src)} -> {_quote(n.name)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_dot(graph: Graph, path: str | Path, title: str = "") -> None:
    atomic_write_text(Path(path), graph_to_dot(graph, title))


def save_widget_image(widget: QWidget, path: str | Path) -> None:
    """PNG (grab) or SVG (vector rendering of the widget), by suffix."""
    path = Path(path)
    if path.suffix.lower() == ".svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(widget.width(), widget.height()))
        generator.setViewBox(widget.rect())
        widget.render(generator)
    else:
        widget.grab().save(str(path))
