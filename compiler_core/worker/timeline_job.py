"""A capture's timeline, timed in a process that never captured anything.

The capture process compiles the model under the trace sink, the stage recorders and the
inspect config, profiles one step, builds and saves the session. Timing the step after that in
the same process reads slow against the user's own loop in a fresh process
(docs/benchmarks.md, Findings), while the same timing code in a process that had never
captured agreed with that loop. So the worker replaces its own image once the session is saved
(`os.execv` of a fresh interpreter, `exec_timeline`): same pid, same events channel, same
rlimits and the same place in the client's process tree, but no torch state, no thread, no
handler, no compile cache and no object of the capture. The new image loads the model file
anew, checks that nothing of a capture is there (`clean_process.residue`; a residue stops the
timeline with an error instead of showing wrong numbers), times every mode, and writes the
session again with the timeline in it.

The events channel's descriptor survives the exec (made inheritable for it); the run's key and
the next sequence number travel through a pipe that the new image reads once and closes, so
its lines continue the same authenticated stream.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compiler_core.worker import protocol
from compiler_core.worker.protocol import CaptureSpec, Event

Emit = Callable[[Event], None]
TIMELINE_FLAG = "--timeline-only"


def exec_timeline(argv: list[str], channel_fd: int, key: bytes, next_seq: int) -> None:
    """Replace this process with a fresh interpreter that runs the timeline (never returns).

    `argv` is the worker's own command line (its options name the model, steps and modes)."""
    read_fd, write_fd = os.pipe()
    os.write(write_fd, f"{key.hex()} {next_seq}\n".encode("ascii"))
    os.close(write_fd)
    os.set_inheritable(read_fd, True)
    os.set_inheritable(channel_fd, True)
    args = _without_channel_options(argv)
    args += [TIMELINE_FLAG, "--events-fd", str(channel_fd), "--key-fd", str(read_fd)]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "compiler_core.worker", *args])


def _without_channel_options(argv: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--events-fd", "--events-file", "--key-fd"):
            skip = True
            continue
        if arg in ("--auth-stdin", TIMELINE_FLAG) or arg.startswith(("--events-fd=", "--events-file=")):
            continue
        out.append(arg)
    return out


def read_key_fd(fd: int) -> tuple[bytes, int]:
    """(key, next sequence number) from the pipe `exec_timeline` filled; the pipe is closed."""
    try:
        text = os.read(fd, 256).decode("ascii", "replace").split()
    finally:
        os.close(fd)
    try:
        return bytes.fromhex(text[0]), int(text[1])
    except (IndexError, ValueError):
        return b"", 0


class TimelineJob:
    """Load the model file, check the process is clean, time it, add the timeline to the session."""

    def __init__(self, spec: CaptureSpec, emit: Emit) -> None:
        self.spec = spec
        self._emit = emit
        self._t0 = time.monotonic()
        self._checked = False  # the process was checked clean before the first timed block

    def clock(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def run(self) -> int:
        from compiler_core.session.codec import load, save
        from compiler_core.session.model import Diagnostic

        self._stage("timeline", "started")
        started = time.monotonic()
        error: BaseException | None = None
        result: Any = None
        try:
            result = self._time()
        except BaseException as exc:  # user code may raise anything, SystemExit included
            error = exc
        self._stage("timeline", "failed" if error else "finished", time.monotonic() - started)
        self._stage("save", "started")
        session = load(self.spec.out_path)
        if result is not None:
            from compiler_core.timeline import with_timeline

            session = with_timeline(session, *result)
        if self._checked:  # said only once the check ran (a file that fails to load never got there)
            extra = {**session.meta.extra, "timeline_process": self._process_note()}
            session = dataclasses.replace(session, meta=dataclasses.replace(session.meta, extra=extra))
        code = protocol.EXIT_OK
        if error is not None:
            from compiler_core.capture.user_errors import describe_failure

            report = describe_failure(error)
            self._emit(Event.failure(report, "timeline", self.clock()))
            diag = Diagnostic("error", report.message + "\n" + report.user_traceback, self.spec.model_path,
                              stage="timeline")
            session = dataclasses.replace(session, diagnostics=(*session.diagnostics, diag))
            from compiler_core.timeline.clean_process import ResidueError

            code = protocol.EXIT_INTERNAL if isinstance(error, ResidueError) else protocol.EXIT_USER_ERROR
        save(session, self.spec.out_path)
        self._stage("save", "finished")
        self._emit(Event("session", t=self.clock(), path=str(Path(self.spec.out_path).resolve()),
                         data={"trace": self.spec.resolved_trace_path, "partial": error is not None,
                               "compiles": len(session.compiles)}))
        return code

    def _time(self) -> Any:
        from compiler_core.capture.hooks.hint_config import hinted_config
        from compiler_core.modelfile import load_model_file, with_train_choice
        from compiler_core.timeline import run_phase
        from compiler_core.timeline.clean_process import ResidueError, residue

        spec = with_train_choice(load_model_file(self.spec.model_path, device=self.spec.device),
                                 self.spec.train)
        found = residue()
        self._checked = not found
        if found:
            raise ResidueError(found)
        modes = [m for m in self.spec.modes.split(",") if m]
        with hinted_config():  # a re-run's hint (diff/hint_plan.py): timed as it was captured
            return run_phase(
                spec, modes, steps=self.spec.steps, device=self.spec.device,
                emit=lambda record: self._emit(Event("timeline", t=self.clock(), data=record)),
                shape_change_step=self.spec.shape_change_step,
            )

    def _process_note(self) -> str:
        from compiler_core.timeline.clean_process import CHECKS

        return f"fresh interpreter (pid {os.getpid()}), model file loaded anew; checked absent: {CHECKS}"

    def _stage(self, name: str, state: str, elapsed: float | None = None) -> None:
        self._emit(Event("stage", t=self.clock(), stage=name, state=state,
                         elapsed_s=None if elapsed is None else round(elapsed, 4)))
