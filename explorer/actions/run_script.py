"""File ▸ Run script…: the user's own script in the worker, its compiles streaming into the panes.

The worker (`python -m compiler_core.run`, see compiler_core/run/spec.py) records into a trace
log that is flushed per record. Each compile stage that finishes or graph break that happens
schedules a re-import of that log in a thread (`build_script_session`, the importer every trace
goes through), so the panes show every compile within a moment of its end while the script keeps
running; at most one import runs at a time and at most one waits. Step times arrive as timeline
records and go straight to the model's live timeline (TimelineRuns forwards them), and each live
session carries the samples so far, so a refresh never rewinds the plot. The user's current
compile is kept across refreshes.

Stop (SIGUSR1 to the worker, whose pid comes in `hello`) ends the run at the script's next
compiled call and the worker saves the full session; Kill ends the process group at once and the
trace log still gives a partial session. The script's own prints go to an Output window, never
into the panes.
"""

from __future__ import annotations

import os
import shlex
import signal
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from compiler_core.run.spec import ScriptSpec
from compiler_core.session import Session
from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.protocol import Event, default_cache_dir
from explorer.actions.capture_host import CaptureHost
from explorer.app_window import AppWindow
from explorer.jobs import Lane
from explorer.plain_text import clip, plain_label, rich_label

NOTICE = ("<b>Running a script runs its code.</b> CompileScope runs it as <tt>python SCRIPT ARGS</tt> "
          "would, in a separate worker process, with your permissions. Only run scripts you trust.")
REFRESH_GAP_S = 0.5  # between two live re-imports of the trace log
TIMELINE_KEY = "TimelinePane"


def script_autosave_path(script: str) -> Path:
    return default_cache_dir() / "autosave" / f"{Path(script).stem}.script.json"


