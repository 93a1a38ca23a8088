"""`WorkerClient`: start a capture worker, stream its events, cancel it, recover what it traced.

Qt-free and torch-free: the CLI uses it directly; the GUI starts the same `LaunchSpec` with
QProcess (explorer/worker_process.py). Both start through launch.py (argv, environment, key,
subreaper, memory cap, sweep, the events file), keep their books with the same `CaptureRun`, end
with the same `CaptureOutcome` and recover a crashed run's session the same way
(capture_outcome.py); this module is only the subprocess side of it.

Events arrive in the run's events file (launch.py says why a file); the worker's stdout/stderr
belong to the user's code and are drained to bounded buffers on threads, so a model printing
megabytes can neither block on a full pipe nor flood memory. Cancel and timeout kill the
worker's whole process group: SIGTERM, then SIGKILL after a grace period, so a hung model and
any children it spawned are gone within about two seconds. When the worker ends, `launch.finish`
kills whatever of its tree is left, also children that left the group with `setsid`.

Events are signed with a per-run key (event_auth.py) and only verified lines count. Success is
`succeeded`: the parent's own checks (exit 0, an authentic `done`, no forged lines, and the
session file at `spec.out_path` exists, is new and decodes), never a path an event names.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from compiler_core.session.model import Diagnostic, Session
from compiler_core.worker import launch
from compiler_core.worker.capture_outcome import CaptureOutcome, CaptureRun, recover_session
from compiler_core.worker.protocol import CaptureSpec, Event

KILL_GRACE_S = launch.KILL_GRACE_S
OUTPUT_TAIL_BYTES = 64_000


@dataclass(frozen=True)
class WorkerExit:
    """How the worker ended. `signal` is set when it died by one (segfault, kill)."""

    returncode: int | None
    signal: int | None
    timed_out: bool
    cancelled: bool

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not (self.timed_out or self.cancelled)

    def describe(self) -> str:
        if self.timed_out:
            return "timed out"
        if self.cancelled:
            return "cancelled"
        if self.signal is not None:
            return f"killed by signal {signal.Signals(self.signal).name}"
        return f"exit code {self.returncode}"


class _TailBuffer:
    """Keeps the last `limit` bytes of a stream read on a thread."""

    def __init__(self, stream: IO[bytes], limit: int = OUTPUT_TAIL_BYTES) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit
        self.total = 0
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with stream:
            for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
                self.total += len(chunk)
                self._chunks.append(chunk)
                self._size += len(chunk)
                while self._size > self._limit and len(self._chunks) > 1:
                    self._size -= len(self._chunks.popleft())

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def text(self) -> str:
        return b"".join(self._chunks)[-self._limit:].decode("utf-8", "replace")


class WorkerClient:
    """One worker run. Iterate `events()` until it ends, then read `exit`, `last_stage`, etc."""

    def __init__(self, spec: CaptureSpec, timeout_s: float | None = None,
                 cache_dir: str | Path | None = None, env: dict[str, str] | None = None) -> None:
        self.spec = spec
        self.timeout_s = timeout_s
        self.exit: WorkerExit | None = None
        self.run_book = CaptureRun(spec)  # what the run said: stages, error, done, its session
        self.launch = launch.Launch(launch.LaunchSpec.build(spec, self.run_book.key, cache_dir, env))
        self.session_path = ""
        self._cancelled = threading.Event()
        self._timed_out = False
        self._stdout: _TailBuffer | None = None
        self._stderr: _TailBuffer | None = None
        self._signed = spec.signed_events  # model files and script runs (compiler_core/run) alike
        self.swept: list[int] = []  # pids of the run's processes killed after it ended

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        return self.launch.proc

    @property
    def token(self) -> str:
        """The run token its processes carry (process_sweep.RUN_TOKEN_ENV)."""
        return self.launch.spec.token

    @property
    def memory_exceeded(self) -> int:
        """Bytes the run's process tree held when it was killed for it (0: it was not)."""
        return self.launch.memory.exceeded

    @property
    def _started_unix(self) -> float:
        return self.run_book.started_unix

    @_started_unix.setter
    def _started_unix(self, value: float) -> None:
        self.run_book.started_unix = value

    @property
    def last_stage(self) -> str:
        """The innermost stage still open (a crash happened there)."""
        return self.run_book.last_stage

    @property
    def error(self) -> Event | None:
        return self.run_book.error

    @property
    def done(self) -> Event | None:
        """The authentic `done` event, if it came."""
        return self.run_book.done

    @property
    def received(self) -> list[Event]:
        return self.run_book.received

    def start(self) -> None:
        proc = self.launch.start()
        self._started_unix = self.launch.started_unix
        assert proc.stdout is not None and proc.stderr is not None
        self._stdout, self._stderr = self._drains(proc.stdout, proc.stderr)

    def _drains(self, stdout: IO[bytes], stderr: IO[bytes]) -> tuple[_TailBuffer, _TailBuffer]:
        """Bounded tails of the user's output (a script run echoes it too: run/client.py)."""
        return _TailBuffer(stdout), _TailBuffer(stderr)

    def events(self, poll_s: float = 0.05) -> Iterator[Event]:
        """Yield events as they arrive; returns once the worker process has exited and the
        events file has been read to its end (a child the user's code forked never holds the
        run open: the end is the worker's exit)."""
        if self.proc is None:
            self.start()
        assert self.proc is not None
        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        tail = self.launch.events
        while True:
            if deadline is not None and time.monotonic() > deadline and self._poll() is None:
                self._timed_out = True
                self.kill()
            exited = self._poll() is not None
            if not exited and self.launch.memory.over(self.proc.pid):
                self.kill()  # the worker and its children together passed the cap
            lines = tail.read_rest() if exited else tail.read()
            for line in lines:
                event = self.run_book.verified(line)
                if event is not None:
                    self._note(event)
                    yield event
            if exited:
                break
            if not lines:
                time.sleep(poll_s)
        self._finish()

    def run(self) -> WorkerExit:
        for _ in self.events():
            pass
        assert self.exit is not None
        return self.exit

    def _note(self, event: Event) -> None:
        self.run_book.note(event)
        if event.kind == "session" and not self._signed:
            self.session_path = event.path  # an unsigned spec (none left in the tree): its word

    def _poll(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def _finish(self) -> None:
        assert self.proc is not None
        code = self.proc.wait()
        self.swept = self.launch.finish()  # its group, and what left it (setsid, double forks)
        for buf in (self._stdout, self._stderr):
            if buf is not None:
                buf.join(2.0)
        self.exit = WorkerExit(
            returncode=code, signal=-code if code < 0 else None,
            timed_out=self._timed_out, cancelled=self._cancelled.is_set(),
        )

    def cancel(self) -> None:
        """Stop the run (thread-safe); `events()` ends shortly after."""
        self._cancelled.set()
        self.kill()

    def kill(self) -> None:
        """SIGTERM the worker's process group, SIGKILL whatever is left after KILL_GRACE_S."""
        self.launch.kill()

    @property
    def stdout_tail(self) -> str:
        return self._stdout.text() if self._stdout else ""

    @property
    def stderr_tail(self) -> str:
        return self._stderr.text() if self._stderr else ""

    @property
    def stdout_bytes(self) -> int:
        return self._stdout.total if self._stdout else 0

    @property
    def forged_lines(self) -> int:
        return self.run_book.forged_lines

    def problems(self) -> list[str]:
        """Why a run that exited 0 is still not a success (empty when it is one); model files
        and script runs alike."""
        if self.exit is None:
            return []
        out = self.run_book.problems(self.exit.returncode, decode=True)
        if not out and self.exit.returncode == 0 and self._signed:
            self.session_path = self.run_book.fresh_session()
        return out

    @property
    def succeeded(self) -> bool:
        """Decided here from what the parent can verify, never from an event alone."""
        return self.exit is not None and self.exit.ok and not self.problems()

    def outcome(self) -> CaptureOutcome:
        """How the run ended, in the type the GUI's runs end with too."""
        assert self.exit is not None, "the run has not ended"
        exit_info = self.exit
        return self.run_book.outcome(
            exit_info.returncode if exit_info.signal is None else None, signal_number=exit_info.signal,
            cancelled=exit_info.cancelled, timed_out=exit_info.timed_out, swept=len(self.swept),
            memory_exceeded=self.memory_exceeded, decode=True,
        )

    def recover_session(self) -> Session | None:
        """The saved session at `spec.out_path` (never a path an event names), or one rebuilt
        from the trace log when the worker died first or left no loadable session
        (capture_outcome.recover_session, the GUI's path too)."""
        outcome = self.outcome()
        if outcome.session_path and not self.run_book.session_problem():
            self.session_path = outcome.session_path  # the worker's own save, even after a failure
        return recover_session(self.spec, outcome)

    def failure_diagnostic(self) -> Diagnostic | None:
        return None if self.exit is None else self.outcome().failure_diagnostic(self.spec)
