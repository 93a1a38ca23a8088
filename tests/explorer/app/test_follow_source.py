"""Clicking a kernel line or a post-grad node leads back to its source line even when that line
is in another file than the one on show (ResNet-50's ops come from torchvision's resnet.py,
while the Source pane opens on the model file with the graph break)."""

from __future__ import annotations

from compiler_core.session import RefKind
from explorer.main_window import MainWindow
from explorer.panes.inductor_pane import InductorPane
from explorer.panes.source_pane import SourcePane
from tests.bench_logs import bench_session


def test_source_pane_follows_a_linked_line_in_another_file(window: MainWindow) -> None:
    session = bench_session("tv_resnet_breaks")
    window.set_session(session, "tv_resnet_breaks.log")
    source: SourcePane = window.panes["SourcePane"]  # type: ignore[assignment]
    inductor: InductorPane = window.panes["InductorPane"]  # type: ignore[assignment]
    shown = source.path
    refs = inductor.graphs.refs()
    conv = next(r for r in refs if r.kind is RefKind.POST_GRAD_NODE and r.name == "convolution")
    inductor.graphs.nodeClicked.emit(conv)
    window.state.updates.flush()
    lines = {r for r in window.selection.highlighted if r.kind is RefKind.SOURCE_LINE}
    assert lines and all(r.path != shown for r in lines), "the premise: its line is in another file"
    assert source.path in {r.path for r in lines}, "the Source pane shows the linked line's file"
    assert source.view.selected_lines() == {r.line for r in lines if r.path == source.path}


def test_no_kernel_row_counts_as_lit_before_any_click(window: MainWindow) -> None:
    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    inductor: InductorPane = window.panes["InductorPane"]  # type: ignore[assignment]
    assert inductor.kernels.topLevelItemCount() > 100
    assert inductor.highlighted_kernels() == set(), "nothing is selected yet"


def test_kernel_info_for_a_kernel_with_no_fused_node(window: MainWindow) -> None:
    """ResNet's first kernels copy inputs into another layout and fuse no post-grad node: the
    pane said 'Fuses 0 nodes:' with nothing after the colon."""
    from explorer.panes.kernel_code_pane import KernelCodePane

    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    code: KernelCodePane = window.panes["KernelCodePane"]  # type: ignore[assignment]
    current = window.state.current
    assert current is not None
    bare = next(k for out in current.inductor for k in out.kernels if not k.fused_nodes)
    assert code.select_kernel(bare.name)
    assert code.info.text().startswith("No post-grad node maps to this kernel"), code.info.text()
    one = next(k for out in current.inductor for k in out.kernels if len(k.fused_nodes) == 1)
    assert code.select_kernel(one.name)
    text = code.info.text()
    assert text.startswith("Fuses 1 node") and text.endswith(f": {one.fused_nodes[0]}"), text


def test_source_legend_is_the_shown_sessions(window: MainWindow) -> None:
    """A profiled capture's legend ('left column: µs per step …') stayed on after opening a log
    with no profile."""
    from compiler_core.session import load
    from tests.conftest import FIXTURES

    # the bundled example captured by the GUI with a 20-step default-mode timeline (3 profiled)
    profiled = load(FIXTURES / "timeline" / "transformer_cpu_profiled.json")
    source: SourcePane = window.panes["SourcePane"]  # type: ignore[assignment]
    window.set_session(profiled, "profiled.json")
    assert "left column" in source.legend.text()
    window.set_session(bench_session("tv_resnet_breaks"), "tv_resnet_breaks.log")
    assert "left column" not in source.legend.text()
