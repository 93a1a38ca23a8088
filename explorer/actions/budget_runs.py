"""The memory-budget sweep's controller: the AOT pane asks, this acts.

The pane only requests a sweep (`sweepRequested(model, budgets, device)`) and shows what it is
told (`sweep_point`, `sweep_ended`); this controller runs the sweep through the existing
`BudgetSweepRun` (explorer/actions/budget_sweep.py, the worker-process launcher) and, when it
ends, replaces the shown session with one whose `memory_budget` is filled (sessions are
immutable). It hears the pane through the `BudgetView` protocol, so it imports no pane.

Signals: none (the pane hears `sweep_point` / `sweep_ended` calls; the model hears the new session).
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from PySide6.QtCore import QObject, SignalInstance

from compiler_core.session.model import BudgetPoint
from explorer.actions.budget_sweep import BudgetSweepRun
from explorer.state import SessionState


class BudgetView(Protocol):
    """What the controller needs of a pane offering the sweep."""

    @property
    def sweepRequested(self) -> SignalInstance: ...

    def sweep_point(self, point: BudgetPoint) -> None: ...

    def sweep_ended(self, error: str) -> None: ...


class BudgetRuns(QObject):
    def __init__(self, state: SessionState, parent: QObject | None = None) -> None:
        super().__init__(parent if parent is not None else state)
        self.state = state
        self.sweep = BudgetSweepRun(self)
        self.sweep.finished.connect(self._done)
        self._views: list[BudgetView] = []

    def attach(self, view: BudgetView) -> None:
        view.sweepRequested.connect(self.start)
        self.sweep.pointReady.connect(view.sweep_point)
        self._views.append(view)

    def start(self, model: str, budgets: str, device: str) -> None:
        if self.sweep.running():
            return
        self.sweep.start(model, budgets, device)

    def running(self) -> bool:
        return self.sweep.running()

    def _done(self, points: list[BudgetPoint], error: str) -> None:
        if points:
            session = dataclasses.replace(self.state.session, memory_budget=tuple(points))
            self.state.set_session(session, self.state.source_path)
        for view in self._views:
            view.sweep_ended(error)
