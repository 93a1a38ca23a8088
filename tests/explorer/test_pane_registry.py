"""The pane registry fails loudly: a registered pane that does not import, or is no `Pane`,
stops the window instead of quietly leaving a dock empty; every shipped pane (the timeline
included) builds as a `Pane` on the one shared state."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from explorer.pane_registry import PANES, PaneBuildError, PaneSpec
from explorer.panes.base import Pane
from explorer.panes.timeline_pane import TimelinePane
from explorer.state import SessionState


def test_a_pane_whose_module_does_not_import_is_an_error(qtbot: QtBot) -> None:
    state = SessionState()
    spec = PaneSpec("GonePane", "Gone", "source", "no_such_pane_module:GonePane")
    with pytest.raises(PaneBuildError, match=r"GonePane.*ModuleNotFoundError"):
        spec.build(state, state.selection)


def test_a_missing_class_is_an_error(qtbot: QtBot) -> None:
    state = SessionState()
    spec = PaneSpec("SourcePane", "Source", "source", "source_pane:NoSuchPane")
    with pytest.raises(PaneBuildError, match="AttributeError"):
        spec.build(state, state.selection)


def test_a_target_that_is_no_pane_is_an_error(qtbot: QtBot) -> None:
    state = SessionState()
    spec = PaneSpec("Plain", "Plain", "source", "timeline_controls:TimelineControls")  # a QWidget
    with pytest.raises(PaneBuildError, match="not a Pane"):
        spec.build(state, state.selection)


def test_every_registered_pane_builds_as_a_pane_of_one_state(qtbot: QtBot) -> None:
    state = SessionState()
    built = {}
    for spec in PANES:
        pane = spec.build(state, state.selection)
        qtbot.addWidget(pane)
        assert isinstance(pane, Pane) and pane.state is state and pane.selection is state.selection
        assert pane.objectName() == spec.key
        built[spec.key] = pane
    assert isinstance(built["TimelinePane"], TimelinePane)
    assert built["TimelinePane"].data is state.timeline.data  # the model's live timeline, not a copy
