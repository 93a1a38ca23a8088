"""Names from a session or a trace log never write outside the chosen folder.

A hostile session (or trace log) names an Inductor partition and a kernel
`../../somewhere/sitecustomize`; a real Export ▸ Kernels (the menu action, the real writer) must
leave every file inside the folder the user picked, and nothing anywhere else.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from compiler_core.analysis import import_trace
from compiler_core.safe_paths import MAX_NAME, SafeFolder, UnsafePathError, ensure_inside, safe_name
from compiler_core.session import Session
from explorer.actions.kernel_export import export_kernels
from explorer.main_window import MainWindow
from tests.conftest import FIXTURES

EVIL = "../../somewhere/sitecustomize"


def _all_files(root: Path) -> set[Path]:
    return {Path(d) / f for d, _, files in os.walk(root) for f in files}


def evil_session(base: Session) -> Session:
    """Kernel names that climb out of the folder (a partition is a closed vocabulary, `Partition`:
    the codec and the builder refuse any other word, so only names can carry the attack)."""
    c = base.compiles[0]
    parts = tuple(
        replace(o, kernels=tuple(replace(k, name=f"{EVIL}/{k.name}") for k in o.kernels)) for o in c.inductor
    )
    return replace(base, compiles=(replace(c, inductor=parts), *base.compiles[1:]))


@pytest.mark.parametrize(
    "raw",
    [EVIL, "..", ".", "", "a/b\\c", "x\x00y", "-rf", ".bashrc", "CON", "nul.txt", "com1", "é" * 400,
     "trailing.", "/etc/passwd", "\n"],
)
def test_safe_name_is_one_harmless_component(raw: str) -> None:
    name = safe_name(raw)
    assert name and name not in {".", ".."} and len(name) <= MAX_NAME
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert not name.startswith((".", "-")) and not name.endswith(".")
    assert name.split(".")[0].lower() not in {"con", "nul", "com1", "prn", "aux"}


def test_safe_folder_makes_collisions_unique_and_refuses_escapes(tmp_path: Path) -> None:
    folder = SafeFolder(tmp_path / "out")
    names = [folder.path(s, ".py").name for s in ("a/b", "a_b", "A_B", "a:b")]
    assert len({n.lower() for n in names}) == 4
    (tmp_path / "out" / "link.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(UnsafePathError):
        folder.write_text(tmp_path / "out" / "link.py", "x")  # a planted symlink cannot redirect
    with pytest.raises(UnsafePathError):
        ensure_inside(tmp_path / "out", tmp_path / "out" / ".." / "x.py")
    assert not (tmp_path / "elsewhere.py").exists()


def test_kernel_export_of_a_hostile_session_stays_in_the_folder(tmp_path: Path, transformer: Session) -> None:
    session = evil_session(transformer)
    chosen = tmp_path / "a" / "b" / "chosen"
    files = export_kernels(session, session.compiles[0], chosen)
    everything = _all_files(tmp_path)
    assert everything == set(files) and all(p.parent == chosen.resolve() for p in files)
    assert not (tmp_path / "a" / "somewhere").exists() and not (tmp_path / "somewhere").exists()
    kernels = [k for o in session.compiles[0].inductor for k in o.kernels]
    assert len(files) == len(kernels) + len(session.compiles[0].inductor) + 2  # all unique names
    index = json.loads((chosen / "index.json").read_text())
    assert {e["file"] for e in index["kernels"]} <= {p.name for p in files}


def test_export_menu_action_on_a_hostile_session(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, transformer: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.set_session(evil_session(transformer), "evil.json")
    chosen = tmp_path / "x" / "y" / "chosen"
    chosen.mkdir(parents=True)
    dialog = "explorer.actions.export_actions.QFileDialog.getExistingDirectory"
    monkeypatch.setattr(dialog, lambda *a: str(chosen))
    window.exports.kernels_dialog()
    written = _all_files(tmp_path)
    assert written and all(p.parent == chosen for p in written)
    assert any(p.name.startswith("output_code_") for p in written)


def _inject_stage(log: str, stage: str) -> str:
    """Put a compilescope_graph record naming `stage` before the first output code record."""
    lines = log.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if '"inductor_output_code"' in ln)
    payload = json.dumps({"stage": stage, "graph": {"kind": "post_grad", "nodes": []}})
    head = lines[at].split("]", 1)[0]
    meta = {"artifact": {"name": "compilescope_graph", "encoding": "json"}, "frame_id": 0,
            "frame_compile_id": 0, "attempt": 0, "has_payload": "0" * 32}
    record = f"{head}] {json.dumps(meta)}\n\t{payload}\n"
    return "".join([*lines[:at], record, *lines[at:]])


def test_a_trace_log_stage_name_never_reaches_a_path(tmp_path: Path) -> None:
    log = gzip.decompress((FIXTURES / "traces" / "tlparse_simple.log.gz").read_bytes()).decode()
    trace = tmp_path / "evil.log"
    trace.write_text(_inject_stage(log, f"post_grad_{EVIL}"))
    session = import_trace(str(trace))
    # refused at the edge: a partition is one of four words, and the log still opens
    assert not any(EVIL in o.graph for c in session.compiles for o in c.inductor)
    assert any("names no partition" in d.message for d in session.diagnostics)
    c = next(c for c in session.compiles if c.inductor)
    chosen = tmp_path / "deep" / "er" / "chosen"
    files = export_kernels(session, c, chosen)
    assert files and _all_files(tmp_path) == {trace, *files}
    assert all(p.parent == chosen.resolve() for p in files)


def test_timeline_csv_cells_from_data_cannot_be_formulas(tmp_path: Path) -> None:
    from compiler_core.export.timeline_files import write_csv
    from compiler_core.session.model import StepSample, TimelineEvent

    evil = '=HYPERLINK("http://x","y")'
    write_csv(tmp_path / "t.csv", [StepSample(mode=evil, step=0, ms=1.0)],
              [TimelineEvent(mode=evil, step=0, kind="compile", reason="+cmd|' /C calc'!A0")])
    import csv

    rows = list(csv.reader((tmp_path / "t.csv").read_text().splitlines()))
    assert rows[1][0] == "'" + evil and all(cell[:1] not in ("=", "+", "-", "@") for cell in rows[1])
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]  # atomic: no temp file left
