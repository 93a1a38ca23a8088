"""Hostile sessions built from real ones: every data string carries markup that loads files.

`poisoned(session)` appends `PAYLOAD` to every string value (and to the dict keys that name data:
source paths, node names), consistently, so graphs, sources and kernels still hang together and
every pane has something to show; only `links` and `line_nodes` keys keep their encoding.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

from compiler_core.session import GraphBreak, Guard, Session, SourceLoc, load
from compiler_core.session.model import Diagnostic
from tests.conftest import FIXTURES

PAYLOAD = '<img src="/dev/zero"><a href=file:///etc/passwd>x</a><h1>big</h1>'
_KEEP_KEYS = {"links", "line_nodes"}  # encoded refs and line numbers: their format is not data
_ENUMS = {"kind", "op", "language", "status", "severity", "graph"}  # closed vocabularies the panes branch on


def _poison(value: Any, keep_keys: bool = False) -> Any:
    if isinstance(value, str):
        return value + PAYLOAD
    if isinstance(value, tuple):
        return tuple(_poison(v) for v in value)
    if isinstance(value, dict):
        return {(k if keep_keys else k + PAYLOAD): _poison(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _poison(getattr(value, f.name), f.name == "stage_s")
                   for f in dataclasses.fields(value) if f.name not in _KEEP_KEYS | _ENUMS}
        return dataclasses.replace(value, **changes)
    return value


def poisoned(session: Session) -> Session:
    result: Session = _poison(session)
    return result


def rich_session() -> Session:
    """A real GPU session (autotuning, modes, a diagnostic) plus a real CPU timeline, a graph break,
    a guard and a diagnostic with a line: something for every pane to show."""
    gpu = load(FIXTURES / "gpu_stages_h100.json")
    timeline = load(FIXTURES / "timeline" / "transformer_cpu_timeline.json")
    c = gpu.compiles[0]
    path = next(iter(gpu.sources), "model.py")
    loc = SourceLoc(file=path, line=3, function="forward", code="x.item()")
    brk = GraphBreak(reason="data-dependent branch", location=loc, user_stack=(loc,))
    guard = Guard(code="L['x'].size()[0] == 8", kind="SHAPE_ENV", source=loc)
    aot = load(FIXTURES / "transformer_block.json").compiles[0].aot  # training: partners, saved tensors
    c = replace(c, graph_breaks=(brk,), guards=(*c.guards, guard), aot=aot,
                recompile_reasons=("size mismatch at index 0",))
    diag = Diagnostic(severity="warning", message="bad JSON payload", path="r0.log", line=42, stage="import")
    return replace(gpu, compiles=(c,), timeline=timeline.timeline, timeline_events=timeline.timeline_events,
                   mode_stats=timeline.mode_stats, diagnostics=(*gpu.diagnostics, diag))
