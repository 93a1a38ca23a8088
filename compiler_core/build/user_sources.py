"""User source files the log mentions, read from disk so the Source pane can show them.

Only files that exist, are not inside an installed package (site-/dist-packages) and are under
2 MB are read; anything unreadable is skipped silently because the log stays usable without it.
"""

from __future__ import annotations

import os

from compiler_core.session.model import Compile, SourceLoc

MAX_BYTES = 2 << 20


def mentioned_files(compiles: list[Compile]) -> list[str]:
    files: dict[str, None] = {}

    def add(loc: SourceLoc | None) -> None:
        if loc is not None and loc.file:
            files.setdefault(loc.file, None)

    for c in compiles:
        add(c.code)
        if c.dynamo_graph is not None:
            for n in c.dynamo_graph.nodes:
                add(n.source)
                for s in n.stack:
                    add(s)
        for gb in c.graph_breaks:
            add(gb.location)
            for s in gb.user_stack:
                add(s)
    return list(files)


def collect_sources(compiles: list[Compile]) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in mentioned_files(compiles):
        if "-packages" + os.sep in path or path.startswith("<"):
            continue
        try:
            if os.path.isfile(path) and os.path.getsize(path) <= MAX_BYTES:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    out[path] = fh.read()
        except OSError:
            continue
    return out
