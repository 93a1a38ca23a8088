"""Live timeline runs: the Timeline pane's Run starts the worker, and its samples stream back.

The pane never runs anything (the GUI never touches torch): its `runRequested` dict becomes a
worker run of the open model file with `--steps/--modes/--shape-change-step`, and every
`timeline` event's record goes to `TimelinePane.add_record` as it arrives, so the plot grows
while the worker is still timing. When the worker finishes, the saved session replaces the live
data (same samples, plus the final statistics). Runs started here show their progress in the
status bar rather than the progress dialog, which would cover the plot being watched.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QPushButton, QWidget

from compiler_core.worker.protocol import CaptureSpec, Event
from explorer.plain_text import clip
from explorer.worker_process import WorkerOutcome

if TYPE_CHECKING:
    from explorer.actions.file_actions import FileActions
    from explorer.main_window import MainWindow

TIMELINE_KEY = "TimelinePane"


def timeline_spec(base: CaptureSpec, request: dict[str, Any]) -> CaptureSpec:
    """`base` with the pane's run options; "eager" is always timed first, so always listed."""
    modes = [str(m) for m in request.get("modes", ())]
    shape = request.get("shape_change_step")
    return replace(
        base, steps=int(request.get("steps", 0)), modes=",".join(dict.fromkeys(["eager", *modes])),
        shape_change_step=None if shape is None else int(shape),
    )


class TimelineRuns(QObject):
    """Feeds the timeline pane from the worker and turns the pane's Run into a capture."""

    def __init__(self, window: MainWindow, files: FileActions) -> None:
        super().__init__(window)
        self.window = window
        self.files = files
        self.records = 0  # timeline records forwarded during the current run
        self._quiet = False  # this run was started from the pane: progress goes to the status bar
        self._connected: set[int] = set()
        self.cancel_button = QPushButton("Cancel run")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(files.worker.cancel)
        window.statusBar().addPermanentWidget(self.cancel_button)
        files.worker.eventReceived.connect(self._on_event)
        files.worker.stageChanged.connect(self._on_stage)
        files.worker.finished.connect(self._on_finished)
        self.attach()

    def pane(self) -> QWidget | None:
        """The timeline pane, once built and if installed (a placeholder label has no add_record)."""
        pane = self.window.panes.get(TIMELINE_KEY)
        return pane if pane is not None and hasattr(pane, "add_record") else None

    def attach(self) -> None:
        """Connect the pane's Run (call again after the deferred pane is built; idempotent)."""
        pane = self.pane()
        if pane is not None and id(pane) not in self._connected:
            self._connected.add(id(pane))
            pane.runRequested.connect(self.run_requested)  # type: ignore[attr-defined]

    def run_requested(self, request: dict[str, Any]) -> bool:
        """Start a timeline run of the open model file; False (and a status message) if none."""
        model = self.files.model_path
        if not model:
            self.window.statusBar().showMessage(
                "Timeline runs need a model file: open one with File ▸ Open model… "
                "(a trace log or saved session cannot be run).", 10_000)
            return False
        if self.files.worker.running():
            self.window.statusBar().showMessage("A capture is already running; wait or cancel it.", 5_000)
            return False
        base = self.files.last_spec
        if base is None or base.model_path != model:
            base = self.files.default_spec(model)
        self._quiet = True
        self.files.start_capture(timeline_spec(base, request), show_progress=False)
        self._on_stage("worker start-up")
        return True

    def run_started(self, spec: CaptureSpec) -> None:
        """A worker run begins: a timeline run starts from an empty plot."""
        self.records = 0
        pane = self.pane()
        if spec.steps > 0 and pane is not None:
            pane.clear()  # type: ignore[attr-defined]
            _show_options(pane, spec)

    def _on_event(self, event: Event) -> None:
        if event.kind == "timeline" and event.data:
            pane = self.pane()
            if pane is not None:
                pane.add_record(event.data)  # type: ignore[attr-defined]
                self.records += 1

    def _on_stage(self, stage: str) -> None:
        if self._quiet:
            self.cancel_button.setVisible(True)
            self.window.statusBar().showMessage(f"Running {clip(stage, 200, 1)}…")

    def _on_finished(self, outcome: WorkerOutcome) -> None:
        self.cancel_button.setVisible(False)
        if self._quiet:
            self._quiet = False
            failed = clip(outcome.describe().replace("\n", " "), 500, 1)
            text = "Timeline run finished." if outcome.ok else failed
            self.window.statusBar().showMessage(text, 0 if not outcome.ok else 10_000)


def _show_options(pane: QWidget, spec: CaptureSpec) -> None:
    """The pane's controls show the run in progress (it may come from the options dialog)."""
    controls = pane.controls  # type: ignore[attr-defined]
    modes = spec.modes.split(",")
    controls.steps.setValue(spec.steps)
    for mode, box in controls.mode_boxes.items():
        box.setChecked(mode in modes)
    controls.shape_change.setChecked(spec.shape_change_step is not None)
    if spec.shape_change_step is not None:
        controls.shape_step.setValue(spec.shape_change_step)
