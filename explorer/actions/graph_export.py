"""Export ▸ Graph as DOT/SVG/PNG.

SVG and PNG render the canvas's whole scene, not the viewport: every visible node and group box
with the colours, labels and section lines on screen, at scale 1 (SVG, vector, through
QSvgGenerator) or at any scale (PNG). DOT comes from the session graph: one cluster per module
(nested as the modules are), node fill colours as on screen, labels with real line breaks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QImage
from PySide6.QtSvg import QSvgGenerator

from compiler_core.session import Graph
from compiler_core.session.codec import atomic_write_text
from explorer.canvas import GraphCanvas
from explorer.canvas.graph_canvas import OP_COLORS

MAX_PNG_SIDE = 32000  # pixels: QImage's limit is 2 GiB, and no viewer opens more anyway
_OP_FILL = {"placeholder": OP_COLORS[1], "get_attr": OP_COLORS[2], "output": OP_COLORS[3]}


# Control characters but the newline: Graphviz refuses a NUL in a node name ("syntax error") and
# a log may put any of them there. They are written as their escapes, visible in the label.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _quote(text: str) -> str:
    """A DOT string; newlines stay real newlines (Graphviz breaks the label there), other control
    characters read as their escape (`\\x00`)."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sections_to_dot(sections: Sequence[tuple[Graph, str]], title: str,
                    fill: Mapping[str, str] | None = None) -> str:  # fmt: skip
    """Every graph a pane stacks (the AOT partitions, both post-grad graphs, a frame's graphs
    around its breaks), each its own labelled cluster: exporting only the first wrote 2,105 of
    the 4,721 nodes GPT-2's AOT pane shows. With several graphs, node ids are the canvas's
    `"<index>:<name>"` (forward and backward both have an `mm`), and `fill` is keyed the same."""
    fill = fill or {}
    lines = [f"digraph {_quote(title)} {{", "  compound=true;",
             '  node [shape=box, style="rounded,filled", fontname=monospace];']  # fmt: skip
    single = len(sections) == 1
    edges: list[str] = []
    for i, (graph, label) in enumerate(sections):
        prefix = "" if single else f"{i}:"
        names = {n.name for n in graph.nodes}
        tree: dict[str, list[str]] = {}  # module path -> node lines
        for n in graph.nodes:
            text = f"{n.name}\n{n.target}" if n.target and n.target != n.name else n.name
            color = fill.get(prefix + n.name) or _OP_FILL.get(n.op, OP_COLORS[0])
            me = _quote(prefix + n.name)
            line = f"{me} [label={_quote(text)}, fillcolor={_quote(color)}];"
            tree.setdefault(n.module_path, []).append(line)
            edges += [f"  {_quote(prefix + src)} -> {me};" for src in n.inputs if src in names]
        if single:
            lines += _clusters(tree)
            continue
        lines.append(f"  subgraph cluster_s{i} {{")
        heading = _quote(label or graph.name or graph.kind)
        lines.append(f"    label={heading}; style=dashed; color=\"#666666\";")
        lines += ["  " + line for line in _clusters(tree, f"g{i}_")]
        lines.append("  }")
    lines += edges
    lines.append("}")
    return "\n".join(lines) + "\n"


def _clusters(tree: dict[str, list[str]], prefix: str = "") -> list[str]:
    """Nested `subgraph cluster_k` blocks, one per module path prefix that holds nodes."""
    paths = sorted({"/".join(p.split("/")[:k]) for p in tree if p for k in range(1, p.count("/") + 2)})
    children: dict[str, list[str]] = {}
    for p in paths:
        children.setdefault(p.rpartition("/")[0], []).append(p)
    ids = {p: i for i, p in enumerate(paths)}
    out: list[str] = []

    def emit(path: str, depth: int) -> None:
        pad = "  " * depth
        out.extend(pad + line for line in tree.get(path, []))
        for child in children.get(path, []):
            out.append(f"{pad}subgraph cluster_{prefix}{ids[child]} {{")
            out.append(f"{pad}  label={_quote(child.rpartition('/')[2])}; style=rounded; color=\"#9fb0c8\";")
            emit(child, depth + 1)
            out.append(f"{pad}}}")

    emit("", 1)
    return out


def canvas_fill(canvas: GraphCanvas) -> dict[str, str]:
    """The overlay colours on screen by canvas node id (`"1:add"` for stacked graphs)."""
    return {nid: c.name() for nid, c in canvas.overlay().items()}


def save_canvas_dot(canvas: GraphCanvas, path: str | Path, title: str) -> int:
    """The graphs the canvas shows, as DOT; returns how many nodes were written."""
    sections = canvas.sections()
    atomic_write_text(Path(path), sections_to_dot(sections, title, canvas_fill(canvas)))
    return sum(len(g.nodes) for g, _ in sections)


def save_scene(canvas: GraphCanvas, path: str | Path, scale: float = 1.0) -> tuple[int, int]:
    """The whole scene as SVG (vector, scale 1) or PNG at `scale`; returns the pixel size."""
    path = Path(path)
    w, h = canvas.view.render_size(1.0 if path.suffix.lower() == ".svg" else scale)
    if path.suffix.lower() == ".svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(w, h))
        generator.setViewBox(QRectF(0, 0, w, h))
        generator.setTitle(canvas.status.text())
        canvas.view.render_scene(generator, 1.0)
        return w, h
    if max(w, h) > MAX_PNG_SIDE:
        under = scale * MAX_PNG_SIDE / max(w, h)
        raise ValueError(f"{w}x{h} px is too large; choose a scale under {under:.2f}")
    image = QImage(w, h, QImage.Format.Format_ARGB32)
    canvas.view.render_scene(image, scale)
    if not image.save(str(path)):
        raise OSError(f"could not write {path}")
    return w, h
