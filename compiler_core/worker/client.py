"""`WorkerClient`: start a capture worker, stream its events, cancel it, recover what it traced.

Qt-free and torch-free: the CLI uses it directly; the GUI starts the same command line with
QProcess (see protocol.py) and can reuse `recover_session` and `FailureSummary`.

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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from compiler_core.session.model import Diagnostic, Session
from compiler_core.worker import event_auth, process_sweep
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
        self.last_stage = ""
        self.error: Event | None = None
        self.session_path = ""
        self.received: list[Event] = []
        self._open_stages: list[str] = []
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._cancelled = threading.Event()
        self._timed_out = False
        self._stdout: _TailBuffer | None = None
        self._stderr: _TailBuffer | None = None
        self._signed = spec.signed_events  # model files and script runs (compiler_core/run) alike
        self._key = event_auth.new_key()
        self._verifier = event_auth.Verifier(self._key)
        self.token = process_sweep.new_run_token()
        self.done: Event | None = None  # the authentic `done` event, if it came
        self.memory_exceeded = 0  # bytes the run's process tree held when it was killed for it
        self._cap = limit_bytes(spec.device, spec.max_memory_mb)
        self._next_memory_check = 0.0
        self.swept: list[int] = []  # pids of the run's processes killed after it ended
        self._started_unix = 0.0

    def start(self) -> None:
        read_fd, write_fd = os.pipe()
        cwd = str(Path(self.spec.model_path).resolve().parent)
        env = dict(self._env)
        root = str(Path(__file__).resolve().parents[2])  # so `-m compiler_core.worker` imports
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        env[process_sweep.RUN_TOKEN_ENV] = self.token
        process_sweep.become_subreaper()
        self._started_unix = time.time()
        try:
            self.proc = subprocess.Popen(
                self.spec.argv(events_fd=write_fd), cwd=cwd, env=env, pass_fds=(write_fd,),
                stdin=subprocess.PIPE if self._signed else subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
            )
        finally:
            os.close(write_fd)
        process_sweep.register_child(self.proc.pid)
        if self._signed:
            self._send_key()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._stdout = _TailBuffer(self.proc.stdout)
        self._stderr = _TailBuffer(self.proc.stderr)
        threading.Thread(target=self._read_events, args=(read_fd,), daemon=True).start()

    def _send_key(self) -> None:
        """The run's key on the worker's stdin, which is then closed (worker_main._read_key)."""
        assert self.proc is not None and self.proc.stdin is not None
        with contextlib.suppress(OSError):  # a worker that died at once: reported by its exit
            self.proc.stdin.write(self._key.hex().encode() + b"\n")
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def _read_events(self, fd: int) -> None:
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if not line.strip():
                    continue
                body = self._verifier.check(line) if self._signed else line
                if body is None:
                    continue  # forged, replayed or torn: counted by the verifier
                try:
                    self._queue.put(Event.from_json(body))
                except ValueError:
                    continue  # cannot happen for a line we signed; never trusted anyway
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
        self.received.append(event)
        if event.kind == "stage":
            self._track_stage(event)
        elif event.kind == "error" and self.error is None:
            self.error = event
        elif event.kind == "done":
            self.done = event
        elif event.kind == "session" and not self._signed:
            self.session_path = event.path  # an unsigned spec (none left in the tree): its word

    def _track_stage(self, event: Event) -> None:
        """`last_stage` is the innermost stage still open (a crash happened there)."""
        if event.state == "started":
            self._open_stages.append(event.stage)
        elif event.stage in self._open_stages:
            self._open_stages.remove(event.stage)
        self.last_stage = self._open_stages[-1] if self._open_stages else event.stage

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
        return self._verifier.forged

    def problems(self) -> list[str]:
        """Why a run that exited 0 is still not a success (empty when it is one); model files
        and script runs alike."""
        if not self._signed:
            return []
        out = event_auth.channel_problems(self._verifier.forged, self.done is not None)
        if self.done is not None and self.exit is not None and self.done.exit_code != self.exit.returncode:
            out.append(f"the worker reported exit code {self.done.exit_code} but exited with "
                       f"{self.exit.returncode}")  # fmt: skip
        why = self._session_problem()
        if why:
            out.append(why)
        return out

    @property
    def succeeded(self) -> bool:
        """Decided here from what the parent can verify, never from an event alone."""
        return self.exit is not None and self.exit.ok and not self.problems()

    def _session_problem(self) -> str:
        from compiler_core.session.codec import SessionFormatError, load

        path = Path(self.spec.out_path)
        try:
            if path.stat().st_mtime < self._started_unix - 2.0:
                return f"no new session was written to {path} (the file there is older than this run)"
            load(path)
        except FileNotFoundError:
            return f"no session was written to {path}"
        except (OSError, SessionFormatError, RecursionError) as exc:
            return f"the session at {path} does not load: {str(exc)[:300]}"
        self.session_path = str(path.resolve())
        return ""

    def recover_session(self) -> Session | None:
        """The saved session at `spec.out_path` (never a path an event names), or one rebuilt
        from the trace log when the worker died first or left no loadable session."""
        from compiler_core.session.codec import load

        if not self._session_problem():
            return load(self.spec.out_path)
        trace = Path(self.spec.resolved_trace_path)
        if not trace.is_file() or trace.stat().st_size == 0:
            return None
        return rebuild_partial(self.spec, self.failure_diagnostic())

    def failure_diagnostic(self) -> Diagnostic | None:
        if self.exit is None or self.exit.ok:
            return None
        what = self.error.message if self.error else f"the worker {self.exit.describe()}"
        return Diagnostic("error", f"capture {self.exit.describe()} in stage '{self.last_stage}': {what}",
                          self.spec.model_path, stage=self.last_stage)


def rebuild_partial(spec: CaptureSpec, diagnostic: Diagnostic | None) -> Session:
    """Build (and save to spec.out_path) a session from a dead worker's trace log."""
    from compiler_core.capture.session_build import build_session, read_sources
    from compiler_core.session.codec import save
    from compiler_core.worker.capture_job import capture_meta

    session = build_session(spec.resolved_trace_path, capture_meta(spec, {}), read_sources([spec.model_path]),
                            [diagnostic] if diagnostic else [])
    save(session, spec.out_path)
    return session
