"""The one way every worker subprocess is started: captures, script runs (one rank or N), the
memory-budget sweep; from the CLI (`Launch`, subprocess) and the GUI (explorer/worker_process.py,
where QProcess is only the transport). Qt-free and torch-free.

`LaunchSpec.build(spec, key)` turns a `CaptureSpec` (a `ScriptSpec`, a budget spec) into all the
start needs, once: the argv (events file, `--auth-stdin`), the environment (`worker_env`:
Inductor's caches; PYTHONPATH so `-m compiler_core.*` imports; the run token that marks every
descendant), the working directory, the run's key (written to stdin, which is then closed) and
the memory cap that the worker sets as rlimits and the parent watches the tree's PSS against.
Around the start both transports take the same steps: `before_start` (this process becomes a
child subreaper), `started(pid)` (the worker registered, never swept as an orphan), a new
session for the worker (`start_new_session` / QProcess's CreateNewSession), `MemoryWatch`
(the tree's PSS every 0.5 s) and `finish` (the worker's group killed, escaped descendants
swept, the channel removed). process_sweep.py and memory_limit.py say what each covers.

Event channel: a file, `events.jsonl` in a fresh 0700 directory, that the worker opens with
O_APPEND and the parent tails (`EventTail`). A file rather than a pipe because:

- QProcess cannot hand its child an extra descriptor; a path it can, so the GUI reads the very
  channel the CLI does (and a `--nproc N` run's ranks already share one file, rank_launcher.py);
- the writer never blocks on a reader that is late (a busy GUI thread), and a child the user's
  code forked with the descriptor cannot hold the reader waiting for an EOF: a run ends when its
  worker exits, and the tail is read to its end then.

The cost is a poll (50 ms) instead of a wakeup. Forging is no easier than with a pipe: the path
is in argv where a pipe's fd is in /proc/self/fd, and only lines signed with the run's key count
(event_auth.py). The tail is bounded: a line over `MAX_LINE_BYTES` is cut (it then fails its
signature and counts as forged) and one poll reads at most `READ_CHUNK_BYTES`, so a model that
floods the file can neither fill the parent's memory nor stall the GUI's timer.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from compiler_core.worker import process_sweep
from compiler_core.worker.memory_limit import limit_bytes
from compiler_core.worker.protocol import CaptureSpec, worker_env

EVENTS_FILE = "events.jsonl"
MAX_LINE_BYTES = 4 * 2**20  # the worker's longest line is an error event, well under 1 MiB
READ_CHUNK_BYTES = 4 * 2**20  # per poll; the final read after exit takes at most FINAL_READ_BYTES
FINAL_READ_BYTES = 64 * 2**20
MEMORY_CHECK_S = 0.5
KILL_GRACE_S = 1.0
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # so `-m compiler_core.*` imports


@dataclass(frozen=True)
class LaunchSpec:
    """Everything one worker start needs, built once (`build`) and read by either transport."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str | None
    events_path: str
    token: str  # the run token in the worker's environment (process_sweep.RUN_TOKEN_ENV)
    memory_cap: int | None  # bytes the worker's tree may hold together; None: no cap
    key: bytes = field(default=b"", repr=False)  # the run's event key; b"": unsigned, stdin /dev/null

    @staticmethod
    def build(spec: CaptureSpec, key: bytes, cache_dir: str | Path | None = None,
              env: dict[str, str] | None = None) -> LaunchSpec:  # fmt: skip
        """`key` is the run's (`CaptureRun.key`); it is used only when `spec` signs its events."""
        events_dir = tempfile.mkdtemp(prefix="compilescope-events-")  # 0700
        events_path = os.path.join(events_dir, EVENTS_FILE)
        Path(events_path).touch(mode=0o600)
        environ = worker_env(env, cache_dir)
        environ["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, environ.get("PYTHONPATH", "")) if p)
        token = process_sweep.new_run_token()
        environ[process_sweep.RUN_TOKEN_ENV] = token
        return LaunchSpec(
            argv=tuple(spec.argv(events_file=events_path)), env=tuple(sorted(environ.items())),
            cwd=spec.working_dir or None, events_path=events_path, token=token,
            memory_cap=limit_bytes(spec.device, spec.max_memory_mb),
            key=key if spec.signed_events else b"",
        )

    @property
    def environ(self) -> dict[str, str]:
        return dict(self.env)

    def key_line(self) -> bytes:
        """What the worker reads from stdin first (worker_main._read_key)."""
        return self.key.hex().encode() + b"\n"

    def remove_channel(self) -> None:
        shutil.rmtree(os.path.dirname(self.events_path), ignore_errors=True)


def before_start() -> None:
    """Orphans of the worker's tree are re-parented to this process, not init (process_sweep)."""
    process_sweep.become_subreaper()


def started(pid: int) -> None:
    """The worker this process waits for itself: never swept as an adopted orphan."""
    process_sweep.register_child(pid)


def kill_group(pid: int, sig: int) -> None:
    """Signal the worker's process group (pgid == pid: it was started in a session of its own)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def finish(spec: LaunchSpec, pid: int) -> list[int]:
    """After the worker exited: kill what its group left, sweep what left the group (`setsid`,
    double forks, a cleared environment), remove the channel. Returns the pids swept."""
    if pid:
        process_sweep.unregister_child(pid)
        kill_group(pid, signal.SIGKILL)
    swept = process_sweep.sweep(spec.token)
    spec.remove_channel()
    return swept


class MemoryWatch:
    """The cap on the worker's whole process tree: rlimits bound each process, not their sum
    (memory_limit.py), so the parent sums the tree's PSS every `MEMORY_CHECK_S`."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.exceeded = 0  # bytes the tree held when it was found over the cap
        self._next = 0.0

    def over(self, pid: int) -> bool:
        """True once, at the check that finds the tree over the cap (the caller kills the run)."""
        now = time.monotonic()
        if self.cap is None or not pid or self.exceeded or now < self._next:
            return False
        self._next = now + MEMORY_CHECK_S
        used = process_sweep.tree_pss_bytes(pid)
        if used > self.cap:
            self.exceeded = used
            return True
        return False


class EventTail:
    """Complete lines appended to the events file since the last read, with bounded memory."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""
        self._cutting = False  # inside a line over MAX_LINE_BYTES: its rest is dropped

    def read(self, limit: int = READ_CHUNK_BYTES) -> list[str]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read(limit)
        except OSError:
            return []
        self._offset += len(chunk)
        return self._lines(chunk)

    def read_rest(self) -> list[str]:
        """Everything left once the worker has exited (at most FINAL_READ_BYTES more; past that
        the flood is one line that fails its signature), then the last unterminated line."""
        out: list[str] = []
        budget = FINAL_READ_BYTES
        while budget > 0:
            before = self._offset
            out += self.read(min(READ_CHUNK_BYTES, budget))
            if self._offset == before:
                break
            budget -= self._offset - before
        else:
            out.append("unread: the events file grew past what a worker writes")
        if self._partial.strip():
            out.append(self._partial.decode("utf-8", "replace"))
        self._partial = b""
        return out

    def _lines(self, chunk: bytes) -> list[str]:
        out: list[str] = []
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            if self._cutting:
                self._cutting = False  # the cut line ends here; it was passed on cut already
                continue
            line = self._partial + piece
            self._partial = b""
            if line.strip():
                out.append(line[:MAX_LINE_BYTES].decode("utf-8", "replace"))
        if self._cutting:
            return out
        self._partial += rest
        if len(self._partial) > MAX_LINE_BYTES:
            out.append(self._partial[:MAX_LINE_BYTES].decode("utf-8", "replace"))  # fails its MAC
            self._partial = b""
            self._cutting = True
        return out


class Launch:
    """A worker started with `subprocess` (the CLI's transport): stdout and stderr are pipes the
    caller drains, stdin carries the key, the worker leads a session of its own."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec
        self.proc: subprocess.Popen[bytes] | None = None
        self.memory = MemoryWatch(spec.memory_cap)
        self.events = EventTail(spec.events_path)
        self.started_unix = 0.0

    def start(self) -> subprocess.Popen[bytes]:
        before_start()
        self.started_unix = time.time()
        signed = bool(self.spec.key)
        self.proc = subprocess.Popen(
            list(self.spec.argv), cwd=self.spec.cwd, env=self.spec.environ,
            stdin=subprocess.PIPE if signed else subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )
        started(self.proc.pid)
        if signed:
            assert self.proc.stdin is not None
            with contextlib.suppress(OSError):  # a worker that died at once: reported by its exit
                self.proc.stdin.write(self.spec.key_line())
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        return self.proc

    def kill(self) -> None:
        """SIGTERM the worker's process group, SIGKILL whatever is left after KILL_GRACE_S."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            kill_group(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(KILL_GRACE_S)
        kill_group(self.proc.pid, signal.SIGKILL)

    def finish(self) -> list[int]:
        """Wait for the worker (it has exited or been killed), then `finish`: the pids swept."""
        assert self.proc is not None
        self.proc.wait()
        return finish(self.spec, self.proc.pid)
