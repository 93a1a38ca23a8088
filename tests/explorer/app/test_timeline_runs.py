"""Timeline runs from the GUI: the pane's Run starts the worker, samples stream into the plot live,
and the saved session's mode statistics fill the Modes pane."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from compiler_core.session import Session
from compiler_core.worker.protocol import CaptureSpec, Event
from explorer.actions.timeline_runs import timeline_spec
from explorer.main_window import MainWindow
from explorer.panes.mode_compare_pane import ModeComparePane
from explorer.panes.timeline_pane import TimelinePane
from explorer.panes.timeline_plot import StepTimeAxis

TINY = """
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
example_inputs = (torch.randn(4, 8),)
"""


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.py"
    path.write_text(TINY)
    return path


def _timeline(window: MainWindow) -> TimelinePane:
    window.ensure_panes()
    pane = window.panes["TimelinePane"]
    assert isinstance(pane, TimelinePane)
    return pane


def test_timeline_spec_always_times_eager_first(tmp_path: Path) -> None:
    base = CaptureSpec("m.py", "s.json", mode="max-autotune", train=False)
    spec = timeline_spec(base, {"steps": 7, "modes": ["default", "eager"], "shape_change_step": 3})
    assert (spec.steps, spec.modes, spec.shape_change_step) == (7, "eager,default", 3)
    assert (spec.mode, spec.train) == ("max-autotune", False)  # the capture options stay


def test_run_without_a_model_file_says_so(window: MainWindow, transformer: Session) -> None:
    window.set_session(transformer, "transformer_block.json")
    pane = _timeline(window)
    pane.controls.run_button.click()
    assert not window.files.worker.running()
    assert "need a model file" in window.statusBar().currentMessage()


def test_pane_run_starts_the_worker_with_its_options(window: MainWindow, tiny: Path) -> None:
    window.files.offer_rerun(str(tiny))  # a pre-recorded example: its model file is known
    pane = _timeline(window)
    pane.add_record({"event": "sample", "mode": "eager", "step": 0, "ms": 1.0})
    pane.controls.steps.setValue(3)
    pane.controls.mode_boxes["reduce-overhead"].setChecked(False)
    pane.controls.run_button.click()
    assert window.files.worker.running()
    spec = window.files.last_spec
    assert spec is not None and (spec.model_path, spec.steps, spec.modes) == (str(tiny), 3, "eager,default")
    assert not pane.has_content(), "a run starts from an empty plot"
    assert window.files.timeline.cancel_button.isVisibleTo(window)
    assert window.files.timeline.run_requested(pane.controls.request()) is False
    assert "already running" in window.statusBar().currentMessage(), "a second run is refused, not queued"


def test_a_timeline_run_from_the_options_dialog_shows_in_the_controls(window: MainWindow, tiny: Path) -> None:
    pane = _timeline(window)
    spec = CaptureSpec(str(tiny), str(tiny.with_suffix(".json")), steps=9, modes="eager,max-autotune",
                       shape_change_step=4)
    window.files.start_capture(spec, show_progress=False)
    request = pane.controls.request()
    assert request == {"steps": 9, "modes": ["eager", "max-autotune"], "shape_change_step": 4}


def test_log_axis_labels_only_1_2_5_when_crowded(qtbot: QtBot) -> None:
    axis = StepTimeAxis("left")
    axis.setLogMode(False, True)
    values = [d + math.log10(m) for d in (-1, 0) for m in range(1, 10)] + [1.0]
    labels = [s for s in axis.logTickStrings(values, 1.0, 1.0) if s]
    assert len(labels) == 7, labels  # 0.1 0.2 0.5 1 2 5 10
    few = [0.0, 1.0]
    assert all(axis.logTickStrings(few, 1.0, 1.0))


@pytest.mark.slow
def test_samples_reach_the_plot_live_and_mode_stats_fill_the_modes_pane(
    qtbot: QtBot, window: MainWindow, tiny: Path
) -> None:
    window.files.offer_rerun(str(tiny))
    pane = _timeline(window)
    live: list[tuple[float, int]] = []  # (time, samples in the pane) as each sample arrives

    def watch(event: Event) -> None:
        if event.kind == "timeline" and event.data.get("event") == "sample":
            live.append((time.monotonic(), len(pane.data.all_samples())))

    window.files.worker.eventReceived.connect(watch)
    with qtbot.waitSignal(window.files.worker.finished, timeout=240_000) as blocker:
        assert window.files.timeline.run_requested({"steps": 5, "modes": ["eager", "default"]})
    finished_at = time.monotonic()
    assert blocker.args[0].ok, blocker.args[0].describe()
    qtbot.waitUntil(lambda: not window.files.loading_capture, timeout=30_000)
    # 5 eager, 5 default, and the 5 eager steps paired with default's (its speedup's baseline)
    assert len(live) == 15 and [n for _, n in live] == list(range(1, 16)), live
    assert live[0][0] < finished_at, "samples arrived only after the worker finished"
    assert window.files.timeline.records >= 15 + 2 + 2  # samples, mode_start and mode_stats
    session = window.state.session
    assert [s.mode for s in session.mode_stats] == ["eager", "default"]
    modes = window.panes["ModeComparePane"]
    assert isinstance(modes, ModeComparePane)
    qtbot.waitUntil(lambda: window.state.updates.pending() == 0)  # panes fill over event-loop turns
    assert [r.mode for r in modes.rows] == ["eager", "default"]
    assert modes.table.rowCount() == 2
    assert len(pane.data.all_samples()) == 15 and set(pane.data.series) == {"eager", "default"}
    assert len(pane.data.series["default"].baseline) == 5 and len(pane.data.series["eager"].ms) == 5
    default = next(s for s in session.mode_stats if s.mode == "default")
    assert default.baseline_ms is not None and modes.rows[1].speedup == pytest.approx(
        default.baseline_ms / default.median_ms)  # type: ignore[operator]
    assert "Timeline run finished" in window.statusBar().currentMessage()
    assert not window.files.timeline.cancel_button.isVisibleTo(window)
