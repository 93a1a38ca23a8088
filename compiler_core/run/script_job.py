"""One process's script run, start to finish: record, run the script as `__main__`, save.

The script runs as `python SCRIPT ARGS` would run it: `runpy.run_path(..., run_name="__main__")`
with `sys.argv = [SCRIPT, *ARGS]`, its directory first on `sys.path`, and the chosen working
directory. Around it, in this order (innermost last):

- `TraceLogSink`: torch's structured trace into our log, flushed per record, so a crash still
  leaves a session's worth of compiles; `StageTracker` turns records into live stage events;
- `stage_recorders()`: decompositions, autotuning, CUDA graphs (as a model-file capture);
- `CompileHook`: every `torch.compile` records through `RecordingBackend` and comes back timed
  by `StepTimer`.

How the script ends decides the exit code: returning, `sys.exit(0)`/`sys.exit(None)`, `--max-steps`
and Stop (`StopRun`) are success; an exception or `sys.exit(non-zero)` is the user's failure
(`EXIT_USER_ERROR`), reported with the user's frames. Either way the session is built from the
log and saved, with the step timeline. In a rank of a `--nproc` run (`rank` set) the job only
records: the launcher merges every rank's log into one session.
"""

from __future__ import annotations

import dataclasses
import os
import runpy
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from compiler_core.capture.user_errors import FailureReport, describe_failure
from compiler_core.run.script_session import save_script_session
from compiler_core.run.spec import ScriptSpec
from compiler_core.session.model import Diagnostic
from compiler_core.worker import protocol
from compiler_core.worker.protocol import Event

Emit = Callable[[Event], None]
RANK_LOG = "dedicated_log_torch_trace_rank_{rank}.log"  # the name TORCH_TRACE gives rank logs


