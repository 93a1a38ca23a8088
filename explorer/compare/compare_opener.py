"""Open a comparison without freezing the window: the diff runs on a worker thread.

Diffing two deep training sessions takes up to seconds of CPU (bench/diff_speed.py), too long
for one turn of the event loop; `CompareOpener.open(before, after)` runs `diff_sessions` through
the explorer's one off-thread helper (explorer/jobs.py) and builds the window on the
GUI thread when the diff is back. A second `open` before the first is back supersedes it.

Signals: `opened(object)`, the `CompareWindow` built (shown, and parented to nothing: its owner
keeps it, e.g. the main window's list of open comparisons).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from compiler_core.diff import SessionDiff, diff_sessions
from compiler_core.session import Session
from explorer.compare.compare_window import CompareWindow
from explorer.jobs import Lane


class CompareOpener(QObject):
    opened = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._work = Lane(self, "compare")

    def open(self, before: Session, after: Session) -> None:
        def show(diff: SessionDiff) -> None:
            window = CompareWindow(diff, before, after)
            window.show()
            self.opened.emit(window)

        self._work.submit(lambda: diff_sessions(before, after), show)

    def busy(self) -> bool:
        return self._work.busy()

    def shutdown(self) -> None:
        """Wait for a running diff and drop its result (the owner is closing)."""
        self._work.shutdown()
