"""What the controllers in `explorer/actions` may use of the main window.

`MainWindow` (main_window.py) builds the controllers and is the one implementation of this
base; the controllers are typed against `AppWindow` and import this module, never
`main_window`, so the import runs one way (main_window -> actions -> app_window). They reach
the session, selection and live timeline through `state` (the application model's adapter),
and the window's docks only to place them, never a pane's widgets.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from compiler_core.session import LinkIndex, Session
from explorer.state import SelectionModel, SessionState
from explorer.toolbar import NavigationBar


class AppWindow(QMainWindow):
    """The main window as its controllers see it (attributes set by the implementation)."""

    settings: QSettings
    state: SessionState
    selection: SelectionModel
    navigation: NavigationBar
    panes: dict[str, QWidget]  # a pane, or its placeholder until a deferred pane is built
    docks: dict[str, QDockWidget]

    def set_session(self, session: Session, source_path: str = "", links: LinkIndex | None = None) -> None:
        """Show `session` with every pane rebuilt on return."""
        raise NotImplementedError

    def show_session(self, session: Session, source_path: str = "", links: LinkIndex | None = None) -> None:
        """Show `session`; panes rebuild over the following event-loop turns."""
        raise NotImplementedError

    @property
    def workspace(self) -> str | None:
        """The workspace on screen, or None in the all-panes view."""
        raise NotImplementedError

    def show_stage(self, stage: str) -> None:
        """Bring a navigator stage forward (its workspace, or its panes in the all-panes view)."""
        raise NotImplementedError
