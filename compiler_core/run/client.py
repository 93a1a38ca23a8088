"""`ScriptClient`: the CLI's handle on a script run; a `WorkerClient` with three differences.

- The script's own stdout/stderr are echoed as they arrive (a user running their training
  script wants its prints), while the bounded tails the crash report needs are still kept.
- `stop()` asks for a clean end (SIGUSR1 to the worker, see spec.py); `cancel()` still kills.
- A partial session is rebuilt with the script's meta, from a rank directory too (the shared
  `capture_outcome.recover_session` tells a script spec from a model file's).

Started, signed and swept as a model file's worker is (WorkerClient through launch.py, for one
rank or N): the key goes to the worker's stdin, which it reads before the script runs, and
success is decided as for a model file (WorkerClient.succeeded).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import IO

from compiler_core.run.spec import ScriptSpec
from compiler_core.worker.client import WorkerClient, _TailBuffer

STOP_SIGNAL = signal.SIGUSR1


class _EchoTail(_TailBuffer):
    """A tail buffer that also copies each chunk to `echo` (the terminal)."""

    def __init__(self, stream: IO[bytes], echo: IO[bytes] | None) -> None:
        self._echo = echo
        super().__init__(stream)

    def _drain(self, stream: IO[bytes]) -> None:
        echo = self._echo
        if echo is None:
            super()._drain(stream)
            return
        with stream:
            for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
                if echo is not None:
                    try:
                        echo.write(chunk)
                        echo.flush()
                    except (OSError, ValueError):
                        echo = None  # our own terminal went away: keep the tail only
                self.total += len(chunk)
                self._chunks.append(chunk)
                self._size += len(chunk)
                while self._size > self._limit and len(self._chunks) > 1:
                    self._size -= len(self._chunks.popleft())


class ScriptClient(WorkerClient):
    spec: ScriptSpec

    def __init__(self, spec: ScriptSpec, timeout_s: float | None = None, echo: bool = True,
                 env: dict[str, str] | None = None) -> None:
        super().__init__(spec, timeout_s=timeout_s, env=env)
        self.echo = echo
        self.worker_pid: int | None = None

    def _drains(self, stdout: IO[bytes], stderr: IO[bytes]) -> tuple[_TailBuffer, _TailBuffer]:
        out = sys.stdout.buffer if self.echo else None
        err = sys.stderr.buffer if self.echo else None
        return _EchoTail(stdout, out), _EchoTail(stderr, err)

    def stop(self) -> None:
        """End the run cleanly at the script's next compiled call (everything is kept)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, STOP_SIGNAL)
