"""File ▸ Open model/trace/session, Save session, Recent, drag and drop, and running captures.

Model files never run without a click: opening one (from the dialog, Recent, a drop or the
command line) shows the options dialog, whose Run button starts the worker. Every successful
capture is autosaved (the worker writes it into CompileScope's cache dir).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMessageBox, QPushButton

from compiler_core.capture_support import capture_unavailable
from compiler_core.safe_paths import safe_name
from compiler_core.session import LinkIndex, Session, save
from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.protocol import CaptureSpec, default_cache_dir
from explorer.actions.capture_dialog import CaptureOptionsDialog, CaptureProgressDialog
from explorer.actions.loading import MODEL, BackgroundLoader, kind_of
from explorer.actions.run_script import ScriptRuns
from explorer.actions.source_lookup import ask_include_sources
from explorer.actions.timeline_runs import TimelineRuns
from explorer.app_window import AppWindow
from explorer.plain_text import clip, show_problem
from explorer.worker_process import WorkerProcess

RECENT_KEY = "files/recent"
TRUSTED_KEY = "files/trusted"
RECENT_LIMIT = 10


def autosave_path(model_path: str) -> Path:
    return default_cache_dir() / "autosave" / f"{safe_name(Path(model_path).stem, 'model')}.json"


class FileActions(QObject):
    def __init__(self, window: AppWindow) -> None:
        super().__init__(window)
        self.window = window
        self.worker = WorkerProcess(self)
        self.worker.finished.connect(self._capture_finished)
        self.progress: CaptureProgressDialog | None = None
        self.loader = BackgroundLoader(self)
        self.loader.loaded.connect(self._loaded)
        self.loader.failed.connect(self._load_failed)
        # A capture's session (megabytes for a real model) decodes off the GUI thread too.
        self.capture_loader = BackgroundLoader(self)
        self.capture_loader.loaded.connect(self._capture_loaded)
        self.capture_loader.failed.connect(self._capture_load_failed)
        self.loading_capture = False
        self.last_spec: CaptureSpec | None = None
        self.last_outcome: CaptureOutcome | None = None
        self.model_path = ""  # the model file behind the shown session; "" for traces and sessions
        self._rerun_button: QPushButton | None = None
        self._rerun_path = ""
        self._build_menu()
        self.timeline = TimelineRuns(window, self)
        self.scripts = ScriptRuns(window, self)

    def _run_script_dialog(self) -> None:
        self.scripts.open_dialog()

    def _build_menu(self) -> None:
        menu = self.window.menuBar().addMenu("&File")
        self.menu = menu  # other controllers add their File entries (compare_actions.py)
        self._add(menu, "Open &model…", self.open_model_dialog, QKeySequence.StandardKey.Open)
        self._add(menu, "Run s&cript…", self._run_script_dialog)  # a method: see export_actions.py
        self._add(menu, "Open &trace log…", self.open_trace_dialog)
        self._add(menu, "Open trace &directory…", self.open_trace_dir_dialog)
        self._add(menu, "Open &session…", self.open_session_dialog)
        self.recent_menu = menu.addMenu("&Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        menu.addSeparator()
        self._add(menu, "Save session &as…", self.save_session_dialog, QKeySequence.StandardKey.SaveAs)
        menu.addSeparator()
        self._add(menu, "&Quit", self.window.close, QKeySequence.StandardKey.Quit)

    def _add(
        self, menu: QMenu, text: str, slot: Callable[[], object],
        shortcut: QKeySequence.StandardKey | None = None,
    ) -> QAction:
        action = menu.addAction(text)
        action.triggered.connect(slot)
        if shortcut is not None:
            action.setShortcut(shortcut)
        return action

    # ----- dialogs -----
    def open_model_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open model file", "", "Python (*.py)")
        if path:
            self.open_path(path)

    def open_trace_dialog(self) -> None:
        filters = "Logs (*.log *.log.gz *.log.xz *.txt);;All (*)"
        path, _ = QFileDialog.getOpenFileName(self.window, "Open TORCH_TRACE log", "", filters)
        if path:
            self.open_path(path)

    def open_trace_dir_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self.window, "Open TORCH_TRACE directory")
        if path:
            self.open_path(path)

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open session", "", "Sessions (*.json *.json.xz)")
        if path:
            self.open_path(path)

    def save_session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session as", "session.json", "*.json")
        include = ask_include_sources(self.window, self.window.state.session) if path else None
        if path and include is not None:
            self.save_session(path, include_sources=include)

    def save_session(self, path: str, include_sources: bool = False) -> None:
        """Atomic; files read from this machine for a log stay out unless `include_sources`."""
        save(self.window.state.session, path, include_sources=include_sources)
        self._remember(path)

    # ----- opening -----
    def open_path(self, path: str) -> None:
        """Open any supported file; a model file asks for options (and a click) before running."""
        if kind_of(path) == MODEL:
            self.ask_and_capture(path)
        else:
            self.window.statusBar().showMessage(f"Loading {path}…")
            self.loader.start(path)

    def _loaded(self, path: str, session: Session, links: LinkIndex) -> None:
        self.model_path = ""
        self.scripts.retire()  # what the status bar said of an earlier run or example is stale now
        if self._rerun_button is not None:
            self._rerun_button.setVisible(False)
        self.window.show_session(session, path, links)
        self.window.statusBar().clearMessage()
        self._remember(path)

    def _load_failed(self, path: str, message: str) -> None:
        self.window.statusBar().clearMessage()
        show_problem(self.window, "Could not open", f"{path}\n\n{message}")

    def ask_and_capture(self, path: str) -> bool:
        self._remember(path)  # in Recent even if cancelled; Recent leads back to this dialog
        if not self.can_capture(path):
            return False
        trusted = self._list_setting(TRUSTED_KEY)
        first = str(Path(path).resolve()) not in trusted
        dialog = CaptureOptionsDialog(path, first, self.window)
        if dialog.exec() != CaptureOptionsDialog.DialogCode.Accepted:
            return False
        if first and dialog.trust.isChecked():
            self.window.settings.setValue(TRUSTED_KEY, [*trusted, str(Path(path).resolve())])
        self.start_capture(dialog.spec(str(autosave_path(path))))
        return True

    def default_spec(self, model_path: str) -> CaptureSpec:
        """Default options, saving into the autosave slot of `model_path`."""
        return CaptureSpec(model_path, str(autosave_path(model_path)))

    def start_capture(self, spec: CaptureSpec, show_progress: bool = True) -> None:
        self.scripts.retire()
        self.last_spec = spec
        self.last_outcome = None
        self.model_path = spec.model_path
        self._remember(spec.model_path)
        self.timeline.run_started(spec)
        if show_progress:
            if self.progress is None:
                self.progress = CaptureProgressDialog(self.worker, self.window)
                self.progress.rerun_button.clicked.connect(self.rerun)
            self.progress.begin()
            self.progress.show()
        self.worker.start(spec)

    def rerun(self) -> None:
        if self.last_spec is not None and not self.worker.running():
            self.start_capture(self.last_spec)

    def can_capture(self, path: str) -> bool:
        """A viewer-only install (no torch) says how to enable capture instead of failing later."""
        reason = capture_unavailable()
        if reason is None:
            return True
        box = QMessageBox(QMessageBox.Icon.Information, "Capture needs PyTorch", f"{path}\n\n{reason}",
                          parent=self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.exec()
        return False

    def capture_blocking(self, model_path: str) -> bool:
        """Capture with default options and wait (for --screenshot, where nobody can click)."""
        reason = capture_unavailable()
        if reason is not None:
            print(reason, file=sys.stderr)
            return False
        self.start_capture(self.default_spec(model_path), show_progress=False)
        self.worker.wait()
        while self.last_outcome is None or self.worker.running() or self.loading_capture:
            QApplication.processEvents()
        return self.last_outcome.ok

    def _capture_finished(self, outcome: CaptureOutcome) -> None:
        """Keep whatever was recorded: the saved session, or after a failure the session the
        CLI would recover (its meta and the failure kept; capture_outcome.recover_session)."""
        self.last_outcome = outcome
        spec = self.last_spec
        if self.scripts.owns(spec) and self.scripts.finished(outcome):
            return  # a script run that saved nothing: its controller recovered it
        if spec is None:
            return
        if outcome.ok:
            self.loading_capture = True
            self.capture_loader.start(outcome.session_path)
            return
        if not outcome.session_path and not Path(outcome.trace_path).is_file():
            return  # nothing was traced
        self.loading_capture = True
        self.capture_loader.recover(spec, outcome)

    def _capture_loaded(self, path: str, session: Session, links: LinkIndex) -> None:
        self.loading_capture = False
        self.window.show_session(session, self.last_spec.model_path if self.last_spec else path, links)

    def _capture_load_failed(self, path: str, message: str) -> None:
        # a partial trace may not import; the progress dialog already shows the fate
        self.loading_capture = False
        self.window.statusBar().showMessage(clip(f"Nothing usable recorded: {message}", 300, 1))

    def offer_rerun(self, model_path: str) -> None:
        """A pre-recorded session is shown; let the user re-run the capture with one click."""
        self._rerun_path = model_path
        self.model_path = model_path
        if self._rerun_button is None:
            self._rerun_button = QPushButton("Re-run capture")
            self._rerun_button.clicked.connect(lambda: self.ask_and_capture(self._rerun_path))
            self.window.statusBar().addPermanentWidget(self._rerun_button)
        self._rerun_button.setVisible(True)

    # ----- recent -----
    def _list_setting(self, key: str) -> list[str]:
        value = self.window.settings.value(key, [])
        if isinstance(value, str):  # QSettings returns a lone string for one-item lists
            return [value]
        return [str(v) for v in value] if isinstance(value, list) else []

    def recent(self) -> list[str]:
        return self._list_setting(RECENT_KEY)

    def _remember(self, path: str) -> None:
        path = str(Path(path).resolve())
        items = [path] + [p for p in self.recent() if p != path]
        self.window.settings.setValue(RECENT_KEY, items[:RECENT_LIMIT])

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))
        if not self.recent():
            self.recent_menu.addAction("(none)").setEnabled(False)
