"""Runs the capture worker (`python -m compiler_core.worker`) through QProcess and reports on it.

QProcess cannot pass the worker an extra pipe, so events come through `--events-file` (see
compiler_core/worker/protocol.py), tailed by a timer: the GUI thread never blocks on the child.
The worker starts under `setsid` so Cancel can kill its whole process group (Inductor's compile
workers included). Whatever happens to the worker, `finished` carries its fate and the path of
what it recorded, if anything.

Hostile model files: the per-run key goes to the worker's stdin (QProcess can
write it; compiler_core/worker/event_auth.py says why stdin) and only lines signed with it are
believed. The bookkeeping is the CLI's own (`CaptureRun`, compiler_core/worker/capture_outcome.py)
and so is the result, a `CaptureOutcome`: `ok` from what the GUI can check (exit code 0, an
authentic `done`, no forged lines, and a session file at the path the GUI chose, never a path an
event names, written during this run). Whether it decodes is checked by the capture loader, off
the GUI thread, which also recovers a failed run's session the CLI's way. When the worker ends,
whatever its tree left behind (also `setsid` children) is swept (compiler_core/worker/process_sweep.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from compiler_core.worker import process_sweep
from compiler_core.worker.capture_outcome import CaptureRun
from compiler_core.worker.memory_limit import limit_bytes
from compiler_core.worker.protocol import CaptureSpec, worker_env

ROOT = Path(__file__).resolve().parent.parent
POLL_MS = 50


class WorkerProcess(QObject):
    """Signals:

    - `eventReceived(Event)`: every protocol event, in order.
    - `stageChanged(str)`: the stage now running (e.g. "inductor 0/0").
    - `logLine(str)`: a line of the worker's stdout/stderr (the user's prints).
    - `finished(CaptureOutcome)`: once, after the process ended and its events were drained.
    """

    eventReceived = Signal(object)  # noqa: N815 (Qt signal naming; `event` is QObject.event)
    stageChanged = Signal(str)  # noqa: N815 (Qt signal naming)
    logLine = Signal(str)  # noqa: N815 (Qt signal naming)
    finished = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._proc: QProcess | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        self._events_path = ""
        self._offset = 0
        self._buffer = b""
        self._reset()

    def _reset(self, spec: CaptureSpec | None = None) -> None:
        self.stage = ""  # the stage now running, with its compile id ("inductor 0/0")
        self.started_at = 0.0
        self._start_error = ""
        self._cancelled = False
        self._spec = spec
        self._book: CaptureRun | None = CaptureRun(spec) if spec is not None else None
        self._token = process_sweep.new_run_token()
        self._pid = 0
        self._memory_exceeded = 0
        self._ticks = 0

    def running(self) -> bool:
        return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at if self.started_at else 0.0

    def start(self, spec: CaptureSpec) -> None:
        if self.running():
            raise RuntimeError("a capture is already running")
        self._reset(spec)
        events_dir = Path(tempfile.mkdtemp(prefix="compilescope-events-"))
        self._events_path = str(events_dir / "events.jsonl")
        Path(self._events_path).touch()
        self._offset, self._buffer = 0, b""
        argv = spec.argv(events_file=self._events_path)
        setsid = shutil.which("setsid")
        program, args = (setsid, argv) if setsid else (argv[0], argv[1:])
        proc = QProcess(self)
        env = _environment()
        env.insert(process_sweep.RUN_TOKEN_ENV, self._token)
        proc.setProcessEnvironment(env)
        proc.setWorkingDirectory(str(ROOT))
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        proc.readyReadStandardOutput.connect(self._read_output)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        proc.started.connect(self._on_started)
        self._proc = proc
        self.started_at = time.monotonic()
        assert self._book is not None
        self._book.started_unix = time.time()
        process_sweep.become_subreaper()
        proc.start(program, args)
        self._timer.start()

    def _on_started(self) -> None:
        """Hand the worker its key on stdin and close it (the worker reads one line first)."""
        if self._proc is None:
            return
        self._pid = int(self._proc.processId())
        process_sweep.register_child(self._pid)
        if self._book is not None and self._book.signed:
            self._proc.write(self._book.key.hex().encode() + b"\n")
        self._proc.closeWriteChannel()

    def cancel(self) -> None:
        """Kill the worker's whole process group; `finished` follows with cancelled=True."""
        if not self.running() or self._proc is None:
            return
        self._cancelled = True
        pid = self._proc.processId()
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self._proc.kill()

    def wait(self, timeout_ms: int = 600_000) -> bool:
        """Block until the worker ends (screenshots and scripts only; the GUI uses `finished`)."""
        return self._proc is not None and self._proc.waitForFinished(timeout_ms)

    # ----- reading -----
    def _read_output(self) -> None:
        if self._proc is None:
            return
        data = bytes(self._proc.readAllStandardOutput().data()).decode("utf-8", "replace")
        for line in data.splitlines():
            self.logLine.emit(line)

    def _check_memory(self) -> None:
        """Every 10th tick (0.5 s): kill the run when the worker's whole process tree passes the
        cap (rlimits bound each process, not their sum; compiler_core/worker/memory_limit.py)."""
        self._ticks += 1
        spec = self._spec
        if self._ticks % 10 or not self._pid or spec is None or self._memory_exceeded:
            return
        cap = limit_bytes(spec.device, spec.max_memory_mb)
        used = process_sweep.tree_pss_bytes(self._pid) if cap else 0
        if cap and used > cap:
            self._memory_exceeded = used
            self.cancel()
            self._cancelled = False  # not the user's cancel: the outcome says why

    def _poll(self) -> None:
        self._check_memory()
        try:
            with open(self._events_path, "rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except OSError:
            return
        self._offset += len(chunk)
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for raw in lines:
            if raw.strip():
                self._handle(raw.decode("utf-8", "replace"))

    def _handle(self, line: str) -> None:
        ev = self._book.accept(line) if self._book is not None else None
        if ev is None:
            return  # not written by the worker: counted, reported in the outcome
        if ev.kind == "stage" and ev.state == "started":
            self.stage = self._book.stage_label if self._book is not None else ""
            self.stageChanged.emit(self.stage)
        elif ev.kind == "warning":
            # the memory cap is a fact of every run (how much, what it cannot cover), not a problem
            note = "note" if ev.data.get("category") == "memory_cap" else "warning"
            self.logLine.emit(f"{note}: {ev.message}")
        self.eventReceived.emit(ev)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            why = self._proc.errorString() if self._proc else ""
            self._start_error = f"could not start the worker: {why}"
            self._on_finished(-1, QProcess.ExitStatus.CrashExit)

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if not self._timer.isActive():
            return  # already reported (FailedToStart then finished)
        self._timer.stop()
        self._read_output()
        self._poll()
        crashed = status == QProcess.ExitStatus.CrashExit
        if self._pid:
            process_sweep.unregister_child(self._pid)
        swept = process_sweep.sweep(self._token)
        book = self._book if self._book is not None else CaptureRun(CaptureSpec("", ""))
        # On a crash QProcess's exit code is the signal's number (Unix); 0 means unknown.
        outcome = book.outcome(
            None if crashed else code, signal_number=code if crashed and code > 0 else None,
            cancelled=self._cancelled, swept=len(swept), memory_exceeded=self._memory_exceeded,
            error=self._start_error,
        )
        self.finished.emit(outcome)


def _environment() -> QProcessEnvironment:
    env = QProcessEnvironment()
    for key, value in worker_env().items():
        env.insert(key, value)
    env.insert("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    return env
