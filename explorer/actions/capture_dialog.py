"""Dialogs around a capture: the options (with the "this runs your code" notice) and the progress.

Opening a model file executes it, as opening a folder in an editor may run its tasks; the first
time a file is opened the options dialog says so, and nothing runs until the user clicks Run.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.protocol import MODES, STAGES, CaptureSpec
from explorer.plain_text import clip, plain_label, rich_label
from explorer.worker_process import WorkerProcess

UNTRUSTED_NOTICE = (
    "<b>Opening a model file runs its code.</b> CompileScope imports the file and calls your model "
    "in a separate worker process, with your permissions. Only run files you trust."
)


TRAIN_CHOICES = (
    ("from the file (train_step: forward + backward)", None),
    ("training: forward + backward", True),
    ("inference: forward under no_grad", False),
)


class CaptureOptionsDialog(QDialog):
    """Device, mode, shapes, train/inference and the timeline run; `spec(out_path)` turns the
    choices into a CaptureSpec."""

    def __init__(self, model_path: str, first_time: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Capture model")
        self.model_path = model_path
        layout = QVBoxLayout(self)
        if first_time:
            notice = rich_label()
            notice.setText(UNTRUSTED_NOTICE)  # our markup only
            notice.setWordWrap(True)
            notice.setStyleSheet("background: #fff4ce; padding: 8px; border: 1px solid #e0c060;")
            layout.addWidget(notice)
        layout.addWidget(plain_label(f"File: {model_path}"))
        form = QFormLayout()
        self.device = QComboBox()
        self.device.addItems(["cpu", "cuda"])
        self.mode = QComboBox()
        self.mode.addItem("from the file (compile_options)", None)
        for mode in MODES:
            self.mode.addItem(mode, mode)
        self.dynamic = QComboBox()
        for label, value in (("from the file", None), ("dynamic", True), ("static", False)):
            self.dynamic.addItem(label, value)
        self.train = QComboBox()
        for label, train in TRAIN_CHOICES:
            self.train.addItem(label, train)
        self.steps = QSpinBox()
        self.steps.setRange(0, 100_000)
        self.steps.setSpecialValueText("none")
        self.steps.setSuffix(" steps")
        self.steps.setToolTip("Time this many steps per mode after the capture (0: no timeline run)")
        self.timeline_modes = _mode_boxes()
        self.steps.valueChanged.connect(self._enable_modes)
        self._enable_modes(0)
        self.trust = QCheckBox("Don't show the notice for this file again")
        self.trust.setChecked(True)
        self.trust.setVisible(first_time)
        form.addRow("Device", self.device)
        form.addRow("Mode", self.mode)
        form.addRow("Shapes", self.dynamic)
        form.addRow("Run", self.train)
        form.addRow("Timeline", self.steps)
        modes_row = QHBoxLayout()
        modes_row.addWidget(plain_label("eager +"))
        for box in self.timeline_modes.values():
            modes_row.addWidget(box)
        form.addRow("Timeline modes", modes_row)
        layout.addLayout(form)
        layout.addWidget(self.trust)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def spec(self, out_path: str) -> CaptureSpec:
        return CaptureSpec(
            model_path=self.model_path, out_path=out_path, device=self.device.currentText(),
            mode=self.mode.currentData(), dynamic=self.dynamic.currentData(), train=self.train.currentData(),
            steps=self.steps.value(), modes=self.modes(),
        )

    def _enable_modes(self, steps: int) -> None:
        for box in self.timeline_modes.values():
            box.setEnabled(steps > 0)

    def modes(self) -> str:
        """The timeline's modes in the worker's vocabulary: eager (always timed) plus the checked."""
        return ",".join(["eager", *[m for m, box in self.timeline_modes.items() if box.isChecked()]])


def _mode_boxes() -> dict[str, QCheckBox]:
    boxes = {}
    for mode in MODES:
        box = QCheckBox(mode)
        box.setChecked(mode == "default")
        boxes[mode] = box
    return boxes


class CaptureProgressDialog(QDialog):
    """Stage name, elapsed time, live log, Cancel; afterwards the worker's fate and Run again."""

    def __init__(self, worker: WorkerProcess, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Capturing…")
        self.resize(720, 420)
        self.worker = worker
        self.stage = plain_label("starting worker…")
        self.bar = QProgressBar()
        self.bar.setRange(0, len(STAGES))
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(5000)
        self.fate = plain_label()
        self.fate.setWordWrap(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(worker.cancel)
        self.rerun_button = QPushButton("Run again")
        self.rerun_button.setVisible(False)
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.accept)
        self.close_button.setVisible(False)
        buttons = QDialogButtonBox()
        for b in (self.cancel_button, self.rerun_button, self.close_button):
            buttons.addButton(b, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        for w in (self.stage, self.bar, self.log, self.fate, buttons):
            layout.addWidget(w)
        self._tick = QTimer(self)
        self._tick.setInterval(200)
        self._tick.timeout.connect(self._update_elapsed)
        worker.stageChanged.connect(self._on_stage)
        worker.logLine.connect(self.log.appendPlainText)
        worker.finished.connect(self._on_finished)

    def begin(self) -> None:
        self.fate.clear()
        self.log.clear()
        self.bar.setValue(0)
        self.cancel_button.setVisible(True)
        self.rerun_button.setVisible(False)
        self.close_button.setVisible(False)
        self._tick.start()

    def _on_stage(self, stage: str) -> None:
        name = stage.split()[0]
        if name in STAGES:
            self.bar.setValue(max(self.bar.value(), STAGES.index(name) + 1))
        self._update_elapsed()

    def _update_elapsed(self) -> None:
        self.stage.setText(f"{clip(self.worker.stage or 'starting', 200)} — {self.worker.elapsed():.1f} s")

    def _on_finished(self, outcome: CaptureOutcome) -> None:
        self._tick.stop()
        self._update_elapsed()
        self.bar.setValue(self.bar.maximum() if outcome.ok else self.bar.value())
        text = "Capture finished." if outcome.ok else outcome.describe()
        if outcome.traceback:
            traceback = clip(outcome.traceback, 200_000, 5000)
            self.log.appendPlainText("\n--- traceback (your code) ---\n" + traceback)
        if not outcome.ok and outcome.session_path:
            text += "\nShowing what was recorded before it stopped."
        self.fate.setText(clip(text))  # an exception message can be 300 MB
        self.fate.setStyleSheet("" if outcome.ok else "color: #b00020;")
        self.cancel_button.setVisible(False)
        self.rerun_button.setVisible(True)
        self.close_button.setVisible(True)
