"""The GUI's collector policy around loads (explorer/gc_policy.py): a loaded session is kept out
of the collector's passes, and a cycle frozen along with it is still collected, on the GUI
thread, when the next load starts or the window closes."""

from __future__ import annotations

import gc
import threading
from typing import Any, ClassVar

from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest

from explorer.main_window import MainWindow
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
