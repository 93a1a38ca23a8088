"""The stage panes on a session recorded from a real CPU run (tests/fixtures/stages_cpu.json, made
by bench/gpu_stages.py on CPU and slimmed); autotune and CUDA-graph rows that only a GPU produces
are added as explicit session values until the GPU fixture (gpu_stages.json) lands."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from compiler_core.session import AutotuneChoice, AutotuneResult, CudaGraphInfo, Ref, Session
from compiler_core.session.codec import load as open_session
from explorer.panes.autotune_pane import AutotunePane
from explorer.panes.cudagraph_pane import CudaGraphPane
from explorer.panes.decomposition_pane import DecompositionPane
from explorer.panes.mode_compare_pane import ModeComparePane
from explorer.state import SelectionModel, SessionState
from tests.conftest import FIXTURES

SHOTS = os.environ.get("COMPILESCOPE_SHOTS")  # set to a folder to keep the screenshots

GEMM = AutotuneResult(
    op="addmm", shape="64x64 float16, 64x256 float16", winner="triton_mm_3", tuning_s=2.4,
    nodes=("addmm_2",), kernel="cpp_fused_gelu_view_3",
    choices=(
        AutotuneChoice("triton_mm_3", 0.0081, "triton", {"BLOCK_M": "64", "BLOCK_N": "64", "num_warps": "4"}),
        AutotuneChoice("addmm", 0.0102, "extern"),
        AutotuneChoice("triton_mm_1", 0.0134, "triton", {"BLOCK_M": "32", "BLOCK_N": "32", "num_warps": "2"}),
        AutotuneChoice("triton_mm_9", None, "triton", {"BLOCK_M": "256"},
                       error="out of resource: shared memory"),
    ),
)


@pytest.fixture
def session() -> Session:
    s = open_session(FIXTURES / "stages_cpu.json")
    c = s.compiles[0]
    outs = list(c.inductor)
    outs[0] = dataclasses.replace(outs[0], autotune=(GEMM,), cudagraph=CudaGraphInfo(True))
    outs[1] = dataclasses.replace(outs[1], cudagraph=CudaGraphInfo(
        False, "skipping cudagraphs due to mutated inputs (1 instances). Found from :\n  File m.py, line 3"))
    return dataclasses.replace(s, compiles=(dataclasses.replace(c, inductor=tuple(outs)), *s.compiles[1:]))


def _show(qtbot, pane, name: str) -> None:  # type: ignore[no-untyped-def]
    qtbot.addWidget(pane)
    pane.resize(1000, 420)
    pane.show()
    qtbot.waitExposed(pane)
    image = pane.grab()
    assert not image.isNull()
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        image.save(str(Path(SHOTS) / f"{name}.png"))


def _state(session: Session) -> tuple[SessionState, SelectionModel]:
    state = SessionState()
    selection = state.selection
    return state, selection


def test_decomposition_pane_rows_and_selection(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    state, selection = _state(session)
    pane = DecompositionPane(state, selection)
    state.set_session(session)
    _show(qtbot, pane, "decompositions")
    ops = [r.op for r in pane.rows]
    assert {"softmax", "layer_norm", "gelu"} <= set(ops)
    softmax = pane.rows[ops.index("softmax")]
    cell = pane.table.item(ops.index("softmax"), 3).text()
    assert cell.startswith("amax, sub, exp, sum, div") and "rewritten" in cell
    assert "distinct high-level ops in" in pane.summary.text()
    gelu_row = ops.index("gelu")
    pane.table.cellClicked.emit(gelu_row, 0)
    assert Ref.dynamo_node("0/0", "h", None) in selection.selected
    assert pane.table.item(gelu_row, 0).font().bold()
    assert not pane.table.item(ops.index("softmax"), 0).font().bold()
    assert softmax.kernels and pane.has_content()


def test_autotune_pane_sorted_bars_and_failures(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    state, selection = _state(session)
    pane = AutotunePane(state, selection)
    state.set_session(session)
    _show(qtbot, pane, "autotune")
    assert pane.ops.count() == 1
    assert pane.bar_widths == sorted(pane.bar_widths) == [0.0081, 0.0102, 0.0134]
    assert "triton_mm_9: out of resource: shared memory" in pane.failures.text()
    assert "winner <b>triton_mm_3</b>" in pane.header.text()
    # every bar is labelled with its template, blocks and warps; the table names each candidate
    assert pane.bar_labels == ["triton_mm_3 64×64 w4", "addmm (extern)", "triton_mm_1 32×32 w2"]
    axis = pane.plot.getAxis("left")
    assert axis.width() >= 8 * len("triton_mm_3 64×64 w4")
    assert pane.table.topLevelItemCount() == 4 and pane.table.topLevelItem(0).text(0) == "★ triton_mm_3"
    assert pane.table.topLevelItem(3).text(5) == "failed"
    # a click selects the node the tuning decided and the kernel the winner became
    c = session.compiles[0]
    qtbot.mouseClick(pane.ops.viewport(), Qt.MouseButton.LeftButton, pos=pane.ops.visualItemRect(
        pane.ops.item(0)).center())  # fmt: skip
    assert selection.selected == {
        Ref.post_grad_node(c.compile_id, "forward", "addmm_2", c.rank),
        Ref.kernel(c.compile_id, "forward", "cpp_fused_gelu_view_3", c.rank),
    }


def test_cudagraph_pane_reasons(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    state, selection = _state(session)
    pane = CudaGraphPane(state, selection)
    state.set_session(session)
    _show(qtbot, pane, "cudagraphs")
    cells = [[pane.table.item(r, c).text() for c in range(5)] for r in range(pane.table.rowCount())]
    assert cells[0][1:3] == ["forward", "captured"]
    assert cells[1][2] == "skipped" and cells[1][3].startswith("mutated inputs (1 instances)")
    assert "1 graph(s) captured, 1 skipped" in pane.note.text()


def test_mode_compare_pane(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    state, selection = _state(session)
    pane = ModeComparePane(state, selection)
    state.set_session(session)
    _show(qtbot, pane, "modes")
    modes = [pane.table.item(r, 0).text() for r in range(pane.table.rowCount())]
    assert modes[0] == "eager" and len(modes) == 5
    best = [r for r in range(len(modes)) if pane.table.item(r, 0).font().bold()]
    assert len(best) == 1 and pane.rows[best[0]].best
    assert pane.table.item(0, 4).text() == "1.00×"
    # columns holding text get the width: every mode's name whole, the last column its own width
    table = pane.table
    pane.resize(1000, 300)
    metrics = table.fontMetrics()
    for r, mode in enumerate(modes):  # the best mode is bold, and bold text is wider
        font = table.item(r, 0).font()
        assert table.columnWidth(0) >= QFontMetrics(font).horizontalAdvance(mode), mode
    last = table.columnCount() - 1
    widest = max(metrics.horizontalAdvance(table.item(r, last).text() if table.item(r, last) else "")
                 for r in range(table.rowCount()))
    header = metrics.horizontalAdvance(table.horizontalHeaderItem(last).text())
    assert table.columnWidth(last) <= max(widest, header) + 40


def test_panes_empty_session(qtbot) -> None:  # type: ignore[no-untyped-def]
    state = SessionState()
    selection = state.selection
    kinds = (DecompositionPane, AutotunePane, CudaGraphPane, ModeComparePane)
    panes = [cls(state, selection) for cls in kinds]
    for p in panes:
        qtbot.addWidget(p)
    state.set_session(Session())
    assert not any(p.has_content() for p in panes)


def test_cudagraph_pane_tells_the_timelines_graphs_when_the_capture_recorded_none(qtbot) -> None:  # type: ignore[no-untyped-def]
    """An H100 session captured with max-autotune-no-cudagraphs, timed in reduce-overhead and
    max-autotune too: the pane said "No CUDA-graph information" while the Modes table showed
    graphs; it now says what the timeline recorded and why the per-partition reasons are missing."""
    session = open_session(FIXTURES / "gpu_stages_h100.json")
    state, selection = _state(session)
    pane = CudaGraphPane(state, selection)
    qtbot.addWidget(pane)
    pane.on_session(session)
    text = pane.note.text()
    assert "No CUDA-graph information" not in text
    assert "reduce-overhead: 2 graph(s) recorded" in text and "max-autotune: 2 graph(s)" in text
    assert "max-autotune-no-cudagraphs" in text  # the capture's own mode, said
