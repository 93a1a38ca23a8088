"""The hostile-input tests reuse the app tests' fixtures: a real MainWindow and real sessions."""

from tests.explorer.app.conftest import graph_break_session, settings, transformer, window

__all__ = ["graph_break_session", "settings", "transformer", "window"]
