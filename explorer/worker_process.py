"""Runs a worker (capture, script run, budget sweep) through QProcess and reports on it.

QProcess is only the transport: argv, environment, working directory, key, memory cap, sweep and
the events file all come from the one launcher the CLI uses (compiler_core/worker/launch.py, a
`LaunchSpec` built from the run's spec). The events file is tailed by a timer (`EventTail`), so
the GUI thread never blocks on the child. The worker leads a session of its own (QProcess's
CreateNewSession) so Cancel can kill its whole process group (Inductor's compile workers
included). Whatever happens to the worker, `finished` carries its fate and the path of what it
recorded, if anything.

Hostile model files: the per-run key goes to the worker's stdin (QProcess can write it;
compiler_core/worker/event_auth.py says why stdin) and only lines signed with it are believed.
The bookkeeping is the CLI's own (`CaptureRun`, compiler_core/worker/capture_outcome.py) and so
is the result, a `CaptureOutcome`: `ok` from what the GUI can check (exit code 0, an authentic
`done`, no forged lines, and a session file at the path the GUI chose, never a path an event
names, written during this run). Whether it decodes is checked by the capture loader, off the
GUI thread, which also recovers a failed run's session the CLI's way. When the worker ends,
whatever its tree left behind (also `setsid` children) is swept (`launch.finish`).
"""

from __future__ import annotations

import signal
import time

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from compiler_core.worker import launch
from compiler_core.worker.capture_outcome import CaptureRun
from compiler_core.worker.protocol import CaptureSpec

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
        self._reset()

    def _reset(self, spec: CaptureSpec | None = None) -> None:
        self.stage = ""  # the stage now running, with its compile id ("inductor 0/0")
        self.started_at = 0.0
        self._start_error = ""
        self._cancelled = False
        self._spec = spec
        self._book: CaptureRun | None = CaptureRun(spec) if spec is not None else None
        self._launch: launch.LaunchSpec | None = None
        self._tail: launch.EventTail | None = None
        self._memory = launch.MemoryWatch(None)
        self._pid = 0

    @property
    def _token(self) -> str:
        """The run token of the current (or last) run's processes."""
        return self._launch.token if self._launch is not None else ""

    def running(self) -> bool:
        return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at if self.started_at else 0.0

    def start(self, spec: CaptureSpec) -> None:
        if self.running():
            raise RuntimeError("a capture is already running")
        self._reset(spec)
        assert self._book is not None
        spec_ = launch.LaunchSpec.build(spec, self._book.key)
        self._launch, self._tail = spec_, launch.EventTail(spec_.events_path)
        self._memory = launch.MemoryWatch(spec_.memory_cap)
        proc = QProcess(self)
        env = QProcessEnvironment()
        for key, value in spec_.env:
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        if spec_.cwd:
            proc.setWorkingDirectory(spec_.cwd)
        proc.setUnixProcessParameters(QProcess.UnixProcessFlag.CreateNewSession)
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        proc.readyReadStandardOutput.connect(self._read_output)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        proc.started.connect(self._on_started)
        self._proc = proc
        self.started_at = time.monotonic()
        self._book.started_unix = time.time()
        launch.before_start()
        proc.start(spec_.argv[0], list(spec_.argv[1:]))
        self._timer.start()

    def _on_started(self) -> None:
        """Hand the worker its key on stdin and close it (the worker reads one line first)."""
        if self._proc is None or self._launch is None:
            return
        self._pid = int(self._proc.processId())
        launch.started(self._pid)
        if self._launch.key:
            self._proc.write(self._launch.key_line())
        self._proc.closeWriteChannel()

    def cancel(self) -> None:
        """Kill the worker's whole process group; `finished` follows with cancelled=True."""
        if not self.running() or self._proc is None:
            return
        self._cancelled = True
        self._kill()

    def _kill(self) -> None:
        assert self._proc is not None
        pid = int(self._proc.processId())
        if pid:
            launch.kill_group(pid, signal.SIGKILL)
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

    def _poll(self) -> None:
        if self.running() and self._memory.over(self._pid):
            self._kill()  # the worker's tree passed the cap: not the user's cancel, the outcome says why
        if self._tail is not None:
            for line in self._tail.read():
                self._handle(line)

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
        if self._tail is not None:
            for line in self._tail.read_rest():
                self._handle(line)
        crashed = status == QProcess.ExitStatus.CrashExit
        swept = launch.finish(self._launch, self._pid) if self._launch is not None else []
        book = self._book if self._book is not None else CaptureRun(CaptureSpec("", ""))
        # On a crash QProcess's exit code is the signal's number (Unix); 0 means unknown.
        outcome = book.outcome(
            None if crashed else code, signal_number=code if crashed and code > 0 else None,
            cancelled=self._cancelled, swept=len(swept), memory_exceeded=self._memory.exceeded,
            error=self._start_error,
        )
        self.finished.emit(outcome)
