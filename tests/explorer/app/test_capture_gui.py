"""Running the real capture worker from the GUI: progress, a responsive event loop, fates, cancel."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from compiler_core.worker.capture_outcome import CaptureOutcome
from compiler_core.worker.protocol import CaptureSpec
from explorer.actions.file_actions import autosave_path
from explorer.main_window import MainWindow
from tests.conftest import EXAMPLES

LOOP_FREEZE_S = 1.0  # ten times the GUI-thread turn target: a freeze, not a slow host


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(tmp_path / "cache"))


class GapMeter:
    """Between ticks of a 10 ms timer: the longest wall-clock gap, and the longest stretch of
    GUI-thread CPU time (`worst`). The CPU figure is what our code spent in one event-loop turn;
    the wall figure also counts the OS running other processes (the capture worker compiles on
    the same 2 cores), so only the first is asserted and the second is reported."""

    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()
        self.worst = 0.0
        self.worst_wall = 0.0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def reset(self) -> None:
        self.worst = self.worst_wall = 0.0

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.worst = max(self.worst, cpu - self.last_cpu)
        self.worst_wall = max(self.worst_wall, now - self.last)
        self.last, self.last_cpu = now, cpu

    def describe(self) -> str:
        busy, wall = self.worst * 1000, self.worst_wall * 1000
        return f"GUI thread busy {busy:.0f} ms in one turn (wall gap {wall:.0f} ms)"


def _capture(qtbot: QtBot, window: MainWindow, model: Path, timeout_ms: int = 240_000) -> CaptureOutcome:
    spec = CaptureSpec(str(model), str(autosave_path(str(model))))
    with qtbot.waitSignal(window.files.worker.finished, timeout=timeout_ms) as blocker:
        window.files.start_capture(spec)
    outcome = blocker.args[0]
    assert isinstance(outcome, CaptureOutcome)
    # the session decodes in a thread, then is shown
    qtbot.waitUntil(lambda: not window.files.loading_capture, timeout=30_000)
    qtbot.waitUntil(lambda: window.state.updates.pending() == 0, timeout=30_000)  # panes filled in
    return outcome


def _measured_capture(
    qtbot: QtBot, window: MainWindow, model: Path
) -> tuple[CaptureOutcome, list[tuple[float, str]]]:
    """Capture `model` once the window has finished starting; also returns the GapMeter's worst
    turn and its description as they stood when the worker finished (before the display)."""
    window.ensure_panes()
    qtbot.wait(300)  # the window has finished starting (the warm-up thread has run)
    meter = GapMeter()
    at_finish: list[tuple[float, str]] = []
    window.files.worker.finished.connect(lambda _o: at_finish.append((meter.worst, meter.describe())))
    meter.reset()
    outcome = _capture(qtbot, window, model)
    meter.timer.stop()
    return outcome, at_finish


@pytest.mark.slow
def test_capture_shows_progress_keeps_the_loop_responsive_and_autosaves(
    qtbot: QtBot, window: MainWindow
) -> None:
    """The loop is measured from the worker's start to its end (while a capture runs); showing the
    finished session is one `set_session` turn, timed on its own below. The bound catches a
    freeze, ten times the 100 ms target, which bench/gui_startup.py measures: a busy small CI host
    can stretch a single turn to several times the target with nothing wrong."""
    stages: list[str] = []
    window.files.worker.stageChanged.connect(stages.append)
    outcome, at_finish = _measured_capture(qtbot, window, EXAMPLES / "mlp_graph_break.py")
    assert outcome.ok, outcome.describe()
    assert any(s.startswith("inductor") for s in stages), stages
    assert window.files.progress is not None and "Capture finished" in window.files.progress.fate.text()
    assert Path(outcome.session_path) == autosave_path(str(EXAMPLES / "mlp_graph_break.py"))
    assert Path(outcome.session_path).is_file(), "every capture is autosaved"
    session = window.state.session
    assert sum(len(c.graph_breaks) for c in session.compiles) >= 1
    assert window.panes["BreakSummaryPane"].tree.topLevelItem(0).text(1).strip()  # type: ignore[attr-defined]
    assert at_finish and at_finish[0][0] < LOOP_FREEZE_S, at_finish
    started = time.thread_time()
    window.set_session(session, "again")
    shown = time.thread_time() - started
    assert shown < 0.5, f"showing the session took {shown * 1000:.0f} ms of GUI-thread time"


@pytest.mark.slow
def test_a_failing_model_shows_its_fate_and_allows_a_new_run(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    model = tmp_path / "boom.py"
    model.write_text(
        "import torch\n"
        "def model(x):\n"
        "    raise ValueError('my model is broken on purpose')\n"
        "example_inputs = (torch.randn(2),)\n"
    )
    outcome = _capture(qtbot, window, model)
    assert not outcome.ok and outcome.exit_code not in (0, None)
    assert "my model is broken on purpose" in outcome.error
    fate = window.files.progress.fate.text()  # type: ignore[union-attr]
    assert f"exit code {outcome.exit_code}" in fate and "last stage" in fate
    assert "boom.py" in window.files.progress.log.toPlainText()  # type: ignore[union-attr]
    assert window.files.progress.rerun_button.isVisible()  # type: ignore[union-attr]
    with qtbot.waitSignal(window.files.worker.finished, timeout=240_000):
        window.files.progress.rerun_button.click()  # type: ignore[union-attr]


@pytest.mark.slow
def test_cancel_kills_the_worker_group(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    model = tmp_path / "slow.py"
    model.write_text("import time\ntime.sleep(120)\n")
    spec = CaptureSpec(str(model), str(tmp_path / "slow.json"))
    window.files.start_capture(spec)
    qtbot.waitUntil(lambda: window.files.worker.stage != "", timeout=60_000)
    started = time.monotonic()
    with qtbot.waitSignal(window.files.worker.finished, timeout=10_000) as blocker:
        window.files.progress.cancel_button.click()  # type: ignore[union-attr]
    assert blocker.args[0].cancelled and time.monotonic() - started < 5
    assert "cancelled" in window.files.progress.fate.text()  # type: ignore[union-attr]


@pytest.mark.slow
def test_loop_never_freezes_while_the_largest_example_is_captured(
    qtbot: QtBot, window: MainWindow
) -> None:
    """The transformer (training step, the largest bundled CPU example): from the worker's start
    to its end, with every stage event and the live step-time samples arriving. Showing the
    finished session afterwards is one `set_session` call; it is timed separately. The bound is
    a freeze's (LOOP_FREEZE_S); the 100 ms target belongs to bench/gui_startup.py."""
    outcome, at_finish = _measured_capture(qtbot, window, EXAMPLES / "transformer_block.py")
    assert outcome.ok, outcome.describe()
    assert window.state.session is not None and window.state.session.compiles
    assert at_finish and at_finish[0][0] < LOOP_FREEZE_S, at_finish
    started = time.perf_counter()
    window.set_session(window.state.session, "again")
    shown = time.perf_counter() - started
    assert shown < 1.0, f"showing the transformer's session took {shown:.2f} s"
