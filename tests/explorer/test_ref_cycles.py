"""A closed main window's objects die, and die on the GUI thread (after pyqtgraph's
tests/test_ref_cycles.py).

Two rules keep the window's Qt objects from being destroyed on a worker, where `~QObject`
deadlocked against the GUI thread: the collector runs only on the GUI thread
(explorer/gc_policy.py), and whatever a background job holds is released on the GUI thread
(explorer/jobs.py). Here a window that did background work (loading, pane jobs, layouts) is
closed and dropped; weakref callbacks, which run in the thread that frees the object, record
where the window and its panes died. Panes connect their children's signals to methods, not to
lambdas over `self`: PySide6 (6.7) kept such a lambda, and so the pane, after the window closed,
once a few windows had come and gone in the process (seen in the full suite, not alone).
"""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QSettings
from PySide6.QtTest import QTest

from explorer.main_window import MainWindow
from tests.conftest import FIXTURES


def _settle() -> None:
    """Let pending timers fire (the window's deferred pane building holds it for a turn) and run
    the deferred deletes, which only an event loop's top level or an explicit call runs."""
    for _ in range(5):
        QTest.qWait(5)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _safe_repr(obj: Any) -> str:
    try:
        return repr(obj)[:100]
    except RuntimeError:  # a Qt wrapper whose C++ object is gone
        return "<deleted>"


def _holders(obj: Any, depth: int = 3) -> list[str]:
    """What keeps `obj` alive, a few referrers deep (the failure message names them)."""
    out: list[str] = []
    frontier = [obj]
    for _ in range(depth):
        nxt = []
        for o in frontier:
            for r in gc.get_referrers(o):
                if r is frontier or r is nxt or type(r).__name__ == "frame":
                    continue
                out.append(f"{type(r).__name__}:{_safe_repr(r)}")
                nxt.append(r)
        frontier = nxt[:4]
    return out[:30]


def test_a_closed_main_window_is_collected_on_the_gui_thread(qtbot: Any, tmp_path: Any) -> None:
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window.resize(1366, 768)
    window.show()
    window.ensure_panes()
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000):
        window.files.open_path(str(FIXTURES / "stages_cpu.json"))  # a load through the job service
    window.state.updates.flush()
    assert window.state.session.compiles, "the session is shown"
    died: list[tuple[str, str]] = []

    def record(name: str) -> Any:
        return lambda _ref: died.append((name, threading.current_thread().name))

    refs: list[weakref.ref[Any]] = [weakref.ref(window, record("MainWindow"))]
    refs += [weakref.ref(pane, record(name)) for name, pane in window.panes.items()]
    assert len(refs) > 5
    window.close()
    window.files.worker.cancel()
    del window
    _settle()
    gc.collect()
    _settle()
    gc.collect()
    alive = [r() for r in refs if r() is not None]
    assert not alive, f"still alive after close: {[type(o).__name__ for o in alive]}; held by " \
        f"{_holders(alive[0]) if alive else ''}"
    assert {name for name, _ in died} >= {"MainWindow", "AotPane"}
    assert {thread for _, thread in died} == {threading.current_thread().name}
