"""Trace log → Session, for the worker after a capture and for the client after a crash.

There is one builder for capture and import (`compiler_core.analysis.import_trace`); a capture
only adds what the log cannot know: the session meta (mode, device, how it was captured), the
user's source files, and a diagnostic for a failure. Torch-free, because the client uses it to
recover a partial session when the worker died (segfault, timeout, cancel).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from compiler_core.session.model import Diagnostic, Session, SessionMeta

MAX_SOURCE_BYTES = 2_000_000


def build_session(
    trace_path: str | Path, meta: SessionMeta, sources: dict[str, str],
    diagnostics: Iterable[Diagnostic] = (),
) -> Session:
    """Build from the trace log; an empty or missing log still gives a session with the meta."""
    extra = tuple(diagnostics)
    path = Path(trace_path)
    if not path.is_file() or path.stat().st_size == 0:
        note = Diagnostic("warning", "nothing was traced before the run ended", str(path), stage="build")
        return Session(meta=meta, sources=sources, diagnostics=(*extra, note))
    try:
        from compiler_core.analysis import import_trace
    except ImportError as exc:  # the builder has not landed in this checkout
        note = Diagnostic("error", f"session builder unavailable: {exc}", str(path), stage="build")
        return Session(meta=meta, sources=sources, diagnostics=(*extra, note))
    session = import_trace(path, meta=meta, sources=sources)
    if not extra:
        return session
    return dataclasses.replace(session, diagnostics=(*extra, *session.diagnostics))


def read_sources(paths: Iterable[str]) -> dict[str, str]:
    """Text of each readable user file (the model file first), skipping huge or binary ones."""
    out: dict[str, str] = {}
    for p in paths:
        path = os.path.abspath(p)
        if path in out or not os.path.isfile(path) or os.path.getsize(path) > MAX_SOURCE_BYTES:
            continue
        try:
            out[path] = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def user_files(candidates: Iterable[str]) -> list[str]:
    """The candidates that are user code: .py files outside Python's and torch's install dirs."""
    prefixes = {os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    out = []
    for c in candidates:
        path = os.path.abspath(c)
        if not path.endswith(".py") or path.startswith(here) or "site-packages" in path:
            continue
        if any(path.startswith(p) for p in prefixes):
            continue
        out.append(path)
    return out
