"""The GUI tests run under the interpreter policy the app installs at start-up
(explorer/gc_policy.py), as `explorer.app.application()` does: the collector on the GUI thread's
timer, short thread switches."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from explorer import gc_policy


@pytest.fixture(scope="session", autouse=True)
def _gui_interpreter_policy(qapp: QApplication) -> None:
    gc_policy.install(qapp)
