"""`ScriptSpec`: what to run, and the worker command line that runs it. Torch- and Qt-free.

A `ScriptSpec` is a `CaptureSpec` (so `WorkerClient`, the GUI's `WorkerProcess` and partial
session recovery take it unchanged), whose `model_path` is the user's script and whose `argv`
starts `python -m compiler_core.run` instead of the model-file worker::

    python -m compiler_core.run SCRIPT.py --out SESSION.json --events-file PATH
        [--auth-stdin] [--device cpu|cuda] [--cwd DIR] [--max-steps N] [--nproc N] [--trace PATH]
        [--max-memory-mb N] -- [SCRIPT ARGS...]

Events are the worker protocol's (compiler_core/worker/protocol.py) plus `rank` events
(`data` {rank, pid, state: started|finished, exit_code}) from a `--nproc` run, and `timeline`
records whose `mode` is the compiled callable's name (`Net`, `train_step`, `r1:Net` per rank).
Event lines are signed as the model-file worker's are (`--auth-stdin`, event_auth.py), and the
parent decides success the same way (exit 0, an authentic `done`, no forged lines, a new session
at `out_path` that decodes); a `--nproc` run's ranks sign with keys of their own (rank_launcher.py).
Stop: SIGUSR1 to the worker's pid (the `hello` event's) ends the run cleanly at the next call
of a compiled callable; a second SIGUSR1 interrupts wherever the script is.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from compiler_core.worker.protocol import CaptureSpec

if TYPE_CHECKING:
    from compiler_core.session.model import Diagnostic, Session


@dataclass(frozen=True)
class ScriptSpec(CaptureSpec):
    """`model_path` is the script; `script_args` its own arguments (what follows `--`)."""

    script_args: tuple[str, ...] = ()
    cwd: str = ""  # "" = the caller's working directory when the spec was made
    max_steps: int | None = None  # stop after this many calls of any one compiled callable
    nproc: int = 1  # > 1: run under torch.distributed.run with this many local ranks

    @property
    def resolved_trace_path(self) -> str:
        """One log file, or for `nproc > 1` a directory of per-rank logs (as TORCH_TRACE makes)."""
        if self.trace_path:
            return self.trace_path
        suffix = ".trace" if self.nproc > 1 else ".trace.log"
        return str(Path(self.out_path).with_suffix(suffix))

    @property
    def working_dir(self) -> str:
        return self.cwd

    def argv(self, events_fd: int | None = None, events_file: str | None = None) -> list[str]:
        argv = [sys.executable, "-m", "compiler_core.run", self.model_path, "--out", self.out_path,
                "--device", self.device, "--trace", self.resolved_trace_path, "--nproc", str(self.nproc)]
        if self.cwd:
            argv += ["--cwd", self.cwd]
        if events_fd is not None:
            argv += ["--events-fd", str(events_fd)]
        if events_file is not None:
            argv += ["--events-file", events_file]
        if self.signed_events:
            argv.append("--auth-stdin")
        if self.max_steps is not None:
            argv += ["--max-steps", str(self.max_steps)]
        if self.max_memory_mb is not None:
            argv += ["--max-memory-mb", str(self.max_memory_mb)]
        return [*argv, "--", *self.script_args]

    def session_from_trace(self, notes: list[Diagnostic]) -> Session | None:
        """A script run's session rebuilt from its trace (one log, or a folder of rank logs)."""
        from compiler_core.run.script_session import build_script_session, script_meta

        return build_script_session(self, script_meta(self), None, notes)
