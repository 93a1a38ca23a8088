"""A session's source texts and where each came from (`Session.source_origins`), as far as the
session itself tells: the lines the log quotes, put back at their numbers, and what the codec
leaves out on save (a looked-up text is never saved unless asked). Reading files from disk to
fill texts is analysis/user_sources.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from compiler_core.session.model import Compile, Session, SourceLoc
from compiler_core.session.vocab import SourceOrigin

DEF = "\0def "  # marks a quoted line known only to start a function (see quoted_lines)
CAPTURES = ("capture", "script")  # session origins whose sources their own run read


def source_locations(c: Compile) -> Iterable[tuple[SourceLoc, bool]]:
    """Every location of a compile, with whether it is a graph node's own line."""
    if c.code is not None:
        yield c.code, False
    if c.dynamo_graph is not None:
        for n in c.dynamo_graph.nodes:
            if n.source is not None:
                yield n.source, True
            for s in n.stack:
                yield s, False
    for gb in c.graph_breaks:
        if gb.location is not None:
            yield gb.location, False
        for s in gb.user_stack:
            yield s, False


def quoted_lines(compiles: Iterable[Compile]) -> dict[str, dict[int, str]]:
    """file -> line -> the code the log quotes for it (stripped of indentation).

    A compiled frame quotes no code, but its first line is known to start the function (its
    `def`, or the first decorator above it): that is recorded as `DEF + name`, so a file that
    only frames name (transformers' `generic.py` wrapper) can still be checked."""
    compiles = list(compiles)
    out: dict[str, dict[int, str]] = {}
    for c in compiles:
        for loc, _ in source_locations(c):
            if loc.code and loc.line > 0 and loc.code.strip():
                out.setdefault(loc.file, {}).setdefault(loc.line, loc.code.strip())
        code = c.code
        if code is not None and code.line > 0 and code.function.isidentifier() \
                and not code.function.startswith("torch_dynamo_resume"):
            out.setdefault(code.file, {}).setdefault(code.line, DEF + code.function)
    _quote_guards(compiles, out)
    return out


def _quote_guards(compiles: list[Compile], out: dict[str, dict[int, str]]) -> None:
    """Guards quote the line that installed them (`# x = self.layer1(x)  # torchvision/models/
    resnet.py:273`) under a path relative to its package: matched to a known file by suffix,
    through an index of every known file's path suffixes (no scan of the files per guard)."""
    suffixes: dict[str, set[str]] = {}
    for f in out:
        parts = f.split("/")
        for i in range(len(parts)):
            suffixes.setdefault("/".join(parts[i:]), set()).add(f)
    for c in compiles:
        for g in c.guards:
            src = g.source
            if src is None or not src.code or src.line <= 0 or src.file.startswith("<"):
                continue
            hits = suffixes.get(src.file, set())
            if len(hits) == 1:
                out[next(iter(hits))].setdefault(src.line, src.code.strip())


def quote_text(quoted: dict[int, str]) -> str:
    """The quoted code lines at their numbers, every other line blank (a gap). A function start
    the log knows of but does not quote stays a gap too: its signature is not in the log."""
    code = {n: q for n, q in quoted.items() if not q.startswith(DEF)}
    if not code:
        return ""
    return "\n".join(code.get(i, "") for i in range(1, max(code) + 1)) + "\n"


def without_local_sources(session: Session, why: str = "source lookup on this machine is off") -> Session:
    """`session` with every `local lookup` text back to the lines the log quotes (saving without
    sources; the lookup turned off). Returns `session` itself when it holds none."""
    looked_up = [p for p, o in session.source_origins.items() if o == SourceOrigin.LOOKUP]
    if not looked_up:
        return session
    quotes = quoted_lines(session.compiles)
    sources, notes = dict(session.sources), dict(session.source_notes)
    origins = dict(session.source_origins)
    for path in looked_up:
        quoted = quotes.get(path, {})
        sources[path], origins[path] = quote_text(quoted), SourceOrigin.QUOTE
        notes[path] = why
    return dataclasses.replace(session, sources=sources, source_notes=notes, source_origins=origins)
