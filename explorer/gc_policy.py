"""The GUI process's one interpreter policy: where the cyclic collector runs, and how often
threads hand over the GIL. Installed once, at application start (`explorer/app.py`), before any
window or job exists; nothing else in explorer/ touches `gc` or the switch interval.

Collection on the GUI thread only. Python runs a collection in whichever thread's allocation
trips the threshold. When that is a worker (the session loader building a link index) and the
garbage holds Qt objects (a closed window's widgets, freed only as a cycle), shiboken destroys
them on that worker: `~QObject` takes a Qt signal-slot mutex, then waits for the GIL to call
back into Python, while the GUI thread holds the GIL and waits for the same mutex in
`QObject::connect`: a deadlock. pyqtgraph's `GarbageCollector` is the
known cure: automatic collection off, the same generation thresholds checked on a GUI-thread
timer. (Re-stated here: importing it imports all of pyqtgraph, which is slow and which the
window defers until after its first paint.) The job service (explorer/jobs.py) keeps the other half of the
promise: whatever a job holds is released on the GUI thread.

A loaded session is kept out of the collector's passes. A deep model's session is ~200k tracked
objects, and every pass over them took 40-65 ms on the GUI thread: the first young-generation
pass after a load (the whole session is young then) and every later full pass. Those were the
slowest turns while a session settles. So a load begins with one full collection and a freeze
of whatever survives (the window, the session shown until now), and ends with a freeze of what
it made (`gc.freeze` moves objects to the permanent generation, which passes skip; refcounting
still frees them, so a replaced session goes when its last reference does). Loads leave no
cyclic garbage (tested), and the full collection at the next load's start unfreezes first, so
any cycle the window made while a load ran, frozen with the session, is freed then; closing a
window unfreezes and collects too.

No passes while the window is busy: while background jobs compute (explorer/jobs.py) or pane
rebuilds wait in the update queue (explorer/state/update_queue.py). A job's intermediates (a
50k-node layout's per-group lists, an import's half-built tables) are young and alive while it
runs, and so are the tables and refs a rebuild is filling: a pass then frees almost nothing and
walks all of it on the GUI thread, the longest turn of a 50k-node layout
(bench/canvas_stall_probe.py). Held until the work is done, intermediates go by refcount and
the next pass walks what survived. The hold is bounded (HOLD_LIMIT_S): work back to back (a
live run re-importing) still gets a pass that often, so cycles made meanwhile are freed at that
pace at worst.

What the panes make for a newly loaded session (~75k-120k objects on GPT-2 and Llama: table
items, refs, rows) lives as long as the session is shown, like the session itself. The first
pass after a load, once the window is idle, would walk all of it, a turn as long as any while
the session settled and one that can fall on the user's first click (bench/gui_startup.py), so
that pass is a freeze instead: kept out like the session, and whatever cycles were made meanwhile
(a few thousand objects) are freed with the session's, at the next load or when the window closes.

The core's `gc_paused()` (compiler_core/session/gc_pause.py) stays for the CLI, where automatic
collection is on while a session is built. Under this policy it composes as a no-op: it finds
the collector already off and leaves it off, so a load on a worker neither re-enables automatic
collection nor collects there.

A short thread switch interval, 0.1 ms instead of CPython's 5 ms: every call from Qt into
Python (a slot, a paint, each virtual a Python widget overrides) takes the GIL afresh, and while
a job computes each take waits up to one interval (the "convoy effect"). bench/canvas_stall_probe.py
(a 50k-node layout in the main window) shows the longest event-loop gap shrinking several-fold
under this policy, also against setting it only while the layout job runs, with the layout no
slower. It is set for the whole process, not per
job, because the GUI thread waits in Qt without the GIL: with one Python thread running, the
interval costs nothing.
"""

from __future__ import annotations

import gc
import sys
import time

from PySide6.QtCore import QCoreApplication, QTimer

INTERVAL_MS = 1000
SWITCH_INTERVAL_S = 0.0001
HOLD_LIMIT_S = 10.0
_timer: QTimer | None = None
_busy = 0  # work in flight: computing jobs not yet delivered, update queues not drained
_held_since: float | None = None  # when the timer first skipped a pass for it
_settling = False  # a session loaded; what the panes make for it is frozen once they are done


def install(app: QCoreApplication) -> None:
    """Install once per process, from the GUI thread, right after the QApplication is made."""
    global _timer
    if _timer is not None:
        return
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    thresholds = gc.get_threshold()
    gc.disable()

    def check() -> None:
        global _held_since, _settling
        if _busy:
            now = time.monotonic()
            if _held_since is None:
                _held_since = now
            if now - _held_since < HOLD_LIMIT_S:
                return
        _held_since = None
        if _settling and not _busy:
            _settling = False
            gc.freeze()
            return
        g0, g1, g2 = gc.get_count()
        if g0 > thresholds[0]:
            gc.collect(2 if g2 > thresholds[2] and g1 > thresholds[1] else 1 if g1 > thresholds[1] else 0)

    _timer = QTimer(app)
    _timer.setObjectName("gc-on-gui-thread")
    _timer.timeout.connect(check)
    _timer.start(INTERVAL_MS)


def work_started() -> None:
    """Work began that passes should wait for (GUI thread): a computing job handed to a
    worker, an update queue given its first piece. Each call is matched by `work_done`."""
    global _busy
    _busy += 1


def work_done() -> None:
    """A computing job's result reached the GUI thread, or an update queue ran dry."""
    global _busy, _held_since
    _busy = max(0, _busy - 1)
    if not _busy:
        _held_since = None


def before_load() -> None:
    """A session is about to load (GUI thread): collect everything once, then keep what
    survives out of the passes that run while the load allocates. The process's first load
    only freezes: what exists then is the window and the imported modules, whose pass (~45 ms
    on this box) would be one more long turn while the log opens, for the few cycles imports
    leave; the next load's pass frees those."""
    global _settling
    if _timer is None:
        return
    _settling = False  # the session shown until now is settled or being replaced
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()
    gc.freeze()


def after_load() -> None:
    """A load succeeded (GUI thread, before its session is shown): keep its objects out of later
    passes, and what the panes make for it once they are done. A failed load does not call
    this: its traceback's cycles are left to the passes."""
    global _settling
    if _timer is not None:
        gc.freeze()
        _settling = True


def release() -> None:
    """A window is closing (GUI thread): what was kept out of the passes goes back in, and the
    cycles frozen with its sessions are collected now; the window's own go in a later pass."""
    global _settling
    _settling = False
    if _timer is not None and gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()


def installed() -> bool:
    return _timer is not None