class RunScriptDialog(QDialog):
    """Script, arguments (shell words), working directory, device, max steps, processes."""

    def __init__(self, script: str = "", args: str = "", cwd: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run script")
        self.setMinimumWidth(620)
        layout = QVBoxLayout(self)
        notice = rich_label()
        notice.setText(NOTICE)  # our markup only
        notice.setWordWrap(True)
        notice.setStyleSheet("background: #fff4ce; padding: 8px; border: 1px solid #e0c060;")
        layout.addWidget(notice)
        form = QFormLayout()
        self.script = QLineEdit(script)
        self.script.setPlaceholderText("train.py")
        self.args = QLineEdit(args)
        self.args.setPlaceholderText("--epochs 3 --lr 0.01   (as on a shell command line)")
        self.cwd = QLineEdit(cwd or (str(Path(script).resolve().parent) if script else os.getcwd()))
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda"])
        self.device.setToolTip("How step times are taken: CUDA events on cuda, wall clock on cpu; auto "
                               "follows each compiled callable's tensors (CUDA events when they are on "
                               "a GPU) and says which it used. Where the script puts its tensors is up "
                               "to the script.")
        self.max_steps = QSpinBox()
        self.max_steps.setRange(0, 10_000_000)
        self.max_steps.setSpecialValueText("until the script ends")
        self.max_steps.setToolTip("End the run cleanly after this many calls of any one compiled callable")
        self.nproc = QSpinBox()
        self.nproc.setRange(1, 64)
        self.nproc.setToolTip("More than 1: run under torch.distributed.run (torchrun) with this many ranks")
        form.addRow("Script", _with_browse(self.script, self._browse_script))
        form.addRow("Arguments", self.args)
        form.addRow("Working directory", _with_browse(self.cwd, self._browse_cwd))
        form.addRow("Device", self.device)
        form.addRow("Max steps", self.max_steps)
        form.addRow("Processes", self.nproc)
        layout.addLayout(form)
        self.error = plain_label()
        self.error.setStyleSheet("color: #b00020;")
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _browse_script(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Script to run", self.cwd.text(), "Python (*.py)")
        if path:
            self.script.setText(path)
            self.cwd.setText(str(Path(path).parent))

    def _browse_cwd(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Working directory", self.cwd.text())
        if path:
            self.cwd.setText(path)

    def problem(self) -> str:
        """Why Run cannot start yet ("" when it can)."""
        if not Path(self.script.text()).is_file():
            return f"No such script: {self.script.text() or '(none)'}"
        if self.cwd.text() and not Path(self.cwd.text()).is_dir():
            return f"No such directory: {self.cwd.text()}"
        try:
            shlex.split(self.args.text())
        except ValueError as exc:
            return f"Arguments: {exc}"
        return ""

    def _accept(self) -> None:
        self.error.setText(self.problem())
        if not self.error.text():
            self.accept()

    def spec(self, out_path: str | None = None) -> ScriptSpec:
        script = str(Path(self.script.text()).resolve())
        return ScriptSpec(
            model_path=script, out_path=out_path or str(script_autosave_path(script)),
            device=self.device.currentText(), script_args=tuple(shlex.split(self.args.text())),
            cwd=str(Path(self.cwd.text() or Path(script).parent).resolve()),
            max_steps=self.max_steps.value() or None, nproc=self.nproc.value(),
        )


def _with_browse(edit: QLineEdit, slot: Any) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(edit, 1)
    button = QPushButton("Browse…")
    button.clicked.connect(slot)
    layout.addWidget(button)
    return row


class _LiveImporter(QObject):
    """Re-imports a running script's trace log through the job service, one import at a time.
    Signals: `built(object Session)`, None when the log did not import (a record cut mid-line
    by a dying worker: the next refresh will do)."""

    built = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lane = Lane(self, "live-import")

    @property
    def busy(self) -> bool:
        return self._lane.busy()

    def start(self, spec: ScriptSpec) -> None:
        self._lane.submit(lambda: _live_session(spec), self.built.emit, lambda _exc: self.built.emit(None))


def _live_session(spec: ScriptSpec) -> Session:
    from compiler_core.run.script_session import build_script_session, script_meta

    return build_script_session(spec, script_meta(spec), None, [])


class ScriptRuns(QObject):
    """Runs scripts through the app's worker and keeps the panes current while they run.

    Signals: `liveSession(object Session)`: a live refresh was shown (tests, status).
    """

    liveSession = Signal(object)  # noqa: N815 (Qt signal naming)

    def __init__(self, window: AppWindow, files: CaptureHost) -> None:
        super().__init__(window)
        self.window = window
        self.files = files
        self.spec: ScriptSpec | None = None
        self.worker_pid: int | None = None
        self.compiles = 0
        self.calls = 0
        self.ranks: set[int] = set()
        self._stage = ""
        self._due = False
        self._last_refresh = 0.0
        self._importer = _LiveImporter(self)
        self._importer.built.connect(self._show_live)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._refresh)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setMaximumBlockCount(5000)
        self.output.setWindowTitle("Script output")
        self.output.resize(800, 400)
        self.status = plain_label()
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End the run at the script's next compiled call; everything is kept")
        self.stop_button.clicked.connect(self.stop)
        self.kill_button = QPushButton("Kill")
        self.kill_button.setToolTip("End the script now (what was recorded is kept)")
        self.kill_button.clicked.connect(files.worker.cancel)
        self.output_button = QPushButton("Output…")
        self.output_button.clicked.connect(self._show_output)
        for w in (self.status, self.stop_button, self.kill_button, self.output_button):
            window.statusBar().addPermanentWidget(w)
            w.setVisible(False)
        files.worker.eventReceived.connect(self._on_event)
        files.worker.logLine.connect(self._on_log)

    # ----- starting -----
    def open_dialog(self, script: str = "", args: str = "", cwd: str = "") -> bool:
        if not self.files.can_capture(script or "Run script"):  # a viewer-only install: say how
            return False
        dialog = RunScriptDialog(script, args, cwd, self.window)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return False
        self.start(dialog.spec())
        return True

    def start(self, spec: ScriptSpec) -> None:
        if self.files.worker.running():
            self.window.statusBar().showMessage("A run is already in progress; stop it first.", 5_000)
            return
        self.spec = spec
        self.worker_pid = None
        self.compiles = self.calls = 0
        self.ranks = set()
        self._stage = "starting"
        self.output.clear()
        self.window.set_session(Session(), spec.model_path)  # a fresh run starts from empty panes
        self.window.state.timeline.clear()
        self._show_timeline()
        # not FileActions.start_capture: a script is not a model file (Recent, the timeline's Run)
        self.files.last_spec, self.files.last_outcome = spec, None
        self.files.model_path = ""
        self.files.worker.start(spec)
        for w in (self.status, self.stop_button, self.kill_button, self.output_button):
            w.setVisible(True)
        self.stop_button.setEnabled(True)
        self._update_status()

    def run_blocking(self, spec: ScriptSpec) -> CaptureOutcome | None:
        """Start and wait, the event loop turning (for --screenshot, where nobody can click)."""
        from PySide6.QtWidgets import QApplication

        self.start(spec)
        while self.files.worker.running() or self.files.last_outcome is None or self.files.loading_capture:
            QApplication.processEvents()
            time.sleep(0.01)
        return self.files.last_outcome

    def _show_timeline(self) -> None:
        """The step curves are what a live run is watched for: bring the timeline forward and
        give it a third of the window (at 1366×768 the default layout leaves it a sliver)."""
        self.window.show_stage("timeline")
        dock = self.window.docks.get(TIMELINE_KEY)
        if dock is None or self.window.workspace is not None:  # a workspace is laid out for it
            return
        dock.show()
        dock.raise_()
        height = max(dock.height(), self.window.height() // 3)
        self.window.resizeDocks([dock], [height], Qt.Orientation.Vertical)

    def retire(self) -> None:
        """Another session took the window: the ended run's line and buttons go with its session
        (the status bar kept "train.py: finished" over a log opened afterwards)."""
        if self.files.worker.running() and self.owns(self.files.last_spec):
            return
        for w in (self.status, self.stop_button, self.kill_button, self.output_button):
            w.setVisible(False)

    def owns(self, spec: object) -> bool:
        return isinstance(spec, ScriptSpec) and spec is self.spec

    def stop(self) -> None:
        """Ask the worker for a clean end (a second Stop interrupts the script where it is)."""
        if self.worker_pid is not None and self.files.worker.running():
            try:
                os.kill(self.worker_pid, signal.SIGUSR1)
            except ProcessLookupError:
                return
            self._stage = "stopping"
            self._update_status()

    # ----- while it runs -----
    def _on_event(self, event: Event) -> None:
        if not self.owns(self.files.last_spec):
            return
        if event.kind == "hello" and event.pid:
            self.worker_pid = event.pid
        elif event.kind == "rank":
            rank = event.data.get("rank")
            if isinstance(rank, int) and event.data.get("state") == "started":
                self.ranks.add(rank)
        elif event.kind == "stage" and event.compile_id:
            self._stage = f"{event.stage} {event.compile_id}"
            if event.state in ("finished", "failed"):
                self._schedule()
        elif event.kind == "warning" and event.data.get("category") == "graph_break":
            self._schedule()
        elif event.kind == "timeline" and event.data.get("event") == "sample":
            self.calls += 1
        elif event.kind == "stage" and event.stage in ("build", "save"):
            self._stage = event.stage
        self._update_status()

    def _on_log(self, line: str) -> None:
        if self.owns(self.files.last_spec):
            self.output.appendPlainText(line)

    def _schedule(self) -> None:
        self._due = True
        if not self._importer.busy and not self._timer.isActive():
            wait = REFRESH_GAP_S - (time.monotonic() - self._last_refresh)
            self._timer.start(max(0, int(wait * 1000)))

    def _refresh(self) -> None:
        if self.spec is None or not self._due or self._importer.busy:
            return
        self._due = False
        self._last_refresh = time.monotonic()
        self._importer.start(self.spec)

    def _show_live(self, session: Session | None) -> None:
        if session is not None and self.files.worker.running() and self.owns(self.files.last_spec):
            self._show(session)
            self.liveSession.emit(session)
        if self._due:
            self._schedule()

    def _show(self, session: Session) -> None:
        """Show `session` with the timeline so far, keeping the compile the user is looking at."""
        import dataclasses

        data = self.window.state.timeline.data
        session = dataclasses.replace(session, timeline=tuple(data.all_samples()),
                                      timeline_events=tuple(data.all_events()))
        state = self.window.state
        current = state.current
        self.compiles = len(session.compiles)
        self.window.set_session(session, self.spec.model_path if self.spec else "")
        if current is not None:
            state.set_compile((current.compile_id, current.rank))

    def _update_status(self) -> None:
        if self.spec is None:
            return
        name = Path(self.spec.model_path).name
        ranks = f", ranks {sorted(self.ranks)}" if self.ranks else ""
        self.status.setText(f"▶ {name}: {self._stage}; {self.compiles} compiles shown, "
                            f"{self.calls} compiled calls timed{ranks}")

    def _show_output(self) -> None:
        self.output.show()
        self.output.raise_()

    # ----- the end -----
    def finished(self, outcome: CaptureOutcome) -> bool:
        """The worker ended. True when handled here: nothing was saved, so the session comes
        from the trace log (with the timeline the pane received); otherwise FileActions loads
        the saved session as for any capture."""
        self._timer.stop()
        self._due = False  # the worker's group and escaped children went with it (launch.finish)
        self.stop_button.setEnabled(False)
        self.kill_button.setVisible(False)
        fate = "finished" if outcome.ok else clip(outcome.describe().splitlines()[0], 300, 1)
        self._stage = fate
        self._update_status()
        if outcome.error:
            self.output.appendPlainText(f"\n--- {outcome.error}\n{outcome.traceback}")
        self.window.statusBar().showMessage(f"Script run {fate}.", 10_000)
        if outcome.session_path or self.spec is None:
            return False
        from compiler_core.worker.capture_outcome import recover_session

        try:  # the CLI's recovery: the script's meta and the failure kept
            session = recover_session(self.spec, outcome)
        except Exception as exc:  # nothing readable was recorded
            self.window.statusBar().showMessage(clip(f"Nothing usable recorded: {exc}", 300, 1))
            return True
        if session is None:
            self.window.statusBar().showMessage("Nothing usable recorded: the run traced nothing.")
            return True
        self._show(session)
        return True