class ScriptJob:
    def __init__(self, spec: ScriptSpec, emit: Emit, rank: int | None = None) -> None:
        self.spec = spec
        self._emit = emit
        self.rank = rank
        self._t0 = time.monotonic()
        self._pid = os.getpid()
        self.failure: FailureReport | None = None
        self.stopped = ""
        self.timer: Any = None
        self.timeline: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        self.version_warnings: list[str] = []
        self.settings: dict[str, str] = {}

    def clock(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def emit(self, event: Event) -> None:
        if self.rank is not None:
            event = dataclasses.replace(event, data={**event.data, "rank": self.rank})
        self._emit(event)

    @property
    def trace_path(self) -> Path:
        base = Path(self.spec.resolved_trace_path)
        return base / RANK_LOG.format(rank=self.rank) if self.rank is not None else base

    def run(self) -> int:
        from compiler_core.capture.hooks import check_torch_version
        from compiler_core.capture.hooks.compile_hook import CompileHook
        from compiler_core.capture.hooks.hint_config import hinted_config
        from compiler_core.capture.hooks.inspect_config import inspect_config
        from compiler_core.capture.hooks.stage_hooks import stage_recorders
        from compiler_core.capture.hooks.trace_sink import TraceLogSink
        from compiler_core.run.step_timer import StepTimer
        from compiler_core.worker.stage_tracker import StageTracker

        # A torch outside a private hook's tested range: a note in the session, run anyway.
        self.version_warnings = check_torch_version()
        prefix = f"r{self.rank}:" if self.rank is not None else ""
        self.timer = timer = StepTimer(
            self.spec.device, lambda rec: self.emit(Event("timeline", t=self.clock(), data=rec)),
            self.spec.max_steps, prefix)
        tracker = StageTracker(self.emit, self.clock)
        code = protocol.EXIT_OK
        started = time.monotonic()
        self.emit(Event("stage", t=self.clock(), stage="run", state="started"))
        with TraceLogSink(self.trace_path, observer=tracker), stage_recorders(), \
                inspect_config(provenance_only=True), hinted_config() as settings, CompileHook(timer.wrap), \
                _stop_on_signal(timer):
            self.settings = settings  # a re-run's hint (diff/hint_plan.py), else empty
            try:
                run_script(self.spec)
            except BaseException as exc:  # the user's code may raise anything, SystemExit included
                if os.getpid() != self._pid:
                    _leave_quietly(exc)
                code = self._ended(exc, tracker)
            else:
                if os.getpid() != self._pid:
                    _leave_quietly(None)
            tracker.finish("finished")
            try:
                self.timeline = timer.finish()
            except Exception as exc:
                self.emit(Event("warning", t=self.clock(), message=f"step times lost: {exc}"))
        state = "finished" if code == protocol.EXIT_OK else "failed"
        clocks = self.timer.clock_devices if self.timer is not None else {}
        self.emit(Event("stage", t=self.clock(), stage="run", state=state,
                        elapsed_s=round(time.monotonic() - started, 4),
                        message=self.stopped, data={"clocks": dict(clocks)} if clocks else {}))
        if self.rank is not None:
            return code
        return self._build_and_save(code)

    def _ended(self, exc: BaseException, tracker: Any) -> int:
        """Exit code for a script that raised: Stop, max steps and sys.exit(0) are success."""
        from compiler_core.run.step_timer import StopRun

        if isinstance(exc, StopRun):
            self.stopped = str(exc)
            return protocol.EXIT_OK
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return protocol.EXIT_OK
        tracker.finish("failed")
        return self._fail(exc)

    def _fail(self, exc: BaseException) -> int:
        report = describe_failure(exc)
        if isinstance(exc, SystemExit):
            report = FailureReport("SystemExit", f"SystemExit: the script called sys.exit({exc.code!r})",
                                   report.user_traceback, report.full_traceback)
        self.failure = report
        self.emit(Event.failure(report, "run", self.clock()))
        return protocol.EXIT_USER_ERROR

    def _build_and_save(self, code: int) -> int:
        from compiler_core.capture.hooks.interned_strings import intern_table
        from compiler_core.capture.session_build import read_sources, user_files

        sources = read_sources([self.spec.model_path, *user_files(intern_table())])
        clocks = self.timer.clock_devices if self.timer is not None else {}
        return save_script_session(self.spec, self._emit, self.clock, code, sources,
                                   self.diagnostics(), self.timeline, self.stopped, clocks)

    def diagnostics(self) -> list[Diagnostic]:
        found = [Diagnostic("info", text, self.spec.model_path, stage="run")  # a notice, not damage
                 for text in self.version_warnings]
        found += [Diagnostic("info", f"set for this run: {name} = {value}", self.spec.model_path, stage="run")
                  for name, value in self.settings.items()]
        if self.failure is not None:
            found.append(Diagnostic("error", self.failure.message + "\n" + self.failure.user_traceback,
                                    self.spec.model_path, stage="run"))
        if self.stopped:
            found.append(Diagnostic("info", f"run ended early: {self.stopped}", self.spec.model_path,
                                    stage="run"))
        return found


def _leave_quietly(exc: BaseException | None) -> None:
    """A child the script forked ran off the end of the script (or sys.exit()ed, or raised):
    it must not report, build or save anything in the parent's name (it shares our events
    channel and file names), nor run our context managers' exits. End it as it asked to end."""
    from compiler_core.run.step_timer import StopRun

    code = 0
    if isinstance(exc, SystemExit):
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    elif exc is not None and not isinstance(exc, StopRun):
        import traceback

        traceback.print_exception(exc)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_script(spec: ScriptSpec) -> None:
    """Run the script as `__main__`, as the interpreter would (argv, sys.path[0], cwd)."""
    path = os.path.abspath(spec.model_path)
    sys.argv = [path, *spec.script_args]
    # `python -m compiler_core.run` put the worker's start directory first; `python SCRIPT` puts
    # the script's own directory there instead (PYTHONPATH entries stay, as they would)
    sys.path[0] = os.path.dirname(path)
    if spec.cwd:
        os.chdir(spec.cwd)
    runpy.run_path(path, run_name="__main__")


class _stop_on_signal:  # noqa: N801 (used as a `with` statement, like contextlib's helpers)
    """SIGUSR1 asks the timer to stop at the next compiled call; a second one interrupts now."""

    def __init__(self, timer: Any) -> None:
        self._timer = timer
        self._previous: Any = None

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        from compiler_core.run.step_timer import StopRun

        if self._timer.stop_reason:
            raise StopRun(self._timer.stop_reason + " (interrupted)")
        self._timer.request_stop("stopped by the user")

    def __enter__(self) -> None:
        self._previous = signal.signal(signal.SIGUSR1, self._handle)

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGUSR1, self._previous)
