"""`WorkerClient`: start a capture worker, stream its events, cancel it, recover what it traced.

Qt-free and torch-free: the CLI uses it directly; the GUI starts the same command line with
QProcess (explorer/worker_process.py). Both keep their books with the same `CaptureRun`, end
with the same `CaptureOutcome` and recover a crashed run's session the same way
(capture_outcome.py); this module is only the subprocess transport.

Events arrive on a private pipe (the worker's stdout/stderr belong to the user's code and are
drained to bounded buffers on threads, so a model printing megabytes can neither block on a
full pipe nor flood memory). Cancel and timeout kill the worker's whole process group: SIGTERM,
then SIGKILL after a grace period, so a hung model and any children it spawned are gone within
about two seconds. When the worker ends, `process_sweep.sweep` kills whatever of its tree is left,
also children that left the group with `setsid` (this process becomes a child subreaper).

Events are signed with a per-run key (event_auth.py) and only verified lines count. Success is
`succeeded`: the parent's own checks (exit 0, an authentic `done`, no forged lines, and the
session file at `spec.out_path` exists, is new and decodes), never a path an event names.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from compiler_core.session.model import Diagnostic, Session
from compiler_core.worker import process_sweep
from compiler_core.worker.capture_outcome import CaptureOutcome, CaptureRun, recover_session
from compiler_core.worker.memory_limit import limit_bytes
from compiler_core.worker.protocol import CaptureSpec, Event, worker_env

KILL_GRACE_S = 1.0
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
        self._env = worker_env(env, cache_dir)
        self.proc: subprocess.Popen[bytes] | None = None
        self.exit: WorkerExit | None = None
        self.run_book = CaptureRun(spec)  # what the run said: stages, error, done, its session
        self.session_path = ""
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._cancelled = threading.Event()
        self._timed_out = False
        self._stdout: _TailBuffer | None = None
        self._stderr: _TailBuffer | None = None
        self._signed = spec.signed_events  # model files and script runs (compiler_core/run) alike
        self._key = self.run_book.key
        self.token = process_sweep.new_run_token()
        self.memory_exceeded = 0  # bytes the run's process tree held when it was killed for it
        self._cap = limit_bytes(spec.device, spec.max_memory_mb)
        self._next_memory_check = 0.0
        self.swept: list[int] = []  # pids of the run's processes killed after it ended

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
        read_fd = self._spawn(self.spec.argv, str(Path(self.spec.model_path).resolve().parent))
        assert self.proc is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self._stdout = _TailBuffer(self.proc.stdout)
        self._stderr = _TailBuffer(self.proc.stderr)
        threading.Thread(target=self._read_events, args=(read_fd,), daemon=True).start()

    def _spawn(self, argv: Callable[..., list[str]], cwd: str | None) -> int:
        """Start the worker the one way every run is started (model file, script, budget sweep):
        its own session, the run token in its environment, this process its subreaper and the
        worker registered, the key on stdin. Returns the events pipe's read end."""
        read_fd, write_fd = os.pipe()
        env = dict(self._env)
        root = str(Path(__file__).resolve().parents[2])  # so `-m compiler_core.*` imports
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        env[process_sweep.RUN_TOKEN_ENV] = self.token
        process_sweep.become_subreaper()
        self._started_unix = time.time()
        try:
            self.proc = subprocess.Popen(
                argv(events_fd=write_fd), cwd=cwd, env=env, pass_fds=(write_fd,),
                stdin=subprocess.PIPE if self._signed else subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
            )
        finally:
            os.close(write_fd)
        process_sweep.register_child(self.proc.pid)
        if self._signed:
            self._send_key()
        return read_fd

    def _send_key(self) -> None:
        """The run's key on the worker's stdin, which is then closed (worker_main._read_key)."""
        assert self.proc is not None and self.proc.stdin is not None
        with contextlib.suppress(OSError):  # a worker that died at once: reported by its exit
            self.proc.stdin.write(self._key.hex().encode() + b"\n")
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def _read_events(self, fd: int) -> None:
        """Read and verify on this thread; the events are noted (`CaptureRun.note`) as they
        are yielded, on the caller's thread."""
        book = self.run_book
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as stream:
            for line in stream:
                body = book.verified(line)
                if body is not None:
                    self._queue.put(body)
        self._queue.put(None)

    def events(self, poll_s: float = 0.1) -> Iterator[Event]:
        """Yield events as they arrive; returns once the worker process has exited.

        The end is the process's exit, not the channel's EOF: a child forked by the user's code
        can hold the pipe open long after the worker is gone.
        """
        if self.proc is None:
            self.start()
        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        exited_at: float | None = None
        channel_closed = False
        while True:
            if deadline is not None and time.monotonic() > deadline and exited_at is None:
                self._timed_out = True
                self.kill()
            if exited_at is None and self._poll() is not None:
                exited_at = time.monotonic()
            if exited_at is None:
                self._check_memory()
            if exited_at is not None and channel_closed:
                break
            try:
                event = self._queue.get(timeout=poll_s if exited_at is None else 0.05)
            except queue.Empty:
                if exited_at is not None and time.monotonic() - exited_at > 0.5:
                    break  # exited, and the reader has had time to pass on the last lines
                continue
            if event is None:
                channel_closed = True
                continue
            self._note(event)
            yield event
        self._finish()

    def _check_memory(self) -> None:
        """Kill the run when the worker and its children together pass the cap (rlimits bound
        each process, not their sum; see memory_limit.py)."""
        now = time.monotonic()
        if self._cap is None or self.proc is None or now < self._next_memory_check:
            return
        self._next_memory_check = now + 0.5
        used = process_sweep.tree_pss_bytes(self.proc.pid)
        if used > self._cap and not self.memory_exceeded:
            self.memory_exceeded = used
            self.kill()

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
        process_sweep.unregister_child(self.proc.pid)
        self._kill_group(signal.SIGKILL)  # orphans a finished worker left behind
        self.swept = process_sweep.sweep(self.token)  # and those that left the group (setsid)
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
        if self.proc is None or self.proc.poll() is not None:
            self._kill_group(signal.SIGKILL)
            return
        self._kill_group(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(KILL_GRACE_S)
        self._kill_group(signal.SIGKILL)

    def _kill_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)  # pgid == pid: started with start_new_session

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
