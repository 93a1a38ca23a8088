"""One capture controller for the CLI and the GUI: what a worker run said, how it ended, and
the one way a crashed run's session is recovered. Qt-free and torch-free.

The CLI drives the worker with `subprocess` (client.py) and the GUI with QProcess
(explorer/worker_process.py: the event loop must never block); those transports differ, the
bookkeeping does not. `CaptureRun` is that bookkeeping: it verifies each event line with the
run's key, tracks the stage the worker is in, keeps the first error and the `done`, checks that
the session file at the path the parent chose was written by this run, and gives one
`CaptureOutcome`. `recover_session` turns an outcome into a session the same way for both: the
saved session if it loads, else one rebuilt from the trace log with the run's meta (mode,
device, torch) and the failure as an error diagnostic, saved where the session would have gone.
Before this module the GUI re-imported the raw trace after a crash and lost mode, device and
the error, while the CLI kept them.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

from compiler_core.session.model import Diagnostic, Session
from compiler_core.worker import event_auth
from compiler_core.worker.protocol import CaptureSpec, Event

FRESH_SLACK_S = 2.0  # a session file older than the run's start by more than this is not its


@dataclass(frozen=True)
class CaptureOutcome:
    """How one worker run ended, from what the parent can check (never from an event alone)."""

    exit_code: int | None  # None when killed by a signal
    crashed: bool  # died by a signal (segfault, kill)
    cancelled: bool
    last_stage: str  # the innermost stage still open when it ended ("run", "inductor"...)
    error: str  # the user's exception and message, or why the worker died
    traceback: str
    session_path: str  # the session at the path the parent chose, written by this run; "" if none
    partial: bool
    trace_path: str
    problems: tuple[str, ...] = ()  # why an exit 0 is still not a success (forged events, no done)
    swept: int = 0  # processes of the run killed after it ended
    memory_exceeded: int = 0  # bytes the worker and its children held together when killed for it
    signal: int | None = None  # the signal it died by, when known
    timed_out: bool = False
    stage_label: str = ""  # the last stage started, with its compile id ("inductor 0/0"), for people

    @property
    def ok(self) -> bool:
        return (self.exit_code == 0 and not self.crashed and not self.cancelled and not self.timed_out
                and bool(self.session_path) and not self.problems)  # fmt: skip

    def fate(self) -> str:
        """How the process ended, in the words of the CLI's report ("killed by signal SIGSEGV")."""
        if self.timed_out:
            return "timed out"
        if self.cancelled:
            return "cancelled"
        if self.signal is not None:
            return f"killed by signal {_signal_name(self.signal)}"
        if self.crashed or self.exit_code is None:
            return "killed by a signal (crash)"
        return f"exit code {self.exit_code}"

    def describe(self) -> str:
        text = f"Worker {self.fate()}; last stage: {self.stage_label or self.last_stage or '—'}."
        if self.memory_exceeded:
            text += (f"\nThe model and its child processes used {self.memory_exceeded >> 20} MiB together, "
                     "over the memory cap; killed.")  # fmt: skip
        for problem in self.problems:
            text += f"\n{problem}"
        if self.error:
            text += f"\n{self.error}"
        return text

    def failure_diagnostic(self, spec: CaptureSpec) -> Diagnostic | None:
        """The failure as the session's error diagnostic (None for a clean exit)."""
        if self.exit_code == 0 and not (self.crashed or self.cancelled or self.timed_out):
            return None
        what = self.error or f"the worker {self.fate()}"
        return Diagnostic("error", f"capture {self.fate()} in stage '{self.last_stage}': {what}",
                          spec.model_path, stage=self.last_stage)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class CaptureRun:
    """The bookkeeping of one worker run, shared by the CLI's and the GUI's transports.

    Feed it each raw line of the events channel (`accept`), then build the outcome once the
    process has ended (`outcome`). `key` goes to the worker's stdin for a signed spec.
    """

    def __init__(self, spec: CaptureSpec) -> None:
        self.spec = spec
        self.signed = spec.signed_events  # model files and script runs (compiler_core/run) alike
        self.key = event_auth.new_key()
        self._verifier = event_auth.Verifier(self.key)
        self.started_unix = 0.0
        self.last_stage = ""
        self.stage_label = ""
        self.error: Event | None = None
        self.done: Event | None = None
        self.partial = False
        self.event_session_path = ""  # an unsigned spec's word for where it saved (none in the tree)
        self.received: list[Event] = []
        self._open_stages: list[tuple[str, str]] = []  # (stage, label) of stages still open

    @property
    def forged_lines(self) -> int:
        return self._verifier.forged

    def verified(self, line: str) -> Event | None:
        """The event a raw channel line carries, if the worker wrote it (else None, counted);
        not yet noted (the CLI reads on a thread and notes on the caller's)."""
        if not line.strip():
            return None
        body = self._verifier.check(line) if self.signed else line
        if body is None:
            return None  # forged, replayed or torn: counted by the verifier
        try:
            return Event.from_json(body)
        except ValueError:
            return None  # cannot happen for a line we signed; never trusted anyway

    def accept(self, line: str) -> Event | None:
        """`verified`, then noted."""
        event = self.verified(line)
        if event is not None:
            self.note(event)
        return event

    def note(self, event: Event) -> None:
        self.received.append(event)
        if event.kind == "stage":
            self._track_stage(event)
        elif event.kind == "error" and self.error is None:
            self.error = event
        elif event.kind == "done":
            self.done = event
        elif event.kind == "session":
            self.partial = bool(event.data.get("partial"))
            if not self.signed:
                self.event_session_path = event.path

    def _track_stage(self, event: Event) -> None:
        """`last_stage` is the innermost stage still open (a crash happened there), and
        `stage_label` that stage with its compile id: a compile nested in `run` that finished
        must not be named once the run goes on (an exit in the next step said "aot 0/0")."""
        label = f"{event.stage} {event.compile_id}".strip()
        if event.state == "started":
            self._open_stages.append((event.stage, label))
        else:
            for i in range(len(self._open_stages) - 1, -1, -1):
                if self._open_stages[i][0] == event.stage:
                    del self._open_stages[i]
                    break
        innermost = self._open_stages[-1] if self._open_stages else (event.stage, label)
        self.last_stage, self.stage_label = innermost

    def fresh_session(self) -> str:
        """The session at the path the parent chose, if this run wrote it (a path an event
        names is never believed); "" otherwise. Whether it decodes is `session_problem`'s."""
        try:
            fresh = os.stat(self.spec.out_path).st_mtime >= self.started_unix - FRESH_SLACK_S
        except OSError:
            return ""
        return str(Path(self.spec.out_path).resolve()) if fresh else ""

    def session_problem(self) -> str:
        """Why the session file is not this run's loadable session ("" when it is). Decodes the
        file: the CLI calls this; the GUI leaves decoding to its loader thread."""
        from compiler_core.session.codec import SessionFormatError, load

        path = Path(self.spec.out_path)
        try:
            if path.stat().st_mtime < self.started_unix - FRESH_SLACK_S:
                return f"no new session was written to {path} (the file there is older than this run)"
            load(path)
        except FileNotFoundError:
            return f"no session was written to {path}"
        except (OSError, SessionFormatError, RecursionError) as exc:
            return f"the session at {path} does not load: {str(exc)[:300]}"
        return ""

    def problems(self, exit_code: int | None, decode: bool) -> list[str]:
        """Why a run that exited 0 is still not a success (empty when it is one, or when it
        failed anyway: its own message says why)."""
        if exit_code != 0 or not self.signed:
            return []
        out = event_auth.channel_problems(self._verifier.forged, self.done is not None)
        if self.done is not None and self.done.exit_code != exit_code:
            out.append(f"the worker reported exit code {self.done.exit_code} but exited with {exit_code}")
        if decode and not self.spec.budgets:  # a sweep writes no session: its events are its result
            why = self.session_problem()
            if why:
                out.append(why)
        return out

    def outcome(self, exit_code: int | None, *, signal_number: int | None = None, cancelled: bool = False,
                timed_out: bool = False, swept: int = 0, memory_exceeded: int = 0,
                decode: bool = False, error: str = "") -> CaptureOutcome:  # fmt: skip
        """How the run ended. `exit_code` None means it died by `signal_number`; `error` stands
        in when the worker reported none (e.g. it could not be started)."""
        session = self.fresh_session() if self.signed else self.event_session_path
        problems = self.problems(exit_code, decode)
        return CaptureOutcome(
            exit_code=exit_code, crashed=exit_code is None, cancelled=cancelled,
            last_stage=self.last_stage, error=self.error.message if self.error else error,
            traceback=self.error.traceback if self.error else "", session_path=session,
            partial=self.partial, trace_path=self.spec.resolved_trace_path, problems=tuple(problems),
            swept=swept, memory_exceeded=memory_exceeded, signal=signal_number, timed_out=timed_out,
            stage_label=self.stage_label,
        )


def recover_session(spec: CaptureSpec, outcome: CaptureOutcome) -> Session | None:
    """The session a run left, CLI and GUI alike: the saved one if it loads, else one rebuilt
    from the trace log (a file, or a directory of rank logs) with the run's meta and the failure
    as a diagnostic, saved to `spec.out_path`; None when nothing was traced. Blocking (the GUI
    calls it on a thread); never imports torch."""
    from compiler_core.session.codec import SessionFormatError, load, save

    if outcome.session_path:
        try:
            return load(outcome.session_path)
        except (OSError, SessionFormatError, RecursionError):
            pass  # damaged on the way: the trace log still tells what ran
    trace = Path(spec.resolved_trace_path)
    if not trace.exists() or (trace.is_file() and trace.stat().st_size == 0):
        return None
    diagnostic = outcome.failure_diagnostic(spec)
    session = spec.session_from_trace([diagnostic] if diagnostic else [])
    if session is None:
        return None
    try:
        save(session, spec.out_path)
    except OSError:  # the run made the output path unwritable (a folder there): nothing to save to
        return None
    return session
