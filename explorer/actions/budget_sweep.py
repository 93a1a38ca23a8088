"""Runs the memory-budget sweep worker from the GUI through QProcess (never torch in this process).

The worker (`python -m compiler_core.stages.memory_budget`) prints one `BUDGET {json}` line per
finished budget; each becomes a `pointReady` as it arrives, so the table fills while later
budgets still compile. `finished` carries every point and an error line ("" when all went well).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

from compiler_core.session.model import BudgetPoint
from compiler_core.stages.memory_budget import parse_point, worker_command

ROOT = Path(__file__).resolve().parents[2]


class BudgetSweepRun(QObject):
    """Signals: `pointReady(BudgetPoint)`, `finished(list[BudgetPoint], str error)`."""

    pointReady = Signal(object)  # noqa: N815 (Qt signal naming)
    finished = Signal(object, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.points: list[BudgetPoint] = []
        self._buffer = ""
        self._stderr = ""
        self.process = QProcess(self)
        self.process.readyReadStandardOutput.connect(self._read)
        self.process.readyReadStandardError.connect(self._read_err)
        self.process.finished.connect(self._done)
        self.process.errorOccurred.connect(lambda _e: self._done(-1, QProcess.ExitStatus.CrashExit))

    def start(self, model: str, budgets: str, device: str, steps: int = 5) -> None:
        argv = worker_command(model, budgets, device, steps)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), env.value("PYTHONPATH")) if p))
        env.insert("PYTHONUNBUFFERED", "1")
        self.process.setProcessEnvironment(env)
        self.points.clear()
        self.process.start(argv[0], argv[1:])

    def running(self) -> bool:
        return self.process.state() != QProcess.ProcessState.NotRunning

    def _read(self) -> None:
        self._buffer += bytes(self.process.readAllStandardOutput().data()).decode(errors="replace")
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            point = parse_point(line)
            if point is not None:
                self.points.append(point)
                self.pointReady.emit(point)

    def _read_err(self) -> None:
        text = bytes(self.process.readAllStandardError().data()).decode(errors="replace")
        self._stderr = (self._stderr + text)[-4000:]

    def _done(self, code: int, status: QProcess.ExitStatus) -> None:
        self._read()
        ok = code == 0 and status == QProcess.ExitStatus.NormalExit
        lines = [ln for ln in self._stderr.splitlines() if ln.strip()]
        error = "" if ok else (lines[-1] if lines else f"sweep worker exited with code {code}")
        self.finished.emit(list(self.points), error)
