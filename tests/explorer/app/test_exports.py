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
