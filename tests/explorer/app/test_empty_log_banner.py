"""A log with no torch.compile compile in it (tlparse's torch.export log) must not open as a
window of blank panes with no word why: the banner says there is nothing to show and what the
log holds instead."""

from __future__ import annotations

from pathlib import Path

from explorer.actions.loading import load_prepared
from explorer.main_window import MainWindow


def test_an_export_log_says_it_has_no_compile(window: MainWindow, shared_traces: Path) -> None:
    session, links = load_prepared(shared_traces / "inputs" / "export.log")
    window.set_session(session, "export.log", links)
    assert not session.compiles
    assert window.banner.isVisible()
    text = window.banner.label.text()
    assert "no torch.compile" in text and "exported_program" in text, text
    assert "damaged" not in text, "the log is not damaged, it is of another kind"
