"""The Source pane on a log from another machine: the log's quoted lines, marked as such, with
gaps, and the opt-in lookup on this machine (checkbox, added folder), through the real controller.

The log is the real torchvision ResNet-50 log (H200), whose model file is `bench/models/
tv_resnet_breaks.py`; the test points the log at a copy of that file in a folder of its own (a
"checkout" that is no lookup root until the user adds it), so what is read is decided by the
lookup's roots alone. Torch-free, as the GUI reads logs.
"""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.session import Session, SourceOrigin, load, save
from explorer.actions.source_lookup import SourceLookups
from explorer.panes.source_pane import SourcePane
from explorer.state import SessionState
from tests.conftest import ROOT

LOGGED = "/work/main/bench/models/tv_resnet_breaks.py"  # the path the GPU log names
SHOT = Path("/tmp/compilescope_source_quoted.png")


@pytest.fixture
def opened(tmp_path: Path) -> tuple[Path, Path, Session]:
    """(the log, the model file it names, the session as the GUI opens it)."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    model = checkout / "tv_resnet_breaks.py"
    shutil.copy(ROOT / "bench" / "models" / "tv_resnet_breaks.py", model)
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "tv_resnet_breaks.log"
    text = lzma.decompress((ROOT / "bench" / "data" / "tv_resnet_breaks.log.xz").read_bytes()).decode()
    log.write_text(text.replace(LOGGED, str(model)))
    return log, model, import_trace(log)


def _pane(qtbot, session: Session, log: Path) -> tuple[SessionState, SourcePane, SourceLookups]:  # type: ignore[no-untyped-def]
    state = SessionState()
    pane = SourcePane(state, state.selection)
    lookups = SourceLookups(state)
    qtbot.addWidget(pane)
    pane.resize(1100, 700)
    pane.show()
    state.set_session(session, str(log))
    return state, pane, lookups


def _wait(qtbot, state: SessionState, lookups: SourceLookups) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not lookups.busy(), timeout=30_000)
    state.updates.flush()


def test_quoted_lines_are_marked_with_gaps_and_the_lookup_is_opt_in(qtbot, opened, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log, model, session = opened
    state, pane, lookups = _pane(qtbot, session, log)
    assert pane.path == str(model)  # the file of the break to fix first
    # no file of this machine was read: the pane says it shows the log's quotes, not the file
    assert session.source_origins[str(model)] == SourceOrigin.QUOTE
    assert pane.origin.isVisible() and pane.origin.text().startswith("Quoted by the log, not the file: the ")
    assert "lookup on this machine is off" in pane.note.text()
    assert pane.lookup_row.isVisible() and not pane.lookup.isChecked()
    text = session.sources[str(model)].splitlines()
    quoted = {n for n, line in enumerate(text, 1) if line}
    gap = min(set(range(1, len(text) + 1)) - quoted)
    assert pane.view.is_gap(gap) and not pane.view.is_gap(18)
    # marks and notes only on lines the view holds: each is one the log quotes
    assert set(pane.view.line_colors()) <= quoted and set(pane.view.annotations()) <= quoted
    assert 18 in pane.view.annotations()  # the `.item()` break, under its quoted line
    pane.view.scroll_to_line(18)
    image = pane.grab()
    assert not image.isNull() and image.save(str(SHOT))

    # ticking the box looks in the log's folder and this environment: the model file is not there
    pane.lookup.setChecked(True)
    _wait(qtbot, state, lookups)
    assert state.source_lookup.on and state.session.source_origins[str(model)] == SourceOrigin.QUOTE
    assert "under the lookup roots" in pane.note.text()
    # the user adds the checkout: the file is read, shown whole, and marked as read here
    pane.add_lookup_root(str(model.parent))
    _wait(qtbot, state, lookups)
    assert state.session.source_origins[str(model)] == SourceOrigin.LOOKUP
    assert state.session.sources[str(model)] == model.read_text()
    assert pane.origin.text().startswith("Looked up on disk") and pane.lookup.isChecked()
    assert not pane.view.is_gap(gap) and pane.path == str(model)
    assert state.session.compiles is session.compiles  # the same session, other texts

    # saving leaves the file out unless asked; unticking puts the quotes back
    save(state.session, tmp_path / "shared.json")
    assert load(tmp_path / "shared.json").source_origins[str(model)] == SourceOrigin.QUOTE
    pane.lookup.setChecked(False)
    _wait(qtbot, state, lookups)
    assert state.session.sources[str(model)] == session.sources[str(model)]
    assert pane.origin.text().startswith("Quoted by the log")


def test_a_capture_has_no_lookup_box(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A capture's files are its own run's: nothing to opt into, nothing marked as quoted."""
    session = load(ROOT / "resources" / "sessions" / "mlp_graph_break.json")
    _, pane, _ = _pane(qtbot, session, tmp_path / "mlp_graph_break.json")
    assert set(session.source_origins.values()) == {SourceOrigin.CAPTURE}
    assert not pane.lookup_row.isVisible() and not pane.origin.isVisible()
    assert not any(pane.view.is_gap(n) for n in range(1, 20))
