"""The run controls above the timeline: steps, modes, the simulated shape change, Run, exports.

The pane cannot run anything itself (the GUI never touches torch); Run only emits
`runRequested(dict)` with `{"steps", "modes", "shape_change_step"}`, which the main window
forwards to the worker as `--steps/--modes` options. Eager always runs, so it is not a choice.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QSpinBox, QWidget

from explorer.plain_text import plain_label

COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
DEFAULT_MODES = ("default", "reduce-overhead")


class TimelineControls(QWidget):
    """Signals:

    - `runRequested(dict)`: {"steps": int, "modes": list[str], "shape_change_step": int | None}
    - `exportCsvRequested()`, `exportTraceRequested()`: the export buttons were pressed.
    - `logScaleToggled(bool)`: the log-y checkbox changed.
    """

    runRequested = Signal(dict)  # noqa: N815 (Qt signal naming)
    exportCsvRequested = Signal()  # noqa: N815 (Qt signal naming)
    exportTraceRequested = Signal()  # noqa: N815 (Qt signal naming)
    logScaleToggled = Signal(bool)  # noqa: N815 (Qt signal naming)

    def __init__(self) -> None:
        super().__init__()
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 4, 2)
        self.steps = _spin(1, 200, " steps")
        self.steps.setToolTip("Steps to time per mode (eager plus each checked compile mode)")
        row.addWidget(self.steps)
        self.mode_boxes: dict[str, QCheckBox] = {}
        for mode in COMPILE_MODES:
            box = QCheckBox(mode)
            box.setChecked(mode in DEFAULT_MODES)
            self.mode_boxes[mode] = box
            row.addWidget(box)
        self.shape_change = QCheckBox("shape change at")
        self.shape_change.setToolTip("Feed inputs one row larger (dim 0 + 1) from this step on")
        self.shape_step = _spin(0, 100, "")
        self.shape_step.setEnabled(False)
        self.shape_change.toggled.connect(self.shape_step.setEnabled)
        row.addWidget(self.shape_change)
        row.addWidget(self.shape_step)
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self._request_run)
        row.addWidget(self.run_button)
        row.addStretch(1)
        self.log_y = QCheckBox("log y")
        self.log_y.setChecked(True)
        self.log_y.toggled.connect(self.logScaleToggled.emit)
        row.addWidget(self.log_y)
        row.addWidget(plain_label("export:"))
        for text, signal in (("CSV…", self.exportCsvRequested), ("Trace…", self.exportTraceRequested)):
            button = QPushButton(text)
            button.clicked.connect(signal.emit)
            row.addWidget(button)

    def request(self) -> dict[str, Any]:
        """The run the controls describe, in the worker's option vocabulary."""
        return {
            "steps": self.steps.value(),
            "modes": ["eager", *[m for m, box in self.mode_boxes.items() if box.isChecked()]],
            "shape_change_step": self.shape_step.value() if self.shape_change.isChecked() else None,
        }

    def _request_run(self) -> None:
        self.runRequested.emit(self.request())


def _spin(minimum: int, value: int, suffix: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(minimum, 100_000)
    spin.setValue(value)
    spin.setSuffix(suffix)
    return spin
