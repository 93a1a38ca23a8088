"""Values of the right type but past anything real: dropped at build, with a warning.

A log from someone else can say a graph node came from line 1,099,511,627,776 of a file, or that
a compile took 1e308 s. Both are well-typed, so the record checks let them through, and they
broke what came after: rebuilding the file from the lines the log quotes asked for 2^40 lines
(MemoryError), and the Compile-time pane drew a bar to infinity. Here, once per session, such a
value is dropped (a place becomes unknown, a time unmeasured) and said, so no pane ever meets it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from compiler_core.session.model import Compile, Diagnostic, Graph, InductorOutput, Node, SourceLoc

MAX_SOURCE_LINE = 10_000_000  # generated Python of a million lines exists; ten million does not
MAX_SECONDS = 1e6  # eleven days for one compile stage


def seconds(value: Any) -> float | None:
    """`value` as seconds, or None when it is no number, not finite, negative or past MAX_SECONDS."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return out if math.isfinite(out) and 0.0 <= out <= MAX_SECONDS else None


def _bad_line(loc: SourceLoc | None) -> bool:
    return loc is not None and not 0 <= loc.line <= MAX_SOURCE_LINE


def bounded_lines(compiles: list[Compile]) -> tuple[list[Compile], list[Diagnostic]]:
    """`compiles` without source places past MAX_SOURCE_LINE (a node, frame, break, guard or
    compiled function keeps everything else), and one warning per file that named one."""
    files: dict[str, int] = {}
    seen: dict[int, bool] = {}  # id(graph) -> has a bad line: ranks and recompiles share parsed graphs
    out = []
    for c in compiles:
        fixed = _bounded(c, files, seen)
        out.append(fixed)
    diagnostics = [
        Diagnostic("warning", f"line {line:,} of {path} is past any source file (over {MAX_SOURCE_LINE:,} "
                   "lines): the places that named it are left unknown", path=path, stage="build")
        for path, line in files.items()
    ]  # fmt: skip
    return out, diagnostics


def _bounded(c: Compile, files: dict[str, int], seen: dict[int, bool]) -> Compile:
    """`c` itself when nothing in it is past the bound (the common case: no copy)."""
    def keep(loc: SourceLoc | None) -> SourceLoc | None:
        if _bad_line(loc):
            assert loc is not None
            files.setdefault(loc.file, loc.line)
            return None
        return loc

    changes: dict[str, Any] = {}
    if _bad_line(c.code):
        changes["code"] = keep(c.code)
    if any(_bad_line(b.location) or any(map(_bad_line, b.user_stack)) for b in c.graph_breaks):
        changes["graph_breaks"] = tuple(
            replace(b, location=keep(b.location), user_stack=tuple(s for s in b.user_stack if keep(s)))
            for b in c.graph_breaks
        )  # fmt: skip
    if any(_bad_line(g.source) for g in c.guards):
        changes["guards"] = tuple(replace(g, source=keep(g.source)) for g in c.guards)
    def bad(g: Graph) -> bool:
        found = seen.get(id(g))  # `compiles` holds every graph for the whole call: ids are not reused
        if found is None:
            found = seen[id(g)] = _graph_has_bad(g)
        return found

    if c.dynamo_graph is not None and bad(c.dynamo_graph):
        changes["dynamo_graph"] = _graph(c.dynamo_graph, keep)
    if c.aot is not None:
        aot: dict[str, Any] = {name: _graph(g, keep) for name in ("joint", "forward", "backward", "inference")
               if (g := getattr(c.aot, name)) is not None and bad(g)}  # fmt: skip
        if aot:
            changes["aot"] = replace(c.aot, **aot)
    outputs: list[tuple[InductorOutput, dict[str, Any]]] = [
        (o, {name: _graph(g, keep) for name in ("post_grad", "pre_grad")
             if (g := getattr(o, name)) is not None and bad(g)})
        for o in c.inductor
    ]  # fmt: skip
    if any(graphs for _, graphs in outputs):
        changes["inductor"] = tuple(replace(o, **graphs) if graphs else o for o, graphs in outputs)
    return replace(c, **changes) if changes else c


def _graph_has_bad(g: Graph) -> bool:
    return any(_bad_line(n.source) or (n.stack and any(map(_bad_line, n.stack))) for n in g.nodes)


Keep = Callable[[SourceLoc | None], SourceLoc | None]


def _graph(g: Graph, keep: Keep) -> Graph:
    nodes = tuple(_node(n, keep) for n in g.nodes)
    return replace(g, nodes=nodes)


def _node(n: Node, keep: Keep) -> Node:
    if not _bad_line(n.source) and not any(map(_bad_line, n.stack)):
        return n
    return replace(n, source=keep(n.source), stack=tuple(s for s in n.stack if keep(s)))
