"""Graph breaks pane, Source pane and per-line table on a real log (torchvision ResNet-50 on an
H200: an `.item()` branch and a `print`, i.e. three distinct breaks in two user lines).

The log is read by the torch-free importer, as the GUI reads it."""

from __future__ import annotations

import lzma
import os
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.session import Session
from compiler_core.session.refs import source_line
from explorer.panes.break_summary_pane import BreakSummaryPane
from explorer.panes.code_view import LINE_SEPARATOR
from explorer.panes.line_pipeline_pane import COLUMNS, LinePipelinePane
from explorer.panes.source_pane import SourcePane
from explorer.state import SessionState
from tests.conftest import ROOT

SHOTS = os.environ.get("COMPILESCOPE_SHOTS")  # set to a folder to keep the screenshots
MODEL = "/work/main/bench/models/tv_resnet_breaks.py"  # the path the GPU log names
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
RESNET = "/opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    path = tmp_path_factory.mktemp("resnet") / "tv_resnet_breaks.log"
    path.write_bytes(lzma.decompress((ROOT / "bench" / "data" / "tv_resnet_breaks.log.xz").read_bytes()))
    return import_trace(path)


def _panes(qtbot, session: Session):  # type: ignore[no-untyped-def]
    state = SessionState()
    selection = state.selection
    panes = (BreakSummaryPane(state, selection), SourcePane(state, selection),
             LinePipelinePane(state, selection))  # fmt: skip
    for pane in panes:
        qtbot.addWidget(pane)
        pane.resize(1366, 768)
        pane.show()
    state.set_session(session)
    return selection, panes


def _shot(pane, name: str) -> None:  # type: ignore[no-untyped-def]
    if SHOTS:
        pane.grab().save(str(Path(SHOTS) / f"{name}.png"))


def test_break_rows_ranked_with_details_and_clickable_frames(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    selection, (pane, _source, _lines) = _panes(qtbot, session)
    items = [pane.tree.topLevelItem(i) for i in range(pane.tree.topLevelItemCount())]
    rows = [[item.text(c) for c in range(8)] for item in items]
    item = ITEM
    assert [[r[1], r[2], r[3], r[7]] for r in rows] == [
        ["GB0124", "tv_resnet_breaks.py:18 in forward", "1", item],
        ["GB0124", "tv_resnet_breaks.py:20 in forward", "1", item],
        ["GB0059", "tv_resnet_breaks.py:20 in forward", "1", "Failed to trace builtin operator"],
    ]
    html = pane.details.toHtml()  # the top row's details show without a click
    assert 'href="https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"' in html
    assert "capture_scalar_outputs = True" in html and "User traceback" in html
    # the last frame of the traceback is the user's line: clicking it selects that line
    pane.select_frame(len(session.compiles[0].graph_breaks[0].user_stack) - 1)
    assert selection.selected == frozenset({source_line(MODEL, 18)})
    _shot(pane, "break_summary_resnet")


def test_source_pane_notes_under_lines_and_library_files(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    selection, (_pane, source, lines) = _panes(qtbot, session)
    assert source.path == MODEL  # the file of the break to fix first
    notes = source.view.annotations()
    assert notes[18][0] == f"▲ graph break GB0124 {ITEM}"
    assert [n for n in notes[20] if n.startswith("▲")] == [
        f"▲ graph break GB0124 {ITEM}",
        "▲ graph break GB0059 Failed to trace builtin operator",
    ]
    block = source.view.document().findBlockByNumber(17).text()  # line 18 holds its notes
    # the log's quote of the line (no file of this machine is read for a log: lookup is off)
    assert block.startswith("if logits.abs().max().item() > 1e4:") and LINE_SEPARATOR in block
    # library files are listed, most nodes first; picking a torchvision line switches files
    labels = [source.files.itemText(i) for i in range(source.files.count())]
    # 228: every Bottleneck's `out += identity` (16) counts since the FX parser reads in-place ops
    assert labels[0].startswith("resnet.py — 228 nodes")
    resnet_line = next(
        n.source.line for c in session.compiles for n in (c.dynamo_graph.nodes if c.dynamo_graph else ())
        if n.source is not None and n.source.file == RESNET
    )
    selection.select({source_line(RESNET, resnet_line)})
    assert source.path == RESNET and source.origin.text().startswith("Quoted by the log, not the file")
    # the per-line table's Code column covers library lines
    codes = {
        lines.tree.topLevelItem(i).text(0): lines.tree.topLevelItem(i).text(1)
        for i in range(lines.tree.topLevelItemCount())
    }
    library = [code for where, code in codes.items() if where.startswith("resnet.py:")]
    assert library and all(library), [w for w, c in codes.items() if not c and w.startswith("resnet.py")]
    _shot(source, "source_resnet_library")


def test_per_line_aot_ops_count_each_op_once(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    """A training compile's joint graph holds every op and its partitions hold them again: the
    row counts the joint graph's ops, as many as the joint graph has from that line."""
    _, panes = _panes(qtbot, session)
    tree = panes[2].tree
    column = COLUMNS.index("AOT ops")
    rows = {tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())}
    expected = sum(1 for c in session.compiles if c.aot is not None and c.aot.joint is not None
                   for n in c.aot.joint.nodes
                   if n.source is not None and n.source.file == RESNET and n.source.line == 147)  # fmt: skip
    assert expected > 100
    assert rows["resnet.py:147"].text(column) == str(expected)


def test_the_details_area_says_what_it_is_for(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    """Never a blank box: with breaks it asks for a row, without any it says the run had none."""
    from compiler_core.session import load
    from explorer.panes.break_summary_pane import NOTHING_HINT, SELECT_HINT
    from tests.conftest import FIXTURES

    _selection, (pane, _source, _lines) = _panes(qtbot, session)
    assert pane.details.placeholderText() == SELECT_HINT
    clean = load(FIXTURES / "transformer_block.json")
    assert not any(c.graph_breaks for c in clean.compiles) and len(clean.compiles) == 1
    pane.state.set_session(clean)
    assert pane.details.placeholderText() == NOTHING_HINT and not pane.details.toPlainText()
