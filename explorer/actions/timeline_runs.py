"""Live timeline runs: a run the user asks for starts the worker, and its samples stream back.

This controller talks to the application model only, never to the Timeline pane: a request
(`SessionState.timelineRunRequested`, from the pane's Run) becomes a worker run of the open
model file with `--steps/--modes/--shape-change-step`, and every `timeline` event's record is
appended to the model's live timeline as it arrives (`state.timeline.add_record`), which the
pane repaints from while the worker is still timing. When the worker finishes, the saved
session replaces the live data (same samples, plus the final statistics). Runs started here
show their progress in the status bar rather than the progress dialog, which would cover the
plot being watched.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QPushButton

from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.protocol import CaptureSpec, Event
from explorer.actions.capture_host import CaptureHost
from explorer.app_window import AppWindow
from explorer.plain_text import clip


def timeline_spec(base: CaptureSpec, request: dict[str, Any]) -> CaptureSpec:
    """`base` with the pane's run options; "eager" is always timed first, so always listed."""
    modes = [str(m) for m in request.get("modes", ())]
    shape = request.get("shape_change_step")
    return replace(
        base, steps=int(request.get("steps", 0)), modes=",".join(dict.fromkeys(["eager", *modes])),
        shape_change_step=None if shape is None else int(shape),
    )


class TimelineRuns(QObject):
    """Feeds the model's live timeline from the worker and turns a run request into a capture."""

    def __init__(self, window: AppWindow, files: CaptureHost) -> None:
        super().__init__(window)
        self.window = window
        self.files = files
        self.records = 0  # timeline records forwarded during the current run
        self._quiet = False  # this run was started from the pane: progress goes to the status bar
        self.cancel_button = QPushButton("Cancel run")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(files.worker.cancel)
        window.statusBar().addPermanentWidget(self.cancel_button)
        files.worker.eventReceived.connect(self._on_event)
        files.worker.stageChanged.connect(self._on_stage)
        files.worker.finished.connect(self._on_finished)
        window.state.timelineRunRequested.connect(self.run_requested)

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
        """A worker run begins: a timeline run starts from an empty plot, with its options shown."""
        self.records = 0
        if spec.steps > 0:
            self.window.state.timeline.begin_run(run_options(spec))

    def _on_event(self, event: Event) -> None:
        if event.kind == "timeline" and event.data:
            self.window.state.timeline.add_record(event.data)
            self.records += 1

    def _on_stage(self, stage: str) -> None:
        if self._quiet:
            self.cancel_button.setVisible(True)
            self.window.statusBar().showMessage(f"Running {clip(stage, 200, 1)}…")

    def _on_finished(self, outcome: CaptureOutcome) -> None:
        self.cancel_button.setVisible(False)
        if self._quiet:
            self._quiet = False
            failed = clip(outcome.describe().replace("\n", " "), 500, 1)
            text = "Timeline run finished." if outcome.ok else failed
            self.window.statusBar().showMessage(text, 0 if not outcome.ok else 10_000)


def run_options(spec: CaptureSpec) -> dict[str, Any]:
    """The run's options in the vocabulary of the timeline's controls (what `timeline_spec` reads)."""
    return {"steps": spec.steps, "modes": spec.modes.split(","), "shape_change_step": spec.shape_change_step}
