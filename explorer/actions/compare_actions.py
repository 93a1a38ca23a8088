"""File ▸ Compare…: two sessions or logs side by side, and "apply a hint and re-run".

Both files load off the GUI thread (a 32-layer log takes seconds to import), the diff runs off it
too (`CompareOpener`), and the comparison opens in its own window, which this controller keeps
alive. "Compare with…" compares the session on screen with another file.

A comparison's "apply and re-run" asks to capture the same model file again with a mechanical
hint (a dynamo config flag, `mark_dynamic`, a mode, a logging function Dynamo may reorder or
skip, a training capture's activation memory budget): that is a worker run like any capture
(`compiler_core.diff.hint_rerun`, which starts the worker subprocess; nothing of torch loads
here), as a job of the GUI's job service (explorer/jobs.py), and its before/after comparison
opens when it is back. It needs the model file the compared session was captured from; a trace
log cannot be re-run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu

from compiler_core.diff.hint_plan import Hint
from compiler_core.session import Session
from explorer.actions.loading import load_any
from explorer.app_window import AppWindow
from explorer.compare.compare_opener import CompareOpener
from explorer.compare.compare_window import CompareWindow
from explorer.jobs import Lane
from explorer.plain_text import clip

FILES = "Sessions and logs (*.json *.log *.log.gz *.txt);;All files (*)"


class CompareActions(QObject):
    """Signals: `loaded(object, object)` and `rerunDone(object)`, internal (a job's result, on
    the GUI thread); `failed(str)` when a file or a re-run could not be used."""

    loaded = Signal(object, object)
    rerunDone = Signal(object)  # noqa: N815 (Qt signal naming)
    failed = Signal(str)

    def __init__(self, window: AppWindow, menu: QMenu | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.opener = CompareOpener(self)
        self._loads = Lane(self, "compare-load", serial=False)  # the latest comparison asked for
        self.opener.opened.connect(self._keep)
        self.windows: list[CompareWindow] = []
        self.loaded.connect(self.opener.open)
        self.rerunDone.connect(self._rerun_done)
        # a method, not a lambda over the window: a connection's lambda is held by Qt, out of the
        # collector's sight, and kept the closed window alive (tests/explorer/test_ref_cycles.py)
        self.failed.connect(self._say)
        if menu is not None:  # above Quit, with the other ways to open something
            quit_action = menu.actions()[-1] if menu.actions() else None
            compare = QAction("Co&mpare two files…", menu)
            compare.triggered.connect(self.compare_dialog)
            compare_with = QAction("Compare the open session &with…", menu)
            compare_with.triggered.connect(self.compare_with_dialog)
            if quit_action is None:
                menu.addActions([compare, compare_with])
            else:
                menu.insertActions(quit_action, [compare, compare_with])
                menu.insertSeparator(quit_action)

    # ----- opening -----
    def compare_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Compare: before, then after", "", FILES)
        if len(paths) == 2:
            self.compare_paths(paths[0], paths[1])
        elif paths:
            self.failed.emit("Compare needs two files: the run before and the run after.")

    def compare_with_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Compare the open session with…", "", FILES)
        if path:
            self.compare_paths(None, path)

    def compare_paths(self, before: str | None, after: str) -> None:
        """Load `before` (None: the session on screen) and `after` off the GUI thread, then diff."""
        current = self.window.state.session

        def work() -> tuple[Session, Session]:
            return current if before is None else load_any(before), load_any(after)

        def failed(exc: BaseException) -> None:  # a file that does not load: say which, keep the window
            self.failed.emit(f"Could not compare: {type(exc).__name__}: {exc}")

        self._loads.submit(work, lambda pair: self.loaded.emit(*pair), failed)

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(clip(text, 300, 1), 15_000)

    def _keep(self, window: CompareWindow) -> None:
        self.windows = [w for w in self.windows if w.isVisible()]
        self.windows.append(window)
        window.applyRequested.connect(lambda hint, w=window: self.rerun(w, hint))

    # ----- apply a hint and re-run -----
    def rerun(self, window: CompareWindow, hint: Hint) -> None:
        """Capture the compared model file again with `hint` and open before vs after."""
        after = window.sessions[1]
        session = after if after is not None else self.window.state.session
        model = session.meta.origin_path
        if session.meta.origin not in ("capture", "script") or not model or not Path(model).is_file():
            self.failed.emit("Re-running needs the model file this session was captured from; "
                             "a trace log cannot be re-run. Capture the model file, then compare.")
            return
        self.window.statusBar().showMessage(f"Re-running {Path(model).name} with {hint.in_words()}…")
        out = tempfile.mkdtemp(prefix="cs-rerun-")

        def work() -> Any:
            from compiler_core.diff.hint_rerun import rerun_with_hint, spec_of

            # captured again as it was: a script with its arguments, a model file with its mode
            return rerun_with_hint(model, hint, out, before=session, base=spec_of(session))

        def failed(exc: BaseException) -> None:  # the capture failed: its message, not a traceback
            self.failed.emit(f"Re-run with {hint.in_words()} failed: {type(exc).__name__}: {exc}")

        # every re-run's result opens (two compare windows may each re-run): a lane of its own,
        # waiting on its capture process in the job pool
        lane = Lane(self, "compare-rerun", serial=False, waits=True)

        def done(rerun: Any) -> None:
            lane.deleteLater()
            self.rerunDone.emit(rerun)

        def gone(exc: BaseException) -> None:
            lane.deleteLater()
            failed(exc)

        lane.submit(work, done, gone)

    def _rerun_done(self, rerun: Any) -> None:
        window = CompareWindow(rerun.diff, rerun.before, rerun.after)
        window.show()
        self._keep(window)
        self.window.statusBar().showMessage("Re-run done: before and after opened side by side.", 10_000)

    def shutdown(self) -> None:
        self.opener.shutdown()
        for w in self.windows:
            w.close()
