"""Recognise and load the three kinds of file the app opens: model, trace log, saved session.

Sessions and traces load without torch (the trace importer is torch-free); model files are never
executed here: they go to the capture worker, in another process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from compiler_core.session import LinkIndex, Session
from compiler_core.session.codec import SESSION_SUFFIXES, load
from compiler_core.trace.read_limits import open_regular
from compiler_core.worker.capture_outcome import CaptureOutcome, recover_session
from compiler_core.worker.protocol import CaptureSpec
from explorer import gc_policy
from explorer.jobs import Lane
from explorer.plain_text import clip

MODEL, TRACE, SESSION = "model", "trace", "session"


def kind_of(path: str | Path) -> str:
    """Guess by name, then by the first bytes: sessions are JSON objects, traces are log lines."""
    p = Path(path)
    if p.is_dir():
        return TRACE
    if p.suffix == ".py":
        return MODEL
    if p.name.endswith(SESSION_SUFFIXES):
        return SESSION
    try:  # never `open` a FIFO or device by name: it can block forever
        with open(open_regular(str(p)), "rb") as handle:
            head = handle.read(64).lstrip()
    except OSError:
        return TRACE  # the importer refuses it with a message naming what it is
    return SESSION if head.startswith(b"{") else TRACE


def load_any(path: str | Path) -> Session:
    """Load a session or import a trace log/directory (blocking; call from a thread in the GUI)."""
    if kind_of(path) == SESSION:
        os.close(open_regular(str(path)))  # a FIFO named *.json: refused, not read forever
        return load(path)
    from compiler_core.analysis import import_trace  # deferred: only trace users pay for the importer

    session: Session = import_trace(str(path))
    return session


def load_prepared(path: str | Path) -> tuple[Session, LinkIndex]:
    """`load_any`, then its link index built too, so the GUI thread's first lookup is instant
    (the window's model takes this index as the session's one; explorer/state/app_model.py)."""
    return prepare(load_any(path))


def prepare(session: Session) -> tuple[Session, LinkIndex]:
    """`session` with its link index built, and the line facts the Source panes read cached for it."""
    index = LinkIndex(session.links).prepare()
    from explorer.state.line_facts import line_facts

    for rank in sorted({c.rank for c in session.compiles}, key=lambda r: -1 if r is None else r)[:8]:
        line_facts(session, index, rank)  # cached for this index, for the Source / Per-line panes
    return session, index


class BackgroundLoader(QObject):
    """Loads through the job service (explorer/jobs.py) so a 100 MB trace never freezes the window.

    The latest request wins: a file opened while another still loads shows when it is done,
    and the earlier one's session is dropped. Loads do not wait for each other (a small file
    opened after a 100 MB one is not held behind it).

    Signals: `loaded(str path, Session, LinkIndex)` (the session and its prepared index),
    `failed(str path, str message)`.
    """

    loaded = Signal(str, object, object)
    failed = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lane = Lane(self, "session-loader", serial=False)

    def start(self, path: str) -> None:
        self._submit(path, lambda: load_prepared(path))

    def recover(self, spec: CaptureSpec, outcome: CaptureOutcome) -> None:
        """A finished capture's session, the CLI's way (compiler_core/worker/capture_outcome.py):
        the saved one, or after a crash one rebuilt from the trace with the run's meta and the
        failure. `path` in the signals is the session's (or the trace's, when none came)."""

        def work() -> tuple[Session, LinkIndex]:
            session = recover_session(spec, outcome)
            if session is None:
                raise ValueError("the worker traced nothing")
            return prepare(session)

        self._submit(outcome.session_path or spec.resolved_trace_path, work)

    def busy(self) -> bool:
        return self._lane.busy()

    def _submit(self, path: str, work: Callable[[], tuple[Session, LinkIndex]]) -> None:
        def failed(exc: BaseException) -> None:  # shown to the user verbatim; the app stays usable
            self.failed.emit(path, f"{type(exc).__name__}: {clip(exc)}")  # 300 MB messages exist

        def done(loaded: tuple[Session, LinkIndex]) -> None:
            gc_policy.after_load()
            self.loaded.emit(path, *loaded)

        gc_policy.before_load()
        self._lane.submit(work, done, failed)
