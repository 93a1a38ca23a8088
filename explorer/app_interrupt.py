"""Ctrl-C in the terminal quits the GUI, without a traceback.

Python runs signal handlers only between bytecodes of the main thread, and Qt's event loop is
C++. Left to itself, a Ctrl-C waits for the next Python slot (a pane's repaint), is raised there
as a KeyboardInterrupt that PySide prints and swallows, and the window stays.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtWidgets import QApplication

INTERRUPTED_EXIT = 128 + signal.SIGINT  # what a shell reports for a program ended by Ctrl-C


class InterruptWatch(QObject):
    """Wakes Qt's event loop when a signal arrives, so Python runs its handler at once.

    Python's C-level handler writes each signal's number to the wakeup socket; the notifier on
    the other end calls `_drain`, a Python slot, and running any Python runs the pending handler.
    This needs no polling timer waking the process several times a second.

    `received`: whether SIGINT came (the caller reports it in its exit status).
    """

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.received = False
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self.wakeup_fd = self._writer.fileno()  # for signal.set_wakeup_fd
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)

    def interrupted(self, _signum: int, _frame: object) -> None:
        self.received = True
        QApplication.quit()  # closes the windows first (their closeEvent saves the layout)

    def _drain(self) -> None:
        with suppress(BlockingIOError):  # several signals can share one wakeup
            self._reader.recv(512)

    def close(self) -> None:
        self._notifier.setEnabled(False)
        self._reader.close()
        self._writer.close()


@contextmanager
def quit_on_interrupt(app: QApplication) -> Iterator[InterruptWatch]:
    """Ctrl-C quits `app` cleanly while inside; the previous handler and wakeup fd come back after."""
    watch = InterruptWatch(app)
    previous_fd = signal.set_wakeup_fd(watch.wakeup_fd)
    previous = signal.signal(signal.SIGINT, watch.interrupted)
    try:
        yield watch
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.set_wakeup_fd(previous_fd)
        watch.close()
