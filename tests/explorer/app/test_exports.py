"""Exports write real, readable files: kernels with provenance headers, DOT/SVG/PNG, session JSON."""

from __future__ import annotations

import json
from pathlib import Path

from compiler_core.session import Session, load
from explorer.actions.kernel_export import export_kernels
from explorer.main_window import MainWindow


def test_kernel_export_writes_one_file_per_kernel_with_provenance(
    tmp_path: Path, transformer: Session
) -> None:
    c = transformer.compiles[0]
    kernels = [k for o in c.inductor for k in o.kernels]
    files = export_kernels(transformer, c, tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    assert len(index["kernels"]) == len(kernels)
    assert {p.name for p in files} >= {
        "index.json",
        "INDEX.md",
        "output_code_forward.py",
        "output_code_backward.py",
    }
    gelu = next(e for e in index["kernels"] if "gelu" in e["kernel"] and e["graph"] == "forward")
    text = (tmp_path / gelu["file"]).read_text()
    assert text.startswith("// Kernel ") or text.startswith("# Kernel ")
    assert any(line.endswith(":41") for line in gelu["source_lines"]), gelu["source_lines"]
    assert "F.gelu(self.fc1(self.ln2(x)))" in text  # the user's line is quoted in the header
    assert next(k for k in kernels if k.name == gelu["kernel"]).source.strip() in text
    compile(next(tmp_path.glob("output_code_forward.py")).read_text(), "output_code_forward.py", "exec")


def test_graph_and_session_exports(tmp_path: Path, window: MainWindow, transformer: Session) -> None:
    window.set_session(transformer, "t.json")
    window.exports.export_graph(str(tmp_path / "g.dot"))
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith("digraph") and "->" in dot and '"layer_norm"' in dot
    for stage in ("dynamo", "aot", "inductor"):
        window.navigation.stage_actions[stage].trigger()
        window.exports.export_graph(str(tmp_path / f"{stage}.png"))
        window.exports.export_graph(str(tmp_path / f"{stage}.svg"))
        assert (tmp_path / f"{stage}.png").stat().st_size > 1000
        assert "<svg" in (tmp_path / f"{stage}.svg").read_text()[:2000]
    window.files.save_session(str(tmp_path / "s.json"))
    assert load(tmp_path / "s.json") == transformer


def test_graph_exports_draw_the_whole_scene_with_colours_and_modules(
    tmp_path: Path, window: MainWindow, transformer: Session
) -> None:
    """SVG is a vector render of the whole scene (not a viewport grab), PNG follows the scale,
    DOT has one cluster per module, the fills on screen and real line breaks."""
    from PySide6.QtGui import QImage

    window.set_session(transformer, "t.json")
    window.navigation.stage_actions["inductor"].trigger()
    canvas = window.panes["InductorPane"].graphs.canvas  # type: ignore[attr-defined]
    fills = {c.name() for c in canvas.overlay().values()}
    assert fills, "the Inductor pane colours nodes by kernel"
    window.exports.export_graph(str(tmp_path / "g.svg"))
    svg = (tmp_path / "g.svg").read_text()
    assert "<svg" in svg and "<image" not in svg  # vector shapes, no embedded bitmap
    assert any(f in svg for f in fills), "the kernel colours on screen are in the SVG"
    scene = canvas.result.scene
    assert f'width="{int(scene.width + 40) + 1}' in svg or str(int(scene.width + 40) + 1) in svg
    window.exports.export_graph(str(tmp_path / "g1.png"), 1.0)
    window.exports.export_graph(str(tmp_path / "g2.png"), 2.0)
    one, two = QImage(str(tmp_path / "g1.png")), QImage(str(tmp_path / "g2.png"))
    assert abs(two.width() - 2 * one.width()) <= 2 and one.width() > canvas.view.width() / 2
    window.exports.export_graph(str(tmp_path / "g.dot"))
    dot = (tmp_path / "g.dot").read_text()
    assert "subgraph cluster_" in dot and "fillcolor" in dot
    assert any(f in dot for f in fills)
    assert "\\n" not in dot  # labels break lines for real, no literal backslash-n


def test_a_dot_export_says_where_it_went(tmp_path: Path, window: MainWindow, transformer: Session) -> None:
    """The status bar kept the previous PNG export's message after a DOT export."""
    window.set_session(transformer, "t.json")
    window.exports.export_graph(str(tmp_path / "g.png"))
    window.exports.export_graph(str(tmp_path / "g.dot"))
    assert (tmp_path / "g.dot").stat().st_size > 0
    assert str(tmp_path / "g.dot") in window.statusBar().currentMessage()


def test_dot_export_writes_every_graph_the_pane_shows(
    tmp_path: Path, window: MainWindow, transformer: Session
) -> None:
    """The Inductor pane stacks the forward and backward post-grad graphs; the DOT export wrote
    the forward alone (GPT-2: 2,153 of 5,249 nodes)."""
    import re

    window.set_session(transformer, "t.json")
    window.navigation.stage_actions["inductor"].trigger()
    c = window.state.current
    assert c is not None
    shown = [o.post_grad for o in c.inductor if o.post_grad is not None]
    assert len(shown) == 2
    window.exports.export_graph(str(tmp_path / "g.dot"))
    dot = (tmp_path / "g.dot").read_text()
    declared = re.findall(r'^\s*"([^"]+)" \[label=', dot, re.M)
    assert len(declared) == len(set(declared)) == sum(len(g.nodes) for g in shown)
    assert dot.count("subgraph cluster_s") == 2
    assert f"Exported {len(declared)} nodes" in window.statusBar().currentMessage()


def test_a_session_export_that_cannot_be_written_is_a_dialog(
    tmp_path: Path, window: MainWindow, transformer: Session
) -> None:
    from PySide6.QtWidgets import QMessageBox

    window.set_session(transformer, "t.json")
    (tmp_path / "a_file").write_text("")
    assert window.exports.export_session(str(tmp_path / "a_file" / "s.json")) is False
    boxes = [b for b in window.findChildren(QMessageBox) if b.objectName() == "problemBox"]
    assert boxes and "s.json" in boxes[-1].text()
    assert window.exports.export_session(str(tmp_path / "s.json")) is True
    assert load(tmp_path / "s.json") == transformer


def test_the_report_export_writes_the_overview_the_pane_shows(
        tmp_path: Path, window: MainWindow, transformer: Session) -> None:
    """Export ▸ Report: one HTML file holding the Overview's verdict and every fact line (the
    same fragment the pane renders), loading nothing from outside."""
    import html
    import re

    window.set_session(transformer, "t.json")
    out = tmp_path / "report.html"
    assert window.exports.export_report(str(out))
    text = out.read_text()
    overview = window.panes["OverviewPane"].overview  # type: ignore[attr-defined]
    assert html.escape(overview.verdict) in text
    assert all(html.escape(f.text) in text for f in overview.facts())
    assert not re.search(r"<script|<link|src=|href=\"http", text, re.IGNORECASE)
    assert not window.exports.export_report(str(tmp_path / "missing" / "dir" / "r.html"))
