"""Text from a log or a session written out: DOT, CSV, the terminal, and an empty log.

- A NUL in a node name would make Graphviz refuse the whole DOT export ("syntax error").
- A CSV cell `x;=cmd|' /C calc'!A0` is one text cell with a comma separator and a formula cell
  in a `;` locale: a formula after any separator a spreadsheet may use gets its apostrophe too.
- The CLI prints a rank file's name and log text escaped: raw, an ANSI escape sequence would act
  on the terminal.
- An empty log must say so, not nothing at all (0 warnings, exit 0).
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.export.timeline_files import samples_csv
from compiler_core.session import Session
from compiler_core.session.model import StepSample, TimelineEvent
from explorer.main_window import MainWindow
from tests.conftest import FIXTURES, ROOT

ESC = "\x1b[2J\x1b]8;;x\x07"  # clear the screen, start a hyperlink (no "/": it names files too)


def _renamed(session: Session, old: str, new: str) -> Session:
    """`session` with Dynamo node `old` of its first compile named `new` (its users follow)."""
    c = session.compiles[0]
    assert c.dynamo_graph is not None and c.dynamo_graph.node(old) is not None
    nodes = tuple(replace(n, name=new if n.name == old else n.name,
                          inputs=tuple(new if i == old else i for i in n.inputs))
                  for n in c.dynamo_graph.nodes)  # fmt: skip
    graph = replace(c.dynamo_graph, nodes=nodes)
    return replace(session, compiles=(replace(c, dynamo_graph=graph), *session.compiles[1:]))


def test_a_nul_in_a_node_name_leaves_the_dot_export_readable(tmp_path: Path, window: MainWindow,
                                                             transformer: Session) -> None:  # fmt: skip
    name = "layer_norm\x00" + ESC
    window.set_session(_renamed(transformer, "layer_norm", name), "t.json")
    window.navigation.stage_actions["dynamo"].trigger()
    window.exports.export_graph(str(tmp_path / "g.dot"))
    dot = (tmp_path / "g.dot").read_text()
    assert not [ch for ch in dot if ord(ch) < 32 and ch != "\n"], "no raw control character"
    assert '"layer_norm\\\\x00\\\\x1b[2J' in dot  # the name, its controls written as escapes
    if shutil.which("dot") is None:
        pytest.skip("Graphviz is not installed here: the file's text is checked, not its rendering")
    done = subprocess.run(["dot", "-Tsvg", str(tmp_path / "g.dot")], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]


def test_a_formula_after_any_separator_is_no_formula() -> None:
    evil = "x;=cmd|' /C calc'!A0"
    steps = [StepSample(mode=evil, step=0, ms=1.0), StepSample(mode="default", step=1, ms=2.0)]
    text = samples_csv(steps, [TimelineEvent(mode="default", step=1, kind="recompile", reason="a\t@SUM(1)")])
    for delimiter in (",", ";", "\t", "|"):
        for row in csv.reader(io.StringIO(text), delimiter=delimiter):
            assert all(cell[:1] not in ("=", "+", "-", "@") for cell in row), (delimiter, row)
    rows = list(csv.reader(io.StringIO(text)))
    # each part that would start a formula gets its apostrophe; the rest of the text is kept
    assert rows[1][0] == "x;'=cmd|' /C calc'!A0" and rows[2][-1] == "recompile: a\t'@SUM(1)"
    assert rows[2][:2] == ["default", "1"]  # plain cells as before


def test_the_cli_prints_log_text_and_file_names_escaped(tmp_path: Path) -> None:
    logs = tmp_path / "ranks"
    logs.mkdir()
    simple = (FIXTURES / "traces" / "tlparse_simple.log.gz").read_bytes()
    (logs / f"dedicated_log_torch_trace_rank_0_{ESC}.log.gz").write_bytes(simple[: len(simple) // 2])  # cut
    out = tmp_path / "out.json"
    done = subprocess.run([sys.executable, "-m", "compiler_core", "import", str(logs), "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    assert "log ends early" in printed and "\\x1b[2J" in printed  # the warning names the file, escaped
    assert not [ch for ch in printed if ord(ch) < 32 and ch not in "\n\t"], printed[:300]
    summary = subprocess.run([sys.executable, "-m", "compiler_core", "summary", str(logs)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert summary.returncode == 0 and "\x1b" not in summary.stdout + summary.stderr


def test_an_empty_log_says_it_is_empty(tmp_path: Path, window: MainWindow) -> None:
    empty = tmp_path / "dedicated_log_torch_trace_x.log"
    empty.write_bytes(b"")
    session = import_trace(empty)
    assert [d.severity for d in session.diagnostics] == ["warning"]
    assert "the log is empty" in session.diagnostics[0].message
    done = subprocess.run([sys.executable, "-m", "compiler_core", "summary", str(empty)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2 and "the log is empty" in done.stderr
    window.set_session(session, str(empty))
    assert window.banner.isVisible() and "the log is empty" in window.banner.label.text()
