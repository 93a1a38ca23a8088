"""The cyclic garbage collector runs on the GUI thread only, from a timer.

Python runs a collection in whichever thread's allocation trips the threshold. When that was a
worker (the session loader building a link index) and the garbage held Qt objects (a closed
window's widgets, freed only as a cycle), shiboken destroyed them on that worker: `~QObject`
took a Qt signal-slot mutex, then waited for the GIL to call back into Python, while the GUI
thread held the GIL and waited for the same mutex in `QObject::connect`. py-spy --native showed
exactly that (the test suite's rare 600 s hang). pyqtgraph's `GarbageCollector` is the known
cure: automatic collection off, and the same generation thresholds checked on a GUI-thread
timer. It is re-stated here because importing it imports all of pyqtgraph (~0.5 s), which the
window defers until after its first paint.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QTimer

INTERVAL_MS = 1000
_timer: QTimer | None = None


def collect_on_gui_thread() -> None:
    """Install once per process (needs the QApplication; call from the GUI thread)."""
    global _timer
    app = QCoreApplication.instance()
    if _timer is not None or app is None:
        return
    thresholds = gc.get_threshold()
    gc.disable()

    def check() -> None:
        g0, g1, g2 = gc.get_count()
        if g0 > thresholds[0]:
            gc.collect(2 if g2 > thresholds[2] and g1 > thresholds[1] else 1 if g1 > thresholds[1] else 0)

    _timer = QTimer(app)
    _timer.setObjectName("gc-on-gui-thread")
    _timer.timeout.connect(check)
    _timer.start(INTERVAL_MS)
