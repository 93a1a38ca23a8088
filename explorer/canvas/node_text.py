"""Tooltip text for nodes and groups: what a user hovering a box wants to know first."""

from __future__ import annotations

from html import escape

from compiler_core.session import Node, TensorMeta


def _meta(m: TensorMeta) -> str:
    shape = "[" + ", ".join(str(d) for d in m.shape) + "]"
    return f"{m.dtype} {shape}".strip()


def node_tooltip(node: Node, module_path: str) -> str:
    rows = [f"<b>{escape(node.name)}</b> <i>{escape(node.op)}</i>"]
    if node.target:
        rows.append(escape(node.target))
    if node.outputs:
        rows.append("out: " + escape(", ".join(_meta(m) for m in node.outputs)))
    if module_path or node.module_path:
        rows.append("module: " + escape(node.module_path or module_path))
    if node.source is not None:
        loc = node.source
        rows.append(
            f"{escape(loc.file.rsplit('/', 1)[-1])}:{loc.line}  <code>{escape(loc.code.strip())}</code>"
        )
    return "<br>".join(rows)


def group_tooltip(path: str, size: int, expanded: bool) -> str:
    action = "click the header to collapse" if expanded else "click to expand"
    return f"<b>{escape(path)}</b><br>{size} nodes · {action}"
