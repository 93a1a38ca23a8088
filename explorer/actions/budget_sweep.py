"""Runs the memory-budget sweep from the GUI in the capture worker (never torch in this process).

The sweep is a worker run like a capture (`explorer/worker_process.py` over the launcher every run
shares, compiler_core/worker/launch.py: the same memory cap, process sweep and signed events);
each finished budget arrives as an authenticated `budget` event and becomes a `pointReady`, so the
table fills while later budgets still compile. `finished` carries every point and an error line (""
when all went well); a run whose channel carried forged lines gives no points at all.
"""

from __future__ import annotations

import os
import tempfile

from PySide6.QtCore import QObject, Signal

from compiler_core.session.model import BudgetPoint
from compiler_core.stages.memory_budget import budget_spec, point_from_event
from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.protocol import Event
from explorer.worker_process import WorkerProcess


class BudgetSweepRun(QObject):
    """Signals: `pointReady(BudgetPoint)`, `finished(list[BudgetPoint], str error)`."""

    pointReady = Signal(object)  # noqa: N815 (Qt signal naming)
    finished = Signal(object, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.points: list[BudgetPoint] = []
        self.process = WorkerProcess(self)
        self.process.eventReceived.connect(self._event)
        self.process.finished.connect(self._done)

    def start(self, model: str, budgets: str, device: str, steps: int = 5) -> None:
        self.points.clear()
        out = os.path.join(tempfile.mkdtemp(prefix="cs-budget-"), "budget.json")
        self.process.start(budget_spec(model, budgets, device, steps, out))

    def running(self) -> bool:
        return self.process.running()

    def _event(self, event: Event) -> None:
        if event.kind != "budget":
            return
        point = point_from_event(event.data)
        if point is not None:
            self.points.append(point)
            self.pointReady.emit(point)

    def _done(self, outcome: CaptureOutcome) -> None:
        if outcome.problems:  # forged lines or no authentic end: nothing of the run is believed
            self.finished.emit([], "; ".join(outcome.problems))
            return
        ok = outcome.exit_code == 0 and not (outcome.cancelled or outcome.timed_out or outcome.crashed)
        first = outcome.error.splitlines()[0] if outcome.error else ""
        error = "" if ok else (first or f"the worker {outcome.fate()}")
        self.finished.emit(list(self.points), error)
