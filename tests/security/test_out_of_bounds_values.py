"""Well-typed values past anything real never reach a pane.

A real CPU log (tests/fixtures/trace_scripts/tiny_model.py) edited as an attacker would: its
graph's first node's source line becomes 2^40 and its compile time 1e308 s. Unbounded, the import
would ask for a 2^40-line text of the file (MemoryError, or the machine's memory) and the
Compile-time pane would draw a bar to infinity. The import runs in a child under a 3 GiB
address-space cap, so a regression fails this test instead of taking the machine's memory.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import QApplication

from compiler_core.session import load
from compiler_core.session.refs import source_line
from explorer.main_window import MainWindow
from tests.conftest import ROOT
from tests.cpu_logs import cpu_log
from tests.security.session_fuzz import show_in, slot_errors

HUGE_LINE = 2**40


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def _hostile_session(tmp_path: Path) -> Path:
    text = cpu_log("tiny_model.py").path.read_text()
    assert "tiny_model.py:14 in forward" in text
    text = text.replace("tiny_model.py:14 in forward", f"tiny_model.py:{HUGE_LINE} in forward", 1)
    text = re.sub(r'"entire_frame_compile_time_s": [0-9.e-]+', '"entire_frame_compile_time_s": 1e308', text)
    log = tmp_path / "hostile.log"
    log.write_text(text)
    out = tmp_path / "hostile.json"
    command = [sys.executable, "-m", "compiler_core", "import", str(log), "-o", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=_capped)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_absurd_lines_and_times_are_dropped_and_never_shown(window: MainWindow, tmp_path: Path) -> None:
    session = load(_hostile_session(tmp_path))  # the session written reopens
    messages = [d.message for d in session.diagnostics if d.severity == "warning"]
    assert any("entire_frame_compile_time_s = 1e+308" in m for m in messages), messages
    assert any(f"line {HUGE_LINE:,} of" in m for m in messages), messages
    (c,) = session.compiles
    assert c.metrics.total_s is None or c.metrics.total_s < 1e6
    graphs = [c.dynamo_graph, *(o.post_grad for o in c.inductor)]
    lines = {n.source.line for g in graphs if g is not None for n in g.nodes if n.source}
    assert lines == {14}  # the Dynamo nodes' place is unknown, the other graphs keep theirs
    app = QApplication.instance()
    show_in(window, app)(session)
    with slot_errors() as seen:
        window.ensure_panes()
        window.state.updates.flush()
        window.selection.select({source_line(n.source.file, n.source.line) for g in graphs if g is not None
                                 for n in g.nodes if n.source})  # fmt: skip
        window.state.updates.flush()
    assert not seen, seen


def test_a_saved_session_with_absurd_times_and_lines_shows_without_error(window: MainWindow,
                                                                        tmp_path: Path) -> None:  # fmt: skip
    """A session file is data too: the Compile-time pane reads its times as unmeasured, the
    Source pane neither scrolls to nor tints a line past the text (Qt takes a C int)."""
    session = load(_hostile_session(tmp_path))
    c = session.compiles[0]
    metrics = replace(c.metrics, total_s=1e308, stage_s={**c.metrics.stage_s, "backend": 1e308,
                                                           "inductor": float("inf")})  # fmt: skip
    nodes = tuple(replace(n, source=replace(n.source, line=HUGE_LINE)) if n.source else n
                  for n in c.inductor[0].post_grad.nodes) if c.inductor[0].post_grad else ()  # fmt: skip
    assert any(n.source for n in nodes)
    output = replace(c.inductor[0], post_grad=replace(c.inductor[0].post_grad, nodes=nodes))
    hostile = replace(session, compiles=(replace(c, metrics=metrics, inductor=(output, *c.inductor[1:])),))
    path = next(n.source.file for n in nodes if n.source)
    with slot_errors() as seen:
        window.set_session(hostile, "hostile.json")
        window.ensure_panes()
        window.state.updates.flush()
        window.selection.select({source_line(path, HUGE_LINE)})
        window.state.updates.flush()
    assert not seen, seen
