"""The GUI's collector policy around loads (explorer/gc_policy.py): a loaded session is kept out
of the collector's passes, and a cycle frozen along with it is still collected, on the GUI
thread, when the next load starts or the window closes; what the panes make for a session is
kept out too once the window is idle. Passes wait while the window is busy (background jobs
computing, pane rebuilds queued), for a bounded time."""

from __future__ import annotations

import gc
import threading
import time
from typing import Any, ClassVar

from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest

from explorer import gc_policy
from explorer.jobs import Lane
from explorer.main_window import MainWindow
from explorer.state.update_queue import UpdateQueue
from tests.conftest import FIXTURES

LOG = str(FIXTURES / "stages_cpu.json")


class _Cycle:
    freed_on: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.freed_on.append(threading.current_thread().name)


def _window(qtbot: Any, tmp_path: Any) -> MainWindow:
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    window.ensure_panes()
    return window


def test_a_loaded_session_is_kept_out_of_the_collectors_passes(qtbot: Any, tmp_path: Any) -> None:
    window = _window(qtbot, tmp_path)
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000) as loaded:
        window.files.open_path(LOG)
    session = loaded.args[1]
    assert session.compiles and gc.is_tracked(session.compiles[0])
    tracked = {id(o) for o in gc.get_objects()}  # the generations a pass walks
    assert id(session) not in tracked and id(session.compiles[0]) not in tracked
    assert gc.get_freeze_count() > 0


def test_a_cycle_frozen_with_a_session_is_collected_when_the_next_load_starts(
    qtbot: Any, tmp_path: Any
) -> None:
    window = _window(qtbot, tmp_path)
    _Cycle.freed_on.clear()
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000):
        window.files.open_path(LOG)
        held = [_Cycle() for _ in range(1000)]  # made while the load runs: frozen with it
    del held
    QTest.qWait(1500)  # the timer's passes (every second) skip the permanent generation
    assert _Cycle.freed_on == []
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000):
        window.files.open_path(LOG)
        assert len(_Cycle.freed_on) == 1000  # collected as the load started
    assert set(_Cycle.freed_on) == {threading.current_thread().name}


def test_closing_the_window_lets_frozen_cycles_be_collected(qtbot: Any, tmp_path: Any) -> None:
    window = _window(qtbot, tmp_path)
    _Cycle.freed_on.clear()
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000):
        window.files.open_path(LOG)
        held = [_Cycle() for _ in range(1000)]
    del held
    window.close()
    qtbot.waitUntil(lambda: len(_Cycle.freed_on) == 1000, timeout=10_000)
    assert set(_Cycle.freed_on) == {threading.current_thread().name}



def _cycles_on_the_gui_thread() -> int:
    """Garbage cycles enough that the timer's next tick would collect (its trigger is the
    count of allocations less deallocations, which other objects' deaths lower too)."""
    _Cycle.freed_on.clear()
    n = 4 * gc.get_threshold()[0]
    held = [_Cycle() for _ in range(n)]
    del held
    assert gc.get_count()[0] > gc.get_threshold()[0]
    return n


def test_passes_wait_for_a_computing_job_and_resume_after_its_delivery(qtbot: Any) -> None:
    """A pass while a job computes walks the job's live intermediates on the GUI thread and frees
    nothing; the pass after it ends frees what was garbage meanwhile, on the GUI thread."""
    release = threading.Event()
    lane = Lane(None, "held")
    delivered: list[object] = []
    lane.submit(lambda: release.wait(30), delivered.append)
    n = _cycles_on_the_gui_thread()
    QTest.qWait(int(2.5 * gc_policy.INTERVAL_MS))  # two timer ticks
    assert _Cycle.freed_on == []
    release.set()
    qtbot.waitUntil(lambda: delivered == [True], timeout=10_000)
    qtbot.waitUntil(lambda: len(_Cycle.freed_on) == n, timeout=5 * gc_policy.INTERVAL_MS)
    assert set(_Cycle.freed_on) == {threading.current_thread().name}


def test_the_hold_is_bounded_for_jobs_that_keep_running(qtbot: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(gc_policy, "HOLD_LIMIT_S", 1.0)
    release = threading.Event()
    lane = Lane(None, "long")
    lane.submit(lambda: release.wait(30), lambda _: None)
    try:
        n = _cycles_on_the_gui_thread()
        qtbot.waitUntil(lambda: len(_Cycle.freed_on) == n, timeout=6 * gc_policy.INTERVAL_MS)
        assert set(_Cycle.freed_on) == {threading.current_thread().name}
    finally:
        release.set()
        qtbot.waitUntil(lambda: not lane.busy(), timeout=10_000)


def test_a_busy_update_queue_holds_passes_too(qtbot: Any) -> None:
    """Pieces waiting in the update queue are pane rebuilds filling tables: a pass then walks
    what they are building and frees nothing."""
    queue = UpdateQueue()
    queue.spread = True
    until = time.monotonic() + 2.5 * gc_policy.INTERVAL_MS / 1000

    def piece() -> None:  # re-posts itself, as a table filled in slices does, for 2.5 ticks
        if time.monotonic() < until:
            queue.post(queue, "fill", piece)

    queue.post(queue, "fill", piece)
    n = _cycles_on_the_gui_thread()
    qtbot.waitUntil(lambda: time.monotonic() > until and not queue.pending(), timeout=10_000)
    assert _Cycle.freed_on == []
    qtbot.waitUntil(lambda: len(_Cycle.freed_on) == n, timeout=5 * gc_policy.INTERVAL_MS)
    assert set(_Cycle.freed_on) == {threading.current_thread().name}


def test_what_is_made_while_a_session_settles_is_kept_out_once_the_window_is_idle(
    qtbot: Any, tmp_path: Any
) -> None:
    window = _window(qtbot, tmp_path)
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000):
        window.files.open_path(LOG)
    # made as the panes fill: lives as long as the session shown
    made: list[list[int]] = [[] for _ in range(100)]
    n = _cycles_on_the_gui_thread()  # garbage made meanwhile: frozen with it

    def kept_out() -> bool:
        return id(made) not in {id(o) for o in gc.get_objects()}

    qtbot.waitUntil(kept_out, timeout=20_000)
    QTest.qWait(int(1.5 * gc_policy.INTERVAL_MS))
    assert _Cycle.freed_on == []
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000):
        window.files.open_path(LOG)
        assert len(_Cycle.freed_on) == n  # collected as the next load started
