"""A script run's session: its trace log (one file, or a directory of rank logs) plus its meta,
the step timeline and diagnostics. Torch- and Qt-free: the worker saves with it, the CLI client
rebuilds a dead worker's partial session with it, and the GUI builds its live views with it
while the script is still running.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compiler_core.capture.user_errors import describe_failure
from compiler_core.run.spec import ScriptSpec
from compiler_core.session.model import Diagnostic, Session, SessionMeta
from compiler_core.worker import protocol
from compiler_core.worker.protocol import Event

Emit = Callable[[Event], None]


def save_script_session(
    spec: ScriptSpec, emit: Emit, clock: Callable[[], float], code: int, sources: dict[str, str] | None,
    diagnostics: list[Diagnostic], timeline: tuple[list[Any], list[Any], list[Any]], stopped: str = "",
    clocks: dict[str, str] | None = None,
) -> int:
    """Build the session from the trace log (file or rank directory), add the step timeline,
    save it, and report it; returns the run's exit code (EXIT_BUILD_FAILED if only saving failed)."""
    from compiler_core.session.codec import save
    from compiler_core.timeline.records import with_timeline

    emit(Event("stage", t=clock(), stage="build", state="started"))
    try:
        session = build_script_session(spec, script_meta(spec, stopped, clocks), sources, diagnostics)
        session = with_timeline(session, *timeline)
        emit(Event("stage", t=clock(), stage="build", state="finished"))
        save(session, spec.out_path)
    except OSError as exc:  # the output path is no longer writable (the script made it a folder)
        emit(Event("error", t=clock(), stage="save", message=f"the session could not be written to "
                   f"{spec.out_path}: {exc.strerror or exc} (the path was changed while the script ran?)"))
        return code if code != protocol.EXIT_OK else protocol.EXIT_BUILD_FAILED
    except Exception as exc:
        report = describe_failure(exc)
        emit(Event.failure(report, "build", clock()))
        return code if code != protocol.EXIT_OK else protocol.EXIT_BUILD_FAILED
    emit(Event("session", t=clock(), path=str(Path(spec.out_path).resolve()),
               data={"trace": spec.resolved_trace_path, "partial": code != protocol.EXIT_OK,
                     "compiles": len(session.compiles)}))
    return code


def build_script_session(spec: ScriptSpec, meta: SessionMeta, sources: dict[str, str] | None,
                         diagnostics: list[Diagnostic]) -> Session:
    """The trace log (a file, or a directory of rank logs) as a session; torch-free."""
    from compiler_core.capture.session_build import build_session, read_sources

    trace = Path(spec.resolved_trace_path)
    if sources is None:
        sources = read_sources([spec.model_path])
    if not trace.is_dir():
        return build_session(trace, meta, sources, diagnostics)
    from compiler_core.analysis import import_trace

    session = import_trace(trace, meta=meta)
    merged = {**sources, **session.sources}
    return dataclasses.replace(session, sources=merged, diagnostics=(*diagnostics, *session.diagnostics))


def script_meta(spec: ScriptSpec, stopped: str = "", clocks: dict[str, str] | None = None) -> SessionMeta:
    """Session meta of a script run (origin "script"); torch facts only where torch is loaded.
    `clocks`: the clock each callable was timed with when the device was "auto"."""
    from compiler_core.worker.capture_job import _torch_facts

    picked = sorted({c.split(" ", 1)[0] for c in (clocks or {}).values()})
    torch_version, device = _torch_facts(picked[0] if len(picked) == 1 else spec.device)
    extra = {"args": shlex.join(spec.script_args), "cwd": spec.cwd or os.getcwd()}
    if spec.nproc > 1:
        extra["nproc"] = str(spec.nproc)
    if spec.max_steps is not None:
        extra["max_steps"] = str(spec.max_steps)
    if stopped:
        extra["stopped"] = stopped
    if clocks:
        extra["clock"] = "; ".join(f"{label}: {how}" for label, how in clocks.items())
    return SessionMeta(torch_version=torch_version, device=device, mode="per callable", origin="script",
                       origin_path=str(Path(spec.model_path).resolve()), created_unix=time.time(),
                       extra=extra)
