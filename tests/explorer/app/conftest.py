"""Fixtures for the desktop-app tests: a real MainWindow, a temp QSettings, real session fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from compiler_core.session import Session
from compiler_core.session.codec import load as open_session
from explorer.main_window import MainWindow
from tests.conftest import FIXTURES


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot: object, settings: QSettings) -> Iterator[MainWindow]:
    win = MainWindow(settings)
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    win.show()
    yield win
    win.files.worker.cancel()


def fixture_session(name: str) -> Session:
    return open_session(FIXTURES / f"{name}.json")


@pytest.fixture(scope="session")
def transformer() -> Session:
    return fixture_session("transformer_block")


@pytest.fixture(scope="session")
def graph_break_session() -> Session:
    return fixture_session("mlp_graph_break")
