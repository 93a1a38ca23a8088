"""The compile-time bars add up: on a real training log (torchvision ResNet-50 on an H200) the
frame's stage timers nest (backend ⊃ aot ⊃ inductor ⊃ codegen), so their own times sum to the
frame's total, and the lazily compiled backward stacks on top instead of being folded into
`inductor` (which would make inductor outgrow aot: a bar longer than the whole compile)."""

from __future__ import annotations

import itertools
import lzma
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from compiler_core.analysis import import_trace
from explorer.panes.compile_time_pane import STAGES, CompileTimePane, exclusive_times
from explorer.state import SelectionModel, SessionState
from tests.bench_logs import bench_session

ROOT = Path(__file__).resolve().parents[2]

FRAME = ("dynamo", "aot", "inductor", "codegen", "backend")


def test_frame_stages_nest_and_add_up_to_the_frame_total() -> None:
    session = bench_session("tv_resnet_breaks")
    c = session.compile("0/0")
    assert c is not None and c.metrics.total_s
    stage = c.metrics.stage_s
    assert stage["codegen"] <= stage["inductor"] <= stage["aot"] <= stage["backend"]
    own = exclusive_times(stage)
    assert sum(own[s] for s in FRAME) == pytest.approx(c.metrics.total_s, rel=0.05)
    assert own["backward"] == stage["backward"] > 1.0  # ResNet-50's backward: seconds of Inductor


def test_pane_stacks_the_backward_and_lists_it(qtbot: QtBot) -> None:
    session = bench_session("tv_resnet_breaks")
    state = SessionState()
    pane = CompileTimePane(state, SelectionModel())
    qtbot.addWidget(pane)
    state.set_session(session)
    state.updates.flush()
    names = [item.name() for item in pane.plot.getPlotItem().items if hasattr(item, "name")]
    assert "backward" in names and names == [s for s in STAGES if s in names]
    row = next(pane.cache.topLevelItem(i) for i in range(pane.cache.topLevelItemCount())
               if pane.cache.topLevelItem(i).text(0) == "0/0")
    assert float(row.text(4)) == pytest.approx(session.compile("0/0").metrics.stage_s["backward"], abs=1e-3)


def test_compile_labels_never_overlap_at_the_plots_width(qtbot: QtBot, tmp_path: Path) -> None:
    """Ten compiles of a T5 log in a 360 px wide plot printed one smear of ids."""
    log = tmp_path / "t5.log"
    with lzma.open(ROOT / "bench" / "corpus" / "logs" / "hf_t5_train.log.xz") as src:
        log.write_bytes(src.read())
    session = import_trace(log)
    state = SessionState()
    pane = CompileTimePane(state, SelectionModel())
    qtbot.addWidget(pane)
    pane.resize(360, 300)
    pane.show()
    qtbot.waitExposed(pane)
    state.set_session(session)
    state.updates.flush()
    axis = pane.plot.getAxis("bottom")
    major = axis._tickLevels[0]
    assert major and pane.tick_stride > 1, "some compiles are labelled, not all"
    metrics = pane.plot.fontMetrics()
    xs = [x for x, _ in major]
    px_per_bar = (pane.plot.width() - 60) / max(1, len(pane._labels))
    for (x0, a), (x1, _b) in itertools.pairwise(major):
        assert (x1 - x0) * px_per_bar >= metrics.horizontalAdvance(a), (a, x0, x1)
    pane.resize(1600, 300)
    assert pane.tick_stride <= len(xs) and axis._tickLevels[0]
