"""Pane rebuilds spread over event-loop turns, so showing a deep model never freezes the window.

Opening a session or switching compile makes every pane rebuild. Run from one signal emission,
a deep model's rebuilds would take one multi-second turn; queued here, each pane's rebuild is its
own piece of work and the queue runs pieces only while a turn's budget lasts, then yields to the
event loop (paints, clicks) and resumes on the next turn.

`spread` is off by default, so a pane built alone (tests, exports) rebuilds synchronously;
the main window turns it on and `flush()`es where a caller needs the panes up to date
at once (`MainWindow.set_session`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, QTimer

from explorer import gc_policy
from explorer.jobs import Lane

TURN_BUDGET_S = 0.01  # the slowest turn is this plus its last piece, painting and input
# The longest `flush` waits for off-thread results. A real job takes well under a second (even
# the joint graph's refs of a deep model); past this the wait is a bug (a worker re-fed
# on every delivery), and the window must not freeze on it: the result is still applied when
# it arrives, as a queued piece. (A hang in `flush` far past this is a deadlock, not this:
# see explorer/gc_policy.py.)
FLUSH_WAIT_S = 60.0


class UpdateQueue(QObject):
    """Signals: none (pieces run in arrival order, each `(owner, kind)` coalesced to its latest)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.spread = False
        self._pending: dict[tuple[int, str], Callable[[], None]] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._run_some)
        self._workers: list[Lane] = []
        self._holding = False  # pieces queued: the collector's passes wait (gc_policy.py)

    def track(self, worker: Lane) -> None:
        """Count `worker`'s job as pending work: `flush` waits for its result to be applied,
        which is a piece of this queue."""
        self._workers.append(worker)
        worker.queue = self

    def post(self, owner: object, kind: str, work: Callable[[], None]) -> None:
        """Run `work` now, or (spread) in a later turn; a newer post of the same owner and kind
        replaces a pending one (a compile switched twice rebuilds once)."""
        if not self.spread:
            work()
            return
        key = (id(owner), kind)
        self._pending.pop(key, None)  # re-queue at the end: it must run after what came before
        self._pending[key] = work
        self._hold(True)
        if not self._timer.isActive():
            self._timer.start()

    def pending(self) -> int:
        return len(self._pending) + sum(1 for w in self._workers if w.busy())

    def flush(self, wait_s: float = FLUSH_WAIT_S) -> bool:
        """Run every queued piece now, and wait (at most `wait_s`) for tracked off-thread
        results to be applied. False when it stopped waiting, after saying on stderr which
        workers were still busy and how often they were given new work meanwhile."""
        deadline = time.monotonic() + wait_s
        submitted = {id(w): w.generation for w in self._workers}
        while self.pending():
            if self._pending:
                self._run_one()
            elif time.monotonic() > deadline:
                busy = [f"{w.name} ({w.generation - submitted.get(id(w), 0)} submissions meanwhile)"
                        for w in self._workers if w.busy()]  # fmt: skip
                print(f"compilescope: stopped waiting after {wait_s:.0f} s for {', '.join(busy)}",
                      file=sys.stderr)
                return False
            else:
                QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        return True

    def drop(self) -> None:
        """Forget the queued pieces (their window is closing)."""
        self._pending.clear()
        self._timer.stop()
        self._hold(False)

    def _run_one(self) -> None:
        key = next(iter(self._pending))
        try:
            self._pending.pop(key)()
        finally:
            self._hold(bool(self._pending))

    def _hold(self, on: bool) -> None:
        if on != self._holding:
            self._holding = on
            (gc_policy.work_started if on else gc_policy.work_done)()

    def _run_some(self) -> None:
        start = time.perf_counter()
        while self._pending and time.perf_counter() - start < TURN_BUDGET_S:
            self._run_one()
        if self._pending:
            self._timer.start()
